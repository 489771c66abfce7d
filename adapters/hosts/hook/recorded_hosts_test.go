package hook_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mnemo-dev/mnemo/adapters/hosts"
	"github.com/mnemo-dev/mnemo/adapters/hosts/hook"
	"github.com/mnemo-dev/mnemo/memory"
)

// translateRecorded reads a payload recorded from a real host's hook
// (adapters/<host>/testdata/payloads) and translates it as the hook does.
func translateRecorded(t *testing.T, host, file string) (string, any) {
	t.Helper()
	raw, err := os.ReadFile(hostData(host, "payloads", file))
	if err != nil {
		t.Fatal(err)
	}
	p, err := hook.DecodeHostPayload(raw, host, "")
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if p.Host != host {
		t.Errorf("%s: read as %q's dialect, want %q", file, p.Host, host)
	}
	method, params, err := hook.Translate(p, hook.TranslateOptions{EventKey: "k"})
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return method, params
}

// The real Gemini CLI's payloads (recorded by adapters/gemini/e2e) map
// onto the five stages with Claude Code's tools, the Gemini session's id
// namespaced; a failed command is a failure although Gemini gives no
// error; the context Gemini put in front of a prompt is not stored; the
// turn's answer is its last text.
func TestRecordedGeminiPayloads(t *testing.T) {
	const sid = "gemini:f49f1620-b638-48ea-962b-3f72865a82e0"
	tool := func(file string) *memory.ToolUseParams {
		t.Helper()
		method, params := translateRecorded(t, hosts.Gemini, file)
		p, ok := params.(*memory.ToolUseParams)
		if method != memory.MethodPostToolUse || !ok {
			t.Fatalf("%s: %s %T", file, method, params)
		}
		if p.ContentSessionID != sid || p.Platform != "gemini" {
			t.Errorf("%s: session %q platform %q", file, p.ContentSessionID, p.Platform)
		}
		return p
	}
	var in struct {
		FilePath  string `json:"file_path"`
		OldString string `json:"old_string"`
		NewString string `json:"new_string"`
		Content   string `json:"content"`
		Command   string `json:"command"`
	}
	var out struct {
		Stdout   string `json:"stdout"`
		ExitCode *int   `json:"exitCode"`
		IsError  bool   `json:"isError"`
	}
	p := tool("AfterTool-replace.json")
	if err := json.Unmarshal(p.ToolInput, &in); err != nil || p.ToolName != "Edit" || in.FilePath != "$PROJECT/calc.py" || in.OldString != "    return a - b" || in.NewString != "    return a + b" {
		t.Errorf("replace: %s %s (%v)", p.ToolName, p.ToolInput, err)
	}
	p = tool("AfterTool-read_file.json")
	in.FilePath = ""
	if err := json.Unmarshal(p.ToolInput, &in); err != nil || p.ToolName != "Read" || in.FilePath != "$PROJECT/calc.py" {
		t.Errorf("read_file: %s %s (%v)", p.ToolName, p.ToolInput, err)
	}
	var text string
	if err := json.Unmarshal(p.ToolResponse, &text); err != nil || !strings.Contains(text, "def add(a, b):") {
		t.Errorf("read_file's response: %s (%v)", p.ToolResponse, err)
	}
	p = tool("AfterTool-write_file.json")
	in.Content = ""
	if err := json.Unmarshal(p.ToolInput, &in); err != nil || p.ToolName != "Write" || in.Content == "" {
		t.Errorf("write_file: %s %s (%v)", p.ToolName, p.ToolInput, err)
	}
	p = tool("AfterTool-run_shell_command-failed.json")
	if err := json.Unmarshal(p.ToolInput, &in); err != nil || p.ToolName != "Bash" || in.Command != "sh test.sh" {
		t.Errorf("a failed command's input: %s %s (%v)", p.ToolName, p.ToolInput, err)
	}
	if err := json.Unmarshal(p.ToolResponse, &out); err != nil || out.ExitCode == nil || *out.ExitCode != 1 || !out.IsError ||
		!strings.Contains(out.Stdout, "AssertionError: mul(2, 3) should be 6, got 5") || strings.Contains(out.Stdout, "untrusted_context") {
		t.Errorf("a failed command's response: %s (%v)", p.ToolResponse, err)
	}
	p = tool("AfterTool-run_shell_command.json")
	out = struct {
		Stdout   string `json:"stdout"`
		ExitCode *int   `json:"exitCode"`
		IsError  bool   `json:"isError"`
	}{}
	if err := json.Unmarshal(p.ToolResponse, &out); err != nil || out.IsError || (out.ExitCode != nil && *out.ExitCode != 0) {
		t.Errorf("a passing command's response: %s (%v)", p.ToolResponse, err)
	}

	method, params := translateRecorded(t, hosts.Gemini, "BeforeAgent-after-SessionStart-context.json")
	up, ok := params.(*memory.UserPromptParams)
	if method != memory.MethodUserPromptSubmit || !ok || strings.Contains(up.Prompt, "mnemo-context") || strings.Contains(up.Prompt, "MARKER") ||
		!strings.Contains(up.Prompt, "make sh test.sh pass") || up.NoRecall {
		t.Errorf("BeforeAgent after a context: %s %+v", method, params)
	}
	method, params = translateRecorded(t, hosts.Gemini, "AfterAgent.json")
	stop, ok := params.(*memory.StopParams)
	if method != memory.MethodStop || !ok || stop.LastAssistantMessage != "Fixed add and mul in calc.py; sh test.sh passes." ||
		stop.LastUserMessage != "[[gemini-e2e:fix-calc]] make sh test.sh pass" {
		t.Errorf("AfterAgent: %s %+v", method, params)
	}
	method, params = translateRecorded(t, hosts.Gemini, "SessionStart.json")
	if ss, ok := params.(*memory.SessionStartParams); method != memory.MethodSessionStart || !ok || ss.NoContext || ss.Platform != "gemini" {
		t.Errorf("SessionStart: %s %+v", method, params)
	}
	method, _ = translateRecorded(t, hosts.Gemini, "SessionEnd.json")
	if method != memory.MethodSessionEnd {
		t.Errorf("SessionEnd: %s", method)
	}
	// The answer Gemini reads: additionalContext under its own event name.
	got := string(hosts.Answer(hosts.Gemini, "BeforeAgent", hosts.EventUserPromptSubmit, "<mnemo-context>x</mnemo-context>"))
	if want := `{"hookSpecificOutput":{"hookEventName":"BeforeAgent","additionalContext":"<mnemo-context>x</mnemo-context>"}}` + "\n"; got != want {
		t.Errorf("answer %q, want %q", got, want)
	}
}

