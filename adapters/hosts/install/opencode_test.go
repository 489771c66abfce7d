package install_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/adapters/hosts"
	"github.com/mnemo-dev/mnemo/adapters/hosts/install"
	"github.com/mnemo-dev/mnemo/adapters/opencode"
)

// openCode is OpenCode's installer.
func openCode(t *testing.T) install.Installer {
	t.Helper()
	in, ok := install.For(hosts.OpenCode)
	if !ok {
		t.Fatal("no installer for OpenCode")
	}
	return in
}

func TestOpenCodePluginPath(t *testing.T) {
	pluginPath := openCode(t).HooksPath
	t.Setenv("XDG_CONFIG_HOME", "")
	got, err := pluginPath(install.ScopeUser, "", "/home/u")
	if err != nil || got != "/home/u/.config/opencode/plugins/mnemo.js" {
		t.Errorf("user scope: %q, %v", got, err)
	}
	t.Setenv("XDG_CONFIG_HOME", "/xdg")
	if got, err := pluginPath(install.ScopeUser, "", "/home/u"); err != nil || got != "/xdg/opencode/plugins/mnemo.js" {
		t.Errorf("user scope with XDG_CONFIG_HOME: %q, %v", got, err)
	}
	if got, err := pluginPath(install.ScopeProject, "/work/proj", "/home/u"); err != nil || got != "/work/proj/.opencode/plugins/mnemo.js" {
		t.Errorf("project scope: %q, %v", got, err)
	}
	if _, err := pluginPath(install.ScopeProject, "", "/home/u"); err == nil {
		t.Error("project scope without a project: no error")
	}
	if _, err := pluginPath("local", "/work/proj", "/home/u"); !errors.Is(err, install.ErrUnknownScope) {
		t.Errorf("scope local: %v, want ErrUnknownScope", err)
	}
}

func TestOpenCodePluginRefusesOtherPaths(t *testing.T) {
	for _, p := range []string{"mnemo-hook", "bin/mnemo-hook", "/usr/bin/mnemo", "/tmp/a\nb/mnemo-hook"} {
		if _, err := install.OpenCodePlugin(p); err == nil {
			t.Errorf("OpenCodePlugin(%q): no error", p)
		}
	}
}

// TestOpenCodePluginRunsTheInstalledHook loads the plugin the installer
// writes in node and checks that its hooks run the binary written into it,
// a path with a quote, a backslash and a space in its folder's name.
func TestOpenCodePluginRunsTheInstalledHook(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not found")
	}
	dir := t.TempDir()
	binDir := filepath.Join(dir, `odd "dir\ name`)
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		t.Fatal(err)
	}
	hook := filepath.Join(binDir, "mnemo-hook")
	out := filepath.Join(dir, "hook-args")
	script := "#!/bin/sh\nprintf '%s ' \"$@\" >> '" + out + "'\ncat >> '" + out + "'\necho >> '" + out + "'\nprintf '{}'\n"
	if err := os.WriteFile(hook, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	src, err := install.OpenCodePlugin(hook)
	if err != nil {
		t.Fatal(err)
	}
	plugins := filepath.Join(dir, "plugins")
	if err := os.MkdirAll(plugins, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(plugins, "package.json"), []byte(`{"type":"module"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := openCode(t).Install(filepath.Join(plugins, opencode.PluginName), install.Options{HookPath: hook})
	if err != nil || !res.Changed {
		t.Fatalf("Install: %+v, %v", res, err)
	}
	if installed, _ := os.ReadFile(res.Path); !bytes.Equal(installed, src) {
		t.Fatal("Install wrote something else than OpenCodePlugin")
	}
	// Without MNEMO_HOOK_BIN, and with no mnemo-hook on PATH.
	drive := `
const { MnemoPlugin } = await import(process.argv[1]);
const hooks = await MnemoPlugin({ directory: "/work/proj" });
await hooks.event({ event: { type: "session.created", properties: { info: { id: "ses_1", directory: "/work/proj" } } } });
await hooks.dispose();
`
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--input-type=module", "-e", drive, "file://"+res.Path)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir}
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("node: %v\n%s", err, b)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("the installed hook did not run: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(got)), "\n")
	want := []string{
		`--host opencode SessionStart {"hook_event_name":"SessionStart","session_id":"ses_1","cwd":"/work/proj","source":"startup"}`,
		`--host opencode SessionEnd {"hook_event_name":"SessionEnd","session_id":"ses_1","cwd":"/work/proj","reason":"other"}`,
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("the hook ran as:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
}

func TestOpenCodeInstallUninstall(t *testing.T) {
	in := openCode(t)
	plugin := func(path, hook string) (install.Result, error) {
		return in.Install(path, install.Options{HookPath: hook})
	}
	dir := t.TempDir()
	path := filepath.Join(dir, ".opencode", "plugins", opencode.PluginName)
	if r, err := plugin(path, "/opt/mnemo/bin/mnemo-hook"); err != nil || !r.Changed {
		t.Fatalf("first Install: %+v, %v", r, err)
	}
	if r, err := plugin(path, "/opt/mnemo/bin/mnemo-hook"); err != nil || r.Changed {
		t.Fatalf("second Install: %+v, %v (want unchanged)", r, err)
	}
	if r, err := plugin(path, "/usr/local/bin/mnemo-hook"); err != nil || !r.Changed {
		t.Fatalf("Install of a moved hook: %+v, %v", r, err)
	}
	if b, _ := os.ReadFile(path); !bytes.Contains(b, []byte(`const INSTALLED_HOOK_BIN = "/usr/local/bin/mnemo-hook";`)) {
		t.Errorf("the plugin does not name the moved hook:\n%.400s", b)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("the plugins folder holds %d files, want only mnemo.js", len(entries))
	}
	if r, err := in.Uninstall(path, install.Options{}); err != nil || !r.Changed {
		t.Fatalf("Uninstall: %+v, %v", r, err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the plugin is still there: %v", err)
	}
	// The folders the install made, empty now, go with it.
	if _, err := os.Stat(filepath.Join(dir, ".opencode")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the empty .opencode folder is left: %v", err)
	}
	if r, err := in.Uninstall(path, install.Options{}); err != nil || r.Changed {
		t.Errorf("Uninstall with no plugin: %+v, %v", r, err)
	}

	// A user's own mnemo.js is neither replaced nor removed.
	own := []byte("export const Mine = async () => ({});\n")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, own, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := plugin(path, "/opt/mnemo/bin/mnemo-hook"); err == nil {
		t.Error("Install over a foreign mnemo.js: no error")
	}
	if _, err := in.Uninstall(path, install.Options{}); err == nil {
		t.Error("Uninstall of a foreign mnemo.js: no error")
	}
	if b, _ := os.ReadFile(path); !bytes.Equal(b, own) {
		t.Error("the foreign mnemo.js was changed")
	}
}
