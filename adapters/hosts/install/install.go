package install

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/mnemo-dev/mnemo/adapters/hosts"
	"github.com/mnemo-dev/mnemo/memory/atomicfile"
)

// HookBinary is the base name of the hook executable (mnemo-hook.exe on
// Windows). Install and Uninstall recognize Mnemo's hooks by it, wherever
// the binary lives.
const HookBinary = "mnemo-hook" + exeSuffix

// MnemoOnPath is MCPOptions.Mnemo for a file people share (a project's
// .vscode/mcp.json, .mcp.json): the mnemo binary by its name, found on
// each person's PATH, not this machine's path to it.
const MnemoOnPath = "mnemo" + exeSuffix

// checkMnemo refuses an MCP server's command that is neither an absolute
// path nor MnemoOnPath.
func checkMnemo(mnemo string) error {
	if !filepath.IsAbs(mnemo) && mnemo != MnemoOnPath {
		return fmt.Errorf("install: the mnemo binary must be an absolute path or %q, not %q", MnemoOnPath, mnemo)
	}
	return nil
}

// Installer errors.
var (
	// ErrInvalidSettings is a settings file that is not valid JSON, or not
	// shaped as Claude Code's settings are; the file is left untouched.
	ErrInvalidSettings = errors.New("invalid settings file")
	// ErrUnknownScope is a scope SettingsPath does not know.
	ErrUnknownScope = errors.New("unknown settings scope")
)

// The scopes of SettingsPath.
const (
	ScopeUser    = "user"    // ~/.claude/settings.json: every project of this user
	ScopeProject = "project" // <project>/.claude/settings.json: shared with the project
	ScopeLocal   = "local"   // <project>/.claude/settings.local.json: this user, this project
)

// SettingsPath returns the Claude Code settings file of a scope: for
// ScopeUser $CLAUDE_CONFIG_DIR/settings.json when that is set, else
// <home>/.claude/settings.json (home is the user's home directory); for
// ScopeProject <projectDir>/.claude/settings.json; for ScopeLocal
// <projectDir>/.claude/settings.local.json.
func SettingsPath(scope, projectDir, home string) (string, error) {
	switch scope {
	case ScopeUser:
		if dir := os.Getenv("CLAUDE_CONFIG_DIR"); dir != "" {
			return filepath.Abs(filepath.Join(dir, "settings.json"))
		}
		if home == "" {
			return "", errors.New("settings path: no home directory")
		}
		return filepath.Abs(filepath.Join(home, ".claude", "settings.json"))
	case ScopeProject, ScopeLocal:
		if projectDir == "" {
			return "", fmt.Errorf("settings path: scope %s needs a project directory", scope)
		}
		name := "settings.json"
		if scope == ScopeLocal {
			name = "settings.local.json"
		}
		return filepath.Abs(filepath.Join(projectDir, ".claude", name))
	}
	return "", fmt.Errorf("%w %q: use %s, %s or %s", ErrUnknownScope, scope, ScopeUser, ScopeProject, ScopeLocal)
}

// Options say what Install writes.
type Options struct {
	// HookPath is the absolute path of the mnemo-hook binary.
	HookPath string
	// Now stamps the backup's name; nil means time.Now.
	Now func() time.Time
	// Home is the user's home, where a host's own files are found when its
	// variable (CODEX_HOME…) is not set: Codex CLI's trust of its hooks.
	Home string
}

// Result says what Install or Uninstall did.
type Result struct {
	// Path is the file examined, symlinks resolved.
	Path string
	// Changed reports whether the file was written.
	Changed bool
	// Backup is the copy of the previous file, when there was one to keep.
	Backup string
	// Deleted reports that the file was removed: a file of Mnemo's own
	// that Uninstall left with nothing of Mnemo's in it.
	Deleted bool
	// Label names what the file holds for people ("hooks", "MCP server"),
	// when the installer of a host says.
	Label string
	// Also lists what the same install changed in other files (Codex's
	// trust of its hooks in config.toml).
	Also []Result
	// Added lists the events that had no Mnemo hook before; Updated those
	// whose Mnemo hook changed (a moved binary, new timeouts); Removed
	// those that lost one.
	Added, Updated, Removed []string
}

// HookGroup is one entry of an event's array in Claude Code's settings
// (and a plugin's hooks/hooks.json).
type HookGroup struct {
	Matcher string        `json:"matcher,omitempty"`
	Hooks   []HookHandler `json:"hooks"`
}

