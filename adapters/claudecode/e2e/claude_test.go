//go:build e2e

package e2e_test

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mnemo-dev/mnemo/adapters/claudecode/modelserver"
)

// fixCalcDone is the last reply of the fix-calc script.
const fixCalcDone = "Fixed add and mul in calc.py; sh test.sh passes."

// fixCalcScript reads calc.py, fixes add, runs the failing tests, fixes mul
// and runs the tests again.
func fixCalcScript(project string) modelserver.Script {
	calc := filepath.Join(project, "calc.py")
	runTests := modelserver.ToolUse{Name: "Bash", Input: map[string]any{"command": "sh test.sh", "description": "Run the tests"}}
	return modelserver.Script{Name: "fix-calc", Steps: []modelserver.Step{
		{Text: "I'll read calc.py first.", ToolUses: []modelserver.ToolUse{
			{Name: "Read", Input: map[string]any{"file_path": calc}}}},
		{Text: "add subtracts; fixing it.", ToolUses: []modelserver.ToolUse{
			{Name: "Edit", Input: map[string]any{"file_path": calc, "old_string": "    return a - b", "new_string": "    return a + b"}}}},
		{Text: "Running the tests.", ToolUses: []modelserver.ToolUse{runTests}},
		{Text: "mul adds instead of multiplying; fixing it.", ToolUses: []modelserver.ToolUse{
			{Name: "Edit", Input: map[string]any{"file_path": calc,
				"old_string": "def mul(a, b):\n    return a + b", "new_string": "def mul(a, b):\n    return a * b"}}}},
		{Text: "Running the tests again.", ToolUses: []modelserver.ToolUse{runTests}},
		{Text: fixCalcDone},
	}}
}

// toolStep says what one tool call of the fix-calc session must give back.
type toolStep struct {
	name    string
	isError bool
	result  string // a substring of the tool_result the model receives
}

var fixCalcTools = []toolStep{
	{"Read", false, "def mul(a, b):"},
	{"Edit", false, "has been updated successfully"},
	{"Bash", true, "Exit code 1"},
	{"Edit", false, "has been updated successfully"},
	{"Bash", false, "all tests passed"},
}

