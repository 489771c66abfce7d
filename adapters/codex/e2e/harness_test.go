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

	"github.com/mnemo-dev/mnemo/adapters/claudecode/modelserver"
)

// runTimeout bounds one codex run; an offline `codex exec` of six model
// replies takes about a second here.
const runTimeout = 90 * time.Second

// codexVersion is the CLI version setup.sh pins.
const codexVersion = "0.169.0"

// codexModel is a model of Codex's bundled catalog: with it Codex offers the
// apply_patch freeform tool (with an unknown model it falls back to metadata
// without apply_patch, and warns).
const codexModel = "gpt-5.5"

// providerKeyEnv is the variable that holds the scripted provider's API key.
const providerKeyEnv = "MNEMO_E2E_OPENAI_KEY"

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

// codexBin returns the CLI to test, or skips.
func codexBin(t *testing.T, root string) string {
	t.Helper()
	bin := envOr("MNEMO_CODEX_BIN", filepath.Join(root, ".cache", "codex", "node_modules", ".bin", "codex"))
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("Codex CLI not found (%v): run adapters/codex/e2e/setup.sh and set MNEMO_CODEX_BIN, "+
			"or use adapters/codex/e2e/run.sh", err)
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
				"(adapters/codex/e2e/run.sh does)", ifc.Name)
		}
		up = up || ifc.Flags&net.FlagUp != 0
	}
	if !up {
		t.Skip("loopback interface is down: run `ip link set lo up` inside the namespace (run.sh does)")
	}
}

// harness is one isolated world: a HOME, a TMPDIR, a CODEX_HOME, a
// MNEMO_HOME, a git project and a scripted Responses API.
type harness struct {
	t         *testing.T
	root      string // the repository
	codex     string // the Codex CLI
	base      string
	home      string
	tmp       string
	codexHome string
	mnemoHome string
	project   string
	srv       *responsesServer
	path      []string // PATH entries placed before the system ones
	extraEnv  []string // more of the CLIs' environment, for one test
	runs      int
}

// newHarness builds the isolated world and writes Codex's config.toml. It
// skips when the CLI or the network namespace is missing.
func newHarness(t *testing.T) *harness {
	t.Helper()
	requireLoopbackOnly(t)
	root := repoRoot(t)
	h := &harness{t: t, root: root, codex: codexBin(t, root)}
	h.base = t.TempDir()
	h.home = mkdir(t, h.base, "home")
	// Codex refuses to put its helper links in a CODEX_HOME under TMPDIR:
	// the two are siblings.
	h.tmp = mkdir(t, h.base, "tmp")
	h.codexHome = mkdir(t, h.base, "codex-home")
	h.mnemoHome = mkdir(t, h.base, "mnemo")
	h.project = mkdir(t, h.base, "calc-project")
	h.srv = startResponses(t)
	h.writeConfig()
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

// configPath is Codex's user config.
func (h *harness) configPath() string { return filepath.Join(h.codexHome, "config.toml") }

// hooksPath is Codex's user hooks file.
func (h *harness) hooksPath() string { return filepath.Join(h.codexHome, "hooks.json") }

// writeConfig writes $CODEX_HOME/config.toml: the scripted provider, no
// approvals and no sandbox (so that the scripted shell commands and patches
// run), no update check, no analytics, no web search, no plugin sync (which
// would try github.com at startup).
func (h *harness) writeConfig() {
	h.t.Helper()
	config := fmt.Sprintf(`model = %q
model_provider = "mnemo-e2e"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false
web_search = "disabled"

[model_providers.mnemo-e2e]
name = "Mnemo e2e scripted Responses API"
base_url = %q
wire_api = "responses"
env_key = %q

[analytics]
enabled = false

[features]
plugins = false
`, codexModel, h.srv.BaseURL(), providerKeyEnv)
	if err := os.WriteFile(h.configPath(), []byte(config), 0o600); err != nil {
		h.t.Fatal(err)
	}
}

// The project: calc.py has two bugs, test.sh fails until both are fixed
// (the Claude Code end-to-end test's project).
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
		"CODEX_HOME=" + h.codexHome,
		providerKeyEnv + "=dummy",
		"MNEMO_HOME=" + h.mnemoHome,
	}, h.extraEnv...)
}

// codexRun is one finished CLI run (codex, or claude in the cross-agent test).
type codexRun struct {
	Label  string
	Args   []string
	Took   time.Duration
	Exit   int
	Stdout []byte
	Stderr []byte
	Events []execEvent // --json runs
}

// execEvent is one line of `codex exec --json`.
type execEvent struct {
	Type     string    `json:"type"`
	ThreadID string    `json:"thread_id"`
	Item     *execItem `json:"item"`
	Error    *struct {
		Message string `json:"message"`
	} `json:"error"`
	Message string          `json:"message"`
	Raw     json.RawMessage `json:"-"`
}

