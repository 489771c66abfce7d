package install_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mnemo-dev/mnemo/adapters/hosts/install"
)

// userConfig is a config.toml of a user's own, with what makes a line
// editor stumble: comments, a multi-line string and a multi-line array
// whose lines start with "[", a table header in a string, CRLF-free but
// irregular spacing, and a last line without a line end.
const userConfig = `# my codex settings
model = "o3"
notify = [
  "notify-send",
  "codex done",
]
instructions = """
[mcp_servers.mnemo]
command = "not a table, a string"
"""

[mcp_servers.github]   # the GitHub server
command = "npx"
args = ["-y", "@modelcontextprotocol/server-github"]
env = { GITHUB_TOKEN = "x" }

[projects."/src/app"]
trust_level = "trusted"`

func codexMCP(t *testing.T) (install.Installer, string) {
	t.Helper()
	home, _ := hostEnv(t)
	in, _ := install.For("codex")
	path, why, err := in.MCPPath("user", "", home)
	if err != nil || why != "" || path != filepath.Join(home, ".codex", "config.toml") {
		t.Fatalf("MCPPath: %q %q %v", path, why, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	return in, path
}

// TestCodexMCP: Mnemo's table is appended after the user's config, which
// stays byte for byte; a second install changes nothing; a moved binary is
// updated in place; uninstall gives the file back as it was, byte for byte.
func TestCodexMCP(t *testing.T) {
	for name, orig := range map[string]string{
		"no last line end": userConfig,
		"last line end":    userConfig + "\n",
		"CRLF":             strings.ReplaceAll(userConfig, "\n", "\r\n") + "\r\n",
		"empty":            "",
	} {
		t.Run(name, func(t *testing.T) {
			in, path := codexMCP(t)
			if err := os.WriteFile(path, []byte(orig), 0o600); err != nil {
				t.Fatal(err)
			}
			eol := "\n"
			if strings.Contains(orig, "\r\n") {
				eol = "\r\n"
			}
			table := func(mnemo string) string {
				return "[mcp_servers.mnemo]" + eol + `command = "` + mnemo + `"` + eol + `args = ["mcp"]` + eol
			}
			r, err := in.InstallMCP(path, install.MCPOptions{Mnemo: "/opt/mnemo/bin/mnemo", Now: fixedNow})
			if err != nil || !r.Changed || r.Backup == "" || len(r.Added) != 1 {
				t.Fatalf("install: %+v, %v", r, err)
			}
			got := read(t, path)
			head := orig
			if head != "" {
				head = strings.TrimSuffix(head, eol) + eol + eol
			}
			tail := ""
			if orig != "" && !strings.HasSuffix(orig, eol) {
				// A file without a final line end keeps none.
				tail = eol
			}
			if want := head + strings.TrimSuffix(table("/opt/mnemo/bin/mnemo"), tail); got != want {
				t.Fatalf("after install:\n%q\nwant\n%q", got, want)
			}
			if r, err := in.InstallMCP(path, install.MCPOptions{Mnemo: "/opt/mnemo/bin/mnemo", Now: fixedNow}); err != nil || r.Changed {
				t.Fatalf("second install: %+v, %v", r, err)
			}
			// A moved binary, with a table after Mnemo's: replaced where
			// it stands.
			os.WriteFile(path, []byte(got+tail+"[after]"+eol+"x = 1"+eol), 0o600)
			r, err = in.InstallMCP(path, install.MCPOptions{Mnemo: "/usr/bin/mnemo", Now: fixedNow})
			if err != nil || len(r.Updated) != 1 {
				t.Fatalf("moved: %+v, %v", r, err)
			}
			if got, want := read(t, path), head+table("/usr/bin/mnemo")+"[after]"+eol+"x = 1"+eol; got != want {
				t.Fatalf("after the move:\n%q\nwant\n%q", got, want)
			}
			os.WriteFile(path, []byte(head+strings.TrimSuffix(table("/usr/bin/mnemo"), tail)), 0o600)
			r, err = in.UninstallMCP(path)
			if err != nil || len(r.Removed) != 1 {
				t.Fatalf("uninstall: %+v, %v", r, err)
			}
			if got, want := read(t, path), orig; got != want {
				t.Fatalf("after uninstall:\n%q\nwant\n%q", got, want)
			}
		})
	}
}

// TestCodexMCPSubTable: a sub-table the user added to Mnemo's server (its
// env) stays through an update and goes with the server on uninstall,
// which would otherwise leave a server with no command.
func TestCodexMCPSubTable(t *testing.T) {
	in, path := codexMCP(t)
	orig := "a = 1\n\n[mcp_servers.mnemo]\ncommand = \"/old/mnemo\"\nargs = [\"mcp\"]\n\n[mcp_servers.mnemo.env]\nMNEMO_HOME = \"/data\"\n\n[z]\nb = 2\n"
	os.WriteFile(path, []byte(orig), 0o600)
	if _, err := in.InstallMCP(path, install.MCPOptions{Mnemo: "/new/mnemo", Now: nil}); err != nil {
		t.Fatal(err)
	}
	if got, want := read(t, path), strings.Replace(orig, "/old/mnemo", "/new/mnemo", 1); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if _, err := in.UninstallMCP(path); err != nil {
		t.Fatal(err)
	}
	if got, want := read(t, path), "a = 1\n\n[z]\nb = 2\n"; got != want {
		t.Fatalf("after uninstall:\n%q\nwant\n%q", got, want)
	}
}

// TestCodexMCPRefusals: a mnemo server that is not Mnemo's, one defined in
// a way a table cannot join, and a file that is not TOML are refused, and
// left as they were.
func TestCodexMCPRefusals(t *testing.T) {
	for name, tc := range map[string]struct{ file, err string }{
		"another program": {"[mcp_servers.mnemo]\ncommand = \"npx\"\nargs = [\"mnemo-cloud\"]\n",
			`[mcp_servers.mnemo] at line 1 has the command "npx", not Mnemo's`},
		"inline table": {"mcp_servers = { other = { command = \"x\" } }\n",
			"mcp_servers.mnemo is defined at line 1 otherwise than as the table [mcp_servers.mnemo]"},
		"dotted key": {"[mcp_servers]\nmnemo.command = \"/opt/mnemo\"\n",
			"mcp_servers.mnemo is defined at line 2 otherwise than as the table [mcp_servers.mnemo]"},
		"unclosed string":  {"model = \"o3\n", "line 1, column 9: the string is not closed on its line"},
		"unclosed array":   {"a = 1\nnotify = [\n  \"x\",\n", "line 2, column 10: '[' is not closed"},
		"unclosed header":  {"[mcp_servers\n", "line 1, column 13: a table header must end with \"]\""},
		"no equals":        {"model \"o3\"\n", "line 1, column 7: expected = after the key model"},
		"unclosed triple":  {"x = \"\"\"\nabc\n", "line 1, column 5: the multi-line string is not closed"},
		"junk after value": {"x = \"a\" b\n", "line 1, column 9: unexpected 'b' after a statement"},
	} {
		t.Run(name, func(t *testing.T) {
			in, path := codexMCP(t)
			os.WriteFile(path, []byte(tc.file), 0o600)
			for op, f := range map[string]func() error{
				"install": func() error {
					_, err := in.InstallMCP(path, install.MCPOptions{Mnemo: "/opt/mnemo", Now: nil})
					return err
				},
				"uninstall": func() error { _, err := in.UninstallMCP(path); return err },
			} {
				err := f()
				if op == "uninstall" && (name == "inline table" || name == "dotted key") {
					// Nothing of Mnemo's to take out.
					if err != nil {
						t.Errorf("uninstall: %v", err)
					}
					continue
				}
				if !errors.Is(err, install.ErrInvalidSettings) || !strings.Contains(err.Error(), path+": "+tc.err) {
					t.Errorf("%s: %v\nwant %s", op, err, tc.err)
				}
			}
			if got := read(t, path); got != tc.file {
				t.Errorf("file changed:\n%s", got)
			}
		})
	}
}

// codexProbe is a hooks.json that Codex CLI 0.169.0's app server listed
// (hooks/list) with these currentHash values: the trust records Codex
// wants are SHA-256 of what it read, and the installer must compute the
// same.
const codexProbe = `{"hooks":{
 "SessionStart":[{"matcher":"startup|resume","hooks":[{"type":"command","command":"/opt/x/mnemo-hook --host codex SessionStart","timeout":15}]}],
 "UserPromptSubmit":[{"hooks":[{"type":"command","command":"'/opt/x y/mnemo-hook' --host codex UserPromptSubmit","timeoutSec":7}]}],
 "PostToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"/opt/x/mnemo-hook","args":["--host","codex","PostToolUse"],"timeout_sec":9}]}],
 "Stop":[{"hooks":[{"type":"command","command":"/opt/x/mnemo-hook --host codex Stop"}]}],
 "SessionEnd":[{"hooks":[{"type":"command","command":"/opt/x/mnemo-hook --host codex SessionEnd","timeout":3}]}]
}}`

func TestCodexTrustHashes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hooks.json")
	os.WriteFile(path, []byte(codexProbe), 0o600)
	got, err := install.CodexTrust(path)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		path + ":session_start:0:0":      "sha256:3de5115459bfd89612bbe608b628a2220feda4276bb4638392bd63cbe7bdea4d",
		path + ":user_prompt_submit:0:0": "sha256:67c1b9c0d5d4ac8f5657e3cde84dde0703257c0553bb9772e4db0b6155556855",
		path + ":post_tool_use:0:0":      "sha256:6c175089bf625424b52d0c4550797429e02f40b91628f7e7c08e5827b428a982",
		path + ":stop:0:0":               "sha256:dd4fa842e7c875b55b06ce60f32f8d23657a9cdf7621ff319e054291d538629a",
		path + ":session_end:0:0":        "sha256:e46ab28756772064a8e03fbc8ba209a63f48bacb7983a363f2a021335d362f3f",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %s, want %s", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d records, want %d: %v", len(got), len(want), got)
	}
}

