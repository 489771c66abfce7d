package install_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mnemo-dev/mnemo/adapters/hosts"
	"github.com/mnemo-dev/mnemo/adapters/hosts/install"
)

// installCase is one host's installer at one scope, with what its files must
// hold.
type installCase struct {
	host, scope string
	// first is Mnemo's entry of the host's first event, as the host
	// documents it, for a hook at /opt/mnemo/bin/mnemo-hook.
	first string
	// version: the file starts with "version": 1.
	version bool
}

var installCases = []installCase{
	{host: "codex", scope: "user", first: `{"hooks":[{"type":"command","command":"'/opt/mnemo/bin/mnemo-hook' --host codex SessionStart","timeout":10}]}`},
	{host: "codex", scope: "project", first: `{"hooks":[{"type":"command","command":"'/opt/mnemo/bin/mnemo-hook' --host codex SessionStart","timeout":10}]}`},
	{host: "gemini", scope: "user", first: `{"matcher":"*","hooks":[{"name":"mnemo","type":"command","command":"'/opt/mnemo/bin/mnemo-hook' --host gemini SessionStart","timeout":10000}]}`},
	{host: "gemini", scope: "project", first: `{"matcher":"*","hooks":[{"name":"mnemo","type":"command","command":"'/opt/mnemo/bin/mnemo-hook' --host gemini SessionStart","timeout":10000}]}`},
	{host: "cursor", scope: "user", version: true, first: `{"command":"'/opt/mnemo/bin/mnemo-hook' --host cursor sessionStart","timeout":10}`},
	{host: "cursor", scope: "project", version: true, first: `{"command":"'/opt/mnemo/bin/mnemo-hook' --host cursor sessionStart","timeout":10}`},
	{host: "vscode", scope: "project", first: `{"type":"command","command":"'/opt/mnemo/bin/mnemo-hook' --host vscode SessionStart","timeout":10}`},
	{host: "copilot", scope: "user", version: true, first: `{"type":"command","bash":"'/opt/mnemo/bin/mnemo-hook' --host copilot sessionStart","timeoutSec":10}`},
	{host: "copilot", scope: "project", version: true, first: `{"type":"command","bash":"'/opt/mnemo/bin/mnemo-hook' --host copilot sessionStart","timeoutSec":10}`},
	{host: "windsurf", scope: "user", first: `{"command":"'/opt/mnemo/bin/mnemo-hook' --host windsurf pre_user_prompt","show_output":false}`},
	{host: "windsurf", scope: "project", first: `{"command":"'/opt/mnemo/bin/mnemo-hook' --host windsurf pre_user_prompt","show_output":false}`},
}

