package observer_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/observer"
)

// chatServer is a scripted OpenAI-compatible endpoint on 127.0.0.1.
type chatServer struct {
	*httptest.Server
	mu     sync.Mutex
	reqs   []chatReq
	status int                               // the HTTP status of answers; 200 when 0
	tokens int                               // total_tokens reported per answer; none when 0
	answer func(n int, prompt string) string // the reply to request n (from 0)
}

type chatReq struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
}

func (r chatReq) last() string { return r.Messages[len(r.Messages)-1].Content }

func newChatServer(t *testing.T) *chatServer {
	t.Helper()
	cs := &chatServer{answer: modelAnswer}
	cs.Server = httptest.NewServer(http.HandlerFunc(cs.serve))
	t.Cleanup(cs.Close)
	return cs
}

func (cs *chatServer) serve(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/v1/models":
		fmt.Fprint(w, `{"object":"list","data":[{"id":"qwen2.5-coder:latest","object":"model"},{"id":"llama3.2:3b","object":"model"}]}`)
		return
	case r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions":
		http.NotFound(w, r)
		return
	}
	var req chatReq
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) == 0 {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	cs.mu.Lock()
	n := len(cs.reqs)
	cs.reqs = append(cs.reqs, req)
	status, tokens, answer := cs.status, cs.tokens, cs.answer
	cs.mu.Unlock()
	if status != 0 && status != http.StatusOK {
		http.Error(w, `{"error":{"message":"model is loading"}}`, status)
		return
	}
	resp := map[string]any{
		"id": fmt.Sprintf("chatcmpl-%d", n), "object": "chat.completion", "model": req.Model,
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": answer(n, req.last())}}},
	}
	if tokens > 0 {
		resp["usage"] = map[string]int{"prompt_tokens": tokens - 20, "completion_tokens": 20, "total_tokens": tokens}
	}
	_ = json.NewEncoder(w).Encode(resp)
}

func (cs *chatServer) requests() []chatReq {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return slices.Clone(cs.reqs)
}

func (cs *chatServer) set(f func(cs *chatServer)) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	f(cs)
}

func between(s, from, to string) string {
	_, after, ok := strings.Cut(s, from)
	if !ok {
		return ""
	}
	before, _, _ := strings.Cut(after, to)
	return before
}

// modelAnswer is what the scripted model writes: a note naming the tool and
// the request number, or a summary.
func modelAnswer(n int, prompt string) string {
	if strings.Contains(prompt, "PROGRESS SUMMARY") {
		return fmt.Sprintf("<summary><request>%s</request><investigated>the tool calls</investigated>"+
			"<completed>model summary %d</completed><next_steps>none</next_steps></summary>", between(prompt, "<user_request>", "</user_request>"), n)
	}
	tool := between(prompt, "<what_happened>", "</what_happened>")
	return fmt.Sprintf("<observation><type>discovery</type><title>Model note %d on %s</title>"+
		"<narrative>What the %s call showed.</narrative><concepts><concept>how-it-works</concept></concepts></observation>", n, tool, tool)
}

const cwd = "/src/billing-api"

var (
	readInput  = map[string]any{"file_path": cwd + "/billing/rounding.go"}
	readOutput = map[string]any{"type": "text", "file": map[string]any{"filePath": cwd + "/billing/rounding.go", "content": "package billing\n", "numLines": 1, "totalLines": 1}}
	editInput  = map[string]any{"file_path": cwd + "/billing/rounding.go", "old_string": "math.Round(v * 100)", "new_string": "math.RoundToEven(v * 100)"}
	editOutput = map[string]any{"filePath": cwd + "/billing/rounding.go"}
)

