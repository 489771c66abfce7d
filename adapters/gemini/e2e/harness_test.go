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
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runTimeout bounds one gemini run; a -p run of six turns takes 3–4 s here.
const runTimeout = 90 * time.Second

// geminiVersion is the CLI version setup.sh pins.
const geminiVersion = "0.61.0"

// artifactsEnv names the folder that keeps what a failed run needs to be
// read; each test's files go in a subfolder named after it.
const artifactsEnv = "MNEMO_E2E_ARTIFACTS"

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

// geminiBin returns the CLI to test, or skips.
func geminiBin(t *testing.T, root string) string {
	t.Helper()
	bin := os.Getenv("MNEMO_GEMINI_BIN")
	if bin == "" {
		bin = filepath.Join(root, ".cache", "gemini-cli", "node_modules", ".bin", "gemini")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("Gemini CLI not found (%v): run adapters/gemini/e2e/setup.sh and set MNEMO_GEMINI_BIN, "+
			"or use adapters/gemini/e2e/run.sh", err)
	}
	return bin
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
				"(adapters/gemini/e2e/run.sh does)", ifc.Name)
		}
		up = up || ifc.Flags&net.FlagUp != 0
	}
	if !up {
		t.Skip("loopback interface is down: run `ip link set lo up` inside the namespace (run.sh does)")
	}
}

// harness is one isolated world: a HOME (which is also GEMINI_CLI_HOME), a
// TMPDIR, a MNEMO_HOME, a trusted git project and a scripted Gemini API.
type harness struct {
	t         *testing.T
	root      string // the repository
	cli       string // the gemini binary
	home      string
	tmp       string
	mnemoHome string
	project   string
	srv       *apiServer
	path      []string // PATH entries placed before the system ones
	extraEnv  []string // more of the CLI's environment, for one test
	runs      int
}

// newHarness builds the isolated world and writes the CLI's user settings
// (baseSettings) and trusted folders. It skips when the CLI or the network
// namespace is missing.
func newHarness(t *testing.T) *harness {
	t.Helper()
	requireLoopbackOnly(t)
	root := repoRoot(t)
	h := &harness{t: t, root: root, cli: geminiBin(t, root)}
	base := t.TempDir()
	h.home = mkdir(t, base, "home")
	h.tmp = mkdir(t, base, "tmp")
	h.mnemoHome = mkdir(t, base, "mnemo")
	h.project = mkdir(t, base, "calc-project")

	ctx, cancel := context.WithCancel(context.Background())
	srv, err := startAPIServer(ctx)
	if err != nil {
		cancel()
		t.Fatalf("start the scripted Gemini API: %v", err)
	}
	h.srv = srv
	t.Cleanup(func() {
		h.save("server-requests.jsonl", h.srv.jsonl())
		cancel()
		if err := srv.Close(); err != nil {
			t.Errorf("close the scripted Gemini API: %v", err)
		}
	})
	h.writeProject()
	h.writeJSON(h.settingsPath(), baseSettings())
	// A trusted folder: in an untrusted one the CLI turns --yolo back into
	// "default" approval, and no tool runs without a person.
	h.writeJSON(filepath.Join(h.home, ".gemini", "trustedFolders.json"), map[string]string{h.project: "TRUST_FOLDER"})
	return h
}