// hostEnv gives a test its own home and host folders.
func hostEnv(t *testing.T) (home, dir string) {
	t.Helper()
	root := t.TempDir()
	home, dir = filepath.Join(root, "home"), filepath.Join(root, "project")
	for _, d := range []string{home, dir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HOME", home)
	t.Setenv("CODEX_HOME", filepath.Join(home, ".codex"))
	t.Setenv("GEMINI_CLI_HOME", "")
	t.Setenv("COPILOT_HOME", "")
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	return home, dir
}

// userEntry is a handler of the user's in the host's format.
func userEntry(in install.Installer, command string) string {
	key := "command"
	if in.Host == "copilot" {
		key = "bash"
	}
	h := `{"type":"command","` + key + `":"` + command + `"}`
	if in.Host == "codex" || in.Host == "gemini" {
		return `{"hooks":[` + h + `]}`
	}
	return h
}

// userFile is a hooks file of the user's own: keys around "hooks", an
// event Mnemo does not hook, and an entry on Mnemo's first event; written
// as the installer indents, so that an uninstall must give it back byte
// for byte.
func userFile(t *testing.T, in install.Installer) []byte {
	t.Helper()
	var b bytes.Buffer
	raw := `{"theme":"dark","hooks":{"userOnly":[` + userEntry(in, "~/bin/audit.sh") + `],"` + in.Events[0] + `":[` + userEntry(in, "say started") + `]},"z":[1,2]}`
	if err := json.Indent(&b, []byte(raw), "", "  "); err != nil {
		t.Fatal(err)
	}
	b.WriteByte('\n')
	return b.Bytes()
}

// hooksOf reads a hooks file's events in order.
func hooksOf(t *testing.T, path string) (keys []string, events map[string][]json.RawMessage) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Hooks map[string][]json.RawMessage `json:"hooks"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return topKeys(t, data), f.Hooks
}

func compact(t *testing.T, raw []byte) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestHostInstallers runs each host's installer through a user's life with
// it: a fresh file, a file of the user's own kept in its order, a second
// install that changes nothing, a moved binary updated in place, an
// uninstall that gives the user's file back byte for byte (or deletes a
// file of Mnemo's own), and a broken file refused untouched.
func TestHostInstallers(t *testing.T) {
	for _, tc := range installCases {
		t.Run(tc.host+"/"+tc.scope, func(t *testing.T) {
			home, dir := hostEnv(t)
			in, ok := install.For(tc.host)
			if !ok {
				t.Fatal("no installer")
			}
			path, err := in.HooksPath(tc.scope, dir, home)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(path, home) && !strings.HasPrefix(path, dir) {
				t.Fatalf("path %s is neither under the home nor the project", path)
			}
			hook := "/opt/mnemo/bin/mnemo-hook"
			o := install.Options{HookPath: hook, Home: home, Now: fixedNow}

			// A fresh file.
			r, err := in.Install(path, o)
			if err != nil {
				t.Fatal(err)
			}
			if !r.Changed || r.Backup != "" || !slices.Equal(r.Added, in.Events) {
				t.Fatalf("fresh install: %+v", r)
			}
			keys, events := hooksOf(t, path)
			if want := []string{"hooks"}; tc.version {
				if want = []string{"version", "hooks"}; !slices.Equal(keys, want) {
					t.Errorf("keys %v, want %v", keys, want)
				}
			} else if !slices.Equal(keys, want) {
				t.Errorf("keys %v, want %v", keys, want)
			}
			for _, ev := range in.Events {
				if len(events[ev]) != 1 {
					t.Fatalf("%s: %d entries, want 1", ev, len(events[ev]))
				}
			}
			if got := compact(t, events[in.Events[0]][0]); got != tc.first {
				t.Errorf("%s:\n got %s\nwant %s", in.Events[0], got, tc.first)
			}
			w, err := in.Wired(path)
			if err != nil || w.State() != "broken (/opt/mnemo/bin/mnemo-hook is gone)" {
				t.Errorf("wired: %q, %v", w.State(), err)
			}
			if r, err := in.Uninstall(path, o); err != nil || !slices.Equal(r.Removed, in.Events) {
				t.Fatalf("uninstall: %+v, %v", r, err)
			}
			if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("after uninstall of a fresh install: stat %v (a file that held only Mnemo's goes)", err)
			}

			// A file of the user's own.
			orig := userFile(t, in)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			os.Remove(path)
			if err := os.WriteFile(path, orig, 0o640); err != nil {
				t.Fatal(err)
			}
			r, err = in.Install(path, o)
			if err != nil {
				t.Fatal(err)
			}
			if r.Backup == "" || !slices.Equal(r.Added, in.Events) {
				t.Fatalf("install over the user's file: %+v", r)
			}
			if b, _ := os.ReadFile(r.Backup); !bytes.Equal(b, orig) {
				t.Error("the backup is not the user's file")
			}
			keys, events = hooksOf(t, path)
			wantKeys := []string{"theme", "hooks", "z"}
			if tc.version {
				wantKeys = append([]string{"version"}, wantKeys...)
			}
			if !slices.Equal(keys, wantKeys) {
				t.Errorf("keys %v, want %v", keys, wantKeys)
			}
			first := events[in.Events[0]]
			if len(first) != 2 || compact(t, first[0]) != userEntry(in, "say started") || compact(t, first[1]) != tc.first {
				t.Errorf("%s: the user's entry first, Mnemo's after it; got %s", in.Events[0], first)
			}
			if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o640 {
				t.Errorf("mode: %v, %v", fi.Mode(), err)
			}
			installed, _ := os.ReadFile(path)

			// A second install changes nothing.
			if r, err := in.Install(path, o); err != nil || r.Changed || len(r.Added)+len(r.Updated) != 0 {
				t.Errorf("second install: %+v, %v", r, err)
			}
			if b, _ := os.ReadFile(path); !bytes.Equal(b, installed) {
				t.Error("a second install rewrote the file")
			}

			// A moved binary: every entry updated where it stood.
			moved := install.Options{HookPath: "/usr/local/bin/mnemo-hook", Home: home, Now: fixedNow}
			r, err = in.Install(path, moved)
			if err != nil || !r.Changed || len(r.Added) != 0 || !slices.Equal(r.Updated, in.Events) {
				t.Fatalf("moved binary: %+v, %v", r, err)
			}
			_, events = hooksOf(t, path)
			for _, ev := range in.Events {
				n := 0
				for _, e := range events[ev] {
					if strings.Contains(string(e), "mnemo-hook") {
						n++
						if !strings.Contains(string(e), "'/usr/local/bin/mnemo-hook' --host "+tc.host+" "+ev) {
							t.Errorf("%s: %s", ev, e)
						}
					}
				}
				if n != 1 {
					t.Errorf("%s: %d Mnemo entries after a move, want 1", ev, n)
				}
			}
			if compact(t, events[in.Events[0]][0]) != userEntry(in, "say started") {
				t.Errorf("the move reordered %s: %s", in.Events[0], events[in.Events[0]])
			}

			// Uninstall gives the user's file back.
			r, err = in.Uninstall(path, o)
			if err != nil || !slices.Equal(r.Removed, in.Events) || r.Deleted {
				t.Fatalf("uninstall: %+v, %v", r, err)
			}
			if b, _ := os.ReadFile(path); !bytes.Equal(b, func() []byte {
				if tc.version {
					// The version Install added stays: the host's file
					// format wants it.
					return bytes.Replace(orig, []byte("{\n"), []byte("{\n  \"version\": 1,\n"), 1)
				}
				return orig
			}()) {
				t.Errorf("after uninstall:\n%s\nwant\n%s", b, orig)
			}
			if r, err := in.Uninstall(path, o); err != nil || r.Changed {
				t.Errorf("second uninstall: %+v, %v", r, err)
			}

			// A broken file is refused, named, and left alone.
			broken := []byte("{\"hooks\": {\n  \"x\": [}\n")
			if err := os.WriteFile(path, broken, 0o600); err != nil {
				t.Fatal(err)
			}
			for name, op := range map[string]func() error{
				"install":   func() error { _, err := in.Install(path, o); return err },
				"uninstall": func() error { _, err := in.Uninstall(path, o); return err },
			} {
				err := op()
				if !errors.Is(err, install.ErrInvalidSettings) || !strings.Contains(err.Error(), path+": line 2, column 9") {
					t.Errorf("%s of a broken file: %v", name, err)
				}
			}
			if b, _ := os.ReadFile(path); !bytes.Equal(b, broken) {
				t.Error("the broken file was changed")
			}
		})
	}
}

// TestInstallerEvents: every event an installer writes is one the hook
// maps for that host, and together they reach every stage the host has;
// Cursor's per-kind tool events and Copilot CLI's PascalCase names, which
// would record each event twice, are not installed.
func TestInstallerEvents(t *testing.T) {
	for _, in := range install.Installers {
		h, ok := hosts.Named(in.Host)
		if !ok {
			t.Fatalf("%s: no host", in.Host)
		}
		reached := map[string]bool{}
		for _, ev := range in.Events {
			stage, ok := h.Stage(ev)
			if !ok {
				t.Errorf("%s: the hook does not map %s", in.Host, ev)
			}
			if reached[stage.Event] && stage.Event != hosts.EventPostToolUse {
				t.Errorf("%s: %s reaches %s a second time", in.Host, ev, stage.Event)
			}
			reached[stage.Event] = true
		}
		for _, stage := range h.Events {
			if !reached[stage] {
				t.Errorf("%s: no installed event reaches %s", in.Host, stage)
			}
		}
	}
	// Cursor: both families of edits and commands (builds before 2.x
	// send only the per-kind events), not afterMCPExecution.
	cursor, _ := install.For("cursor")
	for perKind, want := range map[string]bool{"afterShellExecution": true, "afterFileEdit": true, "afterMCPExecution": false} {
		if slices.Contains(cursor.Events, perKind) != want {
			t.Errorf("cursor installs %s: %t, want %t", perKind, !want, want)
		}
	}
	copilot, _ := install.For("copilot")
	for _, ev := range copilot.Events {
		if ev[0] >= 'A' && ev[0] <= 'Z' {
			t.Errorf("copilot installs %s", ev)
		}
	}
}

// TestCodexTimeouts: Codex reads seconds, and cuts a SessionEnd hook's
// timeout to 3 s; PostToolUse matches every tool.
func TestCodexTimeouts(t *testing.T) {
	home, _ := hostEnv(t)
	in, _ := install.For("codex")
	path, _ := in.HooksPath("user", "", home)
	if _, err := in.Install(path, install.Options{HookPath: "/opt/mnemo-hook", Home: home}); err != nil {
		t.Fatal(err)
	}
	_, events := hooksOf(t, path)
	for ev, want := range map[string]string{
		"SessionStart": `"timeout":10`, "UserPromptSubmit": `"timeout":5`, "Stop": `"timeout":5`,
		"SessionEnd": `"timeout":1`, "PostToolUse": `{"matcher":"*",`,
	} {
		if got := compact(t, events[ev][0]); !strings.Contains(got, want) {
			t.Errorf("%s: %s lacks %s", ev, got, want)
		}
	}
	if strings.Contains(compact(t, events["SessionStart"][0]), "matcher") {
		t.Error("SessionStart has a matcher: it would miss some sources")
	}
}

// TestVSCodeUserScope: VS Code's agent hooks read Claude Code's user
// settings, so the user scope writes Claude Code's hooks there, and says
// so.
func TestVSCodeUserScope(t *testing.T) {
	home, dir := hostEnv(t)
	in, _ := install.For("vscode")
	path, err := in.HooksPath("user", dir, home)
	if err != nil || path != filepath.Join(home, ".claude", "settings.json") {
		t.Fatalf("path %s, %v", path, err)
	}
	r, err := in.Install(path, install.Options{HookPath: "/opt/mnemo-hook", Home: home})
	if err != nil || len(r.Added) != len(hosts.Stages) {
		t.Fatalf("%+v, %v", r, err)
	}
	s, _, _ := readSettings(t, path)
	if h := mnemoHandlers(s, "SessionStart"); len(h) != 1 || h[0].Command != "/opt/mnemo-hook" || !slices.Equal(h[0].Args, []string{"SessionStart"}) {
		t.Errorf("Claude Code's hook: %+v", h)
	}
	if in.Note("user") == "" || in.Note("project") != "" {
		t.Error("the user scope's note")
	}
	if p, why, _ := in.MCPPath("user", dir, home); p != "" || why == "" {
		t.Errorf("user MCP: %q, %q", p, why)
	}
}

// TestWiring: a file with some of Mnemo's events is partly wired; one
// whose hook binary exists, fully.
func TestWiring(t *testing.T) {
	home, dir := hostEnv(t)
	hook := filepath.Join(dir, "bin", "mnemo-hook")
	if err := os.MkdirAll(filepath.Dir(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hook, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	in, _ := install.For("cursor")
	path, _ := in.HooksPath("project", dir, home)
	if w, err := in.Wired(path); err != nil || w.Exists || w.State() != "no" {
		t.Errorf("no file: %+v, %v", w, err)
	}
	if _, err := in.Install(path, install.Options{HookPath: hook, Home: home}); err != nil {
		t.Fatal(err)
	}
	if w, err := in.Wired(path); err != nil || w.State() != "yes" || !slices.Equal(w.Hooks, []string{hook}) {
		t.Errorf("installed: %+v, %v", w, err)
	}
	data, _ := os.ReadFile(path)
	var f map[string]map[string]json.RawMessage
	json.Unmarshal(data, &f)
	delete(f["hooks"], "stop")
	data, _ = json.Marshal(f)
	os.WriteFile(path, data, 0o644)
	if w, err := in.Wired(path); err != nil || w.State() != "partly (7 of 8 events)" || !slices.Equal(w.Missing, []string{"stop"}) {
		t.Errorf("partly: %+v, %v", w, err)
	}
}

// TestHookCommandQuoting: a path with spaces or quotes survives the shell
// and is still recognised as Mnemo's.
func TestHookCommandQuoting(t *testing.T) {
	for _, hook := range []string{"/opt/mnemo/bin/mnemo-hook", "/Users/Jo Doe/bin/mnemo-hook", "/tmp/it's/mnemo-hook"} {
		c := install.HookCommand(hook, "codex", "Stop")
		if !install.IsMnemoCommand(c) {
			t.Errorf("%s: not recognised as Mnemo's", c)
		}
	}
	if got := install.HookCommand("/tmp/it's/mnemo-hook", "codex", "Stop"); got != `'/tmp/it'\''s/mnemo-hook' --host codex Stop` {
		t.Errorf("quoted: %s", got)
	}
}

