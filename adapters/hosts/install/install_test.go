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
	"time"

	"github.com/mnemo-dev/mnemo/adapters/hosts"
	"github.com/mnemo-dev/mnemo/adapters/hosts/install"
)

// userSettings is a settings file of a user's own: other keys, and hooks
// of theirs on a stage Mnemo also hooks, one of them sharing a group with
// an old shell-form Mnemo hook.
const userSettings = `{
    "model": "opus",
    "permissions": {"allow": ["Bash(npm test:*)"], "deny": []},
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "~/bin/guard.sh"}]}
        ],
        "PostToolUse": [
            {"matcher": "Write|Edit", "hooks": [{"type": "command", "command": "prettier --write \"$FILE\""}]},
            {"hooks": [
                {"type": "command", "command": "\"/old/place/mnemo-hook\" PostToolUse", "timeout": 60},
                {"type": "command", "command": "notify-send done"}
            ]}
        ]
    },
    "env": {"FOO": "bar"},
    "statusLine": {"type": "command", "command": "echo hi"}
}
`

// settings is the part of a settings file the tests look at.
type settings struct {
	Hooks map[string][]install.HookGroup `json:"hooks"`
}

func readSettings(t *testing.T, path string) (settings, []string, []byte) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s settings
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatalf("%s: %v\n%s", path, err, data)
	}
	return s, topKeys(t, data), data
}

// topKeys lists the top-level keys of a JSON object in order.
func topKeys(t *testing.T, data []byte) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(string(data)))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// mnemoHandlers returns Mnemo's handlers of an event.
func mnemoHandlers(s settings, event string) []install.HookHandler {
	var hs []install.HookHandler
	for _, g := range s.Hooks[event] {
		for _, h := range g.Hooks {
			if install.IsMnemoCommand(h.Command) {
				hs = append(hs, h)
			}
		}
	}
	return hs
}

// commands returns every command of an event, in order.
func commands(s settings, event string) []string {
	var cs []string
	for _, g := range s.Hooks[event] {
		for _, h := range g.Hooks {
			cs = append(cs, h.Command)
		}
	}
	return cs
}

func fixedNow() time.Time { return time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC) }

