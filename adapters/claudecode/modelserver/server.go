// Package modelserver is a scripted Anthropic Messages API for driving the
// real Claude Code CLI offline in end-to-end tests.
//
// It serves POST /v1/messages (Claude Code calls /v1/messages?beta=true),
// streaming server-sent events in the sequence the CLI accepts
// (message_start, content_block_start, content_block_delta, content_block_stop,
// message_delta, message_stop) or, for "stream": false, one JSON message.
// Any other path gets a 404 JSON error. Every request is recorded for
// assertions.
//
// Replies come from registered Scripts, chosen by a marker SCENARIO:<name>.
// For each request the server decides, in this order:
//
//  1. Compaction: the last user message contains CompactionPhrase. The reply
//     is <analysis>…</analysis><summary>…</summary> (see SetSummary).
//  2. A registered marker in the top-level system prompt (SourceSystem), e.g.
//     from claude --append-system-prompt. It wins over markers in messages,
//     so a memory agent's conversation keeps its script even when the events
//     it is fed quote a user's SCENARIO marker. Step = assistant messages
//     after the first user message (the whole conversation).
//  3. A registered marker in the latest real user prompt (SourcePrompt): the
//     last user message that holds no tool_result and has text outside
//     <system-reminder> blocks. Step = assistant messages after that prompt.
//     This is the usual case for claude -p "SCENARIO:x …", and it is
//     stateless and resume-safe: a resumed session replays the earlier
//     conversation, and a new prompt restarts the count.
//  4. A registered marker anywhere in the first user message
//     (SourceFirstMessage). Step = assistant messages after it, so each turn
//     of a multi-turn conversation (claude --input-format stream-json) gets
//     the next step, and a turn without a marker (an async subagent's
//     <task-notification>) does not restart the script.
//  5. Otherwise the default reply (SetDefault; "ok" unless changed).
//
// Within one place the last registered marker wins; markers of unregistered
// names are ignored (Recorded.Note lists them).
package modelserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// maxBody bounds a request body; Claude Code sends a few hundred KiB.
const maxBody = 64 << 20

// Kind says how the server answered a request.
type Kind string

// The kinds of answer.
const (
	KindScript     Kind = "script"      // a registered script
	KindDefault    Kind = "default"     // no registered marker: the default reply
	KindCompaction Kind = "compaction"  // a compaction request
	KindNotFound   Kind = "not-found"   // an unknown path (404)
	KindBadRequest Kind = "bad-request" // wrong method or an unreadable body
)

// Recorded is one request the server received, and what it answered.
type Recorded struct {
	Time   time.Time
	Method string
	// Path is the request URI, query included ("/v1/messages?beta=true").
	Path   string
	Header http.Header
	// Body is the raw request body (not necessarily valid JSON for
	// KindBadRequest).
	Body json.RawMessage
	// Request is the parsed body of a POST /v1/messages; nil otherwise.
	Request *Request

	Kind   Kind
	Script string // the selected script (KindScript)
	Source Source // where its marker was found (KindScript)
	Step   int    // the step index (KindScript)
	Note   string // details: unknown markers, errors

	Reply Reply
}

// Reply is what the server answered.
type Reply struct {
	Status     int
	MessageID  string
	Content    []Block // text and tool_use blocks, tool_use ids filled in
	StopReason string
}

// Text is the request's conversation as plain text (Request.Text): the system
// prompt and every message, tool inputs and results included.
func (r Recorded) Text() string { return r.Request.Text() }

// Contains reports whether the request's system prompt or messages contain s.
func (r Recorded) Contains(s string) bool { return strings.Contains(r.Text(), s) }

// ToolUses returns the tool_use blocks of the reply.
func (r Recorded) ToolUses() []Block {
	var out []Block
	for _, b := range r.Reply.Content {
		if b.Type == "tool_use" {
			out = append(out, b)
		}
	}
	return out
}

// Server is the scripted API. It is an http.Handler; Start also listens.
// All methods are safe for concurrent use.
type Server struct {
	mu       sync.Mutex
	scripts  map[string]Script
	fallback Step
	summary  string
	records  []Recorded

	seq atomic.Int64 // message, tool_use and request ids

	// set by Start
	addr    string
	http    *http.Server
	done    chan struct{}
	stop    func() bool
	closeMu sync.Once
}