// baseSettings are the user settings every run has, before any hook: API
// key auth (its base URL comes from GOOGLE_GEMINI_BASE_URL), and no usage
// statistics, telemetry, update check or IDE companion.
func baseSettings() map[string]any {
	return map[string]any{
		// Without it the CLI derives "gateway" auth from
		// GOOGLE_GEMINI_BASE_URL, which 0.61.0's own validation then
		// refuses: "Invalid auth method selected."
		"security":  map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
		"privacy":   map[string]any{"usageStatisticsEnabled": false},
		"telemetry": map[string]any{"enabled": false},
		"general":   map[string]any{"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
		"ide":       map[string]any{"enabled": false},
	}
}

// settingsPath is the user settings file, $GEMINI_CLI_HOME/.gemini/settings.json.
func (h *harness) settingsPath() string { return filepath.Join(h.home, ".gemini", "settings.json") }

func mkdir(t *testing.T, parts ...string) string {
	t.Helper()
	dir := filepath.Join(parts...)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func (h *harness) writeJSON(path string, v any) {
	h.t.Helper()
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		h.t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		h.t.Fatal(err)
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
exec python3 -B - <<'EOF'
import calc
assert calc.add(2, 3) == 5, "add(2, 3) should be 5, got %r" % calc.add(2, 3)
assert calc.mul(2, 3) == 6, "mul(2, 3) should be 6, got %r" % calc.mul(2, 3)
print("all tests passed")
EOF
`
)

// writeProject creates the git project with calc.py and test.sh.
func (h *harness) writeProject() {
	h.t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		h.t.Fatalf("the e2e project's test.sh needs python3: %v", err)
	}
	for name, body := range map[string]string{"calc.py": calcPy, "test.sh": testSh} {
		if err := os.WriteFile(filepath.Join(h.project, name), []byte(body), 0o644); err != nil {
			h.t.Fatal(err)
		}
	}
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

const systemPath = "/usr/local/bin:/usr/bin:/bin"

// env is the CLI's whole environment (env -i style). Hooks inherit it, so
// MNEMO_HOME is set here.
func (h *harness) env() []string {
	path := strings.Join(append(append([]string(nil), h.path...), systemPath), ":")
	return append([]string{
		"PATH=" + path,
		"HOME=" + h.home,
		"GEMINI_CLI_HOME=" + h.home, // the CLI's own home override; ~/.gemini is under it
		"TMPDIR=" + h.tmp,
		"LANG=C.UTF-8",
		"TERM=dumb",
		"GEMINI_API_KEY=dummy",
		"GOOGLE_GEMINI_BASE_URL=" + h.srv.url,
		// One node process: without it the CLI re-spawns itself with a
		// bigger heap (--max-old-space-size), which changes nothing here.
		"GEMINI_CLI_NO_RELAUNCH=true",
		"MNEMO_HOME=" + h.mnemoHome,
	}, h.extraEnv...)
}

// cliRun is one finished gemini run.
type cliRun struct {
	Label  string
	Args   []string
	Took   time.Duration
	Exit   int
	Stdout []byte
	Stderr []byte
	Events []streamEvent
}

// streamEvent is one line of --output-format stream-json.
type streamEvent struct {
	Type      string `json:"type"`
	SessionID string `json:"session_id"`
	Model     string `json:"model"`
	// message
	Role    string `json:"role"`
	Content string `json:"content"`
	// tool_use, tool_result
	ToolName   string         `json:"tool_name"`
	ToolID     string         `json:"tool_id"`
	Parameters map[string]any `json:"parameters"`
	Status     string         `json:"status"`
	Output     string         `json:"output"`
	// result
	Stats *struct {
		ToolCalls  int `json:"tool_calls"`
		DurationMS int `json:"duration_ms"`
	} `json:"stats"`

	Raw json.RawMessage `json:"-"`
}

// gemini runs the CLI in the project with the isolated environment. It
// fails the test when the run cannot start or times out, not when the CLI
// exits non-zero (see Exit).
func (h *harness) gemini(label string, args ...string) *cliRun {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
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
	r := &cliRun{Label: label, Args: args, Took: time.Since(began), Stdout: stdout.Bytes(), Stderr: stderr.Bytes()}
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // leftovers of the group, if any
	}
	h.runs++
	h.save(fmt.Sprintf("%02d-%s.jsonl", h.runs, label), r.Stdout)
	h.save(fmt.Sprintf("%02d-%s.stderr", h.runs, label), r.Stderr)
	var exitErr *exec.ExitError
	switch {
	case ctx.Err() != nil:
		h.t.Fatalf("gemini %s: timed out after %v\nstderr:\n%s", label, runTimeout, r.Stderr)
	case errors.As(err, &exitErr):
		r.Exit = exitErr.ExitCode()
	case err != nil:
		h.t.Fatalf("gemini %s: %v", label, err)
	}
	h.t.Logf("TIMING gemini %s: %.2fs (exit %d)", label, r.Took.Seconds(), r.Exit)
	r.Events = parseStream(h.t, r.Stdout)
	return r
}

// geminiP runs `gemini -p PROMPT --yolo -o stream-json`.
func (h *harness) geminiP(label, prompt string, extra ...string) *cliRun {
	h.t.Helper()
	return h.gemini(label, append([]string{"-p", prompt, "--yolo", "--output-format", "stream-json"}, extra...)...)
}

func parseStream(t *testing.T, out []byte) []streamEvent {
	t.Helper()
	var events []streamEvent
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		var e streamEvent
		if err := json.Unmarshal(raw, &e); err != nil {
			t.Fatalf("stream-json line %q: %v", raw, err)
		}
		e.Raw = append(json.RawMessage(nil), raw...)
		events = append(events, e)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read stream-json: %v", err)
	}
	return events
}

// mustSucceed fails unless the run exited 0 with a result event of status
// success, and returns the init event.
func (r *cliRun) mustSucceed(t *testing.T) streamEvent {
	t.Helper()
	if r.Exit != 0 {
		t.Fatalf("gemini %s exited %d\nstderr:\n%s\nstdout:\n%s", r.Label, r.Exit, r.Stderr, r.Stdout)
	}
	var init, result *streamEvent
	for i, e := range r.Events {
		switch e.Type {
		case "init":
			init = &r.Events[i]
		case "result":
			result = &r.Events[i]
		}
	}
	switch {
	case init == nil || init.SessionID == "":
		t.Fatalf("gemini %s: no init event with a session id\n%s", r.Label, r.Stdout)
	case result == nil || result.Status != "success":
		t.Fatalf("gemini %s: no successful result event\nstdout:\n%s\nstderr:\n%s", r.Label, r.Stdout, r.Stderr)
	}
	return *init
}

// of returns the events of one type, in order.
func (r *cliRun) of(typ string) []streamEvent {
	var out []streamEvent
	for _, e := range r.Events {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// answer joins the assistant's message events.
func (r *cliRun) answer() string {
	var b strings.Builder
	for _, e := range r.of("message") {
		if e.Role == "assistant" {
			b.WriteString(e.Content)
		}
	}
	return b.String()
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// artifactDir is the test's artifact folder, or "" when artifactsEnv is unset.
func artifactDir(t testing.TB) string {
	dir := os.Getenv(artifactsEnv)
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, unsafeName.ReplaceAllString(t.Name(), "_"))
}

// save writes an artifact file when MNEMO_E2E_ARTIFACTS is set; a failure
// to write is logged, never fails the test.
func (h *harness) save(name string, data []byte) {
	dir := artifactDir(h.t)
	if dir == "" {
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		h.t.Logf("artifacts: %v", err)
		return
	}
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
		h.t.Logf("artifacts: %v", err)
	}
}
