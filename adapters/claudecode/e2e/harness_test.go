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

	"github.com/mnemo-dev/mnemo/adapters/claudecode/modelserver"
)

// runTimeout bounds one claude run; a -p run takes 0.5–2.5 s here.
const runTimeout = 90 * time.Second

// claudeVersion is the CLI version setup.sh pins.
const claudeVersion = "2.1.330"

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

// claudeBin returns the CLI to test, or skips.
func claudeBin(t *testing.T, root string) string {
	t.Helper()
	bin := os.Getenv("MNEMO_CLAUDE_BIN")
	if bin == "" {
		bin = filepath.Join(root, ".cache", "claude-code", "node_modules", ".bin", "claude")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("Claude Code CLI not found (%v): run adapters/claudecode/e2e/setup.sh and set MNEMO_CLAUDE_BIN, "+
			"or use adapters/claudecode/e2e/run.sh", err)
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
				"(adapters/claudecode/e2e/run.sh does)", ifc.Name)
		}
		up = up || ifc.Flags&net.FlagUp != 0
	}
	if !up {
		t.Skip("loopback interface is down: run `ip link set lo up` inside the namespace (run.sh does)")
	}
}

// harness is one isolated world: a HOME, a TMPDIR, a MNEMO_HOME, a git
// project and a scripted model server.
type harness struct {
	t         *testing.T
	root      string // the repository
	cli       string // the CLI binary
	home      string
	tmp       string
	mnemoHome string
	project   string
	srv       *modelserver.Server
	path      []string // PATH entries placed before the system ones
	extraEnv  []string // more of the CLI's environment, for one test
	runs      int
}

// newHarness builds the isolated world. It skips when the CLI or the network
// namespace is missing.
func newHarness(t *testing.T) *harness {
	t.Helper()
	requireLoopbackOnly(t)
	root := repoRoot(t)
	h := &harness{t: t, root: root, cli: claudeBin(t, root)}
	base := t.TempDir()
	h.home = mkdir(t, base, "home")
	h.tmp = mkdir(t, base, "tmp")
	h.mnemoHome = mkdir(t, base, "mnemo")
	h.project = mkdir(t, base, "calc-project")

	ctx, cancel := context.WithCancel(context.Background())
	srv, err := modelserver.Start(ctx, "127.0.0.1:0")
	if err != nil {
		cancel()
		t.Fatalf("start model server: %v", err)
	}
	h.srv = srv
	t.Cleanup(func() {
		h.srv.SaveRequests(h.t)
		cancel()
		if err := srv.Close(); err != nil {
			t.Errorf("close model server: %v", err)
		}
	})
	h.writeProject()
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
		"TMPDIR=" + h.tmp,
		"LANG=C.UTF-8",
		"ANTHROPIC_BASE_URL=" + h.srv.URL(),
		"ANTHROPIC_API_KEY=dummy",
		"IS_SANDBOX=1", // bypassPermissions is refused to root without it
		"DISABLE_TELEMETRY=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_ERROR_REPORTING=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"MNEMO_HOME=" + h.mnemoHome,
	}, h.extraEnv...)
}

// cliRun is one finished claude run.
type cliRun struct {
	Label  string
	Args   []string
	Took   time.Duration
	Exit   int
	Stdout []byte
	Stderr []byte
	Lines  []streamLine
}

// streamLine is one line of --output-format stream-json.
type streamLine struct {
	Type      string `json:"type"`
	Subtype   string `json:"subtype"`
	SessionID string `json:"session_id"`
	// init
	Tools   []string `json:"tools"`
	Model   string   `json:"model"`
	Version string   `json:"claude_code_version"`
	// assistant, user
	Message *struct {
		ID      string              `json:"id"`
		Role    string              `json:"role"`
		Content modelserver.Content `json:"content"`
	} `json:"message"`
	ParentToolUseID *string `json:"parent_tool_use_id"`
	// result
	IsError  bool   `json:"is_error"`
	Result   string `json:"result"`
	NumTurns int    `json:"num_turns"`
	// hook_response
	HookEvent string `json:"hook_event"`
	ExitCode  *int   `json:"exit_code"`
	Outcome   string `json:"outcome"`
	Stdout    string `json:"stdout"`
	Stderr    string `json:"stderr"`

	Raw json.RawMessage `json:"-"`
}