// New returns a Server with no scripts, the default reply "ok" and a fixed
// compaction summary. It does not listen; use it as an http.Handler or call
// Start instead.
func New() *Server {
	return &Server{
		scripts:  map[string]Script{},
		fallback: Step{Text: "ok"},
		summary:  "Scripted summary of the conversation.",
	}
}

// Start listens on addr ("127.0.0.1:0" for a free port) and serves until
// Close is called or ctx is done.
func Start(ctx context.Context, addr string) (*Server, error) {
	s := New()
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("modelserver: listen: %w", err)
	}
	s.addr = ln.Addr().String()
	s.http = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	s.done = make(chan struct{})
	go func() {
		defer close(s.done)
		_ = s.http.Serve(ln) // returns http.ErrServerClosed after Close
	}()
	s.stop = context.AfterFunc(ctx, func() { _ = s.Close() })
	return s, nil
}

// URL is the base URL to give the CLI as ANTHROPIC_BASE_URL
// ("http://127.0.0.1:port"); empty when the server was not started.
func (s *Server) URL() string {
	if s.addr == "" {
		return ""
	}
	return "http://" + s.addr
}

// Close stops a started server: it waits up to 2 s for replies in flight, then
// closes their connections. It is a no-op for a server from New.
func (s *Server) Close() error {
	if s.http == nil {
		return nil
	}
	var err error
	s.closeMu.Do(func() {
		s.stop()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err = s.http.Shutdown(ctx); err != nil {
			err = s.http.Close()
		}
		<-s.done
		if err != nil {
			err = fmt.Errorf("modelserver: close: %w", err)
		}
	})
	return err
}

// Register adds scripts, replacing any of the same name. It returns
// ErrBadScript for an invalid name or step.
func (s *Server) Register(scripts ...Script) error {
	for i := range scripts {
		if err := scripts[i].validate(); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sc := range scripts {
		s.scripts[sc.Name] = sc
	}
	return nil
}

// SetDefault sets the reply to requests that select no script.
func (s *Server) SetDefault(st Step) error {
	if _, err := st.compile(nil); err != nil {
		return fmt.Errorf("default reply: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fallback = st
	return nil
}

// SetSummary sets the text inside the <summary> block of compaction replies.
func (s *Server) SetSummary(text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.summary = text
}

// Requests returns a copy of every request recorded so far, oldest first.
func (s *Server) Requests() []Recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Recorded(nil), s.records...)
}

// Contains reports whether the system prompt or messages of any recorded
// request contain substr.
func (s *Server) Contains(substr string) bool {
	for _, r := range s.Requests() {
		if r.Contains(substr) {
			return true
		}
	}
	return false
}

// Reset forgets the recorded requests (scripts stay registered).
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.records = nil
}

func (s *Server) record(r Recorded) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.records = append(s.records, r)
}

func (s *Server) nextID(prefix string) string {
	return fmt.Sprintf("%s%04d", prefix, s.seq.Add(1))
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, readErr := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	rec := Recorded{
		Time:   time.Now(),
		Method: r.Method,
		Path:   r.URL.RequestURI(),
		Header: r.Header.Clone(),
		Body:   body,
	}
	w.Header().Set("request-id", s.nextID("req_fake_"))

	if r.URL.Path != "/v1/messages" {
		rec.Kind = KindNotFound
		s.fail(w, rec, &APIError{Status: http.StatusNotFound, Type: "not_found_error",
			Message: "modelserver: no such path " + r.URL.Path})
		return
	}
	if r.Method != http.MethodPost {
		rec.Kind = KindBadRequest
		w.Header().Set("Allow", http.MethodPost)
		s.fail(w, rec, &APIError{Status: http.StatusMethodNotAllowed, Type: "invalid_request_error",
			Message: "modelserver: " + r.Method + " not allowed on /v1/messages"})
		return
	}
	if readErr != nil {
		rec.Kind = KindBadRequest
		status, typ := http.StatusBadRequest, "invalid_request_error"
		var tooLarge *http.MaxBytesError
		if errors.As(readErr, &tooLarge) {
			status, typ = http.StatusRequestEntityTooLarge, "request_too_large"
		}
		s.fail(w, rec, &APIError{Status: status, Type: typ, Message: "modelserver: read body: " + readErr.Error()})
		return
	}
	req := new(Request)
	if err := json.Unmarshal(body, req); err != nil {
		rec.Kind = KindBadRequest
		s.fail(w, rec, &APIError{Status: http.StatusBadRequest, Type: "invalid_request_error",
			Message: "modelserver: invalid JSON body: " + err.Error()})
		return
	}
	rec.Request = req

	st := s.route(req, &rec)
	rp, err := st.compile(func() string { return s.nextID("toolu_fake_") })
	if err != nil {
		rec.Note = strings.TrimSpace(rec.Note + " " + err.Error())
		s.fail(w, rec, &APIError{Status: http.StatusInternalServerError, Type: "api_error",
			Message: "modelserver: " + err.Error()})
		return
	}
	if rp.delay > 0 {
		t := time.NewTimer(rp.delay)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
		}
	}
	if rp.err != nil {
		s.fail(w, rec, rp.err)
		return
	}
	model := req.Model
	if model == "" {
		model = "claude-fake-1"
	}
	msg := message{ID: s.nextID("msg_fake_"), Model: model, reply: rp}
	rec.Reply = Reply{Status: http.StatusOK, MessageID: msg.ID, Content: rp.content, StopReason: rp.stop}
	s.record(rec)
	if req.Stream {
		writeStream(w, msg)
		return
	}
	writeJSON(w, http.StatusOK, msg.final())
}

