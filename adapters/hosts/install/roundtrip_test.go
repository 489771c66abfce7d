package install_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mnemo-dev/mnemo/adapters/hosts"
	"github.com/mnemo-dev/mnemo/adapters/hosts/install"
)

// oddJSON is a person's JSON file written their own way: tabs, one-line
// arrays and objects, keys around Mnemo's, their own hooks on Mnemo's
// events and on others, their own MCP server, and no final newline.
// EVENT is replaced by the host's first event, KEY by its handler's
// command field; a version host gets "version": 1 as its format requires.
const oddJSON = `{"theme": "dark",
	"hooks": {"userOnly": [ENTRY_AUDIT], "EVENT":[ENTRY_SAY],
		"Other" : [ ]},
	"mcpServers": {"other": {"command": "other-server", "args": ["--x","1"]}},
	"servers": {"other": {"command": "other-server"}},
	"mcp": {"other": {"type": "local", "command": ["other-server"]}},
	"z": [1,2,   3]}`

// oddJSONC is a VS Code or OpenCode file: comments and trailing commas,
// four-space indentation, CRLF line ends.
const oddJSONC = "// my servers\r\n{\r\n    \"servers\": {\r\n        /* theirs */ \"other\": {\"command\": \"other-server\",},\r\n    },\r\n    \"mcp\": {\"other\": {\"type\": \"local\", \"command\": [\"other-server\"]}, // mine\r\n    },\r\n    \"inputs\": [],\r\n}\r\n"

// oddTOML is a Codex config.toml of the person's: comments, a table of
// theirs, an MCP server of theirs, no final newline.
const oddTOML = "# my codex\nmodel = \"o3\"   # the best\n\n[mcp_servers.other]\ncommand = 'other-server'\nargs=[\"a\",\n  \"b\"]\n[profiles.x]\nmodel=\"o4\""

func oddFor(in install.Installer) string {
	key := "command"
	if in.Host == "copilot" {
		key = "bash"
	}
	entry := func(cmd string) string {
		h := `{"type": "command", "` + key + `": "` + cmd + `"}`
		if in.Host == "codex" || in.Host == "gemini" {
			return `{ "hooks": [` + h + `] }`
		}
		return h
	}
	s := strings.NewReplacer("ENTRY_AUDIT", entry("~/bin/audit.sh"), "ENTRY_SAY", entry("say started"), "EVENT", in.Events[0]).Replace(oddJSON)
	if in.Host == "cursor" || in.Host == "copilot" {
		s = `{"version": 1, ` + s[1:]
	}
	return s
}

// TestRoundTripKeepsBytes: for every host and scope, a person's own file,
// oddly formatted, with their own hooks and servers: install (hooks and
// MCP server) then uninstall gives back the very bytes. A file that was
// not there is left as an empty object (or deleted when it is a file of
// Mnemo's own).
func TestRoundTripKeepsBytes(t *testing.T) {
	hook := "/opt/mnemo/bin/mnemo-hook"
	for _, in := range install.Installers {
		if in.Host == hosts.OpenCode {
			// Its hooks file is Mnemo's plugin, a file of Mnemo's own;
			// TestRoundTripOpenCodeConfig gives its config back.
			continue
		}
		for _, scope := range in.Scopes {
			t.Run(in.Host+"/"+scope, func(t *testing.T) {
				home, dir := hostEnv(t)
				o := install.Options{HookPath: hook, Home: home}
				hooks, err := in.HooksPath(scope, dir, home)
				if err != nil {
					t.Fatal(err)
				}
				mcp, _, err := in.MCPPath(scope, dir, home)
				if err != nil {
					t.Fatal(err)
				}
				files := map[string]string{}
				for _, p := range []string{hooks, mcp} {
					if p == "" {
						continue
					}
					switch {
					case strings.HasSuffix(p, ".toml"):
						files[p] = oddTOML
					case filepath.Base(filepath.Dir(p)) == ".vscode":
						files[p] = oddJSONC
					default:
						files[p] = oddFor(in)
					}
				}
				if in.Host == hosts.Codex {
					// The trust of Codex's hooks goes into config.toml too.
					cfg := filepath.Join(home, ".codex", "config.toml")
					files[cfg] = oddTOML
				}
				for p, s := range files {
					os.MkdirAll(filepath.Dir(p), 0o755)
					if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
						t.Fatal(err)
					}
				}
				if hooks != "" {
					if _, err := in.Install(hooks, o); err != nil {
						t.Fatal(err)
					}
				}
				if mcp != "" {
					if _, err := in.InstallMCP(mcp, install.MCPOptions{Mnemo: "/opt/mnemo/bin/mnemo"}); err != nil {
						t.Fatal(err)
					}
				}
				for p, s := range files {
					if b, _ := os.ReadFile(p); string(b) == s {
						t.Errorf("%s: install changed nothing", p)
					}
				}
				if hooks != "" {
					if _, err := in.Uninstall(hooks, o); err != nil {
						t.Fatal(err)
					}
				}
				if mcp != "" {
					if _, err := in.UninstallMCP(mcp); err != nil {
						t.Fatal(err)
					}
				}
				for p, s := range files {
					if b, _ := os.ReadFile(p); string(b) != s {
						t.Errorf("%s: not given back byte for byte:\n--- before\n%s\n--- after\n%s", p, s, b)
					}
				}
			})
		}
	}
}

