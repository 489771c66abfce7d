//go:build e2e

package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/adapters/claudecode/e2e/harness"
	"github.com/mnemo-dev/mnemo/adapters/claudecode/modelserver"
)

// runTimeout bounds one claude run; a -p run takes 0.5–2.5 s here.
const runTimeout = 90 * time.Second

// claudeVersion is the CLI version setup.sh pins.
const claudeVersion = "2.1.330"

// claudeBin returns the CLI to test, or skips.
func claudeBin(t *testing.T, root string) string {
	t.Helper()
	return harness.CLI(t, "Claude Code CLI", "MNEMO_CLAUDE_BIN", filepath.Join(root, ".cache", "claude-code", "node_modules", ".bin", "claude"),
		"adapters/claudecode/e2e/setup.sh", "adapters/claudecode/e2e/run.sh")
}

// world is one isolated world: a HOME, a TMPDIR, a MNEMO_HOME, a git
// project and a scripted model server.
type world struct {
	harness.World
	t        *testing.T
	root     string // the repository
	cli      string // the CLI binary
	srv      *modelserver.Server
	path     []string // PATH entries placed before the system ones
	extraEnv []string // more of the CLI's environment, for one test
	runs     harness.Runs
}

// newHarness builds the isolated world. It skips when the CLI or the network
// namespace is missing.
func newHarness(t *testing.T) *world {
	t.Helper()
	harness.RequireLoopbackOnly(t, "adapters/claudecode/e2e/run.sh")
	root := harness.RepoRoot(t)
	h := &world{t: t, root: root, cli: claudeBin(t, root), World: harness.Home(t),
		runs: harness.Runs{T: t, Ext: ".jsonl", Max: runTimeout}}

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
	h.WriteProject(t)
	return h
}

// env is the CLI's whole environment (env -i style). Hooks inherit it, so
// MNEMO_HOME is set here.
func (h *world) env() []string {
	return append(append(h.World.Env(h.path...),
		"ANTHROPIC_BASE_URL="+h.srv.URL(),
		"ANTHROPIC_API_KEY=dummy",
		"IS_SANDBOX=1", // bypassPermissions is refused to root without it
		"DISABLE_TELEMETRY=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_ERROR_REPORTING=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
	), h.extraEnv...)
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
func (h *world) claude(label string, stdin []byte, args ...string) *cliRun {
	h.t.Helper()
	res := h.runs.Run("claude", label, false, func(ctx context.Context) *exec.Cmd {
		cmd := exec.CommandContext(ctx, h.cli, args...)
		cmd.Dir = h.Project
		cmd.Env = h.env()
		cmd.Stdin = bytes.NewReader(stdin)
		return cmd
	})
	r := &cliRun{Label: label, Args: args, Took: res.Took, Exit: res.Exit, Stdout: res.Stdout, Stderr: res.Stderr}
	r.Lines = parseStream(h.t, r.Stdout)
	return r
}

// claudeP runs `claude -p PROMPT` with bypassed permissions and stream-json
// output, plus extra args.
func (h *world) claudeP(label, prompt string, extra ...string) *cliRun {
	h.t.Helper()
	args := append([]string{"-p", prompt, "--permission-mode", "bypassPermissions",
		"--output-format", "stream-json", "--verbose"}, extra...)
	return h.claude(label, nil, args...)
}

func parseStream(t *testing.T, out []byte) []streamLine {
	t.Helper()
	return harness.Lines(t, "stream-json", out, func(l *streamLine, raw json.RawMessage) { l.Raw = raw })
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
func (h *world) scripted(name string) []modelserver.Recorded {
	var out []modelserver.Recorded
	for _, r := range h.srv.Requests() {
		if r.Kind == modelserver.KindScript && r.Script == name {
			out = append(out, r)
		}
	}
	return out
}

// save writes an artifact file when MNEMO_E2E_ARTIFACTS is set.
func (h *world) save(name string, data []byte) { harness.Save(h.t, name, data) }