// TestCodexTrust: installing Codex's hooks records their trust in the
// user's config.toml, where they stand (after the user's own hook of an
// event), keeps the user's own records, follows a moved binary, and
// uninstall takes exactly Mnemo's records out.
func TestCodexTrust(t *testing.T) {
	home, _ := hostEnv(t)
	in, _ := install.For("codex")
	hooks, _ := in.HooksPath("user", "", home)
	cfg := filepath.Join(home, ".codex", "config.toml")
	os.MkdirAll(filepath.Dir(cfg), 0o700)
	userHooks := `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"say done"}]}]}}`
	os.WriteFile(hooks, []byte(userHooks), 0o600)
	userTrust := "model = \"o3\"\n\n[hooks.state]\n\n[hooks.state.\"" + hooks + ":stop:0:0\"]\ntrusted_hash = \"sha256:users\"\n"
	os.WriteFile(cfg, []byte(userTrust), 0o600)

	o := install.Options{HookPath: "/opt/mnemo/bin/mnemo-hook", Home: home}
	r, err := in.Install(hooks, o)
	if err != nil || len(r.Also) != 1 {
		t.Fatalf("install: %+v, %v", r, err)
	}
	if got := r.Also[0].Added; strings.Join(got, " ") != "post_tool_use:0:0 session_end:0:0 session_start:0:0 stop:1:0 user_prompt_submit:0:0" {
		t.Errorf("trust added: %v", got)
	}
	records, _ := install.CodexTrust(hooks)
	text := read(t, cfg)
	if !strings.HasPrefix(text, userTrust) {
		t.Errorf("the user's config changed:\n%s", text)
	}
	for key, hash := range records {
		if !strings.Contains(text, "[hooks.state.\""+key+"\"]\ntrusted_hash = \""+hash+"\"\n") {
			t.Errorf("no record of %s in\n%s", key, text)
		}
	}
	if r, err := in.Install(hooks, o); err != nil || r.Changed || r.Also[0].Changed {
		t.Errorf("second install: %+v, %v", r, err)
	}

	o.HookPath = "/usr/bin/mnemo-hook"
	r, err = in.Install(hooks, o)
	if err != nil || len(r.Also[0].Updated) != 5 || len(r.Also[0].Added)+len(r.Also[0].Removed) != 0 {
		t.Fatalf("moved: %+v, %v", r.Also, err)
	}

	r, err = in.Uninstall(hooks, o)
	if err != nil || len(r.Also[0].Removed) != 5 {
		t.Fatalf("uninstall: %+v, %v", r, err)
	}
	if got := read(t, cfg); got != userTrust {
		t.Errorf("after uninstall:\n%q\nwant\n%q", got, userTrust)
	}
}