// TestInstallKeepsFormatting: what an install writes into a person's
// file is Mnemo's entries only, in the file's own style; the rest of the
// text is as it was.
func TestInstallKeepsFormatting(t *testing.T) {
	home, _ := hostEnv(t)
	path := filepath.Join(home, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(path), 0o755)
	orig := "{\n\t\"model\": \"opus\",\n\t\"permissions\": {\"allow\": [\"Bash(ls)\", \"Read\"]},\n\t\"hooks\": {}\n}"
	os.WriteFile(path, []byte(orig), 0o600)
	if _, err := install.Install(path, install.Options{HookPath: "/opt/mnemo-hook"}); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if !bytes.HasPrefix(got, []byte("{\n\t\"model\": \"opus\",\n\t\"permissions\": {\"allow\": [\"Bash(ls)\", \"Read\"]},\n\t\"hooks\": {\n\t\t\"SessionStart\": [\n\t\t\t{\n")) || bytes.HasSuffix(got, []byte("\n")) {
		t.Errorf("install did not keep the file's style:\n%s", got)
	}
}

// TestRoundTripOpenCodeConfig: OpenCode's opencode.json is JSONC; its
// comments and trailing commas stay through an install and an uninstall
// of Mnemo's server.
func TestRoundTripOpenCodeConfig(t *testing.T) {
	home, _ := hostEnv(t)
	path := filepath.Join(home, ".config", "opencode", "opencode.json")
	os.MkdirAll(filepath.Dir(path), 0o755)
	os.WriteFile(path, []byte(oddJSONC), 0o600)
	in, _ := install.For(hosts.OpenCode)
	if mcp, _, err := in.MCPPath(install.ScopeUser, "", home); err != nil || mcp != path {
		t.Fatalf("OpenCode's MCP config: %q, %v; want %s", mcp, err, path)
	}
	if _, err := in.InstallMCP(path, install.MCPOptions{Mnemo: "/opt/mnemo"}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); !bytes.Contains(b, []byte(`"mnemo"`)) || !bytes.Contains(b, []byte("// mine")) {
		t.Fatalf("install:\n%s", b)
	}
	if _, err := in.UninstallMCP(path); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != oddJSONC {
		t.Errorf("not given back byte for byte:\n%q\n%q", oddJSONC, b)
	}
}

// FuzzSplice: whatever the file and whatever the edit, a splice reads back
// as the edit, and splicing the file's own value changes no byte.
func FuzzSplice(f *testing.F) {
	f.Add([]byte(oddJSONC), []byte(`{"servers":{"mnemo":{"command":"x"}},"inputs":[1]}`))
	f.Add([]byte(`{"a": [1,2, 3], "b": {}}`), []byte(`{"b":{"c":[]},"a":[3,1]}`))
	f.Add([]byte("{\n\t\"hooks\": {\"X\": [ {\"hooks\": [{\"command\": \"a\"}]} ]}\n}"), []byte(`{"hooks":{"X":[{"hooks":[{"command":"a"},{"command":"b"}]}],"Y":[{"k":1}]}}`))
	f.Fuzz(func(t *testing.T, data, want []byte) {
		if !json.Valid(want) || !utf8.Valid(want) || !install.EqualJSONC(data, data) {
			return
		}
		out, ok := install.SpliceJSON(data, want)
		if ok && !install.EqualJSONC(out, want) {
			t.Fatalf("splice of %q with %q gave %q", data, want, out)
		}
		var v any
		if json.Unmarshal(bytes.TrimSpace(want), &v) == nil {
			if same, ok := install.SpliceJSON(data, data); ok && !bytes.Equal(same, data) && json.Valid(data) {
				t.Fatalf("splice of %q with itself gave %q", data, same)
			}
		}
	})
}

// TestRoundTripNewFile: install into a file that was not there, then
// uninstall, leaves no file and no folder the install made: the file held
// nothing but Mnemo's (had anyone written to it since, it would hold what
// they wrote, and stay).
func TestRoundTripNewFile(t *testing.T) {
	home, _ := hostEnv(t)
	path := filepath.Join(home, ".claude", "settings.json")
	if _, err := install.Install(path, install.Options{HookPath: "/opt/mnemo-hook"}); err != nil {
		t.Fatal(err)
	}
	if _, err := install.Uninstall(path); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after install and uninstall: %q, %v; want no file", b, err)
	}
	if _, err := os.Stat(filepath.Dir(path)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the .claude folder the install made is left: %v", err)
	}
}

// Mnemo's new lines are written in the file's style: a Windows file's line
// ending (CRLF) and its indentation (tabs here); uninstall gives the
// bytes back.
func TestInstallWritesInTheFilesStyle(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	orig := "{\r\n\t\"model\": \"opus\",\r\n\t\"hooks\": {\r\n\t\t\"Stop\": [\r\n\t\t\t{\"hooks\": [{\"type\": \"command\", \"command\": \"say done\"}]}\r\n\t\t]\r\n\t}\r\n}\r\n"
	if err := os.WriteFile(path, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := install.Install(path, install.Options{HookPath: "/opt/mnemo/bin/mnemo-hook"}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	lines := strings.SplitAfter(string(data), "\n")
	if len(lines) < 20 {
		t.Fatalf("install wrote %d lines:\n%s", len(lines), data)
	}
	for i, l := range lines[:len(lines)-1] {
		if !strings.HasSuffix(l, "\r\n") {
			t.Errorf("line %d ends without CR: %q", i+1, l)
		}
		if indent := l[:len(l)-len(strings.TrimLeft(l, " \t"))]; strings.Contains(indent, " ") {
			t.Errorf("line %d is indented with spaces in a file indented with tabs: %q", i+1, l)
		}
	}
	if _, err := install.Uninstall(path); err != nil {
		t.Fatal(err)
	}
	if back, _ := os.ReadFile(path); string(back) != orig {
		t.Errorf("after uninstall:\n%q\nwant\n%q", back, orig)
	}
}
