//go:build e2e

package e2e_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/adapters/claudecode/e2e/harness"
)

// fixCalcDone is the last reply of the fix-calc script.
const fixCalcDone = "Fixed add and mul in calc.py; sh test.sh passes."

// fixCalcCalls are the function calls of the fix-calc script, one a turn:
// read calc.py, fix add, run the failing tests, fix mul, run them again,
// write CHANGES.md.
func fixCalcCalls(project string) []apiCall {
	calc := filepath.Join(project, "calc.py")
	runTests := apiCall{Name: "run_shell_command", Args: map[string]any{"command": "sh test.sh", "description": "Run the tests"}}
	return []apiCall{
		{Name: "read_file", Args: map[string]any{"file_path": calc}},
		{Name: "replace", Args: map[string]any{"file_path": calc, "instruction": "add must add",
			"old_string": "    return a - b", "new_string": "    return a + b"}},
		runTests,
		{Name: "replace", Args: map[string]any{"file_path": calc, "instruction": "mul must multiply",
			"old_string": "def mul(a, b):\n    return a + b", "new_string": "def mul(a, b):\n    return a * b"}},
		runTests,
		{Name: "write_file", Args: map[string]any{"file_path": filepath.Join(project, "CHANGES.md"),
			"content": "# Changes\n\n- calc.py: add adds and mul multiplies; sh test.sh passes.\n"}},
	}
}

// fixCalcResults are substrings of what each call of fixCalcCalls gives
// back to the model (functionResponse.response.output).
var fixCalcResults = []string{
	"def mul(a, b):",
	"Successfully modified file",
	"Exit Code: 1",
	"Successfully modified file",
	"all tests passed",
	"Successfully created and wrote to new file",
}

func fixCalcScript(project string) apiScript {
	texts := []string{"I'll read calc.py first.", "add subtracts; fixing it.", "Running the tests.",
		"mul adds instead of multiplying; fixing it.", "Running the tests again.", "Noting the change."}
	var steps []apiStep
	for i, c := range fixCalcCalls(project) {
		steps = append(steps, apiStep{Text: texts[i], Calls: []apiCall{c}})
	}
	return apiScript{Name: "fix-calc", Steps: append(steps, apiStep{Text: fixCalcDone})}
}

// runFixCalc runs a session that fixes calc.py and checks, from the CLI's
// stream-json, the files and the server's requests, that every tool ran
// and that its result came back to the model.
func (h *world) runFixCalc(t *testing.T, label string) *cliRun {
	t.Helper()
	h.srv.register(fixCalcScript(h.Project))
	before := len(h.srv.scripted("fix-calc"))
	run := h.geminiP(label, marker("fix-calc")+" make sh test.sh pass")
	run.mustSucceed(t)

	calls := fixCalcCalls(h.Project)
	uses, results := run.of("tool_use"), run.of("tool_result")
	if len(uses) != len(calls) || len(results) != len(calls) {
		t.Fatalf("gemini %s: %d tool_use and %d tool_result events, want %d\n%s", label, len(uses), len(results), len(calls), run.Stdout)
	}
	for i, c := range calls {
		if uses[i].ToolName != c.Name || results[i].ToolID != uses[i].ToolID || results[i].Status != "success" {
			t.Errorf("tool %d: use %s, result %s", i, uses[i].Raw, results[i].Raw)
		}
	}
	// The stream has one message per text part: the texts before each call,
	// then the last reply.
	if got := run.answer(); !strings.HasPrefix(got, "I'll read calc.py first.") || !strings.HasSuffix(got, fixCalcDone) {
		t.Errorf("gemini %s answered %q", label, got)
	}
	reqs := h.srv.scripted("fix-calc")[before:]
	if len(reqs) != len(calls)+1 {
		t.Fatalf("the model got %d requests, want %d", len(reqs), len(calls)+1)
	}
	for _, name := range []string{"read_file", "replace", "write_file", "run_shell_command"} {
		if !slices.Contains(reqs[0].toolNames(), name) {
			t.Errorf("%s is not offered to the model: %v", name, reqs[0].toolNames())
		}
	}
	for i, want := range fixCalcResults {
		frs := reqs[i+1].functionResponses()
		if len(frs) != i+1 {
			t.Errorf("request %d carries %d function responses, want %d", i+1, len(frs), i+1)
			continue
		}
		out, _ := frs[i].Response["output"].(string)
		if frs[i].Name != calls[i].Name || !strings.Contains(out, want) {
			t.Errorf("the model got for %s:\n%s\nwant it to contain %q", frs[i].Name, out, want)
		}
	}
	got, err := os.ReadFile(filepath.Join(h.Project, "calc.py"))
	if err != nil || !strings.Contains(string(got), "return a + b") || !strings.Contains(string(got), "return a * b") {
		t.Errorf("calc.py after the session (%v):\n%s", err, got)
	}
	if _, err := os.Stat(filepath.Join(h.Project, "CHANGES.md")); err != nil {
		t.Errorf("CHANGES.md: %v", err)
	}
	return run
}

