//go:build e2e

package e2e_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runTimeout bounds one opencode run; a scripted run takes 3–6 s here.
const runTimeout = 120 * time.Second

// opencodeVersion is the CLI version setup.sh pins.
const opencodeVersion = "1.18.33"

// The model OpenCode is given: a custom provider of the bundled
// @ai-sdk/openai-compatible package, served by chatServer.
const (
	providerID = "mnemo-e2e"
	modelID    = "scripted"
)

// offlineEnv switches off what OpenCode reaches for besides the model:
// the models.dev catalogue and the update check. (The npm install of
// @opencode-ai/plugin into its config folders is avoided by seeding them,
// seedConfigDir.)
var offlineEnv = []string{
	"OPENCODE_DISABLE_MODELS_FETCH=1",
	"OPENCODE_DISABLE_AUTOUPDATE=1",
}

// repoRoot finds the module root above the working directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.Contains(data, []byte("module github.com/mnemo-dev/mnemo\n")) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("mnemo's go.mod not found above the working directory")
		}
		dir = parent
	}
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// opencodeInstall returns the CLI to test and setup.sh's config-deps
// folder, or skips.
func opencodeInstall(t *testing.T, root string) (bin, deps string) {
	t.Helper()
	cache := envOr("MNEMO_OPENCODE_CACHE", filepath.Join(root, ".cache", "opencode"))
	bin = envOr("MNEMO_OPENCODE_BIN", filepath.Join(cache, "node_modules", ".bin", "opencode"))
	deps = filepath.Join(cache, "config-deps")
	for _, p := range []string{bin, filepath.Join(deps, "package-lock.json"), filepath.Join(deps, "node_modules", "@opencode-ai", "plugin")} {
		if _, err := os.Stat(p); err != nil {
			t.Skipf("OpenCode not installed (%v): run adapters/opencode/e2e/setup.sh, or use adapters/opencode/e2e/run.sh", err)
		}
	}
	return bin, deps
}

// requireLoopbackOnly skips unless the test runs in a network namespace whose
// only interface is an up loopback, so that the CLI cannot reach the internet.
func requireLoopbackOnly(t *testing.T) {
	t.Helper()
	ifaces, err := net.Interfaces()
	if err != nil {
		t.Fatalf("list network interfaces: %v", err)
	}
	up := false
	for _, ifc := range ifaces {
		if ifc.Flags&net.FlagLoopback == 0 {
			t.Skipf("network interface %s is not loopback: run inside `unshare -n` "+
				"(adapters/opencode/e2e/run.sh does)", ifc.Name)
		}
		up = up || ifc.Flags&net.FlagUp != 0
	}
	if !up {
		t.Skip("loopback interface is down: run `ip link set lo up` inside the namespace (run.sh does)")
	}
}

// harness is one isolated world: a HOME with its XDG folders, a TMPDIR, a
// MNEMO_HOME, a git project, a scripted model and the DNS recorder.
type harness struct {
	t         *testing.T
	root      string // the repository
	cli       string // the opencode binary
	deps      string // setup.sh's config-deps
	home      string
	config    string // XDG_CONFIG_HOME
	tmp       string
	mnemoHome string
	project   string
	srv       *chatServer
	dns       *dnsRecorder // nil when names cannot be recorded
	offline   bool         // offlineEnv in the CLI's environment
	extraEnv  []string
	runs      int
}

// newHarness builds the isolated world with OpenCode configured for the
// scripted model; seed gives its config folder the @opencode-ai/plugin
// install (seedConfigDir). It skips when the CLI or the network namespace
// is missing.
func newHarness(t *testing.T, seed bool) *harness {
	t.Helper()
	requireLoopbackOnly(t)
	root := repoRoot(t)
	cli, deps := opencodeInstall(t, root)
	h := &harness{t: t, root: root, cli: cli, deps: deps, offline: true}
	base := t.TempDir()
	h.home = mkdir(t, base, "home")
	h.config = mkdir(t, h.home, ".config")
	h.tmp = mkdir(t, base, "tmp")
	h.mnemoHome = mkdir(t, base, "mnemo")
	h.project = mkdir(t, base, "calc-project")
	h.srv = startChatServer(t)
	h.dns = startDNSRecorder(t)
	t.Cleanup(func() {
		h.srv.save(h)
		if h.dns != nil {
			h.save("dns-names.txt", []byte(strings.Join(h.dns.Names(), "\n")+"\n"))
		}
	})
	h.writeProject()
	h.writeConfig()
	if seed {
		h.seedConfigDir(filepath.Join(h.config, "opencode"))
	}
	return h
}