// route picks the step for a parsed request and fills in rec's routing fields.
func (s *Server) route(req *Request, rec *Recorded) Step {
	s.mu.Lock()
	scripts, fallback, summary := maps.Clone(s.scripts), s.fallback, s.summary
	s.mu.Unlock()
	known := func(name string) bool { _, ok := scripts[name]; return ok }

	if strings.Contains(req.lastUserText(), CompactionPhrase) {
		rec.Kind = KindCompaction
		return compactionReply(summary)
	}

	prompt, promptText := req.latestPrompt(), ""
	if prompt >= 0 {
		promptText = stripReminders(req.Messages[prompt].Content.promptText())
	}
	first := req.firstUser()
	turn := Turn{Prompt: strings.TrimSpace(promptText), Request: req}

	systemText := req.System.Text()
	if name := lastMarker(systemText, known); name != "" {
		turn.Script, turn.Source, turn.Step = name, SourceSystem, req.assistantsAfter(first)
	} else if name := lastMarker(promptText, known); name != "" {
		turn.Script, turn.Source, turn.Step = name, SourcePrompt, req.assistantsAfter(prompt)
	} else if first >= 0 {
		if name := lastMarker(req.Messages[first].Content.Text(), known); name != "" {
			turn.Script, turn.Source, turn.Step = name, SourceFirstMessage, req.assistantsAfter(first)
		}
	}
	if turn.Script == "" {
		unknown := append(unknownMarkers(systemText, known), unknownMarkers(promptText, known)...)
		rec.Kind = KindDefault
		if len(unknown) > 0 {
			rec.Note = "unregistered markers: " + strings.Join(unknown, ", ")
		}
		return fallback
	}

	sc := scripts[turn.Script]
	rec.Kind, rec.Script, rec.Source, rec.Step = KindScript, turn.Script, turn.Source, turn.Step
	return sc.step(turn)
}

// fail records rec with an error reply and writes the error.
func (s *Server) fail(w http.ResponseWriter, rec Recorded, e *APIError) {
	typ := e.Type
	if typ == "" {
		typ = "api_error"
	}
	rec.Reply = Reply{Status: e.Status}
	if rec.Note == "" {
		rec.Note = e.Message
	}
	s.record(rec)
	writeJSON(w, e.Status, map[string]any{
		"type":  "error",
		"error": map[string]any{"type": typ, "message": e.Message},
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "modelserver: encode reply", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", fmt.Sprint(len(data)))
	w.WriteHeader(status)
	_, _ = w.Write(data)
}

// WriteRequests writes every recorded request to w as one JSON line each
// (time, method, path, kind, script, source, step, note, reply, body; a
// body that is not JSON is written as a string): the artifact tests keep
// to read a failed run.
func (s *Server) WriteRequests(w io.Writer) error {
	enc := json.NewEncoder(w)
	for _, r := range s.Requests() {
		body := json.RawMessage(r.Body)
		if !json.Valid(body) {
			body, _ = json.Marshal(string(r.Body))
		}
		err := enc.Encode(map[string]any{
			"time": r.Time, "method": r.Method, "path": r.Path, "kind": r.Kind, "script": r.Script,
			"source": r.Source, "step": r.Step, "note": r.Note, "reply": r.Reply, "body": body,
		})
		if err != nil {
			return err
		}
	}
	return nil
}