// recordedEvents are the events the recorder is installed for: the five
// Mnemo installs, and BeforeTool and PreCompress to see where they fall.
var recordedEvents = []string{"SessionStart", "BeforeAgent", "BeforeTool", "AfterTool", "AfterAgent", "PreCompress", "SessionEnd"}

// mnemoEvents are the Gemini events Mnemo installs hooks for.
var mnemoEvents = []string{"SessionStart", "BeforeAgent", "AfterTool", "AfterAgent", "SessionEnd"}

// payload is the part of a hook payload the tests read.
type payload struct {
	SessionID      string          `json:"session_id"`
	TranscriptPath string          `json:"transcript_path"`
	Cwd            string          `json:"cwd"`
	HookEventName  string          `json:"hook_event_name"`
	Timestamp      string          `json:"timestamp"`
	Source         string          `json:"source"`
	Prompt         *string         `json:"prompt"`
	PromptResponse *string         `json:"prompt_response"`
	StopHookActive *bool           `json:"stop_hook_active"`
	ToolName       string          `json:"tool_name"`
	ToolInput      map[string]any  `json:"tool_input"`
	ToolResponse   json.RawMessage `json:"tool_response"`
	Reason         string          `json:"reason"`
	Trigger        string          `json:"trigger"`
}

func (r hookRecord) decode(t *testing.T) payload {
	t.Helper()
	var p payload
	if err := json.Unmarshal(r.Payload, &p); err != nil {
		t.Fatalf("%s payload %s: %v", r.Event, r.Payload, err)
	}
	return p
}

// installRecorder writes the recorder hooks into the user settings and
// returns the folder they record into (emptied).
func (h *world) installRecorder(t *testing.T, name string) string {
	t.Helper()
	dir := harness.Mkdir(t, h.Tmp, "..", "hooks-"+name)
	settings := baseSettings()
	settings["hooks"] = recorderSettings(t, recordedEvents, 30*time.Second)
	h.writeJSON(h.settingsPath(), settings)
	h.extraEnv = []string{recordDirEnv + "=" + dir}
	return dir
}