// The real OpenCode's payloads (recorded through Mnemo's plugin by
// adapters/opencode/e2e) all translate, the bookkeeping tool is skipped,
// and a patch (what OpenCode gives GPT models instead of edit and write)
// becomes the file it adds.
func TestRecordedOpenCodePayloads(t *testing.T) {
	files, err := filepath.Glob(hostData("opencode", "payloads", "*.json"))
	if err != nil || len(files) < 10 {
		t.Fatalf("recorded payloads: %d (%v)", len(files), err)
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		p, err := hook.DecodeHostPayload(raw, hosts.OpenCode, "")
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		_, _, err = hook.Translate(p, hook.TranslateOptions{EventKey: "k"})
		if strings.Contains(f, "todowrite") {
			if !errors.Is(err, hook.ErrSkippedTool) {
				t.Errorf("%s: %v, want the tool skipped", filepath.Base(f), err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", filepath.Base(f), err)
		}
	}
	_, params := translateRecorded(t, hosts.OpenCode, "PostToolUse-apply_patch.json")
	tu := params.(*memory.ToolUseParams)
	var in struct {
		FilePath string `json:"file_path"`
		Content  string `json:"content"`
	}
	if err := json.Unmarshal(tu.ToolInput, &in); err != nil || tu.ToolName != "Write" || in.FilePath != "$PROJECT/notes.md" || in.Content != "# Notes\npatched line" {
		t.Errorf("apply_patch: %s %s (%v)", tu.ToolName, tu.ToolInput, err)
	}
}

// Copilot CLI runs both its own hook file (camelCase events: the
// camelCase dialect) and VS Code's (PascalCase events: its "VS Code
// compatible" dialect) in a repository that has both: one tool run comes
// twice, in two dialects, to a copilot hook and a vscode one. Both must be
// read as Copilot CLI's, in one session, with one event key.
func TestCopilotTwoDialectsOneEvent(t *testing.T) {
	camel := `{"sessionId":"cp-1","timestamp":1764064803000,"cwd":"/src/shop","toolName":"edit",
		"toolArgs":{"path":"/src/shop/cart.py","old_str":"a - b","new_str":"a + b"},
		"toolResult":{"resultType":"success","textResultForLlm":"File edited."}}`
	pascal := `{"hook_event_name":"PostToolUse","session_id":"cp-1","timestamp":"2025-11-25T10:00:03.000Z","cwd":"/src/shop","tool_name":"edit",
		"tool_input":{"path":"/src/shop/cart.py","old_str":"a - b","new_str":"a + b"},
		"tool_result":{"result_type":"success","text_result_for_llm":"File edited."}}`
	a, err := hook.DecodeHostPayload([]byte(camel), hosts.Copilot, "postToolUse")
	if err != nil {
		t.Fatal(err)
	}
	b, err := hook.DecodeHostPayload([]byte(pascal), hosts.VSCode, "PostToolUse")
	if err != nil {
		t.Fatal(err)
	}
	if a.Host != hosts.Copilot || b.Host != hosts.Copilot {
		t.Errorf("read as %s and %s, want copilot twice", a.Host, b.Host)
	}
	if a.SessionID != "copilot:cp-1" || b.SessionID != a.SessionID {
		t.Errorf("sessions %q and %q, want copilot:cp-1 twice", a.SessionID, b.SessionID)
	}
	ka, kb := a.EventKey, b.EventKey
	if ka == "" || ka != kb {
		t.Errorf("event keys %q and %q, want one", ka, kb)
	}
	// VS Code's own payload at the same hook stays VS Code's.
	vs := `{"timestamp":"2026-11-25T10:00:03.000Z","cwd":"/src/shop","sessionId":"vs-1","hookEventName":"PostToolUse","tool_name":"editFiles","tool_input":{"files":["cart.py"]},"tool_use_id":"t1"}`
	c, err := hook.DecodeHostPayload([]byte(vs), hosts.VSCode, "PostToolUse")
	if err != nil || c.Host != hosts.VSCode {
		t.Errorf("VS Code's payload read as %q (%v)", c.Host, err)
	}
}
