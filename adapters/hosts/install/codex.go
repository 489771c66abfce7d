package install

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mnemo-dev/mnemo/adapters/hosts"
)

// Codex CLI keeps its MCP servers and its trust of hooks in config.toml,
// which the installer edits line by line (toml.go): Mnemo's tables are
// replaced or removed, every other line is kept as it was.

// codexServer is the table of Mnemo's MCP server in config.toml.
var codexServer = []string{"mcp_servers", MCPServerName}

// installCodexMCP writes [mcp_servers.mnemo] (command, args = ["mcp"], and
// env when o has one) into the config.toml at path. A [mcp_servers.mnemo] that runs another program
// is not Mnemo's: it is refused, and the file left as it was.
func installCodexMCP(path string, o MCPOptions) (Result, error) {
	return editTOML(path, o.Now, func(d *tomlDoc, r *Result) error {
		if err := codexServerIsMnemo(d, r.Path); err != nil {
			return err
		}
		had := d.table(codexServer) >= 0
		keys := []string{"command = " + tomlString(o.Mnemo), `args = ["mcp"]`}
		// Codex starts MCP servers with a few variables only; a sub-table
		// [mcp_servers.mnemo.env] of the user's is left to say the rest.
		if len(o.Env) > 0 && d.table(append(codexServer[:2:2], "env")) < 0 {
			var env []string
			for _, k := range slices.Sorted(maps.Keys(o.Env)) {
				env = append(env, tomlKey([]string{k})+" = "+tomlString(o.Env[k]))
			}
			keys = append(keys, "env = { "+strings.Join(env, ", ")+" }")
		}
		changed, err := d.set(tomlTable{path: codexServer, keys: keys})
		if err != nil {
			return fmt.Errorf("%w: %s: %v (nothing was changed)", ErrInvalidSettings, r.Path, err)
		}
		switch {
		case !had:
			r.Added = append(r.Added, "mcp_servers.mnemo")
		case changed:
			r.Updated = append(r.Updated, "mcp_servers.mnemo")
		}
		return nil
	})
}

// uninstallCodexMCP removes [mcp_servers.mnemo] and its sub-tables from the
// config.toml at path when it is Mnemo's.
func uninstallCodexMCP(path string) (Result, error) {
	return editTOML(path, nil, func(d *tomlDoc, r *Result) error {
		if err := codexServerIsMnemo(d, r.Path); err != nil {
			return err
		}
		removed, err := d.remove(codexServer)
		if removed {
			r.Removed = append(r.Removed, "mcp_servers.mnemo")
		}
		return err
	})
}

// codexServerIsMnemo refuses a [mcp_servers.mnemo] whose command is not a
// program named mnemo.
func codexServerIsMnemo(d *tomlDoc, path string) error {
	i := d.table(codexServer)
	if i < 0 {
		return nil
	}
	st, ok := d.keyIn(i, "command")
	command, isString := st.stringValue()
	if ok && isString && filepath.Base(command) == "mnemo" {
		return nil
	}
	what := "no command"
	if ok {
		what = "the command " + st.value
	}
	return fmt.Errorf("%w: %s: [mcp_servers.mnemo] at line %d has %s, not Mnemo's; rename or remove it (nothing was changed)",
		ErrInvalidSettings, path, d.stmts[i].first+1, what)
}

// editTOML reads the TOML file at path (none is an empty one), lets change
// edit it, and writes it back if it changed: backed up, atomically, with
// its mode. A file it cannot read is refused, with the line and column.
func editTOML(path string, now func() time.Time, change func(d *tomlDoc, r *Result) error) (Result, error) {
	if now == nil {
		now = time.Now
	}
	real, err := filepath.EvalSymlinks(path)
	if errors.Is(err, fs.ErrNotExist) {
		real, err = path, nil
	}
	if err != nil {
		return Result{}, fmt.Errorf("config %s: %w", path, err)
	}
	r := Result{Path: real}
	data, err := os.ReadFile(real)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return r, fmt.Errorf("config: %w", err)
	}
	d, err := parseTOML(string(data))
	if err != nil {
		return r, asInvalid(real, err)
	}
	if err := change(d, &r); err != nil {
		return r, err
	}
	out := d.String()
	if out == string(data) {
		return r, nil
	}
	if exists && len(r.Removed) > 0 && strings.TrimSpace(out) == "" && !hasBackup(real) {
		// Nothing but what was taken out, not even a comment, in a file
		// Mnemo wrote whole (a file it found was backed up when it first
		// changed it, and keeps its bytes, however empty): the file goes,
		// as a JSON settings file does (editFile), and with it a
		// project's .codex folder the install made.
		if err := deleteFile(real); err != nil {
			return r, fmt.Errorf("config: %w", err)
		}
		r.Changed, r.Deleted = true, true
		return r, nil
	}
	mode := fs.FileMode(0o600)
	if exists {
		fi, err := os.Stat(real)
		if err != nil {
			return r, fmt.Errorf("config: %w", err)
		}
		mode = fi.Mode().Perm()
		if r.Backup, err = backup(real, data, mode, now()); err != nil {
			return r, err
		}
	}
	if err := writeAtomic(real, []byte(out), mode); err != nil {
		return r, err
	}
	r.Changed = true
	return r, nil
}

// Codex CLI runs a hook of hooks.json only once the user trusted it: the
// TUI asks, and records the answer in the user's config.toml as
//
//	[hooks.state."<hooks.json>:<event>:<group>:<handler>"]
//	trusted_hash = "sha256:<hex>"
//
// (event in snake case, group and handler indexes from 0), the hash that
// of the handler as Codex reads it (codexHookHash). `codex exec` skips an
// untrusted hook without a word. Installing Mnemo's hooks is the user's
// decision to run them, so the installer records that trust next to them,
// and takes it back on uninstall; a handler changed by hand is no longer
// trusted, as Codex wants.

