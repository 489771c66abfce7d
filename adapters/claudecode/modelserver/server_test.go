package modelserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/adapters/claudecode/modelserver"
)

// start runs a server on a free loopback port for the test.
func start(t *testing.T, scripts ...modelserver.Script) *modelserver.Server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := modelserver.Start(ctx, "127.0.0.1:0")
	if err != nil {
		cancel()
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		if err := srv.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	if err := srv.Register(scripts...); err != nil {
		t.Fatalf("register: %v", err)
	}
	return srv
}

var client = &http.Client{Timeout: 10 * time.Second}

// post sends body as JSON to path.
func post(t *testing.T, srv *modelserver.Server, path string, body any) *http.Response {
	t.Helper()
	data, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, srv.URL()+path, bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-api-key", "dummy")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("post %s: %v", path, err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// event is one server-sent event.
type event struct {
	Name string
	Data map[string]any
}

// readEvents parses a text/event-stream body.
func readEvents(t *testing.T, r io.Reader) []event {
	t.Helper()
	var evs []event
	var cur event
	var data strings.Builder
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.Name == "" && data.Len() == 0 {
				continue
			}
			if err := json.Unmarshal([]byte(data.String()), &cur.Data); err != nil {
				t.Fatalf("event %s: bad data %q: %v", cur.Name, data.String(), err)
			}
			if cur.Data["type"] != cur.Name {
				t.Errorf("event %s carries type %v", cur.Name, cur.Data["type"])
			}
			evs = append(evs, cur)
			cur, data = event{}, strings.Builder{}
		case strings.HasPrefix(line, "event: "):
			cur.Name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data.WriteString(strings.TrimPrefix(line, "data: "))
		default:
			t.Fatalf("unexpected SSE line %q", line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read stream: %v", err)
	}
	if cur.Name != "" || data.Len() > 0 {
		t.Fatalf("stream ends inside event %q", cur.Name)
	}
	return evs
}

// assembled is a streamed message put back together, as a client would.
type assembled struct {
	ID, Model  string
	StopReason string
	Blocks     []map[string]any // text blocks have "text"; tool_use blocks have "input" decoded
	Names      []string         // event names in order
	OutTokens  float64
}

func assemble(t *testing.T, evs []event) assembled {
	t.Helper()
	var m assembled
	partial := map[int]*strings.Builder{}
	for _, ev := range evs {
		m.Names = append(m.Names, ev.Name)
		switch ev.Name {
		case "message_start":
			msg := ev.Data["message"].(map[string]any)
			m.ID, m.Model = msg["id"].(string), msg["model"].(string)
			if c := msg["content"].([]any); len(c) != 0 {
				t.Errorf("message_start content = %v, want empty", c)
			}
		case "content_block_start":
			i := int(ev.Data["index"].(float64))
			if i != len(m.Blocks) {
				t.Fatalf("block index %d, want %d", i, len(m.Blocks))
			}
			m.Blocks = append(m.Blocks, ev.Data["content_block"].(map[string]any))
			partial[i] = &strings.Builder{}
		case "content_block_delta":
			i := int(ev.Data["index"].(float64))
			d := ev.Data["delta"].(map[string]any)
			switch d["type"] {
			case "text_delta":
				partial[i].WriteString(d["text"].(string))
			case "input_json_delta":
				partial[i].WriteString(d["partial_json"].(string))
			default:
				t.Fatalf("unknown delta %v", d["type"])
			}
		case "content_block_stop":
			i := int(ev.Data["index"].(float64))
			b := m.Blocks[i]
			switch b["type"] {
			case "text":
				b["text"] = partial[i].String()
			case "tool_use":
				var in map[string]any
				if err := json.Unmarshal([]byte(partial[i].String()), &in); err != nil {
					t.Fatalf("tool input %q: %v", partial[i].String(), err)
				}
				b["input"] = in
			}
		case "message_delta":
			m.StopReason = ev.Data["delta"].(map[string]any)["stop_reason"].(string)
			m.OutTokens = ev.Data["usage"].(map[string]any)["output_tokens"].(float64)
		}
	}
	return m
}

// conv builds a request body from alternating messages.
func conv(stream bool, msgs ...map[string]any) map[string]any {
	return map[string]any{
		"model": "claude-opus-5-5", "max_tokens": 1024, "stream": stream,
		"system":   []any{map[string]any{"type": "text", "text": "You are a Claude agent."}},
		"tools":    []any{map[string]any{"name": "Bash"}, map[string]any{"name": "Read"}},
		"messages": msgs,
	}
}

func user(text string) map[string]any {
	return map[string]any{"role": "user", "content": []any{
		map[string]any{"type": "text", "text": "<system-reminder>\nattribution\n</system-reminder>\n"},
		map[string]any{"type": "text", "text": text},
	}}
}

func assistant(text string) map[string]any {
	return map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "text", "text": text}}}
}