// HookHandler is one command hook. With Args, Claude Code runs Command in
// exec form: no shell, each argument passed as is.
type HookHandler struct {
	Type    string   `json:"type"`
	Command string   `json:"command"`
	Args    []string `json:"args,omitempty"`
	Timeout int      `json:"timeout,omitempty"`
}

// HookGroups returns Mnemo's hook configuration for a hook binary at
// command: one group per stage of Stages, running `command <Event>`.
func HookGroups(command string) map[string]HookGroup {
	groups := make(map[string]HookGroup, len(hosts.Stages))
	for _, s := range hosts.Stages {
		groups[s.Event] = HookGroup{
			Matcher: s.Matcher,
			Hooks:   []HookHandler{{Type: "command", Command: command, Args: []string{s.Event}, Timeout: s.Timeout}},
		}
	}
	return groups
}

// Install merges Mnemo's hooks (HookGroups of o.HookPath) into the Claude
// Code settings file at path, creating it if needed.
//
// Every other key and every hook of the user's is kept, in its order, and
// so is every byte of the file but Mnemo's entries (jsonedit.go): its
// indentation, one-line arrays, a final newline or none. A
// hook whose command's base name is mnemo-hook is Mnemo's: it is replaced
// where it stood (so a moved binary is updated, not duplicated), and a
// second Install changes nothing. Before changing an existing file it
// copies it to <path>.bak-<timestamp>; it writes atomically (a temporary
// file, fsync, rename) with the file's mode, through a symlink to its
// target.
//
// A file that is not valid JSON, or whose hooks are not shaped as Claude
// Code's, is refused with an error wrapping ErrInvalidSettings that names
// the file and the position, and is not touched.
func Install(path string, o Options) (Result, error) {
	if !filepath.IsAbs(o.HookPath) || filepath.Base(o.HookPath) != HookBinary {
		return Result{}, fmt.Errorf("install: the hook must be an absolute path to %s, not %q", HookBinary, o.HookPath)
	}
	groups := HookGroups(o.HookPath)
	entries := make([]eventEntry, len(hosts.Stages))
	for i, s := range hosts.Stages {
		raw, err := hosts.MarshalJSON(groups[s.Event])
		if err != nil {
			return Result{}, err
		}
		entries[i] = eventEntry{event: s.Event, raw: raw}
	}
	return edit(path, "hooks", o.Now, func(hooks *object, r *Result) error {
		return mergeEvents(hooks, entries, claudeShape, r)
	})
}

// Uninstall removes Mnemo's hooks (those whose command's base name is
// mnemo-hook) from the settings file at path, with the groups and event
// arrays they leave empty, and the hooks key if it ends up empty. Nothing
// else changes. Backup, atomic write and refusal of invalid files are as
// for Install. A missing file is no error.
func Uninstall(path string) (Result, error) {
	return edit(path, "hooks", nil, func(hooks *object, r *Result) error {
		return removeEvents(hooks, claudeShape, r)
	})
}

// A shape is how a host's hook file lists its handlers under each event.
type shape struct {
	// grouped: an event holds groups ({matcher, hooks: [handler]}), as in
	// Claude Code, Codex and Gemini CLI; else it holds the handlers
	// themselves, as in Cursor, VS Code, Copilot CLI and Windsurf.
	grouped bool
	// key is the handler's field that holds the command: "command", or
	// Copilot CLI's "bash".
	key string
}

var claudeShape = shape{grouped: true, key: "command"}

// eventEntry is Mnemo's entry (a group or a handler) of one event.
type eventEntry struct {
	event string
	raw   json.RawMessage
}

// mergeEvents puts Mnemo's entry of each event into hooks, where Mnemo's
// old entry of that event stood (so that a moved binary is updated, not
// duplicated), else last; everything else stays as it was.
func mergeEvents(hooks *object, entries []eventEntry, sh shape, r *Result) error {
	for _, e := range entries {
		old, _ := hooks.get(e.event)
		list, err := eventList(r.Path, e.event, old)
		if err != nil {
			return err
		}
		kept, at, removed, err := withoutMnemo(list, sh)
		if err != nil {
			return err
		}
		if at < 0 {
			at = len(kept)
		}
		list = append(kept[:at:at], append([]json.RawMessage{e.raw}, kept[at:]...)...)
		raw, err := hosts.MarshalJSON(list)
		if err != nil {
			return err
		}
		switch {
		case removed == 0:
			r.Added = append(r.Added, e.event)
		case !equalJSON(old, raw):
			r.Updated = append(r.Updated, e.event)
		}
		hooks.set(e.event, raw)
	}
	return nil
}

