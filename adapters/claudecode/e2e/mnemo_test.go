//go:build e2e

package e2e_test

// Extension points for Mnemo. These tests run once bin/mnemo and
// bin/mnemo-hook exist (or MNEMO_BIN / MNEMO_HOOK_BIN name them) and skip
// until then. What they assume of Mnemo's command line is kept in the
// variables below, so that a change there is a one-line fix:
//
//   - `mnemo install claude-code --scope user` writes $HOME/.claude/settings.json
//     with, for each stage, a command hook {"command": <abs mnemo-hook>,
//     "args": [<Event>]};
//   - `mnemo context`, run in the project, prints what SessionStart would
//     inject;
//   - `mnemo daemon stop` stops the daemon the hooks started;
//   - logs go to $MNEMO_HOME/logs/.

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/adapters/claudecode/e2e/harness"
	"github.com/mnemo-dev/mnemo/adapters/claudecode/modelserver"
	"github.com/mnemo-dev/mnemo/adapters/hosts"
	"github.com/mnemo-dev/mnemo/memory"
)

var (
	// mnemoInstallArgs installs the hooks into $HOME/.claude/settings.json.
	mnemoInstallArgs = []string{"install", "claude-code", "--scope", "user"}
	// mnemoStages are the hook events Mnemo installs.
	mnemoStages = []string{"SessionStart", "UserPromptSubmit", "PostToolUse", "Stop", "SessionEnd"}
	// memoryWait bounds the wait for session 1's events to become context.
	memoryWait = 30 * time.Second
)

// mnemo runs the mnemo command line in the project, with the CLI's
// environment (same HOME and MNEMO_HOME), and returns its combined output.
func (h *world) mnemo(ctx context.Context, bin string, args ...string) (string, error) {
	return harness.Command(ctx, h.Project, h.env(), bin, args...)
}

// installMnemo puts mnemo on the CLI's PATH, runs `mnemo install claude-code
// --scope user` and checks the hooks it wrote. It stops the daemon at the end
// of the test.
func (h *world) installMnemo(t *testing.T, mnemoBin, hookBin string) {
	t.Helper()
	h.path = append(h.path, filepath.Dir(mnemoBin))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := h.mnemo(ctx, mnemoBin, mnemoInstallArgs...)
	if err != nil {
		t.Fatalf("mnemo %s: %v\n%s", strings.Join(mnemoInstallArgs, " "), err, out)
	}
	harness.StopDaemonAtEnd(t, h.MnemoHome, mnemoBin, h.mnemo)
	h.checkHooks(t, hookBin)
}