func toolUse(id string) map[string]any {
	return map[string]any{"role": "assistant", "content": []any{
		map[string]any{"type": "tool_use", "id": id, "name": "Bash", "input": map[string]any{"command": "true"}},
	}}
}

func toolResult(id, content string) map[string]any {
	return map[string]any{"role": "user", "content": []any{
		map[string]any{"type": "tool_result", "tool_use_id": id, "content": content},
	}}
}

func systemMsg(text string) map[string]any {
	return map[string]any{"role": "system", "content": text}
}

func TestStreamSequence(t *testing.T) {
	srv := start(t, modelserver.Script{Name: "fix", Steps: []modelserver.Step{{
		Text: "Reading the file — ünïcödé ✓.",
		ToolUses: []modelserver.ToolUse{
			{Name: "Read", Input: map[string]any{"file_path": "/p/calc.py"}},
			{Name: "Bash", Input: json.RawMessage(`{"command":"sh test.sh","description":"Run the tests"}`), ID: "toolu_fixed"},
		},
		Usage: &modelserver.Usage{InputTokens: 7, OutputTokens: 42},
	}}})

	resp := post(t, srv, "/v1/messages?beta=true", conv(true, user("SCENARIO:fix please")))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("content-type %q", ct)
	}
	m := assemble(t, readEvents(t, resp.Body))

	wantNames := []string{"message_start",
		"content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",
		"content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",
		"content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",
		"message_delta", "message_stop"}
	if got := strings.Join(m.Names, " "); got != strings.Join(wantNames, " ") {
		t.Errorf("events:\n got %s\nwant %s", got, strings.Join(wantNames, " "))
	}
	if m.Model != "claude-opus-5-5" || !strings.HasPrefix(m.ID, "msg_fake_") {
		t.Errorf("message id %q model %q", m.ID, m.Model)
	}
	if m.StopReason != "tool_use" || m.OutTokens != 42 {
		t.Errorf("stop %q output tokens %v", m.StopReason, m.OutTokens)
	}
	if len(m.Blocks) != 3 {
		t.Fatalf("%d blocks", len(m.Blocks))
	}
	if got := m.Blocks[0]["text"]; got != "Reading the file — ünïcödé ✓." {
		t.Errorf("text %q", got)
	}
	read, bash := m.Blocks[1], m.Blocks[2]
	if read["name"] != "Read" || !strings.HasPrefix(read["id"].(string), "toolu_fake_") ||
		read["input"].(map[string]any)["file_path"] != "/p/calc.py" {
		t.Errorf("read block %v", read)
	}
	if bash["id"] != "toolu_fixed" || bash["input"].(map[string]any)["command"] != "sh test.sh" {
		t.Errorf("bash block %v", bash)
	}

	recs := srv.Requests()
	if len(recs) != 1 {
		t.Fatalf("%d records", len(recs))
	}
	r := recs[0]
	if r.Kind != modelserver.KindScript || r.Script != "fix" || r.Source != modelserver.SourcePrompt || r.Step != 0 {
		t.Errorf("record %s %s %s %d", r.Kind, r.Script, r.Source, r.Step)
	}
	if r.Path != "/v1/messages?beta=true" || r.Header.Get("x-api-key") != "dummy" || !json.Valid(r.Body) {
		t.Errorf("record path %q headers %v", r.Path, r.Header)
	}
	if ids := r.ToolUses(); len(ids) != 2 || ids[0].ID != read["id"] || ids[1].ID != "toolu_fixed" {
		t.Errorf("recorded tool uses %v", ids)
	}
	if r.Reply.MessageID != m.ID || r.Reply.StopReason != "tool_use" {
		t.Errorf("recorded reply %+v", r.Reply)
	}
}