// execItem is the item of an item.started / item.completed event.
type execItem struct {
	ID               string `json:"id"`
	Type             string `json:"type"` // command_execution, file_change, agent_message, error, …
	Command          string `json:"command"`
	AggregatedOutput string `json:"aggregated_output"`
	ExitCode         *int   `json:"exit_code"`
	Status           string `json:"status"`
	Text             string `json:"text"`
	Message          string `json:"message"`
	Changes          []struct {
		Path string `json:"path"`
		Kind string `json:"kind"`
	} `json:"changes"`
}

// run runs the Codex CLI in the project with the isolated environment and
// no stdin. It fails the test when the run cannot start or times out, not
// when the CLI exits non-zero (see Exit).
func (h *harness) run(label string, args ...string) *codexRun {
	h.t.Helper()
	return h.runBin(label, h.codex, nil, args...)
}

// runBin runs a CLI as run does, with more environment variables.
func (h *harness) runBin(label, bin string, env []string, args ...string) *codexRun {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = h.project
	cmd.Env = append(h.env(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// Own process group: a timeout kills the CLI with its tool shells and hooks.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second

	began := time.Now()
	err := cmd.Run()
	r := &codexRun{Label: label, Args: args, Took: time.Since(began), Stdout: stdout.Bytes(), Stderr: stderr.Bytes()}
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // leftovers of the group, if any
	}
	h.runs++
	h.save(fmt.Sprintf("%02d-%s.stdout", h.runs, label), r.Stdout)
	h.save(fmt.Sprintf("%02d-%s.stderr", h.runs, label), r.Stderr)
	var exitErr *exec.ExitError
	switch {
	case ctx.Err() != nil:
		h.t.Fatalf("%s %s: timed out after %v\nstderr:\n%s", filepath.Base(bin), label, runTimeout, r.Stderr)
	case errors.As(err, &exitErr):
		r.Exit = exitErr.ExitCode()
	case err != nil:
		h.t.Fatalf("%s %s: %v", filepath.Base(bin), label, err)
	}
	h.t.Logf("TIMING %s %s: %.2fs (exit %d)", filepath.Base(bin), label, r.Took.Seconds(), r.Exit)
	return r
}

// exec runs `codex exec --json [extra…] PROMPT` and parses its events.
func (h *harness) exec(label, prompt string, extra ...string) *codexRun {
	h.t.Helper()
	args := append(append([]string{"exec", "--json"}, extra...), prompt)
	r := h.run(label, args...)
	r.Events = parseEvents(h.t, r.Stdout)
	return r
}

func parseEvents(t *testing.T, out []byte) []execEvent {
	t.Helper()
	var events []execEvent
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		var e execEvent
		if err := json.Unmarshal(raw, &e); err != nil {
			t.Fatalf("codex exec --json line %q: %v", raw, err)
		}
		e.Raw = append(json.RawMessage(nil), raw...)
		events = append(events, e)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read codex exec --json: %v", err)
	}
	return events
}

// mustSucceed fails unless the run exited 0 and its turn completed.
func (r *codexRun) mustSucceed(t *testing.T) {
	t.Helper()
	if r.Exit != 0 {
		t.Fatalf("codex %s exited %d\nstderr:\n%s\nstdout:\n%s", r.Label, r.Exit, r.Stderr, r.Stdout)
	}
	completed := false
	for _, e := range r.Events {
		switch e.Type {
		case "turn.failed", "error":
			t.Fatalf("codex %s: %s", r.Label, e.Raw)
		case "turn.completed":
			completed = true
		}
	}
	if !completed {
		t.Fatalf("codex %s: no turn.completed event\nstdout:\n%s\nstderr:\n%s", r.Label, r.Stdout, r.Stderr)
	}
}

// threadID is the thread (session) id of the run.
func (r *codexRun) threadID(t *testing.T) string {
	t.Helper()
	for _, e := range r.Events {
		if e.Type == "thread.started" && e.ThreadID != "" {
			return e.ThreadID
		}
	}
	t.Fatalf("codex %s: no thread.started event", r.Label)
	return ""
}

// items returns the completed items, in order.
func (r *codexRun) items() []execItem {
	var out []execItem
	for _, e := range r.Events {
		if e.Type == "item.completed" && e.Item != nil {
			out = append(out, *e.Item)
		}
	}
	return out
}

// hookLine matches the human output's record of a finished hook run.
var hookLine = regexp.MustCompile(`(?m)^hook: (\w+) (Completed|Failed|Blocked|Stopped)$`)

// hookStatuses lists "<Event> <status>" for each hook run a human-output run
// (codex exec without --json) reported on stderr, in order.
func (r *codexRun) hookStatuses() []string {
	var out []string
	for _, m := range hookLine.FindAllStringSubmatch(string(r.Stderr), -1) {
		out = append(out, m[1]+" "+m[2])
	}
	return out
}

// save writes an artifact file when MNEMO_E2E_ARTIFACTS is set.
func (h *harness) save(name string, data []byte) { modelserver.SaveArtifact(h.t, name, data) }
