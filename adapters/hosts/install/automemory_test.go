package install_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mnemo-dev/mnemo/adapters/hosts/install"
)

// writeFile writes text at path, making its folder.
func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// Whether Claude Code's auto memory is on is read as Claude Code reads
// it: the variable (from the environment, then from a settings file's
// env), then the setting (the local project's over the project's over
// the user's), else on; and the answer names what decided it.
func TestClaudeAutoMemory(t *testing.T) {
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	for _, c := range []struct {
		name            string
		user, proj, loc string
		env             string
		on              bool
		by              string
	}{
		{name: "nothing set", on: true, by: "the default"},
		{name: "settings without it", user: `{"model": "opus"}`, on: true, by: "the default"},
		{name: "the user turned it off", user: `{"autoMemoryEnabled": false}`, on: false, by: "autoMemoryEnabled: false in <home>/.claude/settings.json"},
		{name: "the project turns it back on", user: `{"autoMemoryEnabled": false}`, proj: `{"autoMemoryEnabled": true}`, on: true, by: "autoMemoryEnabled: true in <project>/.claude/settings.json"},
		{name: "the local settings win", proj: `{"autoMemoryEnabled": true}`, loc: `{"autoMemoryEnabled": false}`, on: false, by: "autoMemoryEnabled: false in <project>/.claude/settings.local.json"},
		{name: "the variable in a settings env beats the setting", user: `{"env": {"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1"}}`, proj: `{"autoMemoryEnabled": true}`, on: false,
			by: "CLAUDE_CODE_DISABLE_AUTO_MEMORY=1 in the env of <home>/.claude/settings.json"},
		{name: "the environment beats every file", user: `{"env": {"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1"}}`, env: "0", on: true,
			by: "CLAUDE_CODE_DISABLE_AUTO_MEMORY=0 in the environment"},
		{name: "a value that says nothing", env: "maybe", user: `{"env": {"CLAUDE_CODE_DISABLE_AUTO_MEMORY": ""}}`, on: true, by: "the default"},
	} {
		t.Run(c.name, func(t *testing.T) {
			home, project := t.TempDir(), t.TempDir()
			for path, text := range map[string]string{
				filepath.Join(home, ".claude", "settings.json"):          c.user,
				filepath.Join(project, ".claude", "settings.json"):       c.proj,
				filepath.Join(project, ".claude", "settings.local.json"): c.loc,
			} {
				if text != "" {
					writeFile(t, path, text)
				}
			}
			got, err := install.ClaudeAutoMemory(project, home, func(k string) string {
				if k == install.AutoMemoryVariable {
					return c.env
				}
				return ""
			})
			if err != nil {
				t.Fatal(err)
			}
			by := strings.NewReplacer(home, "<home>", project, "<project>").Replace(got.By)
			if got.On != c.on || by != c.by {
				t.Errorf("got on %v by %q, want on %v by %q", got.On, by, c.on, c.by)
			}
		})
	}
	home := t.TempDir()
	writeFile(t, filepath.Join(home, ".claude", "settings.json"), `{"autoMemoryEnabled": `)
	if _, err := install.ClaudeAutoMemory("", home, func(string) string { return "" }); !errors.Is(err, install.ErrInvalidSettings) || !strings.Contains(err.Error(), "settings.json") {
		t.Errorf("a broken settings file: %v", err)
	}
}

// Mnemo never turns a host's own memory off: installing and uninstalling
// Mnemo for Claude Code (its hooks, in every scope, and its MCP server)
// leaves auto memory's switches as the user had them, set or not, and
// never adds one.
func TestInstallLeavesAutoMemoryAlone(t *testing.T) {
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	noEnv := func(string) string { return "" }
	for _, start := range []string{
		``, // no settings file yet
		`{"model": "opus"}`,
		`{"autoMemoryEnabled": false, "autoMemoryDirectory": "~/notes"}`,
		`{"autoMemoryEnabled": true, "env": {"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "0", "FOO": "bar"}}`,
		`{"env": {"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1"}}`,
	} {
		for _, scope := range []string{install.ScopeUser, install.ScopeProject, install.ScopeLocal} {
			home, project := t.TempDir(), t.TempDir()
			path, err := install.SettingsPath(scope, project, home)
			if err != nil {
				t.Fatal(err)
			}
			if start != "" {
				writeFile(t, path, start)
			}
			before, err := install.ClaudeAutoMemory(project, home, noEnv)
			if err != nil {
				t.Fatal(err)
			}
			switches := func(when string) {
				t.Helper()
				after, err := install.ClaudeAutoMemory(project, home, noEnv)
				if err != nil {
					t.Fatal(err)
				}
				if after != before {
					t.Errorf("%s, %s scope, starting from %s: auto memory %+v, was %+v", when, scope, start, after, before)
				}
				want := autoMemorySwitches(t, []byte(start))
				got := map[string]string{}
				if b, err := os.ReadFile(path); err == nil {
					got = autoMemorySwitches(t, b)
				}
				if len(got) != len(want) {
					t.Errorf("%s, %s scope: auto memory's switches %v, were %v", when, scope, got, want)
				}
				for k, v := range want {
					if got[k] != v {
						t.Errorf("%s, %s scope: %s is %s, was %s", when, scope, k, got[k], v)
					}
				}
			}
			hook := filepath.Join(home, "bin", "mnemo-hook")
			if _, err := install.Install(path, install.Options{HookPath: hook, Now: fixedNow}); err != nil {
				t.Fatal(err)
			}
			switches("after install")
			mcp, err := install.MCPConfigPath(scope, project, home)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := install.InstallMCP(mcp, filepath.Join(home, "bin", "mnemo"), fixedNow); err != nil {
				t.Fatal(err)
			}
			switches("after the MCP server's install")
			if _, err := install.Uninstall(path); err != nil {
				t.Fatal(err)
			}
			if _, err := install.UninstallMCP(mcp); err != nil {
				t.Fatal(err)
			}
			switches("after uninstall")
		}
	}
}

// autoMemorySwitches are the auto memory keys of a settings file, as raw
// JSON: autoMemory* at the top, and the variable in env.
func autoMemorySwitches(t *testing.T, data []byte) map[string]string {
	t.Helper()
	out := map[string]string{}
	if len(data) == 0 {
		return out
	}
	var root map[string]json.RawMessage
	if err := json.Unmarshal(data, &root); err != nil {
		t.Fatal(err)
	}
	for k, v := range root {
		if strings.HasPrefix(k, "autoMemory") {
			out[k] = string(v)
		}
	}
	var env map[string]json.RawMessage
	json.Unmarshal(root["env"], &env)
	if v, ok := env[install.AutoMemoryVariable]; ok {
		out["env."+install.AutoMemoryVariable] = string(v)
	}
	return out
}