func TestNonStream(t *testing.T) {
	srv := start(t, modelserver.Script{Name: "obs", Steps: []modelserver.Step{
		{Text: "<observation><type>change</type></observation>"},
	}})
	resp := post(t, srv, "/v1/messages", conv(false, user("SCENARIO:obs")))
	var msg struct {
		ID, Type, Role, Model string
		StopReason            string `json:"stop_reason"`
		Content               []struct{ Type, Text string }
		Usage                 modelserver.Usage
	}
	if err := json.NewDecoder(resp.Body).Decode(&msg); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("status %d type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if msg.Type != "message" || msg.Role != "assistant" || msg.StopReason != "end_turn" ||
		len(msg.Content) != 1 || msg.Content[0].Text != "<observation><type>change</type></observation>" ||
		msg.Usage.InputTokens != 1000 || msg.Usage.OutputTokens != 20 {
		t.Errorf("message %+v", msg)
	}
}

// TestRouting checks script selection and the step index for conversations
// shaped like Claude Code's.
func TestRouting(t *testing.T) {
	steps := func(name string, n int) modelserver.Script {
		sc := modelserver.Script{Name: name}
		for i := range n {
			sc.Steps = append(sc.Steps, modelserver.Step{Text: fmt.Sprintf("%s step %d", name, i)})
		}
		return sc
	}
	srv := start(t, steps("fix", 3), steps("check", 2), steps("observer", 3))
	srv.SetSummary("the summary")

	withSystem := func(body map[string]any, text string) map[string]any {
		body["system"] = text
		return body
	}
	tests := []struct {
		name   string
		body   map[string]any
		kind   modelserver.Kind
		script string
		source modelserver.Source
		step   int
		reply  string // a substring of the reply text
	}{{
		name: "first prompt", body: conv(true, user("SCENARIO:fix do it"), systemMsg("SessionStart hook additional context: x")),
		kind: modelserver.KindScript, script: "fix", source: modelserver.SourcePrompt, step: 0, reply: "fix step 0",
	}, {
		name: "after one tool round",
		body: conv(true, user("SCENARIO:fix do it"), systemMsg("ctx"), toolUse("t1"), toolResult("t1", "ok"), systemMsg("PostToolUse ctx")),
		kind: modelserver.KindScript, script: "fix", source: modelserver.SourcePrompt, step: 1, reply: "fix step 1",
	}, {
		name: "past the last step",
		body: conv(true, user("SCENARIO:fix do it"), toolUse("t1"), toolResult("t1", "a"), toolUse("t2"), toolResult("t2", "b"),
			toolUse("t3"), toolResult("t3", "c")),
		kind: modelserver.KindScript, script: "fix", source: modelserver.SourcePrompt, step: 3,
		reply: "Done: scenario fix finished after 3 step(s).",
	}, {
		name: "resumed session, new prompt restarts the count",
		body: conv(true, user("SCENARIO:fix do it"), toolUse("t1"), toolResult("t1", "a"), assistant("done"),
			map[string]any{"role": "user", "content": "SCENARIO:check now"}, toolUse("t2"), toolResult("t2", "b")),
		kind: modelserver.KindScript, script: "check", source: modelserver.SourcePrompt, step: 1, reply: "check step 1",
	}, {
		name: "marker inside a system reminder is not a prompt marker",
		body: conv(true, map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "text", "text": "<system-reminder>SCENARIO:check</system-reminder>"},
			map[string]any{"type": "text", "text": "SCENARIO:fix go"},
		}}),
		kind: modelserver.KindScript, script: "fix", source: modelserver.SourcePrompt, step: 0, reply: "fix step 0",
	}, {
		name: "reminder-only user message is not the latest prompt",
		body: conv(true, user("SCENARIO:fix go"), toolUse("t1"), toolResult("t1", "a"),
			map[string]any{"role": "user", "content": "<system-reminder>note</system-reminder>"}),
		kind: modelserver.KindScript, script: "fix", source: modelserver.SourcePrompt, step: 1, reply: "fix step 1",
	}, {
		name: "system prompt marker wins over a quoted prompt marker",
		body: withSystem(conv(true, user("You observe a session."), assistant("ready"),
			user("event: the user asked SCENARIO:fix do it")), "You are a memory agent. SCENARIO:observer"),
		kind: modelserver.KindScript, script: "observer", source: modelserver.SourceSystem, step: 1, reply: "observer step 1",
	}, {
		name: "first message marker: later turns continue the script",
		body: conv(true, user("SCENARIO:observer init"), assistant("a"), user("event one"), assistant("b"), user("event two")),
		kind: modelserver.KindScript, script: "observer", source: modelserver.SourceFirstMessage, step: 2, reply: "observer step 2",
	}, {
		name: "compaction",
		body: conv(true, user("SCENARIO:fix go"), toolUse("t1"), map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "tool_result", "tool_use_id": "t1", "content": "hello"},
			map[string]any{"type": "text", "text": "CRITICAL: Respond with TEXT ONLY. Your task is to create a detailed summary of the conversation so far."},
		}}, systemMsg("PostToolUse ctx")),
		kind: modelserver.KindCompaction, reply: "<summary>the summary</summary>",
	}, {
		name: "no marker", body: conv(true, user("hello")),
		kind: modelserver.KindDefault, reply: "ok",
	}, {
		name: "unregistered marker", body: conv(true, user("SCENARIO:nope hello")),
		kind: modelserver.KindDefault, reply: "ok",
	}, {
		name: "string content and string system", body: withSystem(conv(true, map[string]any{"role": "user", "content": "SCENARIO:check"}), "sys"),
		kind: modelserver.KindScript, script: "check", source: modelserver.SourcePrompt, step: 0, reply: "check step 0",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv.Reset()
			resp := post(t, srv, "/v1/messages?beta=true", tt.body)
			m := assemble(t, readEvents(t, resp.Body))
			if len(m.Blocks) != 1 || !strings.Contains(m.Blocks[0]["text"].(string), tt.reply) {
				t.Errorf("reply %v, want text containing %q", m.Blocks, tt.reply)
			}
			recs := srv.Requests()
			if len(recs) != 1 {
				t.Fatalf("%d records", len(recs))
			}
			r := recs[0]
			if r.Kind != tt.kind || r.Script != tt.script || r.Source != tt.source || r.Step != tt.step {
				t.Errorf("routed to kind=%s script=%q source=%q step=%d, want %s %q %q %d",
					r.Kind, r.Script, r.Source, r.Step, tt.kind, tt.script, tt.source, tt.step)
			}
			if tt.name == "unregistered marker" && !strings.Contains(r.Note, "nope") {
				t.Errorf("note %q does not name the unregistered marker", r.Note)
			}
		})
	}
}