func newOpenAI(t *testing.T, cs *chatServer, o observer.Options) *observer.OpenAICompatible {
	t.Helper()
	o.BaseURL, o.Model = cs.URL, "qwen2.5-coder"
	a, err := observer.NewOpenAICompatible(o)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestOpenAICompatibleSessions runs the agent under the memory's worker:
// one conversation per memory session, kept across a daemon restart, a
// fresh one after the restart (forceInit) and a resume of a completed
// session from the kept conversation.
func TestOpenAICompatibleSessions(t *testing.T) {
	base := isolate(t)
	cs := newChatServer(t)
	state, agents, db := filepath.Join(base, "state"), filepath.Join(base, "agents"), filepath.Join(base, "db")
	m := openMemory(t, db, agents, newOpenAI(t, cs, observer.Options{StateDir: state, AgentsDir: agents}))
	s := &session{t: t, m: m, csid: "cc-openai", cwd: cwd}

	s.prompt("Invoice totals are off by a cent. Fix it.")
	s.tool("Read", readInput, readOutput)
	s.tool("Edit", editInput, editOutput)
	s.stop("Switched roundCents to math.RoundToEven.")
	m.waitIdle(t, 10*time.Second)

	reqs := cs.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3 (two tools, one stop)", len(reqs))
	}
	for i, r := range reqs {
		// system + the earlier exchanges + this event
		if want := 1 + 2*i + 1; len(r.Messages) != want || r.Messages[0].Role != "system" || r.Model != "qwen2.5-coder" {
			t.Errorf("request %d: %d messages (first %s), model %s; want %d after the system prompt", i, len(r.Messages), r.Messages[0].Role, r.Model, want)
		}
	}
	first := s.state()
	obs := s.observations()
	if got, want := titles(obs), []string{"Model note 0 on Read", "Model note 1 on Edit"}; !slices.Equal(got, want) {
		t.Fatalf("observations %q, want %q", got, want)
	}
	for _, o := range obs {
		if o.MemorySessionID != first.MemorySessionID || o.Request != "Invoice totals are off by a cent. Fix it." {
			t.Errorf("observation %q: memory session %q, request %q", o.Title, o.MemorySessionID, o.Request)
		}
	}
	if got := obs[1].FilesModified; !slices.Equal(got, []string{"billing/rounding.go"}) {
		t.Errorf("the edit's files_modified %q: want the file its input names, relative", got)
	}
	sums := s.summaries()
	if len(sums) != 1 || sums[0].Completed != "model summary 2" || !slices.Equal(sums[0].FilesModified, []string{"billing/rounding.go"}) {
		t.Fatalf("summaries %+v", sums)
	}
	if n := len(first.Turns); n != 1 || first.Turns[0].AssistantUUID == "" {
		t.Errorf("turn anchors %+v: want one with the last assistant message's id", first.Turns)
	}
	if log := readLog(t, agents, first.MemorySessionID); strings.Count(log, " request POST ") != 3 || strings.Count(log, " response 200 ") != 3 {
		t.Errorf("stream.log:\n%s", log)
	}

	// A restart: the live session gets forceInit, its next run is fresh.
	m.close()
	m = openMemory(t, db, agents, newOpenAI(t, cs, observer.Options{StateDir: state, AgentsDir: agents}))
	s.m = m
	s.prompt("Also retry the webhook on 503.")
	s.tool("Read", map[string]any{"file_path": cwd + "/payments/webhook.go"}, map[string]any{"type": "text"})
	m.waitIdle(t, 10*time.Second)
	reqs = cs.requests()
	if n := len(reqs[3].Messages); n != 2 {
		t.Errorf("after a restart the run sent %d messages; want a fresh conversation (system + event)", n)
	}
	second := s.state()
	if second.MemorySessionID == first.MemorySessionID || len(second.MemorySessions) != 2 || second.ForceInit {
		t.Fatalf("after the restart: memory session %q of %q, forceInit %t", second.MemorySessionID, second.MemorySessions, second.ForceInit)
	}

	// A completed session keeps its memory session over a restart; its
	// next prompt resumes the conversation kept on disk.
	s.end()
	m.close()
	m = openMemory(t, db, agents, newOpenAI(t, cs, observer.Options{StateDir: state, AgentsDir: agents}))
	s.m = m
	s.prompt("One more thing: log the retries.")
	s.tool("Read", map[string]any{"file_path": cwd + "/payments/backoff.go"}, map[string]any{"type": "text"})
	m.waitIdle(t, 10*time.Second)
	reqs = cs.requests()
	last := reqs[len(reqs)-1]
	if len(last.Messages) != 4 || !strings.Contains(last.Messages[1].Content, "payments/webhook.go") {
		t.Fatalf("the resumed run sent %d messages; want the kept conversation of %s (system, its exchange, this event)", len(last.Messages), second.MemorySessionID)
	}
	if got := s.state().MemorySessionID; got != second.MemorySessionID {
		t.Fatalf("resumed under %q, want %q", got, second.MemorySessionID)
	}
}