// TestCodexTrustBrokenConfig: a config.toml that is not TOML stops the
// install before hooks.json is touched.
func TestCodexTrustBrokenConfig(t *testing.T) {
	home, _ := hostEnv(t)
	in, _ := install.For("codex")
	hooks, _ := in.HooksPath("user", "", home)
	cfg := filepath.Join(home, ".codex", "config.toml")
	os.MkdirAll(filepath.Dir(cfg), 0o700)
	os.WriteFile(cfg, []byte("model = \"o3\n"), 0o600)
	_, err := in.Install(hooks, install.Options{HookPath: "/opt/mnemo-hook", Home: home})
	if !errors.Is(err, install.ErrInvalidSettings) || !strings.Contains(err.Error(), "line 1, column 9") {
		t.Fatalf("err %v", err)
	}
	if _, err := os.Stat(hooks); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("hooks.json was written: %v", err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCodexMCPEnv: a MNEMO_HOME of the user's is written into the server's
// env (Codex starts MCP servers with a few variables only), unless the user
// keeps an [mcp_servers.mnemo.env] table of their own.
func TestCodexMCPEnv(t *testing.T) {
	in, path := codexMCP(t)
	o := install.MCPOptions{Mnemo: "/opt/mnemo", Env: map[string]string{"MNEMO_HOME": "/data/my \"memory\""}}
	if _, err := in.InstallMCP(path, o); err != nil {
		t.Fatal(err)
	}
	if got, want := read(t, path), "[mcp_servers.mnemo]\ncommand = \"/opt/mnemo\"\nargs = [\"mcp\"]\nenv = { MNEMO_HOME = \"/data/my \\\"memory\\\"\" }\n"; got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if r, err := in.InstallMCP(path, o); err != nil || r.Changed {
		t.Fatalf("second install: %+v, %v", r, err)
	}
	own := "[mcp_servers.mnemo]\ncommand = \"/opt/mnemo\"\nargs = [\"mcp\"]\n\n[mcp_servers.mnemo.env]\nMNEMO_HOME = \"/elsewhere\"\n"
	os.WriteFile(path, []byte(own), 0o600)
	if r, err := in.InstallMCP(path, o); err != nil || r.Changed {
		t.Fatalf("with the user's env table: %+v, %v\n%s", r, err, read(t, path))
	}
}