func TestRespond(t *testing.T) {
	var mu sync.Mutex
	var turns []modelserver.Turn
	srv := start(t, modelserver.Script{Name: "observer", Respond: func(tn modelserver.Turn) modelserver.Step {
		mu.Lock()
		turns = append(turns, tn)
		mu.Unlock()
		return modelserver.Step{Text: "<observation><title>" + tn.Prompt + "</title></observation>"}
	}})
	body := conv(true, user("SCENARIO:observer start"), assistant("ok"), user("Edit calc.py"))
	m := assemble(t, readEvents(t, post(t, srv, "/v1/messages?beta=true", body).Body))
	if got := m.Blocks[0]["text"]; got != "<observation><title>Edit calc.py</title></observation>" {
		t.Errorf("reply %q", got)
	}
	if len(turns) != 1 || turns[0].Step != 1 || turns[0].Source != modelserver.SourceFirstMessage ||
		turns[0].Request == nil || len(turns[0].Request.Messages) != 3 {
		t.Errorf("turns %+v", turns)
	}
}

func TestErrors(t *testing.T) {
	srv := start(t, modelserver.Script{Name: "apierror", Steps: []modelserver.Step{
		{Error: &modelserver.APIError{Status: 529, Type: "overloaded_error", Message: "scripted overload"}},
	}})
	tests := []struct {
		name    string
		method  string
		path    string
		body    string
		status  int
		errType string
		kind    modelserver.Kind
	}{
		{"unknown path", http.MethodPost, "/v1/complete", `{}`, 404, "not_found_error", modelserver.KindNotFound},
		{"models", http.MethodGet, "/v1/models", ``, 404, "not_found_error", modelserver.KindNotFound},
		{"wrong method", http.MethodGet, "/v1/messages", ``, 405, "invalid_request_error", modelserver.KindBadRequest},
		{"bad json", http.MethodPost, "/v1/messages", `{"messages": [`, 400, "invalid_request_error", modelserver.KindBadRequest},
		{"bad content", http.MethodPost, "/v1/messages", `{"messages": [{"role":"user","content":5}]}`, 400, "invalid_request_error", modelserver.KindBadRequest},
		{"scripted error", http.MethodPost, "/v1/messages?beta=true",
			`{"stream":true,"messages":[{"role":"user","content":"SCENARIO:apierror"}]}`, 529, "overloaded_error", modelserver.KindScript},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv.Reset()
			req, err := http.NewRequest(tt.method, srv.URL()+tt.path, strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var e struct {
				Type  string
				Error struct{ Type, Message string }
			}
			if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
				t.Fatalf("decode error body: %v", err)
			}
			if resp.StatusCode != tt.status || e.Type != "error" || e.Error.Type != tt.errType || e.Error.Message == "" {
				t.Errorf("status %d body %+v, want %d %s", resp.StatusCode, e, tt.status, tt.errType)
			}
			recs := srv.Requests()
			if len(recs) != 1 || recs[0].Kind != tt.kind || recs[0].Reply.Status != tt.status {
				t.Errorf("records %+v", recs)
			}
		})
	}
}