// TestHostMCP: each host's MCP server entry, in its format, next to the
// user's own servers, which stay; a second install changes nothing; a
// MNEMO_HOME goes into its env; uninstall removes Mnemo's only.
func TestHostMCP(t *testing.T) {
	for _, tc := range []struct {
		host, scope, key, entry string
		file                    string // relative to the home (user) or the project
	}{
		{"gemini", "user", "mcpServers", `{"command":"/opt/mnemo","args":["mcp"],"env":{"MNEMO_HOME":"/data"}}`, ".gemini/settings.json"},
		{"gemini", "project", "mcpServers", `{"command":"/opt/mnemo","args":["mcp"],"env":{"MNEMO_HOME":"/data"}}`, ".gemini/settings.json"},
		{"cursor", "user", "mcpServers", `{"command":"/opt/mnemo","args":["mcp"],"env":{"MNEMO_HOME":"/data"}}`, ".cursor/mcp.json"},
		{"cursor", "project", "mcpServers", `{"command":"/opt/mnemo","args":["mcp"],"env":{"MNEMO_HOME":"/data"}}`, ".cursor/mcp.json"},
		{"vscode", "project", "servers", `{"type":"stdio","command":"/opt/mnemo","args":["mcp"],"env":{"MNEMO_HOME":"/data"}}`, ".vscode/mcp.json"},
		{"copilot", "user", "mcpServers", `{"type":"local","command":"/opt/mnemo","args":["mcp"],"env":{"MNEMO_HOME":"/data"},"tools":["*"]}`, ".copilot/mcp-config.json"},
		{"copilot", "project", "mcpServers", `{"type":"local","command":"/opt/mnemo","args":["mcp"],"env":{"MNEMO_HOME":"/data"},"tools":["*"]}`, ".github/mcp.json"},
		{"windsurf", "user", "mcpServers", `{"command":"/opt/mnemo","args":["mcp"],"env":{"MNEMO_HOME":"/data"}}`, ".codeium/windsurf/mcp_config.json"},
	} {
		t.Run(tc.host+"/"+tc.scope, func(t *testing.T) {
			home, dir := hostEnv(t)
			in, _ := install.For(tc.host)
			path, why, err := in.MCPPath(tc.scope, dir, home)
			base := home
			if tc.scope == "project" {
				base = dir
			}
			if err != nil || why != "" || path != filepath.Join(base, tc.file) {
				t.Fatalf("MCPPath: %q, %q, %v", path, why, err)
			}
			os.MkdirAll(filepath.Dir(path), 0o755)
			var orig bytes.Buffer
			json.Indent(&orig, []byte(`{"a":1,"`+tc.key+`":{"other":{"command":"other-server","args":[]}},"z":true}`), "", "  ")
			orig.WriteByte('\n')
			os.WriteFile(path, orig.Bytes(), 0o600)

			o := install.MCPOptions{Mnemo: "/opt/mnemo", Env: map[string]string{"MNEMO_HOME": "/data"}}
			r, err := in.InstallMCP(path, o)
			if err != nil || !r.Changed || r.Backup == "" || len(r.Added) != 1 {
				t.Fatalf("install: %+v, %v", r, err)
			}
			data, _ := os.ReadFile(path)
			var f map[string]json.RawMessage
			var servers map[string]json.RawMessage
			if err := json.Unmarshal(data, &f); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(f[tc.key], &servers); err != nil || len(servers) != 2 {
				t.Fatalf("%s: %s, %v", tc.key, f[tc.key], err)
			}
			if got := compact(t, servers["mnemo"]); got != tc.entry {
				t.Errorf("entry %s, want %s", got, tc.entry)
			}
			if keys := topKeys(t, data); !slices.Equal(keys, []string{"a", tc.key, "z"}) {
				t.Errorf("keys %v", keys)
			}
			if r, err := in.InstallMCP(path, o); err != nil || r.Changed {
				t.Errorf("second install: %+v, %v", r, err)
			}
			if r, err := in.UninstallMCP(path); err != nil || len(r.Removed) != 1 {
				t.Fatalf("uninstall: %+v, %v", r, err)
			}
			if b, _ := os.ReadFile(path); !bytes.Equal(b, orig.Bytes()) {
				t.Errorf("after uninstall:\n%s\nwant\n%s", b, orig.Bytes())
			}
		})
	}
}