// checkHooks checks that $HOME/.claude/settings.json runs hookBin at every
// stage.
func (h *world) checkHooks(t *testing.T, hookBin string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(h.Home, ".claude", "settings.json"))
	if err != nil {
		t.Fatalf("settings written by mnemo install: %v", err)
	}
	var settings struct {
		Hooks map[string][]struct {
			Matcher string `json:"matcher"`
			Hooks   []struct {
				Type    string   `json:"type"`
				Command string   `json:"command"`
				Args    []string `json:"args"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(data, &settings); err != nil {
		t.Fatalf("settings.json: %v\n%s", err, data)
	}
	for _, stage := range mnemoStages {
		found := false
		for _, group := range settings.Hooks[stage] {
			for _, hk := range group.Hooks {
				found = found || hk.Type == "command" && hk.Command == hookBin && slices.Equal(hk.Args, []string{stage})
			}
		}
		if !found {
			t.Errorf("settings.json has no %s hook running %s %s:\n%s", stage, hookBin, stage, data)
		}
	}
}

// waitForContext polls `mnemo context` until it names want.
func (h *world) waitForContext(t *testing.T, mnemoBin, want string) string {
	t.Helper()
	return harness.WaitForContext(t, memoryWait, want, mnemoBin, h.mnemo)
}

// mnemoContext extracts the <mnemo-context> block of a request.
var mnemoContext = regexp.MustCompile(`(?s)<mnemo-context[^>]*>.*?</mnemo-context>`)

// TestMnemoRecallAcrossSessions: with Mnemo's hooks installed, session 1 fixes
// calc.py; session 2, a fresh session in the same project, starts with a
// <mnemo-context> that names calc.py, and the model sees it.
func TestMnemoRecallAcrossSessions(t *testing.T) {
	h := newHarness(t)
	mnemoBin, hookBin := harness.Mnemo(t, h.root)
	h.installMnemo(t, mnemoBin, hookBin)

	first := h.runFixCalc(t)
	for _, l := range first.Lines {
		if l.Type == "system" && l.Subtype == "hook_response" && (l.ExitCode == nil || *l.ExitCode != 0) {
			t.Errorf("session 1: %s hook failed: %s", l.HookEvent, l.Raw)
		}
	}
	h.waitForContext(t, mnemoBin, "calc.py")
	h.recallsCalc(t, first)
	harness.CheckLogs(t, h.MnemoHome, false)
}

// recallsCalc runs a second session in the project and checks that its
// first model request holds a <mnemo-context> naming calc.py, which the
// first session fixed.
func (h *world) recallsCalc(t *testing.T, first *cliRun) {
	t.Helper()
	if err := h.srv.Register(modelserver.Script{Name: "recall", Steps: []modelserver.Step{
		{Text: "Last time we fixed add and mul in calc.py."},
	}}); err != nil {
		t.Fatal(err)
	}
	second := h.claudeP("recall", modelserver.Marker("recall")+" what did we change last time?")
	second.mustSucceed(t)
	if second.init(t).SessionID == first.init(t).SessionID {
		t.Error("session 2 reused session 1's id")
	}
	reqs := h.scripted("recall")
	if len(reqs) == 0 {
		t.Fatal("session 2 sent no request to the model")
	}
	block := mnemoContext.FindString(reqs[0].Text())
	switch {
	case block == "":
		t.Errorf("session 2's first model request has no <mnemo-context>:\n%s", reqs[0].Text())
	case !strings.Contains(block, "calc.py"):
		t.Errorf("session 2's <mnemo-context> does not name calc.py:\n%s", block)
	}
}

// TestSetupThenRecall: on a fresh HOME where Claude Code is on PATH,
// `mnemo setup --yes` wires it (and says where), `mnemo doctor` is green,
// the next real session gets Mnemo's context, and `mnemo setup --undo`
// gives the person's settings file back byte for byte.
func TestSetupThenRecall(t *testing.T) {
	h := newHarness(t)
	mnemoBin, hookBin := harness.Mnemo(t, h.root)
	h.path = append(h.path, filepath.Dir(mnemoBin), filepath.Dir(h.cli))
	// The person's own settings, in their own formatting.
	settings := filepath.Join(h.Home, ".claude", "settings.json")
	mine := "{\n\t\"theme\": \"dark\",\n\t\"permissions\": {\"allow\": [\"Bash(ls:*)\", \"Read\"]}\n}"
	if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(settings, []byte(mine), 0o644); err != nil {
		t.Fatal(err)
	}
	// The e2e runs offline, where the model cannot be fetched: the
	// weights `just test` installed stand for a model already there, and
	// setup says so; without them, setup is told to leave the model.
	args := []string{"setup", "--yes"}
	if models := filepath.Join(h.root, ".cache", "models"); dirExists(filepath.Join(models, "use-lite")) {
		h.extraEnv = append(h.extraEnv, "MNEMO_MODELS="+models)
	} else {
		t.Logf("no model in %s: setup runs with --no-model", models)
		args = append(args, "--no-model")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := harness.Command(ctx, h.Project, h.env(), mnemoBin, args...)
	if err != nil {
		t.Fatalf("mnemo setup --yes: %v\n%s", err, out)
	}
	harness.StopDaemonAtEnd(t, h.MnemoHome, mnemoBin, h.mnemo)
	if !strings.Contains(out, "Claude Code") || !strings.Contains(out, settings+": hooks installed") {
		t.Errorf("setup does not say it wired Claude Code in %s:\n%s", settings, out)
	}
	h.checkHooks(t, hookBin)
	if out, err := harness.Command(ctx, h.Project, h.env(), mnemoBin, "doctor"); err != nil {
		t.Errorf("mnemo doctor after setup: %v\n%s", err, out)
	}

	first := h.runFixCalc(t)
	h.waitForContext(t, mnemoBin, "calc.py")
	h.recallsCalc(t, first)

	if out, err := harness.Command(ctx, h.Project, h.env(), mnemoBin, "setup", "--undo"); err != nil {
		t.Fatalf("mnemo setup --undo: %v\n%s", err, out)
	}
	if got, err := os.ReadFile(settings); err != nil || string(got) != mine {
		t.Errorf("after setup --undo the settings are\n%s\nwant, byte for byte,\n%s (err %v)", got, mine, err)
	}
	harness.CheckLogs(t, h.MnemoHome, false)
}

func dirExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// TestMnemoMCPSearch: `mnemo install claude-code` also registers the MCP
// server; a later session whose model calls mcp__mnemo__search gets the
// earlier session's observations back in the tool result.
func TestMnemoMCPSearch(t *testing.T) {
	h := newHarness(t)
	// With tool search on, MCP tools are deferred until the model asks
	// ToolSearch for them; off, the scripted model can call the tool in its
	// first turn.
	h.extraEnv = append(h.extraEnv, "ENABLE_TOOL_SEARCH=false")
	mnemoBin, hookBin := harness.Mnemo(t, h.root)
	h.installMnemo(t, mnemoBin, hookBin)
	h.runFixCalc(t)
	h.waitForContext(t, mnemoBin, "calc.py")

	const toolID = "toolu_mnemo_search_1"
	if err := h.srv.Register(modelserver.Script{Name: "mcp-recall", Steps: []modelserver.Step{
		{ToolUses: []modelserver.ToolUse{{ID: toolID, Name: "mcp__mnemo__search", Input: map[string]any{"query": "calc.py"}}}},
		{Text: "Memory says we fixed calc.py."},
	}}); err != nil {
		t.Fatal(err)
	}
	run := h.claudeP("mcp-recall", modelserver.Marker("mcp-recall")+" search your memory for calc.py")
	run.mustSucceed(t)
	reqs := h.scripted("mcp-recall")
	if len(reqs) < 2 {
		t.Fatalf("the model got %d requests, want the tool call answered", len(reqs))
	}
	if !slices.Contains(reqs[0].Request.ToolNames(), "mcp__mnemo__search") {
		t.Fatalf("mcp__mnemo__search is not offered to the model: %v", reqs[0].Request.ToolNames())
	}
	res, ok := reqs[len(reqs)-1].Request.ToolResult(toolID)
	if !ok {
		t.Fatalf("no tool result for %s in the last request:\n%s", toolID, reqs[len(reqs)-1].Text())
	}
	text := res.Content.Text()
	// Claude Code hands the model the structured result (the compact index).
	if res.IsError || !strings.Contains(text, "calc.py") || !strings.Contains(text, `"id":`) || strings.Contains(text, "snippet") {
		t.Fatalf("mcp__mnemo__search returned (error=%t):\n%s", res.IsError, text)
	}
	harness.CheckLogs(t, h.MnemoHome, false)
}

// hookContext returns the additionalContext the run's hook for event
// printed (the run needs --include-hook-events), "" when it printed {}. It
// fails the test when the hook did not run or did not succeed.
func (r *cliRun) hookContext(t *testing.T, event string) string {
	t.Helper()
	for _, l := range r.Lines {
		if l.Type != "system" || l.Subtype != "hook_response" || l.HookEvent != event {
			continue
		}
		if l.ExitCode == nil || *l.ExitCode != 0 || l.Outcome != "success" {
			t.Fatalf("claude %s: %s hook: %s", r.Label, event, l.Raw)
		}
		var out struct {
			HookSpecificOutput *struct {
				HookEventName     string `json:"hookEventName"`
				AdditionalContext string `json:"additionalContext"`
			} `json:"hookSpecificOutput"`
		}
		if err := json.Unmarshal([]byte(l.Stdout), &out); err != nil {
			t.Fatalf("claude %s: %s hook printed %q: %v", r.Label, event, l.Stdout, err)
		}
		if out.HookSpecificOutput == nil {
			return ""
		}
		if out.HookSpecificOutput.HookEventName != event {
			t.Fatalf("claude %s: %s hook answered for %q", r.Label, event, out.HookSpecificOutput.HookEventName)
		}
		return out.HookSpecificOutput.AdditionalContext
	}
	t.Fatalf("claude %s: no hook_response for %s in the stream (run with --include-hook-events)", r.Label, event)
	return ""
}

// recalledID matches one line of a prompt's recall and captures its id.
var recalledID = regexp.MustCompile(`(?m)^- #(\d+) · `)

// hookTook matches the hook log's record of a delivered UserPromptSubmit and
// captures how long the hook took, start to answer.
var hookTook = regexp.MustCompile(`msg=delivered event=UserPromptSubmit .* took=(\S+)`)

// TestMnemoPromptRecall: session 1 fixes calc.py. Session 2's SessionStart
// context has room for the last summary only (contextBytes 512), so its
// prompt about the fix gets session 1's observations from the
// UserPromptSubmit hook, as additionalContext, and the model receives them
// with the prompt. The same question again in the same session (--resume)
// gets none of them twice. The hook answers within its deadline each time.
func TestMnemoPromptRecall(t *testing.T) {
	h := newHarness(t)
	mnemoBin, hookBin := harness.Mnemo(t, h.root)
	if err := os.WriteFile(filepath.Join(h.MnemoHome, "settings.json"), []byte(`{"contextBytes": 512}`), 0o600); err != nil {
		t.Fatal(err)
	}
	h.extraEnv = append(h.extraEnv, "MNEMO_LOG_LEVEL=debug") // the hook logs how long it took
	h.installMnemo(t, mnemoBin, hookBin)
	h.runFixCalc(t)
	h.waitForContext(t, mnemoBin, "calc.py")

	// The prompt is what a person would type: the script's marker goes in
	// the system prompt, where the hook does not see it.
	const question = "what did we change in calc.py to make sh test.sh pass?"
	if err := h.srv.Register(modelserver.Script{Name: "prompt-recall", Respond: func(modelserver.Turn) modelserver.Step {
		return modelserver.Step{Text: "We fixed add and mul in calc.py."}
	}}); err != nil {
		t.Fatal(err)
	}
	marker := []string{"--include-hook-events", "--append-system-prompt", modelserver.Marker("prompt-recall")}
	run := h.claudeP("prompt-recall", question, marker...)
	run.mustSucceed(t)
	recall := run.hookContext(t, hosts.EventUserPromptSubmit)
	ids := recalledID.FindAllStringSubmatch(recall, -1)
	switch {
	case recall == "":
		t.Fatalf("the UserPromptSubmit hook recalled nothing for %q", question)
	case !strings.HasPrefix(recall, `<mnemo-context project="calc-project" source="prompt">`) || !strings.HasSuffix(recall, "</mnemo-context>\n"):
		t.Errorf("the recall is not a <mnemo-context> element of source prompt:\n%s", recall)
	case !strings.Contains(recall, "calc.py") || len(ids) == 0 || len(ids) > memory.MaxPromptContextItems || len(recall) > memory.MaxPromptContextBytes:
		t.Errorf("the recall names no calc.py memory, or is over its budget (%d lines, %d bytes):\n%s", len(ids), len(recall), recall)
	}
	reqs := h.scripted("prompt-recall")
	if len(reqs) == 0 {
		t.Fatal("session 2 sent no request to the model")
	}
	if !reqs[0].Contains(recall) {
		t.Errorf("the model's request lacks the recall:\n--- recall\n%s\n--- request\n%s", recall, reqs[0].Text())
	}
	start := run.hookContext(t, hosts.EventSessionStart)
	for _, id := range ids {
		if strings.Contains(start, "#"+id[1]+" ") {
			t.Errorf("#%s was recalled though SessionStart's context gave it:\n%s", id[1], start)
		}
	}

	again := h.claudeP("prompt-recall-again", question, append(marker, "--resume", run.init(t).SessionID)...)
	again.mustSucceed(t)
	second := again.hookContext(t, hosts.EventUserPromptSubmit)
	for _, id := range recalledID.FindAllStringSubmatch(second, -1) {
		if slices.ContainsFunc(ids, func(first []string) bool { return first[1] == id[1] }) {
			t.Errorf("#%s was recalled twice in one session:\n%s", id[1], second)
		}
	}

	took := hookTook.FindAllStringSubmatch(harness.Logs(t, h.MnemoHome)["hook.log"], -1)
	if len(took) < 3 { // session 1's prompt and session 2's two
		t.Errorf("hook.log records %d delivered prompts, want 3", len(took))
	}
	for _, m := range took {
		d, err := time.ParseDuration(m[1])
		if err != nil || d >= hosts.EventBudget {
			t.Errorf("a UserPromptSubmit hook took %s (budget %v)", m[1], hosts.EventBudget)
		}
		t.Logf("TIMING hook UserPromptSubmit: %s", m[1])
	}
	harness.CheckLogs(t, h.MnemoHome, false)
}