// removeEvents takes Mnemo's handlers out of every event of hooks, with
// the groups and events they leave empty.
func removeEvents(hooks *object, sh shape, r *Result) error {
	for i := 0; i < len(*hooks); i++ {
		m := (*hooks)[i]
		list, err := eventList(r.Path, m.key, m.value)
		if err != nil {
			return err
		}
		kept, _, removed, err := withoutMnemo(list, sh)
		if err != nil {
			return err
		}
		if removed == 0 {
			continue
		}
		r.Removed = append(r.Removed, m.key)
		if len(kept) == 0 {
			hooks.del(m.key)
			i--
			continue
		}
		raw, err := hosts.MarshalJSON(kept)
		if err != nil {
			return err
		}
		(*hooks)[i].value = raw
	}
	return nil
}

// edit reads the settings at path, lets change edit the object under the
// top-level key (hooks, mcpServers), and writes the file back if anything
// changed.
func edit(path, key string, now func() time.Time, change func(sub *object, r *Result) error) (Result, error) {
	return editFile(path, now, nil, func(root *object, r *Result) (bool, error) {
		return editKey(root, key, r, change)
	})
}

// editKey lets change edit the object under a top-level key of root,
// removing the key when change emptied it. It reports whether the object
// holds anything.
func editKey(root *object, key string, r *Result, change func(sub *object, r *Result) error) (bool, error) {
	raw, had := root.get(key)
	var sub object
	if had && string(raw) != "null" {
		var err error
		if sub, err = parseObject(raw); err != nil {
			return false, fmt.Errorf("%w: %s: %q is not an object", ErrInvalidSettings, r.Path, key)
		}
	}
	if err := change(&sub, r); err != nil {
		return false, err
	}
	switch {
	case len(sub) > 0:
		root.set(key, sub.marshal())
	case had && len(r.Removed) > 0:
		root.del(key)
	}
	return len(sub) > 0, nil
}

// editFile reads the JSON file at path, lets change edit its top-level
// object, and writes the file back if anything changed: backed up first,
// atomically, with its mode. change reports whether what it made is worth
// creating the file for, when there was none. drop, if not nil, says
// whether the edited file is to be deleted instead (a file of Mnemo's own
// with nothing of Mnemo's left in it). A file that held nothing but what
// change removed is deleted too, with the folders it leaves empty
// (RemoveEmptyDirs): a project's .vscode/mcp.json or .claude/settings.json
// that an install made goes at uninstall, not left as an empty object
// and a backup for git status to show.
func editFile(path string, now func() time.Time, drop func(root object) bool, change func(root *object, r *Result) (keep bool, err error)) (Result, error) {
	if now == nil {
		now = time.Now
	}
	real, err := filepath.EvalSymlinks(path)
	if errors.Is(err, fs.ErrNotExist) {
		real, err = path, nil
	}
	if err != nil {
		return Result{}, fmt.Errorf("settings %s: %w", path, err)
	}
	r := Result{Path: real}
	data, err := os.ReadFile(real)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return r, fmt.Errorf("settings: %w", err)
	}

	root, err := parseSettings(real, data)
	if err != nil {
		return r, err
	}
	keep, err := change(&root, &r)
	if err != nil {
		return r, err
	}

	out := root.marshal()
	deleting := exists && drop != nil && drop(root)
	stripped := data
	if jsoncFile(real) {
		stripped = stripJSONC(data)
	}
	if exists && !deleting && equalJSON(stripped, out) {
		return r, nil
	}
	if !exists && !keep {
		return r, nil
	}
	// The person's file keeps its bytes but for Mnemo's (jsonedit.go); a
	// new or empty one is written indented by two spaces.
	text, ok := []byte(nil), false
	if len(bytes.TrimSpace(stripped)) > 0 {
		text, ok = spliceJSON(data, stripped, out)
		// A splice that would not read back as the edit is not written.
		ok = ok && equalJSON(stripJSONC(text), out)
	}
	if !ok {
		var indented bytes.Buffer
		if err := json.Indent(&indented, out, "", "  "); err != nil {
			return r, fmt.Errorf("settings: %w", err)
		}
		indented.WriteByte('\n')
		text = indented.Bytes()
	}

	if exists && len(root) == 0 && len(r.Removed) > 0 && strings.Join(strings.Fields(string(text)), "") == "{}" {
		// Nothing but what was taken out, not even a comment: the file
		// goes, as one of Mnemo's own does.
		deleting = true
	}

	mode := fs.FileMode(0o600)
	if exists {
		fi, err := os.Stat(real)
		if err != nil {
			return r, fmt.Errorf("settings: %w", err)
		}
		mode = fi.Mode().Perm()
	}
	if exists && !deleting {
		// A file that goes held nothing but Mnemo's: no copy of it.
		if r.Backup, err = backup(real, data, mode, now()); err != nil {
			return r, err
		}
	}
	if deleting {
		if err := deleteFile(real); err != nil {
			return r, fmt.Errorf("settings: %w", err)
		}
		r.Changed, r.Deleted = true, true
		return r, nil
	}
	if err := writeAtomic(real, text, mode); err != nil {
		return r, err
	}
	r.Changed = true
	return r, nil
}

