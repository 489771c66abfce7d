package backfill_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/adapters/hosts"
	"github.com/mnemo-dev/mnemo/adapters/hosts/backfill"
	"github.com/mnemo-dev/mnemo/adapters/hosts/hook"
	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/transcript"
)

// TestBackfillEqualsLiveRecorded rebuilds the calls of a real Claude Code
// 2.1.330 session (adapters/claudecode/testdata/transcript.jsonl, session
// 910404a3…) from its transcript, and compares them with what Translate
// makes of the hook payloads recorded from the same run
// (adapters/claudecode/testdata/payloads/p-bash-*): the
// same stages in the same order with the same params. The differences
// are inherent and cleared before comparing: the event keys (random live,
// derived from the transcript in a back-fill), the transcript path (the
// recorded one is scrubbed), and SessionEnd's reason (the transcript does
// not say why the session ended; a back-fill says "other").
func TestBackfillEqualsLiveRecorded(t *testing.T) {
	t.Setenv("MNEMO_SKIP_TOOLS", "")
	const recorded = "../../claudecode/testdata/transcript.jsonl"
	names, err := filepath.Glob("../../claudecode/testdata/payloads/p-bash-*.json")
	if err != nil || len(names) == 0 {
		t.Fatalf("no payloads: %v", err)
	}
	var live []backfill.Call
	for _, name := range names {
		raw, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		var p hosts.Payload
		if err := json.Unmarshal(raw, &p); err != nil {
			t.Fatal(err)
		}
		method, params, err := hook.Translate(&p, hook.TranslateOptions{EventKey: "live"})
		if err != nil {
			continue // PreToolUse, PostToolBatch: not hooked
		}
		if stop, ok := params.(*memory.StopParams); ok {
			// The daemon reads the live turn's texts from the end of the
			// transcript as it stood: it ended with this turn.
			turn, err := transcript.ReadLastTurn(recorded, 0)
			if err != nil {
				t.Fatal(err)
			}
			stop.Texts = turn.Texts
		}
		live = append(live, backfill.Call{Event: p.HookEventName, Method: method, Params: params})
	}

	var back []backfill.Call
	counts, err := backfill.ClaudeCode("910404a3-381e-4e4e-8785-414e41b8a886", recorded, backfill.Options{}, func(c backfill.Call) error {
		back = append(back, c)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := (backfill.Counts{Sessions: 1, Prompts: 1, ToolEvents: 1, Turns: 1}); counts != want {
		t.Errorf("counts = %+v, want %+v", counts, want)
	}
	for _, c := range back {
		if !strings.HasPrefix(eventKey(c.Params), "bf-") {
			t.Errorf("%s: event key %q is not a back-fill key", c.Event, eventKey(c.Params))
		}
	}
	// Each back-filled call carries the time of its transcript line (the
	// live hook's calls are stamped by the daemon on arrival), never before
	// the session began nor out of order.
	var last time.Time
	for _, c := range back {
		b, _ := json.Marshal(c.Params)
		var at struct {
			At time.Time `json:"at"`
		}
		json.Unmarshal(b, &at)
		if at.At.IsZero() || at.At.Before(last) || at.At.Year() != 2026 {
			t.Errorf("%s: at %v (the one before %v): want the transcript's time, in order", c.Event, at.At, last)
		}
		last = at.At
	}
	norm := func(cs []backfill.Call) []string {
		var out []string
		for _, c := range cs {
			switch p := c.Params.(type) {
			case *memory.SessionStartParams:
				p.EventKey, p.At = "", time.Time{}
			case *memory.UserPromptParams:
				p.EventKey, p.At = "", time.Time{}
			case *memory.ToolUseParams:
				p.EventKey, p.At = "", time.Time{}
			case *memory.StopParams:
				p.EventKey, p.TranscriptPath, p.At = "", "", time.Time{}
			case *memory.SessionEndParams:
				p.EventKey, p.Reason, p.At = "", "", time.Time{}
			}
			b, _ := json.Marshal(c.Params)
			out = append(out, c.Event+" "+c.Method+" "+string(b))
		}
		return out
	}
	got, want := norm(back), norm(live)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("back-fill differs from live:\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(want, "\n     "))
	}
}

func eventKey(params any) string {
	b, _ := json.Marshal(params)
	var k struct {
		EventKey string `json:"eventKey"`
	}
	json.Unmarshal(b, &k)
	return k.EventKey
}

// TestBackfillTranscript rebuilds a transcript with two turns, a failed
// tool, a tool on the skip list, a subagent's tool run (the session's, as
// its hook would have sent it), a meta line, a private prompt and a line
// cut short, and checks the calls, their order and keys, and that a
// second read gives the same keys.
func TestBackfillTranscript(t *testing.T) {
	t.Setenv("MNEMO_SKIP_TOOLS", "")
	dir := t.TempDir()
	path := filepath.Join(dir, "s1.jsonl")
	lines := []string{
		`{"type":"queue-operation","operation":"enqueue"}`,
		`{"type":"user","uuid":"u1","cwd":"/p","message":{"role":"user","content":"fix the bug <private>secret plan</private>"}}`,
		`{"type":"user","uuid":"m1","cwd":"/p","isMeta":true,"message":{"role":"user","content":"caveat"}}`,
		`{"type":"assistant","uuid":"a1","cwd":"/p","message":{"role":"assistant","content":[{"type":"text","text":"Looking."},{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"exit 3"}}]}}`,
		`{"type":"user","uuid":"r1","cwd":"/p","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"Exit code 3\nfailing","is_error":true}]},"toolUseResult":"Error: Exit code 3\nfailing"}`,
		`{"type":"assistant","uuid":"s1","cwd":"/p","isSidechain":true,"message":{"role":"assistant","content":[{"type":"tool_use","id":"t9","name":"Bash","input":{"command":"sub"}}]}}`,
		`{"type":"user","uuid":"s2","cwd":"/p","isSidechain":true,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t9","content":"sub"}]}}`,
		`{"type":"assistant","uuid":"a2","cwd":"/p","message":{"role":"assistant","content":[{"type":"tool_use","id":"t2","name":"Read","input":{"file_path":"/p/a.go"}},{"type":"tool_use","id":"t3","name":"TodoWrite","input":{"todos":[]}}]}}`,
		`{"type":"user","uuid":"r2","cwd":"/p","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","content":"package a"}]},"toolUseResult":{"type":"text","file":{"filePath":"/p/a.go"}}}`,
		`{"type":"user","uuid":"r3","cwd":"/p","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t3","content":"ok"}]},"toolUseResult":{}}`,
		`{"type":"assistant","uuid":"a3","cwd":"/p","message":{"role":"assistant","content":[{"type":"text","text":"Fixed it."}]}}`,
		`{"type":"user","uuid":"u2","cwd":"/p","message":{"role":"user","content":[{"type":"text","text":"<private>all of it</private>"}]}}`,
		`{"type":"assistant","uuid":"a4","cwd":"/p","message":{"role":"assistant","content":[{"type":"text","text":"Noted."}]}}`,
		`{"type":"assistant","uuid":"a5","cwd":"/p","message":{"role":"assist`,
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func() ([]backfill.Call, backfill.Counts) {
		var calls []backfill.Call
		n, err := backfill.ClaudeCode("s1", path, backfill.Options{}, func(c backfill.Call) error {
			calls = append(calls, c)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return calls, n
	}
	calls, n := run()
	var events []string
	for _, c := range calls {
		events = append(events, c.Event)
	}
	wantEvents := "SessionStart UserPromptSubmit PostToolUseFailure PostToolUse PostToolUse Stop UserPromptSubmit Stop SessionEnd"
	if got := strings.Join(events, " "); got != wantEvents {
		t.Fatalf("events = %s\nwant     %s", got, wantEvents)
	}
	if want := (backfill.Counts{Sessions: 1, Prompts: 2, ToolEvents: 3, Turns: 2, SkippedTools: 1}); n != want {
		t.Errorf("counts = %+v, want %+v", n, want)
	}
	if p := calls[1].Params.(*memory.UserPromptParams); p.Prompt != "fix the bug" || p.Cwd != "/p" {
		t.Errorf("prompt = %+v", p)
	}
	if p := calls[2].Params.(*memory.ToolUseParams); !strings.Contains(string(p.ToolResponse), `"error":"Exit code 3\nfailing"`) || p.ToolUseID != "t1" {
		t.Errorf("failed tool = %s %s", p.ToolUseID, p.ToolResponse)
	}
	if p := calls[3].Params.(*memory.ToolUseParams); p.ToolUseID != "t9" || p.Cwd != "/p" {
		t.Errorf("sub-agent's tool = %s in %s", p.ToolUseID, p.Cwd)
	}
	if p := calls[4].Params.(*memory.ToolUseParams); string(p.ToolResponse) != `{"type":"text","file":{"filePath":"/p/a.go"}}` {
		t.Errorf("tool response = %s", p.ToolResponse)
	}
	// The turn's texts, each with the calls it came right before; the
	// prompt is the daemon's already.
	if p := calls[5].Params.(*memory.StopParams); p.LastUserMessage != "" || p.LastAssistantMessage != "Fixed it." ||
		!reflect.DeepEqual(p.Texts, []memory.TurnText{{Text: "Looking.", ToolUseIDs: []string{"t1"}}, {Text: "Fixed it."}}) {
		t.Errorf("stop = %+v", p)
	}
	if p := calls[6].Params.(*memory.UserPromptParams); p.Prompt != hook.PrivateMarker {
		t.Errorf("private prompt sent as %q", p.Prompt)
	}
	if p := calls[7].Params.(*memory.StopParams); p.LastUserMessage != "" {
		t.Errorf("private turn's stop carries %q", p.LastUserMessage)
	}
	keys := map[string]bool{}
	for _, c := range calls {
		keys[eventKey(c.Params)] = true
	}
	if len(keys) != len(calls) {
		t.Errorf("%d calls share %d keys", len(calls), len(keys))
	}
	again, _ := run()
	for i := range again {
		if eventKey(again[i].Params) != eventKey(calls[i].Params) {
			t.Errorf("call %d: key %s, then %s", i, eventKey(calls[i].Params), eventKey(again[i].Params))
		}
	}
}

// FindClaudeCode lists the sessions, each with its sub-agents' files:
// in <session>/subagents/ (2.1), or beside the sessions (2.0), where the
// first line that names a session says whose.
func TestFindClaudeCode(t *testing.T) {
	root := t.TempDir()
	for _, p := range []string{"-p-a/s1.jsonl", "-p-a/s1/subagents/agent-x.jsonl", "-p-b/s2.jsonl", "-p-b/notes.txt", "-p-b/agent-y.jsonl", "-p-b/agent-z.jsonl"} {
		path := filepath.Join(root, p)
		os.MkdirAll(filepath.Dir(path), 0o700)
		body := `{"type":"user","cwd":"/p/a"}` + "\n"
		switch filepath.Base(p) {
		case "agent-y.jsonl":
			body = `{"type":"summary"}` + "\n" + `{"type":"user","isSidechain":true,"sessionId":"s2"}` + "\n"
		case "agent-z.jsonl":
			body = `{"type":"user","isSidechain":true,"sessionId":"s9"}` + "\n" // of a session not here
		}
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	files, err := backfill.FindClaudeCode(root)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	sides := map[string][]string{}
	for _, f := range files {
		ids = append(ids, f.SessionID)
		for _, s := range f.Sidechains {
			rel, _ := filepath.Rel(root, s)
			sides[f.SessionID] = append(sides[f.SessionID], filepath.ToSlash(rel))
		}
	}
	if strings.Join(ids, ",") != "s1,s2" && strings.Join(ids, ",") != "s2,s1" {
		t.Errorf("sessions = %v", ids)
	}
	if want := map[string][]string{"s1": {"-p-a/s1/subagents/agent-x.jsonl"}, "s2": {"-p-b/agent-y.jsonl"}}; !reflect.DeepEqual(sides, want) {
		t.Errorf("sub-agents' files = %v, want %v", sides, want)
	}
	if cwd, err := backfill.ClaudeCodeCwd(files[0].Path); err != nil || cwd != "/p/a" {
		t.Errorf("cwd = %q, %v", cwd, err)
	}
	if files, err := backfill.FindClaudeCode(filepath.Join(root, "none")); err != nil || len(files) != 0 {
		t.Errorf("missing root: %v %v", files, err)
	}
}

// TestBackfillWhoseTurns rebuilds a transcript in which Claude Code writes
// in the person's name: a session copied from an earlier one (a resume in
// 1.0: the earlier turn again, answered in the same instant), a first
// turn started by a custom slash command (its body, written with it, is
// what the model got), a local /compact (its caveat, its output and the
// compaction summary), a task notification the model answers, and a
// Read of an image. Only what the person typed is a prompt; every tool
// run of the person's turns is kept, under its turn; the notification's
// answer ends a turn of its own under the same prompt; the image's
// base64 is not sent.
func TestBackfillWhoseTurns(t *testing.T) {
	t.Setenv("MNEMO_SKIP_TOOLS", "")
	png := strings.Repeat("iVBORw0KGgoAAAANSUhEUgAA", 100)
	at := func(sec float64) string {
		return time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC).Add(time.Duration(sec * float64(time.Second))).Format(time.RFC3339Nano)
	}
	line := func(sec float64, rest string) string {
		return `{"timestamp":"` + at(sec) + `","cwd":"/p",` + rest + `}`
	}
	lines := []string{
		// The copy of an earlier session's turn, all written at once.
		line(0, `"type":"user","uuid":"c1","message":{"role":"user","content":"old prompt"}`),
		line(0, `"type":"assistant","uuid":"c2","message":{"id":"msg_old","role":"assistant","content":[{"type":"tool_use","id":"t0","name":"Bash","input":{"command":"ls"}}]}`),
		line(0, `"type":"user","uuid":"c3","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t0","content":"a.go"}]}`),
		line(0, `"type":"assistant","uuid":"c4","message":{"id":"msg_old2","role":"assistant","content":[{"type":"text","text":"Listed."}]}`),
		// A custom command, its body, and the model's work.
		line(10, `"type":"user","uuid":"u1","message":{"role":"user","content":"<command-message>review is running…</command-message>\n<command-name>/review</command-name>\n<command-args>a.go</command-args>"}`),
		line(10, `"type":"user","uuid":"u1b","message":{"role":"user","content":[{"type":"text","text":"Review a.go for bugs."}]}`),
		line(11, `"type":"assistant","uuid":"a1","message":{"id":"msg_1","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"/p/a.go"}}]}`),
		line(12, `"type":"user","uuid":"r1","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"package a"}]},"toolUseResult":{"type":"text","file":{"filePath":"/p/a.go"}}`),
		line(13, `"type":"assistant","uuid":"a2","message":{"id":"msg_2","role":"assistant","content":[{"type":"text","text":"a.go looks fine."}]}`),
		// /compact: local, with its summary.
		line(20, `"type":"user","uuid":"s1","isCompactSummary":true,"message":{"role":"user","content":"This session is being continued from a previous conversation that ran out of context."}`),
		line(20, `"type":"user","uuid":"m1","isMeta":true,"message":{"role":"user","content":"Caveat: The messages below were generated by the user while running local commands."}`),
		line(20, `"type":"user","uuid":"k1","message":{"role":"user","content":"<command-name>/compact</command-name>\n<command-message>compact</command-message>\n<command-args></command-args>"}`),
		line(20, `"type":"user","uuid":"k2","message":{"role":"user","content":"<local-command-stdout>Compacted.</local-command-stdout>"}`),
		// A prompt after the compaction, a background task, its notification.
		line(30, `"type":"user","uuid":"u2","message":{"role":"user","content":"look at the logo"}`),
		line(31, `"type":"assistant","uuid":"a3","message":{"id":"msg_3","role":"assistant","content":[{"type":"tool_use","id":"t2","name":"Read","input":{"file_path":"/p/logo.png"}}]}`),
		line(32, `"type":"user","uuid":"r2","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"`+png+`"}}]}]},"toolUseResult":{"type":"image","file":{"base64":"`+png+`","type":"image/png"}}`),
		line(33, `"type":"assistant","uuid":"a4","message":{"id":"msg_4","role":"assistant","content":[{"type":"text","text":"A blue square."}]}`),
		line(40, `"type":"user","uuid":"n1","message":{"role":"user","content":"<task-notification>\n<task-id>b1</task-id>\n<status>completed</status>\n</task-notification>"}`),
		line(41, `"type":"assistant","uuid":"a5","message":{"id":"msg_5","role":"assistant","content":[{"type":"text","text":"The background job is done."}]}`),
	}
	path := filepath.Join(t.TempDir(), "s2.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var calls []backfill.Call
	n, err := backfill.ClaudeCode("s2", path, backfill.Options{}, func(c backfill.Call) error {
		calls = append(calls, c)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range calls {
		switch p := c.Params.(type) {
		case *memory.UserPromptParams:
			got = append(got, "prompt "+p.Prompt)
		case *memory.ToolUseParams:
			got = append(got, "tool "+p.ToolUseID)
			if strings.Contains(string(p.ToolResponse), "iVBORw0KGgo") || strings.Contains(string(p.ToolInput), "iVBORw0KGgo") {
				t.Errorf("tool %s sends the image: %.200s", p.ToolUseID, p.ToolResponse)
			}
		case *memory.StopParams:
			var texts []string
			for _, t := range p.Texts {
				texts = append(texts, t.Text)
			}
			got = append(got, "stop "+p.LastAssistantMessage+" / "+strings.Join(texts, " | "))
		default:
			got = append(got, c.Event)
		}
	}
	want := []string{
		"SessionStart",
		"prompt /review a.go", "tool t1", "stop a.go looks fine. / a.go looks fine.",
		"prompt look at the logo", "tool t2", "stop A blue square. / A blue square.",
		"stop The background job is done. / The background job is done.",
		"SessionEnd",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("calls:\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	if want := (backfill.Counts{Sessions: 1, Prompts: 2, ToolEvents: 2, Turns: 3}); n != want {
		t.Errorf("counts = %+v, want %+v", n, want)
	}
}