// TestGeminiHookPayloads runs the fix-calc session three times with a
// recorder hook on every event and checks what Gemini CLI 0.61.0 does
// with hooks:
//
//  1. "plain", hooks answering {}: the events fire in order (SessionStart,
//     BeforeAgent, AfterTool per tool, AfterAgent, SessionEnd), all with the
//     run's session id, the project as cwd, and the fields Mnemo reads;
//     SessionEnd is awaited (its hook sleeps, and has finished when the CLI
//     exits).
//  2. "context", hooks answering additionalContext: SessionStart's is
//     prepended to the prompt (and BeforeAgent's and AfterAgent's payloads
//     carry it), BeforeAgent's follows the prompt, AfterTool's is appended
//     to each tool's output; the model receives all three, each in a
//     <hook_context> element with its < and > escaped.
//  3. "quiet", hooks printing nothing, or plain text: the run succeeds, and
//     the text is shown on stderr, never sent to the model.
//
// The first two runs' payloads, scrubbed, are saved among the artifacts;
// with MNEMO_GEMINI_UPDATE_PAYLOADS=1 they replace testdata/payloads.
func TestGeminiHookPayloads(t *testing.T) {
	h := newHarness(t)

	// 1. plain
	dir := h.installRecorder(t, "plain")
	const endSleep = 2 * time.Second
	h.extraEnv = append(h.extraEnv, recordSleepEnv+"SessionEnd="+endSleep.String())
	run := h.runFixCalc(t, "plain")
	init := run.mustSucceed(t)
	recs := readRecords(t, dir)
	h.checkPayloads(t, init.SessionID, recs)
	ends, _ := filepath.Glob(filepath.Join(dir, "*-SessionEnd.done"))
	if len(ends) != 1 {
		t.Errorf("the SessionEnd hook had not finished when the CLI exited (%d .done files): it is not awaited", len(ends))
	}
	if run.Took < endSleep {
		t.Errorf("the CLI took %v, less than its SessionEnd hook's %v", run.Took, endSleep)
	}
	plain := h.scrubbed(t, "plain", recs)

	// 2. context
	h.runs.N = 0
	dir = h.installRecorder(t, "context")
	h.Git(t, "checkout", "-q", "--", "calc.py")
	if err := os.Remove(filepath.Join(h.Project, "CHANGES.md")); err != nil {
		t.Fatal(err)
	}
	// The contexts hold < > & to show what the CLI escapes.
	ctxOf := map[string]string{
		"SessionStart": `<mnemo-context project="calc-project">MARKER_SESSIONSTART_51A7</mnemo-context>`,
		"BeforeAgent":  "MARKER_BEFOREAGENT_C0DE: a < b && c > d",
		"AfterTool":    "MARKER_AFTERTOOL_9E3F",
	}
	for ev, m := range ctxOf {
		out, _ := json.Marshal(map[string]any{"hookSpecificOutput": map[string]any{"hookEventName": ev, "additionalContext": m}})
		h.extraEnv = append(h.extraEnv, recordOutEnv+ev+"="+string(out))
	}
	// What the model gets: each context with < and > as &lt; and &gt; (&
	// stays), in a <hook_context> element.
	wrapped := func(ev string) string {
		return "<hook_context>" + strings.NewReplacer("<", "&lt;", ">", "&gt;").Replace(ctxOf[ev]) + "</hook_context>"
	}
	before := len(h.srv.scripted("fix-calc"))
	run = h.runFixCalc(t, "context")
	const prompt = "make sh test.sh pass"
	reqs := h.srv.scripted("fix-calc")[before:]
	first := reqs[0].userText()
	for _, want := range []string{
		wrapped("SessionStart") + "\n\n" + marker("fix-calc") + " " + prompt,
		wrapped("BeforeAgent"),
	} {
		if !strings.Contains(first, want) {
			t.Errorf("the first request's user text lacks %q:\n%s", want, first)
		}
	}
	for i, fr := range reqs[len(reqs)-1].functionResponses() {
		if out, _ := fr.Response["output"].(string); !strings.HasSuffix(out, "\n\n"+wrapped("AfterTool")) {
			t.Errorf("function response %d (%s) does not end with AfterTool's context:\n%s", i, fr.Name, out)
		}
	}
	// BeforeAgent and AfterAgent get the prompt with SessionStart's
	// context in front, escaped as the model gets it.
	withContext := readRecords(t, dir)
	for _, r := range withContext {
		if p := r.decode(t); (r.Event == "BeforeAgent" || r.Event == "AfterAgent") && *p.Prompt != wrapped("SessionStart")+"\n\n"+marker("fix-calc")+" "+prompt {
			t.Errorf("%s's prompt is not SessionStart's context and the prompt: %q", r.Event, *p.Prompt)
		}
	}
	contextual := h.scrubbed(t, "context", withContext)

	// 3. quiet
	h.runs.N = 0
	dir = h.installRecorder(t, "quiet")
	h.Git(t, "checkout", "-q", "--", "calc.py")
	if err := os.Remove(filepath.Join(h.Project, "CHANGES.md")); err != nil {
		t.Fatal(err)
	}
	for _, ev := range recordedEvents {
		h.extraEnv = append(h.extraEnv, recordOutEnv+ev+"=")
	}
	h.extraEnv = append(h.extraEnv, recordOutEnv+"BeforeAgent=PLAIN_TEXT_BEFOREAGENT_77")
	before = len(h.srv.scripted("fix-calc"))
	run = h.runFixCalc(t, "quiet")
	if !strings.Contains(string(run.Stderr), "Hook system message: PLAIN_TEXT_BEFOREAGENT_77") {
		t.Errorf("BeforeAgent's plain-text stdout is not shown as a system message:\n%s", run.Stderr)
	}
	for _, r := range h.srv.scripted("fix-calc")[before:] {
		if strings.Contains(string(r.Body), "PLAIN_TEXT_BEFOREAGENT_77") {
			t.Errorf("request %d carries the hook's plain-text stdout", r.Seq)
		}
	}
	if n := len(readRecords(t, dir)); n != len(recs) {
		t.Errorf("the quiet run recorded %d hook runs, the plain one %d", n, len(recs))
	}

	if os.Getenv("MNEMO_GEMINI_UPDATE_PAYLOADS") == "1" {
		h.writePayloads(t, plain, contextual)
	}
}

