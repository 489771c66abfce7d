//go:build e2e

package e2e_test

// A scripted OpenAI Responses API for the real Codex CLI: POST /v1/responses,
// answered with server-sent events in the order codex-rs's SSE reader
// expects (response.created, response.output_item.added and .done for each
// output item, response.completed with usage; see codex-rs/codex-api's
// sse/responses.rs). Codex 0.169.0 calls nothing else with the test's config
// (measured: no /v1/models, no telemetry); any other path gets a 404 JSON
// error and is recorded.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/adapters/claudecode/modelserver"
)

// scenarioMarker selects a script: SCENARIO:<name> in the latest user
// prompt, else in a developer message (the marker prefix the Claude Code
// model server uses too). Within one text the last registered marker wins.
var scenarioMarker = regexp.MustCompile(`SCENARIO:([A-Za-z0-9_-]+)`)

// script is a scripted conversation: the reply to a request is Steps[step],
// step being the number of model replies already given after the latest user
// prompt (see turnStep). Past the last step the reply is a final text.
type script struct {
	Name  string
	Steps []step
}

// step is one model reply: an optional text message, then tool calls.
type step struct {
	Text  string
	Calls []call
}

// call is a tool call: Shell runs a command through Codex's exec_command
// function tool, Patch is a patch for its apply_patch freeform tool (the
// custom tool Codex offers for gpt-5.5).
type call struct {
	Shell string
	Patch string
}

// responsesRequest is the part of a POST /v1/responses body the tests read.
type responsesRequest struct {
	Model  string `json:"model"`
	Stream bool   `json:"stream"`
	Input  []item `json:"input"`
	Tools  []struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"tools"`
}

// item is one input item: a message (developer, user, assistant), a tool
// call or a tool call's output.
type item struct {
	Type    string `json:"type"`
	Role    string `json:"role,omitempty"`
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content,omitempty"`
	CallID string          `json:"call_id,omitempty"`
	Output json.RawMessage `json:"output,omitempty"`
}

// Text joins the item's text parts.
func (it item) Text() string {
	var b strings.Builder
	for i, c := range it.Content {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(c.Text)
	}
	return b.String()
}

// OutputText is a tool call output's text: Codex sends a string, or a list
// of content items.
func (it item) OutputText() string {
	var s string
	if json.Unmarshal(it.Output, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(it.Output, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.Text)
		}
		return b.String()
	}
	return string(it.Output)
}

// isModelOutput reports whether the item is one the model produced in an
// earlier reply (and Codex sends back as history).
func (it item) isModelOutput() bool {
	switch it.Type {
	case "function_call", "custom_tool_call", "reasoning", "local_shell_call", "web_search_call":
		return true
	case "message":
		return it.Role == "assistant"
	}
	return false
}

// isPrompt reports whether the item is a user prompt, not the environment
// context Codex sends as a user message too.
func (it item) isPrompt() bool {
	if it.Type != "message" || it.Role != "user" {
		return false
	}
	text := strings.TrimSpace(it.Text())
	return text != "" && !strings.HasPrefix(text, "<environment_context>")
}

// promptIndex is the index of the latest user prompt in the input, or -1.
func (r *responsesRequest) promptIndex() int {
	for i := len(r.Input) - 1; i >= 0; i-- {
		if r.Input[i].isPrompt() {
			return i
		}
	}
	return -1
}

// turnStep counts the model's replies after the latest prompt: each reply
// is one run of model output items (text, tool calls) in the history, ended
// by the tool outputs or messages Codex adds after it.
func (r *responsesRequest) turnStep() int {
	steps, inRun := 0, false
	for _, it := range r.Input[r.promptIndex()+1:] {
		switch {
		case it.isModelOutput() && !inRun:
			steps++
			inRun = true
		case !it.isModelOutput():
			inRun = false
		}
	}
	return steps
}

// Messages returns the texts of the messages of a role, in order.
func (r *responsesRequest) Messages(role string) []string {
	var out []string
	for _, it := range r.Input {
		if it.Type == "message" && it.Role == role {
			out = append(out, it.Text())
		}
	}
	return out
}

// ToolNames lists the tools offered to the model.
func (r *responsesRequest) ToolNames() []string {
	var out []string
	for _, t := range r.Tools {
		name := t.Name
		if name == "" {
			name = t.Type
		}
		out = append(out, name)
	}
	return out
}

// CallOutput returns the output of the tool call with this call id.
func (r *responsesRequest) CallOutput(callID string) (item, bool) {
	for _, it := range r.Input {
		if (it.Type == "function_call_output" || it.Type == "custom_tool_call_output") && it.CallID == callID {
			return it, true
		}
	}
	return item{}, false
}