// runFixCalc runs session 1 and checks, from the CLI's stream-json and from
// the model server's requests, that every tool ran and that its result came
// back to the model.
func (h *world) runFixCalc(t *testing.T) *cliRun {
	if err := h.srv.Register(fixCalcScript(h.Project)); err != nil {
		t.Fatal(err)
	}
	run := h.claudeP("fix-calc", modelserver.Marker("fix-calc")+" make sh test.sh pass")
	results := run.mustSucceed(t)

	// stream-json: init, the five tool calls in order, their results, the answer.
	init := run.init(t)
	if init.Version != claudeVersion || init.SessionID == "" {
		t.Errorf("init: version %q session %q", init.Version, init.SessionID)
	}
	for _, tool := range []string{"Read", "Edit", "Bash"} {
		if !slices.Contains(init.Tools, tool) {
			t.Errorf("init tools %v lack %s", init.Tools, tool)
		}
	}
	if len(results) != 1 || results[0].Result != fixCalcDone || results[0].SessionID != init.SessionID {
		t.Errorf("result lines %d, last %s", len(results), results[len(results)-1].Raw)
	}
	uses := run.toolUses()
	streamResults := run.toolResults()
	if len(uses) != len(fixCalcTools) {
		t.Fatalf("stream has %d tool uses, want %d:\n%s", len(uses), len(fixCalcTools), run.Stdout)
	}
	for i, want := range fixCalcTools {
		u := uses[i]
		if u.Name != want.name {
			t.Errorf("tool %d is %s, want %s", i, u.Name, want.name)
		}
		res, ok := streamResults[u.ID]
		switch {
		case !ok:
			t.Errorf("tool %d (%s %s): no tool_result in the stream", i, u.Name, u.ID)
		case res.IsError != want.isError || !strings.Contains(res.Content.Text(), want.result):
			t.Errorf("tool %d (%s): stream result is_error=%v %q, want is_error=%v containing %q",
				i, u.Name, res.IsError, res.Content.Text(), want.isError, want.result)
		}
	}

	// Server: one request per step, each carrying the previous step's result.
	reqs := h.scripted("fix-calc")
	if len(reqs) != len(fixCalcTools)+1 {
		t.Fatalf("server answered %d fix-calc requests, want %d", len(reqs), len(fixCalcTools)+1)
	}
	for i, r := range reqs {
		if r.Step != i || r.Source != modelserver.SourcePrompt || r.Path != "/v1/messages?beta=true" ||
			!r.Request.Stream || r.Header.Get("x-api-key") != "dummy" {
			t.Errorf("request %d: step %d source %s path %s stream %v", i, r.Step, r.Source, r.Path, r.Request.Stream)
		}
		if i == 0 {
			continue
		}
		prev := reqs[i-1].ToolUses()
		if len(prev) != 1 {
			t.Fatalf("reply %d had %d tool uses", i-1, len(prev))
		}
		if prev[0].ID != uses[i-1].ID {
			t.Errorf("tool %d: server sent id %s, stream shows %s", i-1, prev[0].ID, uses[i-1].ID)
		}
		res, ok := r.Request.ToolResult(prev[0].ID)
		want := fixCalcTools[i-1]
		switch {
		case !ok:
			t.Errorf("request %d lacks the tool_result of %s %s", i, prev[0].Name, prev[0].ID)
		case res.IsError != want.isError || !strings.Contains(res.Content.Text(), want.result):
			t.Errorf("request %d: %s result is_error=%v %q, want is_error=%v containing %q",
				i, prev[0].Name, res.IsError, res.Content.Text(), want.isError, want.result)
		}
	}
	if first := reqs[0]; !first.Contains(modelserver.Marker("fix-calc")) || first.Contains("has been updated") {
		t.Errorf("first request does not look like a fresh session")
	}

	// The edits are on disk and the tests pass outside the CLI too.
	data, err := os.ReadFile(filepath.Join(h.Project, "calc.py"))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(data); !strings.Contains(got, "return a + b") || !strings.Contains(got, "return a * b") {
		t.Errorf("calc.py after the session:\n%s", got)
	}
	cmd := exec.Command("sh", "test.sh")
	cmd.Dir = h.Project
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("sh test.sh after the session: %v\n%s", err, out)
	}
	if st := h.Git(t, "status", "--porcelain"); strings.TrimSpace(st) != "M calc.py" {
		t.Errorf("git status after the session: %q", st)
	}
	return run
}

// TestFixCalcSession proves the harness without Mnemo: the real CLI reads,
// edits, fails a test, edits again and passes it, all against the scripted
// model.
func TestFixCalcSession(t *testing.T) {
	h := newHarness(t)
	h.runFixCalc(t)
	if got := len(h.srv.Requests()); got != len(fixCalcTools)+1 {
		t.Errorf("server saw %d requests in all, want only the %d scripted ones (no side requests)",
			got, len(fixCalcTools)+1)
	}
}

// observerScript answers like Mnemo's "claude" memory agent should be
// answered: one <observation> per event, then a <summary>.
func observerScript() modelserver.Script {
	return modelserver.Script{Name: "observer", Steps: []modelserver.Step{
		{Text: "<observation><type>bugfix</type><title>add returned a - b</title>" +
			"<files_modified><file>calc.py</file></files_modified></observation>",
			Usage: &modelserver.Usage{InputTokens: 300, OutputTokens: 40}},
		{Text: "<observation><type>bugfix</type><title>mul returned a + b</title>" +
			"<files_modified><file>calc.py</file></files_modified></observation>",
			Usage: &modelserver.Usage{InputTokens: 350, OutputTokens: 41}},
		{Text: "<summary><request>make sh test.sh pass</request><completed>fixed add and mul</completed></summary>",
			Usage: &modelserver.Usage{InputTokens: 400, OutputTokens: 42}},
	}}
}