// parseSettings parses a settings file, an object. An empty file is an
// empty object. The files of hosts that read JSON with comments
// (jsoncFile) may have comments and trailing commas.
func parseSettings(path string, data []byte) (object, error) {
	if jsoncFile(path) {
		data = stripJSONC(data)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil
	}
	if !json.Valid(data) {
		var v any
		err := json.Unmarshal(data, &v)
		if se, ok := errors.AsType[*json.SyntaxError](err); ok {
			line, col := position(data, se.Offset)
			return nil, fmt.Errorf("%w: %s: line %d, column %d: %v (fix it by hand; nothing was changed)", ErrInvalidSettings, path, line, col, se)
		}
		return nil, fmt.Errorf("%w: %s: %v (fix it by hand; nothing was changed)", ErrInvalidSettings, path, err)
	}
	root, err := parseObject(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: the top level is not an object (nothing was changed)", ErrInvalidSettings, path)
	}
	return root, nil
}

// position turns a byte offset into a line and a column, both from 1.
func position(data []byte, offset int64) (line, col int) {
	offset = min(max(offset, 1), int64(len(data)))
	before := data[:offset-1]
	line = bytes.Count(before, []byte("\n")) + 1
	col = len(before) - bytes.LastIndexByte(before, '\n')
	return line, col
}

// eventList parses an event's array of hook groups; absent is empty.
func eventList(path, event string, raw json.RawMessage) ([]json.RawMessage, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("%w: %s: hooks.%s is not an array (nothing was changed)", ErrInvalidSettings, path, event)
	}
	return list, nil
}

// withoutMnemo removes Mnemo's handlers from an event's entries. It
// returns the entries left (a group left with no handler goes), the index
// in them where the first entry that held one of Mnemo's stood (-1 for
// none), and how many handlers it removed. A group's other keys and other
// handlers stay as they were.
func withoutMnemo(list []json.RawMessage, sh shape) (kept []json.RawMessage, at, removed int, err error) {
	at = -1
	for _, g := range list {
		if !sh.grouped {
			if isMnemoHandler(g, sh.key) {
				if at < 0 {
					at = len(kept)
				}
				removed++
				continue
			}
			kept = append(kept, g)
			continue
		}
		group, err := parseObject(g)
		if err != nil {
			kept = append(kept, g) // not a group; not ours
			continue
		}
		hraw, ok := group.get("hooks")
		var handlers []json.RawMessage
		if !ok || json.Unmarshal(hraw, &handlers) != nil {
			kept = append(kept, g)
			continue
		}
		var left []json.RawMessage
		for _, h := range handlers {
			if isMnemoHandler(h, sh.key) {
				removed++
				continue
			}
			left = append(left, h)
		}
		if len(left) == len(handlers) {
			kept = append(kept, g)
			continue
		}
		if at < 0 {
			at = len(kept)
		}
		if len(left) == 0 {
			continue
		}
		raw, err := hosts.MarshalJSON(left)
		if err != nil {
			return nil, 0, 0, err
		}
		group.set("hooks", raw)
		kept = append(kept, group.marshal())
	}
	return kept, at, removed, nil
}