func mkdir(t *testing.T, parts ...string) string {
	t.Helper()
	dir := filepath.Join(parts...)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The project: calc.py has two bugs, test.sh fails until both are fixed.
const (
	calcPy = `def add(a, b):
    return a - b


def mul(a, b):
    return a + b
`
	testSh = `#!/bin/sh
# Fails (exit 1) until calc.py is fixed.
cd "$(dirname "$0")" || exit 2
exec python3 -B - <<'PY'
import calc
assert calc.add(2, 3) == 5, "add(2, 3) should be 5, got %r" % calc.add(2, 3)
assert calc.mul(2, 3) == 6, "mul(2, 3) should be 6, got %r" % calc.mul(2, 3)
print("all tests passed")
PY
`
)

func (h *harness) writeProject() {
	h.t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		h.t.Fatalf("the e2e project's test.sh needs python3: %v", err)
	}
	writeFile(h.t, filepath.Join(h.project, "calc.py"), calcPy)
	writeFile(h.t, filepath.Join(h.project, "test.sh"), testSh)
	h.git("init", "-q", "-b", "main")
	h.git("add", "calc.py", "test.sh")
	h.git("-c", "user.name=E2E", "-c", "user.email=e2e@example.invalid", "commit", "-q", "-m", "calc: add and mul")
}