// recorded is one request the server received and what it answered.
type recorded struct {
	Time    time.Time       `json:"time"`
	Method  string          `json:"method"`
	Path    string          `json:"path"`
	Header  http.Header     `json:"header"`
	Body    json.RawMessage `json:"body,omitempty"`
	Status  int             `json:"status"`
	Script  string          `json:"script,omitempty"`
	Step    int             `json:"step"`
	Note    string          `json:"note,omitempty"`
	Replied []outputItem    `json:"replied,omitempty"`

	req *responsesRequest
}

// Text is the request's whole body, as received.
func (r recorded) Text() string { return string(r.Body) }

// outputItem is one item of a reply, as sent in response.output_item.done.
type outputItem struct {
	Type    string       `json:"type"`
	ID      string       `json:"id"`
	Status  string       `json:"status,omitempty"`
	Role    string       `json:"role,omitempty"`
	Content []outputText `json:"content,omitempty"`
	CallID  string       `json:"call_id,omitempty"`
	Name    string       `json:"name,omitempty"`
	Args    string       `json:"arguments,omitempty"`
	Input   string       `json:"input,omitempty"`
}

type outputText struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	Annotations []any  `json:"annotations"`
}

// responsesServer is the scripted API. Safe for concurrent use.
type responsesServer struct {
	mu      sync.Mutex
	scripts map[string]script
	records []recorded
	seq     int

	ln   net.Listener
	http *http.Server
	done chan struct{}
}

// startResponses listens on 127.0.0.1 and serves until t ends; the requests
// go to the test's artifacts as codex-requests.jsonl, and any it could not
// answer (another path, a bad body) fails the test.
func startResponses(t *testing.T) *responsesServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	s := &responsesServer{scripts: map[string]script{}, ln: ln, done: make(chan struct{})}
	s.http = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(s.done)
		if err := s.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("responses server: %v", err)
		}
	}()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.http.Shutdown(ctx); err != nil {
			t.Errorf("close responses server: %v", err)
		}
		<-s.done
		s.save(t)
		for _, r := range s.all() {
			if r.Status != http.StatusOK {
				t.Errorf("the scripted API answered %s %s with %d: %s", r.Method, r.Path, r.Status, r.Note)
			}
		}
	})
	return s
}

// BaseURL is the provider base_url for Codex's config.toml.
func (s *responsesServer) BaseURL() string { return "http://" + s.ln.Addr().String() + "/v1" }

// register adds a script; a script of the same name is replaced.
func (s *responsesServer) register(sc script) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scripts[sc.Name] = sc
}

// requests returns the recorded requests answered by script name.
func (s *responsesServer) requests(name string) []recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []recorded
	for _, r := range s.records {
		if r.Script == name {
			out = append(out, r)
		}
	}
	return out
}

// all returns every recorded request.
func (s *responsesServer) all() []recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]recorded(nil), s.records...)
}

func (s *responsesServer) save(t *testing.T) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for _, r := range s.all() {
		r.Header = r.Header.Clone()
		r.Header.Del("Authorization")
		if err := enc.Encode(r); err != nil {
			t.Logf("artifacts: %v", err)
		}
	}
	modelserver.SaveArtifact(t, "codex-requests.jsonl", b.Bytes())
}

// maxBody bounds a request body; Codex sends some 40 KiB at first.
const maxBody = 32 << 20