// isMnemoHandler reports whether a handler's command (its field key) runs
// mnemo-hook.
func isMnemoHandler(h json.RawMessage, key string) bool {
	var fields map[string]json.RawMessage
	if json.Unmarshal(h, &fields) != nil {
		return false
	}
	var command string
	return json.Unmarshal(fields[key], &command) == nil && IsMnemoCommand(command)
}

// IsMnemoCommand reports whether a hook command runs mnemo-hook: whether
// the base name of its program (the whole command in exec form, the first
// word of a shell command, quoted or not) is mnemo-hook.
func IsMnemoCommand(command string) bool {
	prog := commandProgram(command)
	return prog != "" && filepath.Base(prog) == HookBinary
}

// backupStamp is the end of a backup's name: <path>.bak-<time>[-n].
var backupStamp = regexp.MustCompile(`^\d{8}T\d{6}Z(-\d+)?$`)

// backup copies the current settings to <path>.bak-<time>, durably, and
// then removes the older copies it made of path: one backup per file,
// the file as it was before the last change (installs and uninstalls
// would otherwise leave a copy each).
func backup(path string, data []byte, mode fs.FileMode, now time.Time) (string, error) {
	name, err := writeBackup(path, data, mode, now)
	if err != nil {
		return "", err
	}
	removeBackups(path, name)
	return name, nil
}

// deleteFile removes a file that held nothing but Mnemo's entries, with
// the backups Mnemo made of it (a copy taken before an earlier step of
// the same install or uninstall holds Mnemo's entries only, and would be
// left alone in a folder git status shows), and then the folders that
// leaves empty (RemoveEmptyDirs).
func deleteFile(path string) error {
	if err := os.Remove(path); err != nil {
		return err
	}
	removeBackups(path, "")
	if err := atomicfile.SyncDir(filepath.Dir(path)); err != nil {
		return fmt.Errorf("fsync folder: %w", err)
	}
	RemoveEmptyDirs(filepath.Dir(path))
	return nil
}

// removeBackups removes the backups Mnemo made of path
// (<path>.bak-<time>[-n]) but keep; a person's own .bak- file stays.
func removeBackups(path, keep string) {
	older, _ := filepath.Glob(path + ".bak-*")
	for _, b := range older {
		if b != keep && backupStamp.MatchString(strings.TrimPrefix(b, path+".bak-")) {
			os.Remove(b)
		}
	}
}

// hasBackup reports whether Mnemo made a backup of path that is still
// there.
func hasBackup(path string) bool {
	baks, _ := filepath.Glob(path + ".bak-*")
	return slices.ContainsFunc(baks, func(b string) bool {
		return backupStamp.MatchString(strings.TrimPrefix(b, path+".bak-"))
	})
}

// RemoveEmptyDirs removes dir, and then its parent, when it is empty and
// a host's folder (a dot folder, or one in a dot folder): the folders an
// install made (.github/hooks, .vscode, .cursor/rules) for a file an
// uninstall deleted (a rules file too: the command line calls it).
// A folder that holds anything stays, and so does a project's or the
// home (.vscode's parent).
func RemoveEmptyDirs(dir string) {
	for range 2 {
		if !strings.HasPrefix(filepath.Base(dir), ".") && !strings.HasPrefix(filepath.Base(filepath.Dir(dir)), ".") {
			return
		}
		if os.Remove(dir) != nil {
			return
		}
		dir = filepath.Dir(dir)
	}
}

func writeBackup(path string, data []byte, mode fs.FileMode, now time.Time) (string, error) {
	stamp := now.UTC().Format("20060102T150405Z")
	for i := 0; ; i++ {
		name := path + ".bak-" + stamp
		if i > 0 {
			name += fmt.Sprintf("-%d", i)
		}
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("settings backup: %w", err)
		}
		_, err = f.Write(data)
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(name)
			return "", fmt.Errorf("settings backup: %w", err)
		}
		return name, nil
	}
}

// writeAtomic replaces path with data (atomicfile.WriteFile), making its
// folder first.
func writeAtomic(path string, data []byte, mode fs.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("settings: %w", err)
	}
	if err := atomicfile.WriteFile(path, data, mode); err != nil {
		return fmt.Errorf("settings: write %s: %w", path, err)
	}
	return nil
}

// An object is a JSON object as its members, in order, with their values
// as written: editing one member leaves the others as they were.
type object []member