// claude runs the CLI in the project with the isolated environment. stdin
// may be nil. It fails the test when the run cannot start or times out, not
// when the CLI exits non-zero (see Exit).
func (h *harness) claude(label string, stdin []byte, args ...string) *cliRun {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, h.cli, args...)
	cmd.Dir = h.project
	cmd.Env = h.env()
	cmd.Stdin = bytes.NewReader(stdin)
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
		h.t.Fatalf("claude %s: timed out after %v\nstderr:\n%s", label, runTimeout, r.Stderr)
	case errors.As(err, &exitErr):
		r.Exit = exitErr.ExitCode()
	case err != nil:
		h.t.Fatalf("claude %s: %v", label, err)
	}
	h.t.Logf("TIMING claude %s: %.2fs (exit %d)", label, r.Took.Seconds(), r.Exit)
	r.Lines = parseStream(h.t, r.Stdout)
	return r
}

// claudeP runs `claude -p PROMPT` with bypassed permissions and stream-json
// output, plus extra args.
func (h *harness) claudeP(label, prompt string, extra ...string) *cliRun {
	h.t.Helper()
	args := append([]string{"-p", prompt, "--permission-mode", "bypassPermissions",
		"--output-format", "stream-json", "--verbose"}, extra...)
	return h.claude(label, nil, args...)
}

func parseStream(t *testing.T, out []byte) []streamLine {
	t.Helper()
	var lines []streamLine
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		var l streamLine
		if err := json.Unmarshal(raw, &l); err != nil {
			t.Fatalf("stream-json line %q: %v", raw, err)
		}
		l.Raw = append(json.RawMessage(nil), raw...)
		lines = append(lines, l)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read stream-json: %v", err)
	}
	return lines
}

// mustSucceed fails unless the run exited 0 with a successful result line,
// and returns the result lines.
func (r *cliRun) mustSucceed(t *testing.T) []streamLine {
	t.Helper()
	if r.Exit != 0 {
		t.Fatalf("claude %s exited %d\nstderr:\n%s\nstdout:\n%s", r.Label, r.Exit, r.Stderr, r.Stdout)
	}
	var results []streamLine
	for _, l := range r.Lines {
		if l.Type == "result" {
			results = append(results, l)
		}
	}
	if len(results) == 0 {
		t.Fatalf("claude %s: no result line in stream-json", r.Label)
	}
	for _, res := range results {
		if res.Subtype != "success" || res.IsError {
			t.Fatalf("claude %s: result %s", r.Label, res.Raw)
		}
	}
	return results
}

// init returns the system/init line.
func (r *cliRun) init(t *testing.T) streamLine {
	t.Helper()
	for _, l := range r.Lines {
		if l.Type == "system" && l.Subtype == "init" {
			return l
		}
	}
	t.Fatalf("claude %s: no system/init line", r.Label)
	return streamLine{}
}

// toolUses lists the main thread's tool_use blocks, in stream order.
func (r *cliRun) toolUses() []modelserver.Block {
	var out []modelserver.Block
	for _, l := range r.Lines {
		if l.Type != "assistant" || l.Message == nil || l.ParentToolUseID != nil {
			continue
		}
		for _, b := range l.Message.Content {
			if b.Type == "tool_use" {
				out = append(out, b)
			}
		}
	}
	return out
}

// toolResults maps tool_use ids to the tool_result blocks the CLI emitted.
func (r *cliRun) toolResults() map[string]modelserver.Block {
	out := map[string]modelserver.Block{}
	for _, l := range r.Lines {
		if l.Type != "user" || l.Message == nil {
			continue
		}
		for _, b := range l.Message.Content {
			if b.Type == "tool_result" {
				out[b.ToolUseID] = b
			}
		}
	}
	return out
}

// texts joins the assistant text blocks of the stream.
func (r *cliRun) texts() []string {
	var out []string
	for _, l := range r.Lines {
		if l.Type != "assistant" || l.Message == nil {
			continue
		}
		for _, b := range l.Message.Content {
			if b.Type == "text" {
				out = append(out, b.Text)
			}
		}
	}
	return out
}

// scripted returns the recorded requests answered by script name, in order.
func (h *harness) scripted(name string) []modelserver.Recorded {
	var out []modelserver.Recorded
	for _, r := range h.srv.Requests() {
		if r.Kind == modelserver.KindScript && r.Script == name {
			out = append(out, r)
		}
	}
	return out
}

// save writes an artifact file when MNEMO_E2E_ARTIFACTS is set.
func (h *harness) save(name string, data []byte) { modelserver.SaveArtifact(h.t, name, data) }