func TestInstall(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(userSettings), 0o640); err != nil {
		t.Fatal(err)
	}
	hook := filepath.Join(dir, "bin", "mnemo-hook")

	r, err := install.Install(path, install.Options{HookPath: hook, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Changed || r.Backup != path+".bak-20260304T050607Z" {
		t.Errorf("result = %+v", r)
	}
	if b, err := os.ReadFile(r.Backup); err != nil || string(b) != userSettings {
		t.Errorf("backup holds %q, %v", b, err)
	}
	if !slices.Equal(r.Updated, []string{"PostToolUse"}) || len(r.Added) != len(hosts.Stages)-1 {
		t.Errorf("added %v, updated %v", r.Added, r.Updated)
	}
	s, keys, data := readSettings(t, path)
	if want := []string{"model", "permissions", "hooks", "env", "statusLine"}; !slices.Equal(keys, want) {
		t.Errorf("top-level keys %v, want %v", keys, want)
	}
	var all map[string]any
	json.Unmarshal(data, &all)
	if all["model"] != "opus" || all["env"].(map[string]any)["FOO"] != "bar" {
		t.Errorf("user keys changed:\n%s", data)
	}
	for _, st := range hosts.Stages {
		hs := mnemoHandlers(s, st.Event)
		want := install.HookHandler{Type: "command", Command: hook, Args: []string{st.Event}, Timeout: st.Timeout}
		if len(hs) != 1 || !jsonEqual(hs[0], want) {
			t.Errorf("%s: Mnemo handlers %+v, want %+v", st.Event, hs, want)
		}
	}
	if got := s.Hooks["SessionStart"][0].Matcher; got != "startup|resume|clear|compact|fork" {
		t.Errorf("SessionStart matcher %q", got)
	}
	// The user's hooks, in their order; Mnemo's took the old one's place.
	if got, want := commands(s, "PostToolUse"), []string{"prettier --write \"$FILE\"", hook, "notify-send done"}; !slices.Equal(got, want) {
		t.Errorf("PostToolUse commands %q, want %q", got, want)
	}
	if got := commands(s, "PreToolUse"); !slices.Equal(got, []string{"~/bin/guard.sh"}) {
		t.Errorf("PreToolUse commands %q", got)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want the file's 0640", fi.Mode().Perm())
	}

	// A second install changes nothing.
	before, _ := os.ReadFile(path)
	r, err = install.Install(path, install.Options{HookPath: hook, Now: func() time.Time { return fixedNow().Add(time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	if r.Changed || r.Backup != "" || len(r.Added)+len(r.Updated) != 0 {
		t.Errorf("second install: %+v", r)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Error("second install rewrote the file")
	}
	if baks, _ := filepath.Glob(path + ".bak-*"); len(baks) != 1 {
		t.Errorf("backups %v, want 1", baks)
	}

	// A moved binary is updated in place, not duplicated.
	moved := filepath.Join(dir, "elsewhere", "mnemo-hook")
	r, err = install.Install(path, install.Options{HookPath: moved, Now: func() time.Time { return fixedNow().Add(2 * time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Changed || len(r.Updated) != len(hosts.Stages) || len(r.Added) != 0 {
		t.Errorf("move: %+v", r)
	}
	s, _, _ = readSettings(t, path)
	for _, st := range hosts.Stages {
		if hs := mnemoHandlers(s, st.Event); len(hs) != 1 || hs[0].Command != moved {
			t.Errorf("%s after the move: %+v", st.Event, hs)
		}
	}
	if got, want := commands(s, "PostToolUse"), []string{"prettier --write \"$FILE\"", moved, "notify-send done"}; !slices.Equal(got, want) {
		t.Errorf("PostToolUse commands %q, want %q", got, want)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".settings.json.tmp-*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// Each change backs the file up, and keeps one backup of it: the newest
// (a person's own .bak- file stays).
func TestInstallKeepsOneBackup(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(userSettings), 0o640); err != nil {
		t.Fatal(err)
	}
	hook := filepath.Join(dir, "bin", "mnemo-hook")
	mine := path + ".bak-mine"
	if err := os.WriteFile(mine, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var before []byte
	for i := range 3 {
		at := func() time.Time { return fixedNow().Add(time.Duration(i) * time.Hour) }
		before, _ = os.ReadFile(path)
		if _, err := install.Install(path, install.Options{HookPath: hook, Now: at}); err != nil {
			t.Fatal(err)
		}
		if i < 2 {
			if _, err := install.Uninstall(path); err != nil {
				t.Fatal(err)
			}
		}
	}
	baks, _ := filepath.Glob(path + ".bak-*")
	if len(baks) != 2 || baks[0] != path+".bak-20260304T070607Z" || baks[1] != mine {
		t.Fatalf("after three installs and two uninstalls: backups %v, want the newest and the person's own", baks)
	}
	if b, _ := os.ReadFile(baks[0]); string(b) != string(before) {
		t.Errorf("the backup holds %q, want the file before the last install", b)
	}
}

func TestInstallNewFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "project", ".claude", "settings.json")
	hook := filepath.Join(dir, "mnemo-hook")
	r, err := install.Install(path, install.Options{HookPath: hook})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Changed || r.Backup != "" || len(r.Added) != len(hosts.Stages) {
		t.Errorf("result %+v", r)
	}
	s, keys, _ := readSettings(t, path)
	if !slices.Equal(keys, []string{"hooks"}) || len(s.Hooks) != len(hosts.Stages) {
		t.Errorf("keys %v, hooks %v", keys, s.Hooks)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}

	t.Run("null hooks", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "settings.json")
		if err := os.WriteFile(path, []byte(`{"hooks": null, "model": "opus"}`), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := install.Install(path, install.Options{HookPath: hook}); err != nil {
			t.Fatal(err)
		}
		s, keys, _ := readSettings(t, path)
		if !slices.Equal(keys, []string{"hooks", "model"}) || len(s.Hooks) != len(hosts.Stages) {
			t.Errorf("keys %v, hooks %v", keys, s.Hooks)
		}
	})
}

func TestInstallRefuses(t *testing.T) {
	tests := []struct {
		name, content, want string
	}{
		{"invalid JSON", "{\n  \"model\": \"opus\",\n  \"hooks\": {,}\n}\n", "line 3, column 13"},
		{"trailing comma", "{\"a\": 1,}", "line 1, column 9"},
		{"not an object", "[1, 2]", "not an object"},
		{"hooks not an object", `{"hooks": []}`, `"hooks" is not an object`},
		{"event not an array", `{"hooks": {"Stop": {"hooks": []}}}`, "hooks.Stop is not an array"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "settings.json")
			if err := os.WriteFile(path, []byte(tt.content), 0o644); err != nil {
				t.Fatal(err)
			}
			mtime := time.Now().Add(-time.Hour)
			os.Chtimes(path, mtime, mtime)
			for _, op := range []func() error{
				func() error {
					_, err := install.Install(path, install.Options{HookPath: "/opt/mnemo/bin/mnemo-hook"})
					return err
				},
				func() error { _, err := install.Uninstall(path); return err },
			} {
				err := op()
				if !errors.Is(err, install.ErrInvalidSettings) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("err = %v, want ErrInvalidSettings naming %s and %q", err, path, tt.want)
				}
			}
			data, _ := os.ReadFile(path)
			fi, _ := os.Stat(path)
			if string(data) != tt.content || !fi.ModTime().Equal(mtime) {
				t.Error("the file was touched")
			}
			if left, _ := os.ReadDir(filepath.Dir(path)); len(left) != 1 {
				t.Errorf("files beside it: %v", left)
			}
		})
	}
	t.Run("relative hook path", func(t *testing.T) {
		_, err := install.Install(filepath.Join(t.TempDir(), "settings.json"), install.Options{HookPath: "bin/mnemo-hook"})
		if err == nil {
			t.Error("want an error")
		}
	})
}

// TestInstallThroughSymlink: a settings file kept in a dotfiles repository
// and linked into place stays a link; its target is updated.
func TestInstallThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "dotfiles", "claude-settings.json")
	os.MkdirAll(filepath.Dir(target), 0o755)
	if err := os.WriteFile(target, []byte(`{"model":"opus"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(link), 0o755)
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	r, err := install.Install(link, install.Options{HookPath: "/opt/mnemo/bin/mnemo-hook"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Path != target {
		t.Errorf("path %s, want %s", r.Path, target)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v", err)
	}
	if s, _, _ := readSettings(t, target); len(mnemoHandlers(s, "Stop")) != 1 {
		t.Errorf("target not updated: %+v", s)
	}
}

func TestUninstall(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "settings.json")
	if err := os.WriteFile(path, []byte(userSettings), 0o644); err != nil {
		t.Fatal(err)
	}
	hook := "/opt/mnemo/bin/mnemo-hook"
	if _, err := install.Install(path, install.Options{HookPath: hook, Now: fixedNow}); err != nil {
		t.Fatal(err)
	}
	r, err := install.Uninstall(path)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Changed || r.Backup == "" || len(r.Removed) != len(hosts.Stages) {
		t.Errorf("result %+v", r)
	}
	s, keys, _ := readSettings(t, path)
	if want := []string{"model", "permissions", "hooks", "env", "statusLine"}; !slices.Equal(keys, want) {
		t.Errorf("keys %v, want %v", keys, want)
	}
	var events []string
	for ev := range s.Hooks {
		events = append(events, ev)
	}
	slices.Sort(events)
	if !slices.Equal(events, []string{"PostToolUse", "PreToolUse"}) {
		t.Errorf("events left %v, want the user's", events)
	}
	if got, want := commands(s, "PostToolUse"), []string{"prettier --write \"$FILE\"", "notify-send done"}; !slices.Equal(got, want) {
		t.Errorf("PostToolUse %q, want %q", got, want)
	}

	// Again: nothing to do.
	if r, err := install.Uninstall(path); err != nil || r.Changed {
		t.Errorf("second uninstall: %+v, %v", r, err)
	}

	t.Run("only Mnemo's hooks", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "settings.json")
		if _, err := install.Install(path, install.Options{HookPath: hook}); err != nil {
			t.Fatal(err)
		}
		if _, err := install.Uninstall(path); err != nil {
			t.Fatal(err)
		}
		if data, err := os.ReadFile(path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("left %q, %v; want the file that held only Mnemo's hooks gone", data, err)
		}
	})
	t.Run("missing file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "settings.json")
		if r, err := install.Uninstall(path); err != nil || r.Changed {
			t.Errorf("%+v, %v", r, err)
		}
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Error("uninstall created the file")
		}
	})
}

func TestIsMnemoCommand(t *testing.T) {
	for cmd, want := range map[string]bool{
		"/usr/local/bin/mnemo-hook":                 true,
		"mnemo-hook":                                true,
		"${CLAUDE_PLUGIN_ROOT}/bin/mnemo-hook":      true,
		`"/path with space/mnemo-hook" PostToolUse`: true,
		"'/p/mnemo-hook' Stop":                      true,
		"/usr/local/bin/mnemo-hook SessionStart":    true,
		"/usr/local/bin/mnemo":                      false,
		"/usr/local/bin/mnemo-hook-wrapper":         false,
		"python3 hooks/mnemo-hook.py":               false,
		"node mnemo-hook":                           false,
		"":                                          false,
	} {
		if got := install.IsMnemoCommand(cmd); got != want {
			t.Errorf("IsMnemoCommand(%q) = %v, want %v", cmd, got, want)
		}
	}
}

func TestSettingsPath(t *testing.T) {
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	home, project := t.TempDir(), t.TempDir()
	tests := []struct {
		scope, want string
		err         bool
	}{
		{install.ScopeUser, filepath.Join(home, ".claude", "settings.json"), false},
		{install.ScopeProject, filepath.Join(project, ".claude", "settings.json"), false},
		{install.ScopeLocal, filepath.Join(project, ".claude", "settings.local.json"), false},
		{"global", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.scope, func(t *testing.T) {
			got, err := install.SettingsPath(tt.scope, project, home)
			if (err != nil) != tt.err || got != tt.want {
				t.Errorf("SettingsPath = %q, %v; want %q", got, err, tt.want)
			}
			if tt.err && !errors.Is(err, install.ErrUnknownScope) {
				t.Errorf("err = %v, want ErrUnknownScope", err)
			}
		})
	}
	if _, err := install.SettingsPath(install.ScopeProject, "", home); err == nil {
		t.Error("project scope without a project: want an error")
	}
	cfg := t.TempDir()
	t.Setenv("CLAUDE_CONFIG_DIR", cfg)
	if got, _ := install.SettingsPath(install.ScopeUser, project, home); got != filepath.Join(cfg, "settings.json") {
		t.Errorf("with CLAUDE_CONFIG_DIR: %s", got)
	}
}

// jsonEqual reports whether a and b encode to the same JSON value, keys
// in any order.
func jsonEqual(a, b any) bool {
	return bytes.Equal(normalJSON(a), normalJSON(b))
}

func normalJSON(v any) []byte {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var generic any
	if err := json.Unmarshal(raw, &generic); err != nil {
		return nil
	}
	out, _ := json.Marshal(generic)
	return out
}