type member struct {
	key   string
	value json.RawMessage
}

// parseObject parses raw, which must be one JSON object.
func parseObject(raw []byte) (object, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not an object")
	}
	o := object{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		o = append(o, member{key: key, value: v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	return o, nil
}

// get returns the value of the first member named key.
func (o object) get(key string) (json.RawMessage, bool) {
	for _, m := range o {
		if m.key == key {
			return m.value, true
		}
	}
	return nil, false
}

// set replaces the value of the first member named key, or appends one.
func (o *object) set(key string, v json.RawMessage) {
	for i := range *o {
		if (*o)[i].key == key {
			(*o)[i].value = v
			return
		}
	}
	*o = append(*o, member{key: key, value: v})
}

// del removes every member named key.
func (o *object) del(key string) {
	kept := (*o)[:0]
	for _, m := range *o {
		if m.key != key {
			kept = append(kept, m)
		}
	}
	*o = kept
}

// marshal writes the object compactly, its values as they are.
func (o object) marshal() json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := hosts.MarshalJSON(m.key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(m.value)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// equalJSON reports whether a and b are the same JSON text but for
// insignificant whitespace.
func equalJSON(a, b []byte) bool {
	var ca, cb bytes.Buffer
	if json.Compact(&ca, a) != nil || json.Compact(&cb, b) != nil {
		return false
	}
	return bytes.Equal(ca.Bytes(), cb.Bytes())
}

// MCPServerName is the name Mnemo's MCP server is registered under; its
// tools are then mcp__mnemo__search and so on.
const MCPServerName = "mnemo"

// MCPConfigPath returns the file Claude Code reads MCP servers from for a
// scope: for ScopeUser (and ScopeLocal) ~/.claude.json, or
// $CLAUDE_CONFIG_DIR/.claude.json when that is set; for ScopeProject
// <projectDir>/.mcp.json.
func MCPConfigPath(scope, projectDir, home string) (string, error) {
	switch scope {
	case ScopeUser, ScopeLocal:
		if dir := os.Getenv("CLAUDE_CONFIG_DIR"); dir != "" {
			return filepath.Join(dir, ".claude.json"), nil
		}
		return filepath.Join(home, ".claude.json"), nil
	case ScopeProject:
		return filepath.Join(projectDir, ".mcp.json"), nil
	}
	return "", fmt.Errorf("%w: %q", ErrUnknownScope, scope)
}

// InstallMCP registers `<mnemoPath> mcp` as the stdio MCP server "mnemo"
// in the file at path (see MCPConfigPath), keeping every other key and
// server, with the same backup, atomic write and refusal of invalid files
// as Install. A second InstallMCP changes nothing.
func InstallMCP(path, mnemoPath string, now func() time.Time) (Result, error) {
	if err := checkMnemo(mnemoPath); err != nil {
		return Result{}, err
	}
	return installMCPEntry(path, "mcpServers", map[string]any{"type": "stdio", "command": mnemoPath, "args": []string{"mcp"}, "env": map[string]string{}}, now)
}

// UninstallMCP removes the "mnemo" MCP server from the file at path, and
// nothing else. A missing file is no error.
func UninstallMCP(path string) (Result, error) {
	return uninstallMCPEntry(path, "mcpServers")
}

// installMCPEntry sets the server MCPServerName of the object under key
// (mcpServers, or VS Code's servers) to entry.
func installMCPEntry(path, key string, entry any, now func() time.Time) (Result, error) {
	raw, err := hosts.MarshalJSON(entry)
	if err != nil {
		return Result{}, err
	}
	name := key + "." + MCPServerName
	return edit(path, key, now, func(servers *object, r *Result) error {
		old, had := servers.get(MCPServerName)
		switch {
		case !had:
			r.Added = append(r.Added, name)
		case !equalJSON(old, raw):
			r.Updated = append(r.Updated, name)
		}
		servers.set(MCPServerName, raw)
		return nil
	})
}

// uninstallMCPEntry removes the server MCPServerName from the object
// under key.
// A file left holding nothing is deleted (editFile).
func uninstallMCPEntry(path, key string) (Result, error) {
	return edit(path, key, nil, func(servers *object, r *Result) error {
		if _, had := servers.get(MCPServerName); had {
			servers.del(MCPServerName)
			r.Removed = append(r.Removed, key+"."+MCPServerName)
		}
		return nil
	})
}