// TestOpenAICompatibleRefusedResume: a resume id the agent holds no
// conversation for is refused, and the worker starts a fresh memory
// session (rule 6).
func TestOpenAICompatibleRefusedResume(t *testing.T) {
	base := isolate(t)
	cs := newChatServer(t)
	m := openMemory(t, filepath.Join(base, "db"), "", newOpenAI(t, cs, observer.Options{StateDir: filepath.Join(base, "state")}))
	s := &session{t: t, m: m, csid: "cc-refused", cwd: cwd}
	s.prompt("Fix rounding.")
	const unknown = "0b9e1f8c-0000-4000-8000-000000000000"
	if err := m.ResumeWith(context.Background(), s.csid, unknown); err != nil {
		t.Fatal(err)
	}
	s.tool("Read", readInput, readOutput)
	m.waitIdle(t, 10*time.Second)
	st := s.state()
	if st.MemorySessionID == "" || st.MemorySessionID == unknown || st.ResumeOverride != "" {
		t.Fatalf("session after a refused resume: %+v", st)
	}
	obs := s.observations()
	if len(obs) != 1 || obs[0].MemorySessionID != st.MemorySessionID || obs[0].Title != "Model note 0 on Read" {
		t.Fatalf("observations %+v", obs)
	}
	if n := len(cs.requests()); n != 1 {
		t.Fatalf("%d requests; the refused resume should not reach the endpoint", n)
	}
}

// TestOpenAICompatibleEndpointDown: an endpoint that does not answer or
// answers with an error hands the run to the local agent, says so in the
// status, and is not asked again during the cooldown.
func TestOpenAICompatibleEndpointDown(t *testing.T) {
	t.Run("not answering", func(t *testing.T) {
		base := isolate(t)
		cs := newChatServer(t)
		a := newOpenAI(t, cs, observer.Options{})
		cs.Close()
		m := openMemory(t, filepath.Join(base, "db"), "", a)
		s := &session{t: t, m: m, csid: "cc-down", cwd: cwd}
		s.prompt("Fix rounding.")
		s.tool("Read", readInput, readOutput)
		m.waitIdle(t, 10*time.Second)
		obs := s.observations()
		if len(obs) != 1 || obs[0].Title != "Read billing/rounding.go" {
			t.Fatalf("observations %q: want the local agent's", titles(obs))
		}
		if st := a.AgentStatus(); !strings.Contains(st, "endpoint "+cs.URL+" not answering") {
			t.Fatalf("status %q", st)
		}
		status, err := m.Status(context.Background())
		if err != nil || !strings.Contains(status.Agent, "openai-compatible (endpoint ") {
			t.Fatalf("mnemo/status agent %q (%v)", status.Agent, err)
		}
	})

	t.Run("answering with errors, then back", func(t *testing.T) {
		isolate(t)
		cs := newChatServer(t)
		cs.set(func(cs *chatServer) { cs.status = http.StatusServiceUnavailable })
		clk := &clock{time.Date(2026, 11, 22, 9, 0, 0, 0, time.Local)}
		a := newOpenAI(t, cs, observer.Options{Now: clk.now, Cooldown: time.Minute})
		in := memory.AgentInput{NewID: "m-1", Request: "r", Events: []memory.Event{{Kind: memory.EventTool, ToolName: "Read", ToolInput: json.RawMessage(`{}`)}}}
		run := func() error { _, err := a.Run(context.Background(), in); return err }

		if err := run(); !errors.Is(err, memory.ErrFallback) || !errors.Is(err, observer.ErrUnavailable) {
			t.Fatalf("run against a 503: %v", err)
		}
		if st := a.AgentStatus(); !strings.Contains(st, "answered 503 Service Unavailable") {
			t.Fatalf("status %q", st)
		}
		clk.advance(30 * time.Second)
		if err := run(); !errors.Is(err, memory.ErrFallback) || len(cs.requests()) != 1 {
			t.Fatalf("during the cooldown: %v after %d requests; want a fallback without a request", err, len(cs.requests()))
		}
		clk.advance(time.Minute)
		cs.set(func(cs *chatServer) { cs.status = 0 })
		if err := run(); err != nil {
			t.Fatalf("after the cooldown, endpoint back: %v", err)
		}
		if st := a.AgentStatus(); st != "" || len(cs.requests()) != 2 {
			t.Fatalf("status %q after %d requests", st, len(cs.requests()))
		}
	})
}