func TestRegisterRejects(t *testing.T) {
	tests := []struct {
		name   string
		script modelserver.Script
	}{
		{"empty name", modelserver.Script{Steps: []modelserver.Step{{Text: "x"}}}},
		{"name with a space", modelserver.Script{Name: "a b", Steps: []modelserver.Step{{Text: "x"}}}},
		{"no steps", modelserver.Script{Name: "a"}},
		{"empty step", modelserver.Script{Name: "a", Steps: []modelserver.Step{{}}}},
		{"tool without name", modelserver.Script{Name: "a", Steps: []modelserver.Step{{ToolUses: []modelserver.ToolUse{{Input: map[string]any{}}}}}}},
		{"array input", modelserver.Script{Name: "a", Steps: []modelserver.Step{{ToolUses: []modelserver.ToolUse{{Name: "Bash", Input: []int{1}}}}}}},
		{"unmarshalable input", modelserver.Script{Name: "a", Steps: []modelserver.Step{{ToolUses: []modelserver.ToolUse{{Name: "Bash", Input: func() {}}}}}}},
		{"error status 200", modelserver.Script{Name: "a", Steps: []modelserver.Step{{Error: &modelserver.APIError{Status: 200}}}}},
	}
	srv := modelserver.New()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := srv.Register(tt.script); !errors.Is(err, modelserver.ErrBadScript) {
				t.Errorf("Register = %v, want ErrBadScript", err)
			}
		})
	}
	if err := srv.SetDefault(modelserver.Step{}); !errors.Is(err, modelserver.ErrBadScript) {
		t.Errorf("SetDefault(empty) = %v, want ErrBadScript", err)
	}
}