// checkPayloads checks the order and the fields of one run's hook payloads.
func (h *world) checkPayloads(t *testing.T, sessionID string, recs []hookRecord) {
	t.Helper()
	var order []string
	var tools []string
	calls := fixCalcCalls(h.Project)
	for _, r := range recs {
		p := r.decode(t)
		if p.HookEventName != r.Event || p.SessionID != sessionID || p.Cwd != h.Project || p.Timestamp == "" ||
			!strings.HasPrefix(p.TranscriptPath, filepath.Join(h.Home, ".gemini", "tmp")+"/") {
			t.Errorf("%s payload: %s", r.Event, r.Payload)
		}
		for k, want := range map[string]string{"GEMINI_SESSION_ID": sessionID, "GEMINI_PROJECT_DIR": h.Project, "CLAUDE_PROJECT_DIR": h.Project} {
			if r.Env[k] != want {
				t.Errorf("%s hook's %s = %q, want %q", r.Event, k, r.Env[k], want)
			}
		}
		if slices.Contains(mnemoEvents, r.Event) {
			order = append(order, r.Event)
		}
		switch r.Event {
		case "SessionStart":
			if p.Source != "startup" {
				t.Errorf("SessionStart source %q", p.Source)
			}
		case "BeforeAgent":
			if p.Prompt == nil || *p.Prompt != marker("fix-calc")+" make sh test.sh pass" {
				t.Errorf("BeforeAgent payload: %s", r.Payload)
			}
		case "AfterTool":
			i := len(tools)
			tools = append(tools, p.ToolName)
			var resp struct {
				LLMContent    *string         `json:"llmContent"`
				ReturnDisplay json.RawMessage `json:"returnDisplay"`
			}
			if err := json.Unmarshal(p.ToolResponse, &resp); err != nil || resp.LLMContent == nil || resp.ReturnDisplay == nil {
				t.Errorf("AfterTool %s tool_response: %s (%v)", p.ToolName, p.ToolResponse, err)
			}
			if i < len(calls) && (p.ToolName != calls[i].Name || !reflect.DeepEqual(p.ToolInput, calls[i].Args) ||
				resp.LLMContent != nil && !strings.Contains(*resp.LLMContent, fixCalcResults[i])) {
				t.Errorf("AfterTool %d: %s\nwant %s %v with %q", i, r.Payload, calls[i].Name, calls[i].Args, fixCalcResults[i])
			}
		case "AfterAgent":
			// prompt_response is every text of the turn, joined by " \n".
			if p.Prompt == nil || p.PromptResponse == nil || !strings.HasPrefix(*p.PromptResponse, "I'll read calc.py first. \n") ||
				!strings.HasSuffix(*p.PromptResponse, " \n"+fixCalcDone) || p.StopHookActive == nil || *p.StopHookActive {
				t.Errorf("AfterAgent payload: %s", r.Payload)
			}
		case "SessionEnd":
			if p.Reason != "exit" {
				t.Errorf("SessionEnd reason %q", p.Reason)
			}
		case "PreCompress":
			if p.Trigger != "auto" {
				t.Errorf("PreCompress trigger %q", p.Trigger)
			}
		}
	}
	want := []string{"SessionStart", "BeforeAgent"}
	for range calls {
		want = append(want, "AfterTool")
	}
	want = append(want, "AfterAgent", "SessionEnd")
	if !slices.Equal(order, want) {
		t.Errorf("hook order %v, want %v", order, want)
	}
}