// A project install of every host, hooks and MCP server, taken back by
// its uninstall, leaves the project as it was: no file Mnemo made (not
// even an emptied one), no backup of one, no folder (git status shows
// nothing). A host that writes one file twice (Gemini CLI's hooks and MCP
// server share settings.json) backed it up between the two, and the
// backup outlived the file; Codex CLI's config.toml stayed, empty.
func TestProjectInstallThenUninstallLeavesNothing(t *testing.T) {
	for _, in := range install.Installers {
		if !slices.Contains(in.Scopes, install.ScopeProject) {
			continue
		}
		t.Run(in.Host, func(t *testing.T) {
			home, dir := hostEnv(t)
			hook := "/opt/mnemo/bin/mnemo-hook"
			o := install.Options{HookPath: hook, Home: home}
			path, err := in.HooksPath(install.ScopeProject, dir, home)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := in.Install(path, o); err != nil {
				t.Fatalf("install hooks: %v", err)
			}
			mcp := ""
			if in.MCPPath != nil {
				if mcp, _, err = in.MCPPath(install.ScopeProject, dir, home); err != nil {
					t.Fatal(err)
				}
			}
			if mcp != "" {
				if _, err := in.InstallMCP(mcp, install.MCPOptions{Mnemo: install.MnemoOnPath}); err != nil {
					t.Fatalf("install MCP: %v", err)
				}
			}
			if _, err := in.Uninstall(path, o); err != nil {
				t.Fatalf("uninstall hooks: %v", err)
			}
			if mcp != "" {
				if _, err := in.UninstallMCP(mcp); err != nil {
					t.Fatalf("uninstall MCP: %v", err)
				}
			}
			var left []string
			filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
				if p != dir {
					left = append(left, strings.TrimPrefix(p, dir+string(filepath.Separator)))
				}
				return nil
			})
			if len(left) > 0 {
				t.Errorf("the project holds %q after uninstall, want nothing", left)
			}
		})
	}
}
