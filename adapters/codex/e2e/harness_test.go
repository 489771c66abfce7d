//go:build e2e

package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/adapters/claudecode/e2e/harness"
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

// codexBin returns the CLI to test, or skips.
func codexBin(t *testing.T, root string) string {
	t.Helper()
	return harness.CLI(t, "Codex CLI", "MNEMO_CODEX_BIN", filepath.Join(root, ".cache", "codex", "node_modules", ".bin", "codex"),
		"adapters/codex/e2e/setup.sh", "adapters/codex/e2e/run.sh")
}

// world is one isolated world: a HOME, a TMPDIR, a CODEX_HOME, a
// MNEMO_HOME, a git project and a scripted Responses API.
type world struct {
	harness.World
	t         *testing.T
	root      string // the repository
	codex     string // the Codex CLI
	codexHome string
	srv       *responsesServer
	path      []string // PATH entries placed before the system ones
	extraEnv  []string // more of the CLIs' environment, for one test
	runs      harness.Runs
}

// newHarness builds the isolated world and writes Codex's config.toml. It
// skips when the CLI or the network namespace is missing.
func newHarness(t *testing.T) *world {
	t.Helper()
	harness.RequireLoopbackOnly(t, "adapters/codex/e2e/run.sh")
	root := harness.RepoRoot(t)
	h := &world{t: t, root: root, codex: codexBin(t, root), World: harness.Home(t),
		runs: harness.Runs{T: t, Ext: ".stdout", Max: runTimeout}}
	// Codex refuses to put its helper links in a CODEX_HOME under TMPDIR:
	// the two are siblings.
	h.codexHome = harness.Mkdir(t, h.Base, "codex-home")
	h.srv = startResponses(t)
	h.writeConfig()
	h.WriteProject(t)
	return h
}

// configPath is Codex's user config.
func (h *world) configPath() string { return filepath.Join(h.codexHome, "config.toml") }

// hooksPath is Codex's user hooks file.
func (h *world) hooksPath() string { return filepath.Join(h.codexHome, "hooks.json") }

// writeConfig writes $CODEX_HOME/config.toml: the scripted provider, no
// approvals and no sandbox (so that the scripted shell commands and patches
// run), no update check, no analytics, no web search, no plugin sync (which
// would try github.com at startup).
func (h *world) writeConfig() {
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

// env is the CLI's whole environment (env -i style). Hooks inherit it, so
// MNEMO_HOME is set here.
func (h *world) env() []string {
	return append(append(h.World.Env(h.path...),
		"CODEX_HOME="+h.codexHome,
		providerKeyEnv+"=dummy",
	), h.extraEnv...)
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
func (h *world) run(label string, args ...string) *codexRun {
	h.t.Helper()
	return h.runBin(label, h.codex, nil, args...)
}

// runBin runs a CLI as run does, with more environment variables.
func (h *world) runBin(label, bin string, env []string, args ...string) *codexRun {
	h.t.Helper()
	res := h.runs.Run(filepath.Base(bin), label, false, func(ctx context.Context) *exec.Cmd {
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Dir = h.Project
		cmd.Env = append(h.env(), env...)
		return cmd
	})
	r := &codexRun{Label: label, Args: args, Took: res.Took, Exit: res.Exit, Stdout: res.Stdout, Stderr: res.Stderr}
	return r
}

// exec runs `codex exec --json [extra…] PROMPT` and parses its events.
func (h *world) exec(label, prompt string, extra ...string) *codexRun {
	h.t.Helper()
	args := append(append([]string{"exec", "--json"}, extra...), prompt)
	r := h.run(label, args...)
	r.Events = parseEvents(h.t, r.Stdout)
	return r
}

func parseEvents(t *testing.T, out []byte) []execEvent {
	t.Helper()
	return harness.Lines(t, "codex exec --json", out, func(e *execEvent, raw json.RawMessage) { e.Raw = raw })
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
func (h *world) save(name string, data []byte) { harness.Save(h.t, name, data) }
