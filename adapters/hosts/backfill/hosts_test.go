package backfill_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/adapters/hosts"
	"github.com/mnemo-dev/mnemo/adapters/hosts/backfill"
	"github.com/mnemo-dev/mnemo/adapters/hosts/hook"
	"github.com/mnemo-dev/mnemo/memory"
)

// translateRecorded reads a payload recorded from a real host's hook
// (adapters/<host>/testdata/payloads) and translates it as the live hook
// does.
func translateRecorded(t *testing.T, host, file string) (string, any) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", host, "testdata", "payloads", file))
	if err != nil {
		t.Fatal(err)
	}
	var w hosts.Wire
	if err := json.Unmarshal(raw, &w); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	p := w.Normalize(host, "")
	if p.Host != host {
		t.Errorf("%s: read as %q's dialect, want %q", file, p.Host, host)
	}
	method, params, err := hook.Translate(p, hook.TranslateOptions{EventKey: "k"})
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return method, params
}

// rebuild runs one host's back-fill over a transcript and returns its
// calls and counts.
func rebuild(t *testing.T, host string, f backfill.Transcript) ([]backfill.Call, backfill.Counts) {
	t.Helper()
	src, ok := backfill.SourceFor(host)
	if !ok {
		t.Fatalf("no transcript source for %s", host)
	}
	var calls []backfill.Call
	counts, err := src.Backfill(f, backfill.Options{}, func(c backfill.Call) error {
		calls = append(calls, c)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return calls, counts
}

// stagesOf lists the calls' stages.
func stagesOf(calls []backfill.Call) string {
	var s []string
	for _, c := range calls {
		s = append(s, c.Event)
	}
	return strings.Join(s, " ")
}

// comparable clears what differs between two runs of one scripted session
// (the session id, event keys, times, transcript path) and returns the
// call as JSON.
func comparable(params any) string {
	switch p := params.(type) {
	case *memory.SessionStartParams:
		p.ContentSessionID, p.EventKey, p.At = "", "", time.Time{}
	case *memory.UserPromptParams:
		p.ContentSessionID, p.EventKey, p.At = "", "", time.Time{}
	case *memory.ToolUseParams:
		p.ContentSessionID, p.EventKey, p.At = "", "", time.Time{}
	case *memory.StopParams:
		p.ContentSessionID, p.EventKey, p.At, p.TranscriptPath = "", "", time.Time{}, ""
	case *memory.SessionEndParams:
		p.ContentSessionID, p.EventKey, p.At = "", "", time.Time{}
	}
	b, _ := json.Marshal(params)
	// The process group of a shell command differs from run to run.
	return pgid.ReplaceAllString(string(b), "PGID: N")
}

var pgid = regexp.MustCompile(`PGID: \d+`)

// checkBackfilledCalls checks what every back-filled call must be: a
// back-fill's event key, the session's id, a time in order.
func checkBackfilledCalls(t *testing.T, calls []backfill.Call, sid string) {
	t.Helper()
	var last time.Time
	keys := map[string]bool{}
	for _, c := range calls {
		b, _ := json.Marshal(c.Params)
		var p struct {
			ContentSessionID string    `json:"contentSessionId"`
			EventKey         string    `json:"eventKey"`
			At               time.Time `json:"at"`
		}
		json.Unmarshal(b, &p)
		if p.ContentSessionID != sid {
			t.Errorf("%s: session %q, want %q", c.Event, p.ContentSessionID, sid)
		}
		if !strings.HasPrefix(p.EventKey, memory.BackfillKeyPrefix) || keys[p.EventKey] {
			t.Errorf("%s: event key %q: want a back-fill key of its own", c.Event, p.EventKey)
		}
		keys[p.EventKey] = true
		if p.At.IsZero() || p.At.Before(last) {
			t.Errorf("%s: at %v after %v: want the transcript's time, in order", c.Event, p.At, last)
		}
		last = p.At
	}
}

// TestBackfillCodexMatchesItsHooks rebuilds a real Codex CLI 0.169.0
// session (adapters/codex/testdata/rollout: the fix-calc session of the
// end-to-end tests, with Mnemo's hooks installed) and compares its calls
// with what the hook makes of the payloads Codex gave the hooks in the
// same scripted session (adapters/codex/testdata/payloads, recorded in
// another run: same script, same call ids, other session id).
func TestBackfillCodexMatchesItsHooks(t *testing.T) {
	t.Setenv("MNEMO_SKIP_TOOLS", "")
	paths, _ := filepath.Glob("../../codex/testdata/rollout/rollout-*.jsonl")
	if len(paths) != 1 {
		t.Fatalf("want one recorded rollout, have %q", paths)
	}
	src, _ := backfill.SourceFor(hosts.Codex)
	files, err := src.Find(filepath.Dir(paths[0]))
	if err != nil || len(files) != 1 {
		t.Fatalf("Find: %v %+v", err, files)
	}
	f := files[0]
	if !strings.HasPrefix(f.SessionID, "codex:01a21ff1-") || f.Cwd != "$PROJECT" {
		t.Fatalf("found %+v", f)
	}
	calls, counts := rebuild(t, hosts.Codex, f)
	if want := "SessionStart UserPromptSubmit PostToolUse PostToolUse PostToolUse PostToolUse PostToolUse Stop SessionEnd"; stagesOf(calls) != want {
		t.Fatalf("stages %q, want %q", stagesOf(calls), want)
	}
	if want := (backfill.Counts{Sessions: 1, Prompts: 1, ToolEvents: 5, Turns: 1}); counts != want {
		t.Errorf("counts %+v, want %+v", counts, want)
	}
	checkBackfilledCalls(t, calls, f.SessionID)

	for _, file := range []string{"SessionStart.json", "UserPromptSubmit.json", "PostToolUse-Bash.json", "PostToolUse-Bash-failed.json", "PostToolUse-apply_patch.json", "Stop.json"} {
		_, live := translateRecorded(t, hosts.Codex, file)
		i := slices.IndexFunc(calls, func(c backfill.Call) bool {
			if reflect.TypeOf(c.Params) != reflect.TypeOf(live) {
				return false
			}
			lt, ok := live.(*memory.ToolUseParams)
			return !ok || c.Params.(*memory.ToolUseParams).ToolUseID == lt.ToolUseID
		})
		if i < 0 {
			t.Errorf("%s: no back-filled call like it", file)
			continue
		}
		if got, want := comparable(calls[i].Params), comparable(live); got != want {
			t.Errorf("%s:\nback-filled %s\n      live %s", file, got, want)
		}
	}
}

// TestBackfillGeminiMatchesItsHooks does the same for a real Gemini CLI
// 0.61.0 session (adapters/gemini/testdata/chats) and the payloads its
// hooks were given (adapters/gemini/testdata/payloads). The recorded
// session ran with Mnemo's hooks, so its prompt begins with the
// <hook_context> Gemini made of SessionStart's answer; the hook strips it
// (privacy), and so does the back-fill.
func TestBackfillGeminiMatchesItsHooks(t *testing.T) {
	t.Setenv("MNEMO_SKIP_TOOLS", "")
	paths, _ := filepath.Glob("../../gemini/testdata/chats/session-*.jsonl")
	if len(paths) != 1 {
		t.Fatalf("want one recorded chat, have %q", paths)
	}
	f := backfill.Transcript{SessionID: "gemini:33f953b9-from-the-file", Path: paths[0], Cwd: "$PROJECT"}
	calls, counts := rebuild(t, hosts.Gemini, f)
	if want := "SessionStart UserPromptSubmit PostToolUse PostToolUse PostToolUse PostToolUse PostToolUse PostToolUse Stop SessionEnd"; stagesOf(calls) != want {
		t.Fatalf("stages %q, want %q", stagesOf(calls), want)
	}
	if want := (backfill.Counts{Sessions: 1, Prompts: 1, ToolEvents: 6, Turns: 1}); counts != want {
		t.Errorf("counts %+v, want %+v", counts, want)
	}
	var sid string
	if p, ok := calls[0].Params.(*memory.SessionStartParams); ok {
		sid = p.ContentSessionID
	}
	if !strings.HasPrefix(sid, "gemini:33f953b9-") {
		t.Errorf("session %q: want the file's sessionId, namespaced", sid)
	}
	checkBackfilledCalls(t, calls, sid)
	if p := calls[1].Params.(*memory.UserPromptParams); p.Prompt != "[[gemini-e2e:fix-calc]] make sh test.sh pass" {
		t.Errorf("prompt %q: want the user's prompt, without the hook's context", p.Prompt)
	}

	for _, file := range []string{"SessionStart.json", "BeforeAgent.json", "AfterTool-read_file.json", "AfterTool-replace.json",
		"AfterTool-run_shell_command-failed.json", "AfterTool-run_shell_command.json", "AfterTool-write_file.json", "AfterAgent.json", "SessionEnd.json"} {
		_, live := translateRecorded(t, hosts.Gemini, file)
		want := comparable(live)
		if !slices.ContainsFunc(calls, func(c backfill.Call) bool { return comparable(c.Params) == want }) {
			var got []string
			for _, c := range calls {
				got = append(got, comparable(c.Params))
			}
			t.Errorf("%s: no back-filled call is\n%s\nback-filled:\n%s", file, want, strings.Join(got, "\n"))
		}
	}
}

// Codex rollouts of older CLIs and odd corners: a shell call as argv with
// its output as a JSON string, a prompt recorded both as an event and as
// an item, a tool Codex runs no hook for, an MCP tool, an interrupted turn
// (no Stop), and a rollout without session_meta (not read).
func TestBackfillCodexCorners(t *testing.T) {
	t.Setenv("MNEMO_SKIP_TOOLS", "")
	dir := t.TempDir()
	day := filepath.Join(dir, "2026", "01", "02")
	if err := os.MkdirAll(day, 0o700); err != nil {
		t.Fatal(err)
	}
	rec := func(ts int, typ string, payload string) string {
		return fmt.Sprintf(`{"timestamp":"2026-01-02T10:00:%02dZ","type":%q,"payload":%s}`, ts, typ, payload)
	}
	lines := []string{
		rec(0, "session_meta", `{"id":"s-1","cwd":"/src/app","source":"cli"}`),
		rec(1, "event_msg", `{"type":"task_started","turn_id":"t1"}`),
		rec(2, "event_msg", `{"type":"user_message","message":"list the files","kind":"plain"}`),
		rec(2, "event_msg", `{"type":"item_completed","turn_id":"t1","item":{"type":"UserMessage","id":"u1","content":[{"type":"text","text":"list the files"}]}}`),
		rec(3, "response_item", `{"type":"function_call","name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"ls\"],\"workdir\":\"/src/app\"}","call_id":"c1"}`),
		rec(4, "response_item", `{"type":"function_call_output","call_id":"c1","output":"{\"output\":\"main.go\\n\",\"metadata\":{\"exit_code\":0}}"}`),
		rec(5, "response_item", `{"type":"function_call","name":"update_plan","arguments":"{\"plan\":[]}","call_id":"c2"}`),
		rec(6, "response_item", `{"type":"function_call_output","call_id":"c2","output":"Plan updated"}`),
		rec(7, "response_item", `{"type":"function_call","name":"mcp__docs__lookup","arguments":"{\"q\":\"ServeMux\"}","call_id":"c3"}`),
		rec(8, "response_item", `{"type":"function_call_output","call_id":"c3","output":{"content":[{"type":"text","text":"ServeMux routes"}]}}`),
		rec(9, "event_msg", `{"type":"task_complete","turn_id":"t1","last_agent_message":"main.go is the only file."}`),
		rec(10, "event_msg", `{"type":"task_started","turn_id":"t2"}`),
		rec(11, "event_msg", `{"type":"user_message","message":"now delete it","kind":"plain"}`),
		rec(12, "event_msg", `{"type":"turn_aborted","turn_id":"t2","reason":"interrupted"}`),
		`{"timestamp":"2026-01-02T10:00:13Z","type":"response_item","payload":{"type":"message"` + "\n", // cut short
	}
	path := filepath.Join(day, "rollout-2026-01-02T10-00-00-s-1.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(day, "rollout-2025-01-01T00-00-00-old.jsonl"), []byte(`{"id":"old","timestamp":"2025-01-01T00:00:00Z","instructions":""}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	src, _ := backfill.SourceFor(hosts.Codex)
	files, err := src.Find(dir)
	if err != nil || len(files) != 2 {
		t.Fatalf("Find: %v, %+v", err, files)
	}
	var f backfill.Transcript
	for _, x := range files {
		if x.SessionID == "" {
			if _, counts := rebuild(t, hosts.Codex, x); counts != (backfill.Counts{}) {
				t.Errorf("a rollout without session_meta gave %+v", counts)
			}
			continue
		}
		f = x
	}
	if f.SessionID != "codex:s-1" || f.Cwd != "/src/app" {
		t.Fatalf("found %+v", f)
	}
	calls, counts := rebuild(t, hosts.Codex, f)
	if want := "SessionStart UserPromptSubmit PostToolUse PostToolUse Stop UserPromptSubmit SessionEnd"; stagesOf(calls) != want {
		t.Fatalf("stages %q, want %q", stagesOf(calls), want)
	}
	if want := (backfill.Counts{Sessions: 1, Prompts: 2, ToolEvents: 2, Turns: 1}); counts != want {
		t.Errorf("counts %+v, want %+v", counts, want)
	}
	checkBackfilledCalls(t, calls, "codex:s-1")
	shell := calls[2].Params.(*memory.ToolUseParams)
	if shell.ToolName != "Bash" || !strings.Contains(string(shell.ToolInput), `"command":"ls"`) || !strings.Contains(string(shell.ToolResponse), "main.go") {
		t.Errorf("shell call: %s %s %s", shell.ToolName, shell.ToolInput, shell.ToolResponse)
	}
	mcp := calls[3].Params.(*memory.ToolUseParams)
	if mcp.ToolName != "mcp__docs__lookup" || !strings.Contains(string(mcp.ToolResponse), "ServeMux routes") {
		t.Errorf("MCP call: %s %s", mcp.ToolName, mcp.ToolResponse)
	}
	if stop := calls[4].Params.(*memory.StopParams); stop.LastAssistantMessage != "main.go is the only file." {
		t.Errorf("stop: %+v", stop)
	}
	// The same rollout read again gives the same keys.
	again, _ := rebuild(t, hosts.Codex, f)
	for i := range calls {
		if eventKey(again[i].Params) != eventKey(calls[i].Params) {
			t.Errorf("%s: key %s, then %s", calls[i].Event, eventKey(calls[i].Params), eventKey(again[i].Params))
		}
	}
}

// Gemini CLI's log is replayed as the CLI replays it: a message written
// again replaces it where it stood, $rewindTo drops the messages from one
// on, $set of messages replaces them all; a slash command, a cancelled
// tool and a subagent's file are not work; the project's folder is the
// one whose hash the file names; a legacy JSON document is read too.
func TestBackfillGeminiCorners(t *testing.T) {
	t.Setenv("MNEMO_SKIP_TOOLS", "")
	home := t.TempDir()
	t.Setenv("GEMINI_CLI_HOME", home)
	project := filepath.Join(home, "src", "shop")
	sum := sha256.Sum256([]byte(project))
	hash := hex.EncodeToString(sum[:])
	gemini := filepath.Join(home, ".gemini")
	chats := filepath.Join(gemini, "tmp", "shop", "chats")
	if err := os.MkdirAll(filepath.Join(chats, "parent-1"), 0o700); err != nil {
		t.Fatal(err)
	}
	write := func(path string, lines ...string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(gemini, "projects.json"), fmt.Sprintf(`{"projects":{%q:"shop","/elsewhere":"other"}}`, project))
	msg := func(id string, sec int, typ, rest string) string {
		return fmt.Sprintf(`{"id":%q,"timestamp":"2026-01-02T10:00:%02dZ","type":%q,%s}`, id, sec, typ, rest)
	}
	tool := func(id, name, args, status, output string) string {
		return fmt.Sprintf(`{"id":%q,"name":%q,"args":%s,"status":%q,"timestamp":"2026-01-02T10:00:03.5Z","result":[{"functionResponse":{"id":%q,"name":%q,"response":{"output":%q}}}],"resultDisplay":%q}`,
			id, name, args, status, id, name, output, output)
	}
	write(filepath.Join(chats, "session-2026-01-02T10-00-aaaa1111.jsonl"),
		fmt.Sprintf(`{"sessionId":"aaaa1111-main","projectHash":%q,"startTime":"2026-01-02T10:00:00Z","kind":"main"}`, hash),
		`{"$set":{"messages":[`+msg("m0", 0, "user", `"content":[{"text":"<session_context>\nsetup\n</session_context>"}]`)+`]}}`,
		msg("m1", 1, "user", `"content":[{"text":"/help"}]`),
		msg("m2", 2, "user", `"content":[{"text":"find the price bug"}]`),
		msg("m3", 3, "gemini", `"content":"Looking."`),
		msg("m3", 3, "gemini", `"content":"Looking.","toolCalls":[`+tool("t1", "read_file", `{"file_path":"`+project+`/price.go"}`, "success", "package price")+`,`+tool("t2", "run_shell_command", `{"command":"rm -rf /"}`, "cancelled", "")+`]`),
		msg("m4", 4, "user", `"content":[{"functionResponse":{"id":"t1","name":"read_file","response":{"output":"package price"}}}]`),
		msg("m5", 5, "gemini", `"content":"A wrong turn."`),
		`{"$rewindTo":"m5"}`,
		msg("m6", 6, "gemini", `"content":"Found it: rounding."`),
		`{"$set":{"lastUpdated":"2026-01-02T10:00:06Z"}}`,
	)
	// A subagent's conversation, below chats/: not a session.
	write(filepath.Join(chats, "parent-1", "sub-1.jsonl"), fmt.Sprintf(`{"sessionId":"sub-1","projectHash":%q,"kind":"subagent"}`, hash))
	// A legacy JSON document.
	legacy := map[string]any{"sessionId": "bbbb2222-legacy", "projectHash": hash, "messages": []any{
		map[string]any{"id": "l1", "timestamp": "2025-06-01T09:00:00Z", "type": "user", "content": "add a test"},
		map[string]any{"id": "l2", "timestamp": "2025-06-01T09:00:05Z", "type": "gemini", "content": "Added price_test.go."},
	}}
	b, _ := json.Marshal(legacy)
	write(filepath.Join(chats, "session-2025-06-01T09-00-bbbb2222.json"), string(b))

	src, _ := backfill.SourceFor(hosts.Gemini)
	root, err := src.Root()
	if err != nil || root != filepath.Join(gemini, "tmp") {
		t.Fatalf("root %q %v", root, err)
	}
	files, err := src.Find(root)
	if err != nil || len(files) != 2 {
		t.Fatalf("Find: %v %+v", err, files)
	}
	// Oldest first: the legacy file was written last.
	slices.SortFunc(files, func(a, b backfill.Transcript) int { return strings.Compare(a.SessionID, b.SessionID) })
	if files[0].SessionID != "gemini:aaaa1111-main" || files[1].SessionID != "gemini:bbbb2222-legacy" {
		t.Errorf("found %+v", files)
	}
	for _, f := range files {
		if f.Cwd != project {
			t.Errorf("%s: cwd %q, want %q (the folder whose hash the file names)", f.SessionID, f.Cwd, project)
		}
	}

	calls, counts := rebuild(t, hosts.Gemini, files[0])
	if want := "SessionStart UserPromptSubmit PostToolUse Stop SessionEnd"; stagesOf(calls) != want {
		t.Fatalf("stages %q, want %q", stagesOf(calls), want)
	}
	if want := (backfill.Counts{Sessions: 1, Prompts: 1, ToolEvents: 1, Turns: 1}); counts != want {
		t.Errorf("counts %+v, want %+v", counts, want)
	}
	checkBackfilledCalls(t, calls, "gemini:aaaa1111-main")
	if read := calls[2].Params.(*memory.ToolUseParams); read.ToolName != "Read" || read.Cwd != project {
		t.Errorf("tool: %+v", read)
	}
	if stop := calls[3].Params.(*memory.StopParams); stop.LastUserMessage != "find the price bug" || stop.LastAssistantMessage != "Found it: rounding." {
		t.Errorf("stop: %+v (the rewound answer must be gone)", stop)
	}

	calls, _ = rebuild(t, hosts.Gemini, files[1])
	if want := "SessionStart UserPromptSubmit Stop SessionEnd"; stagesOf(calls) != want {
		t.Fatalf("legacy: stages %q, want %q", stagesOf(calls), want)
	}
	if p := calls[1].Params.(*memory.UserPromptParams); p.Prompt != "add a test" || p.At.Year() != 2025 {
		t.Errorf("legacy prompt: %+v", p)
	}
}