// TestOpenAICompatibleBudget: the usage the endpoint reports counts
// against the day's budget; past it the local agent takes over, the
// status says so, and a restart does not reset it.
func TestOpenAICompatibleBudget(t *testing.T) {
	base := isolate(t)
	cs := newChatServer(t)
	cs.set(func(cs *chatServer) { cs.tokens = 1000 })
	state := filepath.Join(base, "state")
	opts := observer.Options{StateDir: state, Budget: observer.Budget{PerDay: 2500}}
	a := newOpenAI(t, cs, opts)
	m := openMemory(t, filepath.Join(base, "db"), "", a)
	s := &session{t: t, m: m, csid: "cc-budget", cwd: cwd}
	s.prompt("Fix rounding.")
	for i := range 5 {
		s.tool("Bash", map[string]any{"command": fmt.Sprintf("go test ./billing/ -run T%d", i)}, map[string]any{"stdout": "ok", "stderr": ""})
	}
	m.waitIdle(t, 10*time.Second)
	if n := len(cs.requests()); n != 3 {
		t.Fatalf("%d requests; want 3 (1000 tokens each against 2500)", n)
	}
	got := titles(s.observations())
	if !byModel(got, 3) || len(got) != 5 {
		t.Fatalf("observations %q: want 3 by the model, then 2 by the local agent", got)
	}
	const status = "budget spent: 3000 of 2500 tokens today"
	if st := a.AgentStatus(); st != status {
		t.Fatalf("status %q, want %q", st, status)
	}
	if today, sess := a.Spent("cc-budget"); today != 3000 || sess != 3000 {
		t.Fatalf("spent %d today, %d in the session", today, sess)
	}
	if st := newOpenAI(t, cs, opts).AgentStatus(); st != status {
		t.Fatalf("after a restart the status is %q, want %q", st, status)
	}

	t.Run("per session", func(t *testing.T) {
		a := newOpenAI(t, cs, observer.Options{Budget: observer.Budget{PerSession: 1000}})
		in := func(csid string) memory.AgentInput {
			return memory.AgentInput{Session: memory.Session{ContentSessionID: csid}, NewID: "m-" + csid,
				Events: []memory.Event{{Kind: memory.EventTool, ToolName: "Read", ToolInput: json.RawMessage(`{}`)}}}
		}
		if _, err := a.Run(context.Background(), in("one")); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Run(context.Background(), in("one")); !errors.Is(err, observer.ErrBudgetSpent) || !errors.Is(err, memory.ErrFallback) {
			t.Fatalf("second run of a spent session: %v", err)
		}
		if st := a.AgentStatus(); st != "budget spent: 1000 of 1000 tokens in session one" {
			t.Fatalf("status %q", st)
		}
		if _, err := a.Run(context.Background(), in("two")); err != nil {
			t.Fatalf("another session: %v", err)
		}
		if st := a.AgentStatus(); st != "" {
			t.Fatalf("status %q after a run that worked", st)
		}
	})
}

// localSummary stands for "a summary by the local agent" in tests.
const localSummary = "(local)"