// codexConfig returns the user's config.toml: $CODEX_HOME/config.toml, else
// <home>/.codex/config.toml.
func codexConfig(home string) (string, error) {
	if dir := os.Getenv(envCodexHome); dir != "" {
		return filepath.Abs(filepath.Join(dir, "config.toml"))
	}
	if home == "" {
		return "", errors.New("install: Codex's config.toml: no home directory (set HOME or CODEX_HOME)")
	}
	return filepath.Abs(filepath.Join(home, ".codex", "config.toml"))
}

// withCodexTrust runs the edit of the hooks.json at hooksPath, then makes
// the trust records of the user's config.toml match Mnemo's handlers in it:
// those of handlers that are gone or moved are removed, those of Mnemo's
// handlers where they now stand written. A config.toml that cannot be read
// stops it all before hooks.json is touched.
func withCodexTrust(hooksPath string, o Options, edit func() (Result, error)) (Result, error) {
	cfg, err := codexConfig(o.Home)
	if err != nil {
		return Result{}, err
	}
	if data, err := os.ReadFile(cfg); err == nil {
		if _, err := parseTOML(string(data)); err != nil {
			return Result{Path: cfg}, asInvalid(cfg, err)
		}
	}
	abs, err := filepath.Abs(hooksPath)
	if err != nil {
		return Result{}, err
	}
	before, err := codexTrust(abs)
	if err != nil {
		return Result{}, err
	}
	r, err := edit()
	if err != nil {
		return r, err
	}
	after, err := codexTrust(abs)
	if err != nil {
		return r, err
	}
	t, err := editTOML(cfg, o.Now, func(d *tomlDoc, t *Result) error {
		for key := range before {
			if _, still := after[key]; still {
				continue
			}
			removed, err := d.remove(trustTable(key))
			if err != nil {
				return err
			}
			if removed {
				t.Removed = append(t.Removed, key)
			}
		}
		for _, key := range sortedKeys(after) {
			had := d.table(trustTable(key)) >= 0
			changed, err := d.set(tomlTable{path: trustTable(key), keys: []string{"trusted_hash = " + tomlString(after[key])}})
			if err != nil {
				return fmt.Errorf("%w: %s: %v (nothing was changed)", ErrInvalidSettings, t.Path, err)
			}
			switch {
			case !had:
				t.Added = append(t.Added, key)
			case changed:
				t.Updated = append(t.Updated, key)
			}
		}
		return nil
	})
	t.Label = "trust of Mnemo's hooks"
	t.Added, t.Updated, t.Removed = trustEvents(t.Added), trustEvents(t.Updated), trustEvents(t.Removed)
	r.Also = append(r.Also, t)
	return r, err
}

func trustTable(key string) []string { return []string{"hooks", "state", key} }

// trustEvents names trust keys by their event and place, for people.
func trustEvents(keys []string) []string {
	for i, k := range keys {
		if j := strings.LastIndex(k, ".json:"); j >= 0 {
			keys[i] = k[j+len(".json:"):]
		}
	}
	return keys
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// codexTrust returns the trust key and hash of each of Mnemo's handlers in
// the hooks.json at path (none when there is no file).
func codexTrust(path string) (map[string]string, error) {
	out := map[string]string{}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	root, err := parseSettings(path, data)
	if err != nil {
		return nil, err
	}
	raw, _ := root.get("hooks")
	events, err := parseObject(raw)
	if err != nil {
		return out, nil // no hooks object: nothing of Mnemo's
	}
	for _, ev := range events {
		var groups []struct {
			Matcher *string           `json:"matcher"`
			Hooks   []json.RawMessage `json:"hooks"`
		}
		if json.Unmarshal(ev.value, &groups) != nil {
			continue
		}
		event := snakeCase(ev.key)
		for g, group := range groups {
			for h, handler := range group.Hooks {
				var c codexHandler
				if json.Unmarshal(handler, &c) != nil || !IsMnemoCommand(c.Command) {
					continue
				}
				matcher := group.Matcher
				if event == "user_prompt_submit" || event == "stop" {
					matcher = nil // events without matchers
				}
				out[fmt.Sprintf("%s:%s:%d:%d", path, event, g, h)] = codexHookHash(event, matcher, c)
			}
		}
	}
	return out, nil
}

// codexHandler is a command handler as Codex reads it.
type codexHandler struct {
	Type    string `json:"type"`
	Command string `json:"command"`
	Timeout *int   `json:"timeout"`
	Async   bool   `json:"async"`
}

// codexHookHash is Codex CLI 0.169.0's hash of a handler: SHA-256 of the
// compact JSON, keys sorted, of {"event_name", "matcher" (when there is
// one), "hooks": [{"type", "command", "timeout" (600 when absent),
// "async"}]}. Checked against the currentHash its app server's hooks/list
// gives for the same file.
func codexHookHash(event string, matcher *string, c codexHandler) string {
	timeout := 600
	if c.Timeout != nil {
		timeout = *c.Timeout
	}
	type handler struct { // fields in sorted order
		Async   bool   `json:"async"`
		Command string `json:"command"`
		Timeout int    `json:"timeout"`
		Type    string `json:"type"`
	}
	v := map[string]any{"event_name": event, "hooks": []handler{{c.Async, c.Command, timeout, "command"}}}
	if matcher != nil {
		v["matcher"] = *matcher
	}
	b, _ := hosts.MarshalJSON(v)
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// snakeCase turns an event name into Codex's key: SessionStart →
// session_start.
func snakeCase(s string) string {
	var b strings.Builder
	for i, r := range s {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}