func (s *responsesServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := recorded{Time: time.Now(), Method: r.Method, Path: r.URL.RequestURI(), Header: r.Header.Clone()}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err == nil && len(body) > 0 {
		rec.Body = body
		if !json.Valid(body) {
			rec.Body, _ = json.Marshal(string(body))
		}
	}
	switch {
	case err != nil:
		rec.Note = "read body: " + err.Error()
		s.fail(w, rec, http.StatusBadRequest, rec.Note)
		return
	case r.URL.Path != "/v1/responses":
		s.fail(w, rec, http.StatusNotFound, "no such path: "+r.URL.Path)
		return
	case r.Method != http.MethodPost:
		s.fail(w, rec, http.StatusMethodNotAllowed, "want POST")
		return
	case r.Header.Get("Content-Encoding") != "":
		// Codex 0.169.0 sends this provider's requests uncompressed
		// (measured); a compressed body would need decoding here.
		s.fail(w, rec, http.StatusUnsupportedMediaType, "compressed body: "+r.Header.Get("Content-Encoding"))
		return
	}
	var req responsesRequest
	if err := json.Unmarshal(body, &req); err != nil {
		s.fail(w, rec, http.StatusBadRequest, "body: "+err.Error())
		return
	}
	rec.req = &req
	prompt := ""
	if i := req.promptIndex(); i >= 0 {
		prompt = req.Input[i].Text()
	}
	st := step{Text: "ok"}
	s.mu.Lock()
	// A marker in the prompt wins; else one in the developer messages
	// (codex exec -c developer_instructions=…), so that a test can keep the
	// prompt a person's words that hooks read.
	for _, text := range append([]string{prompt}, req.Messages("developer")...) {
		for _, m := range scenarioMarker.FindAllStringSubmatch(text, -1) {
			if _, ok := s.scripts[m[1]]; ok {
				rec.Script = m[1]
			}
		}
		if rec.Script != "" {
			break
		}
	}
	sc, scripted := s.scripts[rec.Script]
	s.mu.Unlock()
	rec.Step = req.turnStep()
	if scripted {
		st = step{Text: fmt.Sprintf("Done: scenario %s finished after %d step(s).", sc.Name, rec.Step)}
		if rec.Step < len(sc.Steps) {
			st = sc.Steps[rec.Step]
		}
	} else {
		rec.Note = "no registered scenario in the prompt: default reply"
	}
	items, err := s.compile(st)
	if err != nil {
		s.fail(w, rec, http.StatusInternalServerError, err.Error())
		return
	}
	rec.Status, rec.Replied = http.StatusOK, items
	s.record(rec)
	s.stream(w, r, items)
}

// compile turns a step into output items with fresh ids.
func (s *responsesServer) compile(st step) ([]outputItem, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := func(prefix string) string {
		s.seq++
		return fmt.Sprintf("%s_e2e_%04d", prefix, s.seq)
	}
	var items []outputItem
	if st.Text != "" {
		items = append(items, outputItem{Type: "message", ID: id("msg"), Status: "completed", Role: "assistant",
			Content: []outputText{{Type: "output_text", Text: st.Text, Annotations: []any{}}}})
	}
	for _, c := range st.Calls {
		switch {
		case c.Shell != "":
			args, err := json.Marshal(map[string]any{"cmd": c.Shell})
			if err != nil {
				return nil, err
			}
			items = append(items, outputItem{Type: "function_call", ID: id("fc"), Status: "completed",
				CallID: id("call"), Name: "exec_command", Args: string(args)})
		case c.Patch != "":
			items = append(items, outputItem{Type: "custom_tool_call", ID: id("ctc"), Status: "completed",
				CallID: id("call"), Name: "apply_patch", Input: c.Patch})
		default:
			return nil, errors.New("a call with neither Shell nor Patch")
		}
	}
	if len(items) == 0 {
		return nil, errors.New("a step with neither text nor calls")
	}
	return items, nil
}

// stream writes the reply as server-sent events.
func (s *responsesServer) stream(w http.ResponseWriter, r *http.Request, items []outputItem) {
	s.mu.Lock()
	s.seq++
	respID := fmt.Sprintf("resp_e2e_%04d", s.seq)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	send := func(event map[string]any) bool {
		data, err := json.Marshal(event)
		if err != nil {
			return false
		}
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event["type"], data); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return r.Context().Err() == nil
	}
	response := map[string]any{"id": respID, "object": "response", "status": "in_progress", "model": "gpt-5.5", "output": []any{}}
	if !send(map[string]any{"type": "response.created", "response": response}) {
		return
	}
	for i, it := range items {
		added := it
		added.Status = "in_progress"
		if !send(map[string]any{"type": "response.output_item.added", "output_index": i, "item": added}) {
			return
		}
		if it.Type == "message" {
			if !send(map[string]any{"type": "response.output_text.delta", "item_id": it.ID, "output_index": i,
				"content_index": 0, "delta": it.Content[0].Text}) {
				return
			}
		}
		if !send(map[string]any{"type": "response.output_item.done", "output_index": i, "item": it}) {
			return
		}
	}
	response["status"] = "completed"
	response["output"] = items
	response["usage"] = map[string]any{"input_tokens": 1000, "input_tokens_details": map[string]any{"cached_tokens": 0},
		"output_tokens": 20, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 1020}
	send(map[string]any{"type": "response.completed", "response": response})
}

func (s *responsesServer) fail(w http.ResponseWriter, rec recorded, status int, msg string) {
	rec.Status, rec.Note = status, msg
	s.record(rec)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"type": "invalid_request_error", "message": msg}})
}

func (s *responsesServer) record(rec recorded) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.records = append(s.records, rec)
}