// scrubbed returns the run's payloads with the isolated paths replaced by
// $PROJECT, $HOME and $TMPDIR, indented, by file name: <Event>.json for the
// first of each event, AfterTool-<tool>.json for the first of each tool,
// AfterTool-run_shell_command-failed.json for the first failed command. It
// saves them among the artifacts too.
func (h *world) scrubbed(t *testing.T, label string, recs []hookRecord) map[string][]byte {
	t.Helper()
	repl := strings.NewReplacer(h.Project, "$PROJECT", h.Home, "$HOME", h.Tmp, "$TMPDIR")
	out := map[string][]byte{}
	for _, r := range recs {
		var buf bytes.Buffer
		if err := json.Indent(&buf, []byte(repl.Replace(string(r.Payload))), "", "  "); err != nil {
			t.Fatalf("%s payload: %v", r.Event, err)
		}
		buf.WriteByte('\n')
		name := r.Event
		if r.Event == "AfterTool" || r.Event == "BeforeTool" {
			p := r.decode(t)
			name += "-" + p.ToolName
			if p.ToolName == "run_shell_command" && strings.Contains(string(p.ToolResponse), "Exit Code: ") {
				name += "-failed"
			}
		}
		name += ".json"
		if _, dup := out[name]; !dup {
			out[name] = buf.Bytes()
			h.save(label+"-payload-"+name, buf.Bytes())
		}
	}
	return out
}

// writePayloads replaces testdata/payloads/*.json with the plain run's
// payloads of the events Mnemo installs (and BeforeTool-replace and
// PreCompress), and the context run's BeforeAgent and AfterAgent as
// <Event>-after-SessionStart-context.json.
func (h *world) writePayloads(t *testing.T, plain, contextual map[string][]byte) {
	t.Helper()
	dir := filepath.Join(h.root, "adapters", "gemini", "testdata", "payloads")
	old, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	for _, f := range old {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	write := func(name string, data []byte) {
		if data == nil {
			t.Errorf("no %s payload to write", name)
			return
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, data := range plain {
		if !strings.HasPrefix(name, "BeforeTool") || name == "BeforeTool-replace.json" {
			write(name, data)
		}
	}
	write("BeforeAgent-after-SessionStart-context.json", contextual["BeforeAgent.json"])
	write("AfterAgent-after-SessionStart-context.json", contextual["AfterAgent.json"])
	t.Logf("rewrote %s", dir)
}