func TestRecordedHelpers(t *testing.T) {
	srv := start(t)
	if err := srv.SetDefault(modelserver.Step{Text: "default reply"}); err != nil {
		t.Fatal(err)
	}
	body := conv(true, user("hello"), toolUse("t1"),
		map[string]any{"role": "user", "content": []any{map[string]any{
			"type": "tool_result", "tool_use_id": "t1", "is_error": true,
			"content": []any{map[string]any{"type": "text", "text": "Exit code 1\nAssertionError"}},
		}}},
		systemMsg("SessionStart hook additional context: <mnemo-context>calc.py</mnemo-context>"))
	m := assemble(t, readEvents(t, post(t, srv, "/v1/messages?beta=true", body).Body))
	if m.Blocks[0]["text"] != "default reply" {
		t.Errorf("reply %v", m.Blocks)
	}
	for _, s := range []string{"You are a Claude agent.", "<mnemo-context>calc.py</mnemo-context>", "AssertionError", `"command":"true"`} {
		if !srv.Contains(s) {
			t.Errorf("Contains(%q) = false", s)
		}
	}
	if srv.Contains("not in the request") {
		t.Error("Contains reports text that is not there")
	}
	r := srv.Requests()[0]
	res, ok := r.Request.ToolResult("t1")
	if !ok || !res.IsError || res.Content.Text() != "Exit code 1\nAssertionError\n" {
		t.Errorf("ToolResult = %+v, %v", res, ok)
	}
	if _, ok := r.Request.ToolResult("t2"); ok {
		t.Error("ToolResult found an unknown id")
	}
	if got := strings.Join(r.Request.ToolNames(), ","); got != "Bash,Read" {
		t.Errorf("ToolNames = %s", got)
	}
}

func TestDelayAndConcurrency(t *testing.T) {
	srv := start(t, modelserver.Script{Name: "slow", Steps: []modelserver.Step{{Text: "late", Delay: 50 * time.Millisecond}}})
	const n = 8
	var wg sync.WaitGroup
	began := time.Now()
	errs := make(chan error, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			data, _ := json.Marshal(conv(true, user("SCENARIO:slow")))
			resp, err := client.Post(srv.URL()+"/v1/messages?beta=true", "application/json", bytes.NewReader(data))
			if err != nil {
				errs <- err
				return
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			if err == nil && !bytes.Contains(b, []byte(`"text":"la"`)) {
				err = fmt.Errorf("unexpected body %s", b)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if took := time.Since(began); took < 50*time.Millisecond || took > 5*time.Second {
		t.Errorf("%d delayed replies took %v", n, took)
	}
	if got := len(srv.Requests()); got != n {
		t.Errorf("%d records, want %d", got, n)
	}
}

func TestStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := modelserver.Start(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := srv.URL()
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("URL %q", url)
	}
	cancel()
	deadline := time.Now().Add(3 * time.Second)
	for {
		resp, err := client.Get(url + "/v1/models")
		if err != nil {
			break
		}
		resp.Body.Close()
		if time.Now().After(deadline) {
			t.Fatal("server still answers after its context was cancelled")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := srv.Close(); err != nil {
		t.Errorf("Close after cancel: %v", err)
	}
	if err := modelserver.New().Close(); err != nil {
		t.Errorf("Close of an unstarted server: %v", err)
	}
}