func (h *harness) git(args ...string) string {
	h.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = h.project
	cmd.Env = []string{"PATH=" + systemPath, "HOME=" + h.home, "GIT_CONFIG_NOSYSTEM=1", "LANG=C.UTF-8"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		h.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// writeConfig writes the user's opencode.json: the scripted model as the
// only one, tools allowed without asking, no sharing, no updates.
func (h *harness) writeConfig() {
	h.t.Helper()
	cfg := map[string]any{
		"$schema": "https://opencode.ai/config.json",
		"provider": map[string]any{providerID: map[string]any{
			"npm":     "@ai-sdk/openai-compatible",
			"name":    "Mnemo e2e",
			"options": map[string]any{"baseURL": h.srv.URL(), "apiKey": "dummy"},
			"models":  map[string]any{modelID: map[string]any{"name": "Scripted", "tool_call": true}},
		}},
		"model":       providerID + "/" + modelID,
		"small_model": providerID + "/" + modelID,
		"autoupdate":  false,
		"share":       "disabled",
		"permission":  map[string]any{"edit": "allow", "bash": "allow"},
	}
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		h.t.Fatal(err)
	}
	writeFile(h.t, filepath.Join(h.config, "opencode", "opencode.json"), string(b)+"\n")
}

// seedConfigDir gives an OpenCode config folder the @opencode-ai/plugin
// install that OpenCode would otherwise run npm for at start-up (it skips
// the install when node_modules exists and package-lock.json lists every
// dependency of package.json and @opencode-ai/plugin): the package.json and
// package-lock.json of setup.sh's config-deps, and its node_modules.
func (h *harness) seedConfigDir(dir string) {
	h.t.Helper()
	for _, name := range []string{"package.json", "package-lock.json"} {
		data, err := os.ReadFile(filepath.Join(h.deps, name))
		if err != nil {
			h.t.Fatal(err)
		}
		writeFile(h.t, filepath.Join(dir, name), string(data))
	}
	if err := os.Symlink(filepath.Join(h.deps, "node_modules"), filepath.Join(dir, "node_modules")); err != nil {
		h.t.Fatal(err)
	}
}

const systemPath = "/usr/local/bin:/usr/bin:/bin"

// env is the CLI's whole environment (env -i style). The plugin's hooks
// inherit it, so MNEMO_HOME is set here; mnemo-hook is not on PATH: the
// plugin runs the one its install names.
func (h *harness) env() []string {
	env := []string{
		"PATH=" + systemPath,
		"HOME=" + h.home,
		"XDG_CONFIG_HOME=" + h.config,
		"XDG_DATA_HOME=" + filepath.Join(h.home, ".local", "share"),
		"XDG_CACHE_HOME=" + filepath.Join(h.home, ".cache"),
		"XDG_STATE_HOME=" + filepath.Join(h.home, ".local", "state"),
		"TMPDIR=" + h.tmp,
		"LANG=C.UTF-8",
		"MNEMO_HOME=" + h.mnemoHome,
	}
	if h.offline {
		env = append(env, offlineEnv...)
	}
	return append(env, h.extraEnv...)
}

// cliRun is one finished opencode run.
type cliRun struct {
	Label     string
	Took      time.Duration
	Exit      int
	Stdout    []byte
	Stderr    []byte
	Events    []runEvent
	SessionID string
}

// runEvent is one line of `opencode run --format json`.
type runEvent struct {
	Type      string `json:"type"`
	SessionID string `json:"sessionID"`
	Part      struct {
		Type   string `json:"type"`
		Tool   string `json:"tool"`
		CallID string `json:"callID"`
		Text   string `json:"text"`
		State  struct {
			Status string `json:"status"`
			Output string `json:"output"`
		} `json:"state"`
	} `json:"part"`
	Raw json.RawMessage `json:"-"`
}

// opencode runs `opencode run --format json` with the prompt's words as
// separate arguments (the CLI quotes an argument that has spaces) in the
// project, with the isolated environment. It fails the test when the run
// cannot start or times out, not when the CLI exits non-zero (see Exit).
func (h *harness) opencode(label, prompt string) *cliRun {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	args := append([]string{"run", "--format", "json", "--print-logs", "--log-level", "INFO"}, strings.Fields(prompt)...)
	cmd := exec.CommandContext(ctx, h.cli, args...)
	cmd.Dir = h.project
	cmd.Env = h.env()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// Own process group: a timeout kills the CLI with its tool shells and hooks.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second

	began := time.Now()
	err := cmd.Run()
	r := &cliRun{Label: label, Took: time.Since(began), Stdout: stdout.Bytes(), Stderr: stderr.Bytes()}
	h.runs++
	h.save(fmt.Sprintf("%02d-%s.jsonl", h.runs, label), r.Stdout)
	h.save(fmt.Sprintf("%02d-%s.stderr", h.runs, label), r.Stderr)
	var exitErr *exec.ExitError
	switch {
	case ctx.Err() != nil:
		h.t.Fatalf("opencode %s: timed out after %v\nstderr:\n%s", label, runTimeout, r.Stderr)
	case errors.As(err, &exitErr):
		r.Exit = exitErr.ExitCode()
	case err != nil:
		h.t.Fatalf("opencode %s: %v", label, err)
	}
	h.t.Logf("TIMING opencode %s: %.2fs (exit %d)", label, r.Took.Seconds(), r.Exit)
	sc := bufio.NewScanner(bytes.NewReader(r.Stdout))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		var e runEvent
		if err := json.Unmarshal(raw, &e); err != nil {
			h.t.Fatalf("opencode %s: a line of --format json is not JSON: %q: %v", label, raw, err)
		}
		e.Raw = append(json.RawMessage(nil), raw...)
		r.Events = append(r.Events, e)
		if r.SessionID == "" {
			r.SessionID = e.SessionID
		}
	}
	return r
}

// mustSucceed fails unless the run exited 0 and said something.
func (r *cliRun) mustSucceed(t *testing.T) {
	t.Helper()
	if r.Exit != 0 || r.SessionID == "" {
		t.Fatalf("opencode %s exited %d (session %q)\nstderr:\n%s\nstdout:\n%s", r.Label, r.Exit, r.SessionID, r.Stderr, r.Stdout)
	}
}

// texts returns the run's text parts.
func (r *cliRun) texts() []string {
	var out []string
	for _, e := range r.Events {
		if e.Type == "text" {
			out = append(out, e.Part.Text)
		}
	}
	return out
}

// tools returns the run's tool parts, in order.
func (r *cliRun) tools() []runEvent {
	var out []runEvent
	for _, e := range r.Events {
		if e.Type == "tool_use" {
			out = append(out, e)
		}
	}
	return out
}

// save writes an artifact file when MNEMO_E2E_ARTIFACTS is set.
func (h *harness) save(name string, data []byte) {
	dir := os.Getenv("MNEMO_E2E_ARTIFACTS")
	if dir == "" {
		return
	}
	dir = filepath.Join(dir, h.t.Name())
	if err := os.MkdirAll(dir, 0o755); err != nil {
		h.t.Errorf("artifacts: %v", err)
		return
	}
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
		h.t.Errorf("artifacts: %v", err)
	}
}