// TestOpenAICompatibleReplies covers what the agent makes of the model's
// words, one run each.
func TestOpenAICompatibleReplies(t *testing.T) {
	tool := memory.Event{Kind: memory.EventTool, ToolName: "Edit", Cwd: cwd, ToolInput: mustJSON(t, editInput), ToolResponse: mustJSON(t, editOutput)}
	stop := memory.Event{Kind: memory.EventStop, LastAssistantMessage: "Done."}
	obs := `<observation><type>bugfix</type><title>Fixed rounding</title><files_modified><file>` + cwd + `/billing/rounding.go</file></files_modified></observation>`
	tests := []struct {
		name    string
		ev      memory.Event
		turn    []memory.Observation
		reply   string
		titles  []string
		summary string // Completed of the summary; "" for none
	}{
		{name: "a repeat within the run is dropped", ev: tool, reply: obs + "\n" + obs, titles: []string{"Fixed rounding"}},
		{name: "a repeat of the turn's stored note is dropped", ev: tool, reply: obs,
			turn: []memory.Observation{{Type: "bugfix", Title: "Fixed rounding", FilesModified: []string{"billing/rounding.go"}}}},
		{name: "a tool event takes no summary", ev: tool, reply: obs + "<summary><completed>x</completed></summary>", titles: []string{"Fixed rounding"}},
		{name: "reasoning is not parsed", ev: tool, reply: "<think>maybe <observation><title>draft</title></observation></think>" + obs, titles: []string{"Fixed rounding"}},
		{name: "an empty reply skips a routine call", ev: tool, reply: ""},
		{name: "<skip/> skips a routine call", ev: tool, reply: "<skip/>"},
		{name: "a stop event takes the summary only", ev: stop, reply: obs + "<summary><completed>all done</completed></summary>", summary: "all done"},
		{name: "skip_summary stores none", ev: stop, reply: `<skip_summary reason="nothing happened"/>`},
		{name: "an unusable summary falls back to the local one", ev: stop, reply: "I could not summarize.", summary: localSummary},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			isolate(t)
			cs := newChatServer(t)
			cs.set(func(cs *chatServer) { cs.answer = func(int, string) string { return tt.reply } })
			a := newOpenAI(t, cs, observer.Options{})
			out, err := a.Run(context.Background(), memory.AgentInput{NewID: "m-1", Request: "Fix rounding", Events: []memory.Event{tt.ev}, Turn: tt.turn})
			if err != nil {
				t.Fatal(err)
			}
			if got := titles(out.Observations); !slices.Equal(got, tt.titles) {
				t.Errorf("observations %q, want %q", got, tt.titles)
			}
			for _, o := range out.Observations {
				if !slices.Equal(o.FilesModified, []string{"billing/rounding.go"}) || o.Tool != "Edit" || o.Request != "Fix rounding" {
					t.Errorf("observation %+v: want the file relative, the tool and the request filled in", o)
				}
			}
			switch {
			case tt.summary == "" && out.Summary != nil:
				t.Errorf("summary %+v, want none", out.Summary)
			case tt.summary == localSummary && (out.Summary == nil || out.Summary.Request != "Fix rounding" || strings.Contains(out.Summary.Completed, "model summary")):
				t.Errorf("summary %+v, want the local agent's", out.Summary)
			case tt.summary != "" && tt.summary != localSummary && (out.Summary == nil || out.Summary.Completed != tt.summary || out.Summary.Request != "Fix rounding"):
				t.Errorf("summary %+v, want completed %q", out.Summary, tt.summary)
			}
			if out.MemorySessionID != "m-1" || out.AssistantUUID == "" {
				t.Errorf("memory session %q, assistant uuid %q", out.MemorySessionID, out.AssistantUUID)
			}
		})
	}
}