// userLines encodes stream-json input messages.
func userLines(t *testing.T, texts ...string) []byte {
	t.Helper()
	var b strings.Builder
	for _, text := range texts {
		line, err := json.Marshal(map[string]any{"type": "user",
			"message": map[string]any{"role": "user", "content": text}})
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

// TestMemoryAgentStreamJSON drives the CLI the way Mnemo's "claude" memory
// agent will: stream-json in and out, no tools, a system-prompt marker, a
// chosen session id, then a resume. Events that quote a user's SCENARIO
// marker must not steal the conversation from the system-prompt script.
func TestMemoryAgentStreamJSON(t *testing.T) {
	h := newHarness(t)
	if err := h.srv.Register(observerScript(), fixCalcScript(h.Project)); err != nil {
		t.Fatal(err)
	}
	const session = "0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9"
	agentArgs := func(extra ...string) []string {
		return append([]string{"-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
			"--tools", "", "--append-system-prompt", "You are Mnemo's memory agent. " + modelserver.Marker("observer")},
			extra...)
	}

	first := h.claude("observer", userLines(t,
		"Event: the user asked \""+modelserver.Marker("fix-calc")+" make sh test.sh pass\"; Edit calc.py: return a - b -> return a + b",
		"Event: Edit calc.py: mul returns a * b",
	), agentArgs("--session-id", session)...)
	results := first.mustSucceed(t)
	if len(results) != 2 {
		t.Errorf("%d result lines, want one per input message", len(results))
	}
	texts := strings.Join(first.texts(), "\n")
	if !strings.Contains(texts, "add returned a - b") || !strings.Contains(texts, "mul returned a + b") {
		t.Errorf("assistant texts:\n%s", texts)
	}
	if init := first.init(t); init.SessionID != session {
		t.Errorf("session id %q, want %q", init.SessionID, session)
	}

	resumed := h.claude("observer-resume", userLines(t, "Summarize the session."), agentArgs("--resume", session)...)
	resumed.mustSucceed(t)
	if texts := strings.Join(resumed.texts(), "\n"); !strings.Contains(texts, "<summary>") {
		t.Errorf("resumed assistant texts:\n%s", texts)
	}

	reqs := h.scripted("observer")
	if len(reqs) != 3 {
		t.Fatalf("observer requests %d, want 3; all requests: %d", len(reqs), len(h.srv.Requests()))
	}
	for i, r := range reqs {
		if r.Source != modelserver.SourceSystem || r.Step != i {
			t.Errorf("request %d: source %s step %d", i, r.Source, r.Step)
		}
		if names := r.Request.ToolNames(); len(names) != 0 {
			t.Errorf("request %d offers tools %v despite --tools \"\"", i, names)
		}
		if !strings.Contains(r.Request.System.Text(), "You are Mnemo's memory agent.") {
			t.Errorf("request %d: --append-system-prompt text is not in the system prompt", i)
		}
	}
	if got := len(h.scripted("fix-calc")); got != 0 {
		t.Errorf("%d requests went to fix-calc, quoted in an event", got)
	}
}

// hookProbe is a command hook that records each call (argv, stdin payload,
// MNEMO_HOME) under $HOME/hook-calls and answers SessionStart,
// UserPromptSubmit and PostToolUse with additionalContext.
const hookProbe = `#!/bin/sh
dir="$HOME/hook-calls"
mkdir -p "$dir"
n="$(date +%s%N)-$$"
printf '%s\n' "$@" > "$dir/$n.args"
cat > "$dir/$n.stdin"
printf '%s' "$MNEMO_HOME" > "$dir/$n.env"
case "$1" in
SessionStart|UserPromptSubmit|PostToolUse)
	printf '{"hookSpecificOutput":{"hookEventName":"%s","additionalContext":"<mnemo-context>probe %s</mnemo-context>"}}\n' "$1" "$1" ;;
esac
`

// hookCall is one recorded call of hookProbe.
type hookCall struct {
	Args      []string
	MnemoHome string
	Payload   struct {
		Event     string `json:"hook_event_name"`
		SessionID string `json:"session_id"`
		Cwd       string `json:"cwd"`
		ToolName  string `json:"tool_name"`
		Prompt    string `json:"prompt"`
	}
}

func readHookCalls(t *testing.T, dir string) []hookCall {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.args"))
	if err != nil {
		t.Fatal(err)
	}
	var calls []hookCall
	for _, name := range names {
		base := strings.TrimSuffix(name, ".args")
		var c hookCall
		args, err1 := os.ReadFile(name)
		stdin, err2 := os.ReadFile(base + ".stdin")
		env, err3 := os.ReadFile(base + ".env")
		if err := errors.Join(err1, err2, err3); err != nil {
			t.Fatalf("hook call %s: %v", base, err)
		}
		c.Args = strings.Fields(string(args))
		c.MnemoHome = string(env)
		if err := json.Unmarshal(stdin, &c.Payload); err != nil {
			t.Fatalf("hook payload %s: %v\n%s", base, err, stdin)
		}
		calls = append(calls, c)
	}
	return calls
}

// TestHookContract checks, without Mnemo, what `mnemo install claude-code`
// relies on: a user-scope command hook in exec form (command + args) runs
// with args [<Event>], the CLI's environment (MNEMO_HOME) and the event's JSON
// on stdin, and its additionalContext reaches the model.
func TestHookContract(t *testing.T) {
	h := newHarness(t)
	probe := filepath.Join(h.Home, "hook-probe.sh")
	if err := os.WriteFile(probe, []byte(hookProbe), 0o755); err != nil {
		t.Fatal(err)
	}
	hooks := map[string]any{}
	for _, stage := range []string{"SessionStart", "UserPromptSubmit", "PostToolUse", "Stop", "SessionEnd"} {
		group := map[string]any{"hooks": []any{map[string]any{"type": "command", "command": probe, "args": []string{stage}}}}
		if stage == "PostToolUse" {
			group["matcher"] = "*"
		}
		hooks[stage] = []any{group}
	}
	settings, err := json.MarshalIndent(map[string]any{"hooks": hooks}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(h.Home, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h.Home, ".claude", "settings.json"), settings, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := h.srv.Register(modelserver.Script{Name: "hooks", Steps: []modelserver.Step{
		{ToolUses: []modelserver.ToolUse{{Name: "Bash", Input: map[string]any{"command": "echo hi", "description": "Say hi"}}}},
		{Text: "Said hi."},
	}}); err != nil {
		t.Fatal(err)
	}

	run := h.claudeP("hooks", modelserver.Marker("hooks")+" say hi")
	run.mustSucceed(t)
	session := run.init(t).SessionID

	calls := readHookCalls(t, filepath.Join(h.Home, "hook-calls"))
	count := map[string]int{}
	for _, c := range calls {
		ev := c.Payload.Event
		count[ev]++
		if !slices.Equal(c.Args, []string{ev}) {
			t.Errorf("%s hook args %q, want [%s]", ev, c.Args, ev)
		}
		if c.Payload.SessionID != session || c.Payload.Cwd != h.Project {
			t.Errorf("%s hook payload session %q cwd %q, want %q %q", ev, c.Payload.SessionID, c.Payload.Cwd, session, h.Project)
		}
		if c.MnemoHome != h.MnemoHome {
			t.Errorf("%s hook sees MNEMO_HOME=%q, want %q", ev, c.MnemoHome, h.MnemoHome)
		}
		switch ev {
		case "PostToolUse":
			if c.Payload.ToolName != "Bash" {
				t.Errorf("PostToolUse tool %q", c.Payload.ToolName)
			}
		case "UserPromptSubmit":
			if !strings.Contains(c.Payload.Prompt, modelserver.Marker("hooks")) {
				t.Errorf("UserPromptSubmit prompt %q", c.Payload.Prompt)
			}
		}
	}
	for _, ev := range []string{"SessionStart", "UserPromptSubmit", "PostToolUse", "Stop", "SessionEnd"} {
		if count[ev] != 1 {
			t.Errorf("%s hook ran %d times, want 1 (all calls: %v)", ev, count[ev], count)
		}
	}

	reqs := h.scripted("hooks")
	if len(reqs) != 2 {
		t.Fatalf("%d scripted requests, want 2", len(reqs))
	}
	for _, want := range []string{"<mnemo-context>probe SessionStart</mnemo-context>", "<mnemo-context>probe UserPromptSubmit</mnemo-context>"} {
		if !reqs[0].Contains(want) {
			t.Errorf("first model request lacks %s", want)
		}
	}
	if !reqs[1].Contains("<mnemo-context>probe PostToolUse</mnemo-context>") {
		t.Error("second model request lacks the PostToolUse context")
	}
}
