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

// opencodeInstall returns the CLI to test and setup.sh's config-deps
// folder, or skips.
func opencodeInstall(t *testing.T, root string) (bin, deps string) {
	t.Helper()
	cache := harness.EnvOr("MNEMO_OPENCODE_CACHE", filepath.Join(root, ".cache", "opencode"))
	bin = harness.EnvOr("MNEMO_OPENCODE_BIN", filepath.Join(cache, "node_modules", ".bin", "opencode"))
	deps = filepath.Join(cache, "config-deps")
	for _, p := range []string{bin, filepath.Join(deps, "package-lock.json"), filepath.Join(deps, "node_modules", "@opencode-ai", "plugin")} {
		if _, err := os.Stat(p); err != nil {
			t.Skipf("OpenCode not installed (%v): run adapters/opencode/e2e/setup.sh, or use adapters/opencode/e2e/run.sh", err)
		}
	}
	return bin, deps
}

// world is one isolated world: a HOME with its XDG folders, a TMPDIR, a
// MNEMO_HOME, a git project, a scripted model and the DNS recorder.
type world struct {
	harness.World
	t        *testing.T
	root     string // the repository
	cli      string // the opencode binary
	deps     string // setup.sh's config-deps
	config   string // XDG_CONFIG_HOME
	srv      *chatServer
	dns      *dnsRecorder // nil when names cannot be recorded
	offline  bool         // offlineEnv in the CLI's environment
	extraEnv []string
	runs     harness.Runs
}

// newHarness builds the isolated world with OpenCode configured for the
// scripted model; seed gives its config folder the @opencode-ai/plugin
// install (seedConfigDir). It skips when the CLI or the network namespace
// is missing.
func newHarness(t *testing.T, seed bool) *world {
	t.Helper()
	harness.RequireLoopbackOnly(t, "adapters/opencode/e2e/run.sh")
	root := harness.RepoRoot(t)
	cli, deps := opencodeInstall(t, root)
	h := &world{t: t, root: root, cli: cli, deps: deps, offline: true, World: harness.Home(t),
		runs: harness.Runs{T: t, Ext: ".jsonl", Max: runTimeout}}
	h.config = harness.Mkdir(t, h.Home, ".config")
	h.srv = startChatServer(t)
	h.dns = startDNSRecorder(t)
	t.Cleanup(func() {
		h.srv.save(h)
		if h.dns != nil {
			h.save("dns-names.txt", []byte(strings.Join(h.dns.Names(), "\n")+"\n"))
		}
	})
	h.WriteProject(t)
	h.writeConfig()
	if seed {
		h.seedConfigDir(filepath.Join(h.config, "opencode"))
	}
	return h
}

// writeConfig writes the user's opencode.json: the scripted model as the
// only one, tools allowed without asking, no sharing, no updates.
func (h *world) writeConfig() {
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
	harness.WriteFile(h.t, filepath.Join(h.config, "opencode", "opencode.json"), string(b)+"\n")
}

// seedConfigDir gives an OpenCode config folder the @opencode-ai/plugin
// install that OpenCode would otherwise run npm for at start-up (it skips
// the install when node_modules exists and package-lock.json lists every
// dependency of package.json and @opencode-ai/plugin): the package.json and
// package-lock.json of setup.sh's config-deps, and its node_modules.
func (h *world) seedConfigDir(dir string) {
	h.t.Helper()
	for _, name := range []string{"package.json", "package-lock.json"} {
		data, err := os.ReadFile(filepath.Join(h.deps, name))
		if err != nil {
			h.t.Fatal(err)
		}
		harness.WriteFile(h.t, filepath.Join(dir, name), string(data))
	}
	if err := os.Symlink(filepath.Join(h.deps, "node_modules"), filepath.Join(dir, "node_modules")); err != nil {
		h.t.Fatal(err)
	}
}

// env is the CLI's whole environment (env -i style). The plugin's hooks
// inherit it, so MNEMO_HOME is set here; mnemo-hook is not on PATH: the
// plugin runs the one its install names.
func (h *world) env() []string {
	env := append(h.World.Env(),
		"XDG_CONFIG_HOME="+h.config,
		"XDG_DATA_HOME="+filepath.Join(h.Home, ".local", "share"),
		"XDG_CACHE_HOME="+filepath.Join(h.Home, ".cache"),
		"XDG_STATE_HOME="+filepath.Join(h.Home, ".local", "state"),
	)
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
func (h *world) opencode(label, prompt string) *cliRun {
	h.t.Helper()
	args := append([]string{"run", "--format", "json", "--print-logs", "--log-level", "INFO"}, strings.Fields(prompt)...)
	// The group is left as it is after the CLI exits: the plugin's hooks may
	// still be delivering.
	res := h.runs.Run("opencode", label, true, func(ctx context.Context) *exec.Cmd {
		cmd := exec.CommandContext(ctx, h.cli, args...)
		cmd.Dir = h.Project
		cmd.Env = h.env()
		return cmd
	})
	r := &cliRun{Label: label, Took: res.Took, Exit: res.Exit, Stdout: res.Stdout, Stderr: res.Stderr}
	r.Events = harness.Lines(h.t, "opencode "+label+": --format json", r.Stdout, func(e *runEvent, raw json.RawMessage) { e.Raw = raw })
	for _, e := range r.Events {
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
func (h *world) save(name string, data []byte) { harness.Save(h.t, name, data) }