// TestOpenAICompatibleHistoryBounded: a long memory session sends a
// bounded conversation.
func TestOpenAICompatibleHistoryBounded(t *testing.T) {
	base := isolate(t)
	cs := newChatServer(t)
	a := newOpenAI(t, cs, observer.Options{StateDir: filepath.Join(base, "state")})
	ev := memory.Event{Kind: memory.EventTool, ToolName: "Bash", ToolInput: json.RawMessage(`{"command":"make"}`),
		ToolResponse: mustJSON(t, map[string]string{"stdout": strings.Repeat("compiling\n", 1500)})}
	for i := range 40 {
		in := memory.AgentInput{ResumeID: "m-long", Events: []memory.Event{ev}}
		if i == 0 {
			in = memory.AgentInput{NewID: "m-long", Events: []memory.Event{ev}}
		}
		if _, err := a.Run(context.Background(), in); err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
	}
	for i, r := range cs.requests() {
		size := 0
		for _, m := range r.Messages[1:] {
			size += len(m.Content)
		}
		if len(r.Messages) > 1+24+1 || size > 48000+observer.MaxFieldChars+4000 {
			t.Fatalf("request %d: %d messages, %d characters", i, len(r.Messages), size)
		}
	}
}

func TestCheckOpenAI(t *testing.T) {
	cs := newChatServer(t)
	down := newChatServer(t)
	down.Close()
	tests := []struct {
		name    string
		base    string
		model   string
		wantErr string
	}{
		{name: "model served, :latest implied", base: cs.URL, model: "qwen2.5-coder"},
		{name: "model served, exact", base: cs.URL + "/v1/", model: "llama3.2:3b"},
		{name: "model not served", base: cs.URL, model: "mistral", wantErr: `model "mistral" is not served`},
		{name: "no model", base: cs.URL, wantErr: "needs a model; the endpoint serves qwen2.5-coder:latest, llama3.2:3b"},
		{name: "endpoint down", base: down.URL, model: "x", wantErr: "not answering"},
		{name: "not an endpoint", base: cs.URL + "/elsewhere", model: "x", wantErr: "404"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := observer.Check(context.Background(), observer.KindOpenAI, observer.Options{BaseURL: tt.base, Model: tt.model})
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("check: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("check: %v, want an error with %q", err, tt.wantErr)
			}
		})
	}
	if err := observer.Check(context.Background(), "gpt-in-the-sky", observer.Options{}); !errors.Is(err, observer.ErrConfig) {
		t.Fatalf("unknown kind: %v", err)
	}
	if err := observer.Check(context.Background(), observer.KindLocal, observer.Options{}); err != nil {
		t.Fatalf("local: %v", err)
	}
}

// byModel reports whether the first n titles, and only those, are the
// scripted model's.
func byModel(titles []string, n int) bool {
	for i, t := range titles {
		if strings.HasPrefix(t, "Model note ") != (i < n) || t == "" {
			return false
		}
	}
	return true
}

func mustJSON(t testing.TB, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestNew(t *testing.T) {
	tests := []struct {
		kind string
		o    observer.Options
		name string
		err  error
	}{
		{kind: "", name: "local"},
		{kind: observer.KindLocal, name: "local"},
		{kind: observer.KindClaude, o: observer.Options{WorkDir: t.TempDir()}, name: "claude"},
		{kind: observer.KindClaude, err: observer.ErrConfig},
		{kind: observer.KindOpenAI, o: observer.Options{BaseURL: "http://127.0.0.1:11434", Model: "qwen2.5-coder"}, name: "openai-compatible"},
		{kind: observer.KindOpenAI, o: observer.Options{BaseURL: "http://127.0.0.1:11434"}, err: observer.ErrConfig},
		{kind: "gpt-in-the-sky", err: observer.ErrConfig},
	}
	for _, tt := range tests {
		t.Run(tt.kind+"/"+tt.name, func(t *testing.T) {
			a, err := observer.New(tt.kind, tt.o)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("New: %v, want %v", err, tt.err)
				}
				return
			}
			if err != nil || a.Name() != tt.name {
				t.Fatalf("New: %v, %v; want the %s agent", a, err, tt.name)
			}
			if _, ok := a.(memory.AgentReporter); ok != (tt.name != "local") {
				t.Errorf("%s agent: AgentReporter %t", tt.name, ok)
			}
		})
	}
}
