//go:build e2e

package e2e_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/adapters/claudecode/e2e/harness"
)

// runTimeout bounds one gemini run; a -p run of six turns takes 3–4 s here.
const runTimeout = 90 * time.Second

// geminiVersion is the CLI version setup.sh pins.
const geminiVersion = "0.61.0"

// geminiBin returns the CLI to test, or skips.
func geminiBin(t *testing.T, root string) string {
	t.Helper()
	return harness.CLI(t, "Gemini CLI", "MNEMO_GEMINI_BIN", filepath.Join(root, ".cache", "gemini-cli", "node_modules", ".bin", "gemini"),
		"adapters/gemini/e2e/setup.sh", "adapters/gemini/e2e/run.sh")
}

// world is one isolated world: a HOME (which is also GEMINI_CLI_HOME), a
// TMPDIR, a MNEMO_HOME, a trusted git project and a scripted Gemini API.
type world struct {
	harness.World
	t        *testing.T
	root     string // the repository
	cli      string // the gemini binary
	srv      *apiServer
	path     []string // PATH entries placed before the system ones
	extraEnv []string // more of the CLI's environment, for one test
	runs     harness.Runs
}

// newHarness builds the isolated world and writes the CLI's user settings
// (baseSettings) and trusted folders. It skips when the CLI or the network
// namespace is missing.
func newHarness(t *testing.T) *world {
	t.Helper()
	harness.RequireLoopbackOnly(t, "adapters/gemini/e2e/run.sh")
	root := harness.RepoRoot(t)
	h := &world{t: t, root: root, cli: geminiBin(t, root), World: harness.Home(t),
		runs: harness.Runs{T: t, Ext: ".jsonl", Max: runTimeout}}

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
	h.WriteProject(t)
	h.writeJSON(h.settingsPath(), baseSettings())
	// A trusted folder: in an untrusted one the CLI turns --yolo back into
	// "default" approval, and no tool runs without a person.
	h.writeJSON(filepath.Join(h.Home, ".gemini", "trustedFolders.json"), map[string]string{h.Project: "TRUST_FOLDER"})
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
func (h *world) settingsPath() string { return filepath.Join(h.Home, ".gemini", "settings.json") }

func (h *world) writeJSON(path string, v any) {
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

// env is the CLI's whole environment (env -i style). Hooks inherit it, so
// MNEMO_HOME is set here.
func (h *world) env() []string {
	return append(append(h.World.Env(h.path...),
		"GEMINI_CLI_HOME="+h.Home, // the CLI's own home override; ~/.gemini is under it
		"TERM=dumb",
		"GEMINI_API_KEY=dummy",
		"GOOGLE_GEMINI_BASE_URL="+h.srv.url,
		// One node process: without it the CLI re-spawns itself with a
		// bigger heap (--max-old-space-size), which changes nothing here.
		"GEMINI_CLI_NO_RELAUNCH=true",
	), h.extraEnv...)
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
func (h *world) gemini(label string, args ...string) *cliRun {
	h.t.Helper()
	res := h.runs.Run("gemini", label, false, func(ctx context.Context) *exec.Cmd {
		cmd := exec.CommandContext(ctx, h.cli, args...)
		cmd.Dir = h.Project
		cmd.Env = h.env()
		return cmd
	})
	r := &cliRun{Label: label, Args: args, Took: res.Took, Exit: res.Exit, Stdout: res.Stdout, Stderr: res.Stderr}
	r.Events = parseStream(h.t, r.Stdout)
	return r
}

// geminiP runs `gemini -p PROMPT --yolo -o stream-json`.
func (h *world) geminiP(label, prompt string, extra ...string) *cliRun {
	h.t.Helper()
	return h.gemini(label, append([]string{"-p", prompt, "--yolo", "--output-format", "stream-json"}, extra...)...)
}

func parseStream(t *testing.T, out []byte) []streamEvent {
	t.Helper()
	return harness.Lines(t, "stream-json", out, func(e *streamEvent, raw json.RawMessage) { e.Raw = raw })
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

// save writes an artifact file when MNEMO_E2E_ARTIFACTS is set; a failure
// to write is logged, never fails the test.
func (h *world) save(name string, data []byte) { harness.Save(h.t, name, data) }
