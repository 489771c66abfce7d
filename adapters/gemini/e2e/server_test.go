//go:build e2e

package e2e_test

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
)

// apiServer is a scripted Gemini API (generativelanguage v1beta) on
// 127.0.0.1, for the real Gemini CLI with GOOGLE_GEMINI_BASE_URL pointing at it.
//
// What Gemini CLI 0.61.0 calls, measured with the CLI's default model "auto":
//
//   - POST /v1beta/models/<flash-lite>:generateContent with a
//     responseJsonSchema asking for complexity_reasoning and
//     complexity_score: the model router's classifier, once per prompt. It
//     gets {"complexity_reasoning": …, "complexity_score": 10}, so the
//     router picks the flash model.
//   - POST /v1beta/models/<model>:streamGenerateContent?alt=sse: every turn
//     of the agent, answered from a script.
//
// Nothing else (no countTokens, no next-speaker check, no loadCodeAssist with
// an API key); any other request gets a 404 in Google's error shape and is
// recorded as kindNotFound, so that a test can see it.
//
// A script is chosen by its marker, markerPrefix+name, in the text of a
// user content outside the <hook_context> elements hooks add; the reply is script.Steps[n], n being the number of model
// contents after the user content holding the marker. Past the last step
// the reply is a text saying so.
type apiServer struct {
	url string
	srv *http.Server
	ln  net.Listener

	mu      sync.Mutex
	scripts map[string]apiScript
	reqs    []apiRequest
}

// markerPrefix starts a script's marker in a prompt: [[gemini-e2e:<name>]].
const markerPrefix = "[[gemini-e2e:"

var (
	markerRE = regexp.MustCompile(`\[\[gemini-e2e:([A-Za-z0-9_-]+)\]\]`)
	// hookContextRE matches what the CLI adds to a prompt from hooks.
	hookContextRE = regexp.MustCompile(`(?s)<hook_context>.*?</hook_context>`)
)

// marker returns the marker that selects the script called name.
func marker(name string) string { return markerPrefix + name + "]]" }

// apiScript is one scripted conversation.
type apiScript struct {
	Name  string
	Steps []apiStep
}

// apiStep is one model turn: text, then function calls.
type apiStep struct {
	Text  string
	Calls []apiCall
}

// apiCall is a functionCall part.
type apiCall struct {
	Name string
	Args map[string]any
}

// The kinds of answer a request got.
const (
	kindScript     = "script"     // a registered script's step
	kindClassifier = "classifier" // the model router's complexity classifier
	kindUnscripted = "unscripted" // a turn with no registered marker: an error
	kindNotFound   = "not-found"  // a path or request the server does not serve
)

// apiRequest is one request received, and how it was answered.
type apiRequest struct {
	Seq    int             `json:"seq"`
	Time   time.Time       `json:"time"`
	Method string          `json:"method"`
	Path   string          `json:"path"`
	Model  string          `json:"model,omitempty"`
	Kind   string          `json:"kind"`
	Script string          `json:"script,omitempty"`
	Step   int             `json:"step"`
	Body   json.RawMessage `json:"body,omitempty"`

	parsed *genRequest
}

// The request and response shapes of generateContent, as far as the tests
// read them.
type (
	genRequest struct {
		Contents          []genContent `json:"contents"`
		SystemInstruction *genContent  `json:"systemInstruction,omitempty"`
		Tools             []struct {
			FunctionDeclarations []struct {
				Name string `json:"name"`
			} `json:"functionDeclarations"`
		} `json:"tools,omitempty"`
		GenerationConfig struct {
			ResponseJSONSchema *struct {
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"responseJsonSchema,omitempty"`
		} `json:"generationConfig"`
	}
	genContent struct {
		Role  string    `json:"role,omitempty"`
		Parts []genPart `json:"parts"`
	}
	genPart struct {
		Text             string       `json:"text,omitempty"`
		FunctionCall     *genCall     `json:"functionCall,omitempty"`
		FunctionResponse *genResponse `json:"functionResponse,omitempty"`
	}
	genCall struct {
		ID   string         `json:"id,omitempty"`
		Name string         `json:"name"`
		Args map[string]any `json:"args"`
	}
	genResponse struct {
		ID       string         `json:"id,omitempty"`
		Name     string         `json:"name"`
		Response map[string]any `json:"response"`
	}
)

// startAPIServer listens on a free port of 127.0.0.1 until ctx ends or Close.
func startAPIServer(ctx context.Context) (*apiServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &apiServer{ln: ln, url: "http://" + ln.Addr().String(), scripts: map[string]apiScript{}}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, BaseContext: func(net.Listener) context.Context { return ctx }}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// Close stops the server and waits for its handlers.
func (s *apiServer) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// register adds a script (replacing one of the same name).
func (s *apiServer) register(sc apiScript) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scripts[sc.Name] = sc
}

// requests returns a copy of what the server received, in order.
func (s *apiServer) requests() []apiRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]apiRequest(nil), s.reqs...)
}

// scripted returns the requests answered from the script name, in order.
func (s *apiServer) scripted(name string) []apiRequest {
	var out []apiRequest
	for _, r := range s.requests() {
		if r.Kind == kindScript && r.Script == name {
			out = append(out, r)
		}
	}
	return out
}

// jsonl writes the recorded requests one JSON object a line.
func (s *apiServer) jsonl() []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for _, r := range s.requests() {
		_ = enc.Encode(r)
	}
	return b.Bytes()
}

// modelPath matches /v1beta/models/<model>:<action>.
var modelPath = regexp.MustCompile(`^/v1(?:beta|alpha)?/models/([^/:]+):([A-Za-z]+)$`)

func (s *apiServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	rec := apiRequest{Time: time.Now(), Method: r.Method, Path: r.URL.RequestURI(), Body: json.RawMessage(body), Kind: kindNotFound}
	if len(body) == 0 || !json.Valid(body) {
		rec.Body = nil
	}
	defer func() {
		s.mu.Lock()
		rec.Seq = len(s.reqs) + 1
		s.reqs = append(s.reqs, rec)
		s.mu.Unlock()
	}()
	m := modelPath.FindStringSubmatch(r.URL.Path)
	if err != nil || r.Method != http.MethodPost || m == nil {
		writeAPIError(w, http.StatusNotFound, "not served by the scripted Gemini API: "+r.Method+" "+r.URL.Path)
		return
	}
	rec.Model = m[1]
	var req genRequest
	if err := json.Unmarshal(body, &req); err != nil {
		writeAPIError(w, http.StatusBadRequest, "unreadable request: "+err.Error())
		return
	}
	rec.parsed = &req
	switch action := m[2]; {
	case action == "generateContent" && req.isClassifier():
		rec.Kind = kindClassifier
		writeJSON(w, genResponseBody(apiStep{Text: `{"complexity_reasoning": "scripted test turn", "complexity_score": 10}`}))
	case action == "streamGenerateContent" || action == "generateContent":
		name, step, ok := s.pick(&req)
		if !ok {
			rec.Kind = kindUnscripted
			writeAPIError(w, http.StatusBadRequest, "no registered script marker in the request")
			return
		}
		rec.Kind, rec.Script, rec.Step = kindScript, name, step
		reply := s.step(name, step)
		if action == "generateContent" {
			writeJSON(w, genResponseBody(reply))
			return
		}
		writeSSE(w, reply)
	default:
		writeAPIError(w, http.StatusNotFound, "action not served: "+action)
	}
}

// isClassifier: the model router's request, which asks for a JSON object
// with a complexity_score.
func (q *genRequest) isClassifier() bool {
	sch := q.GenerationConfig.ResponseJSONSchema
	if sch == nil {
		return false
	}
	_, ok := sch.Properties["complexity_score"]
	return ok
}

// pick finds the last user content with a registered marker; the step is
// the number of model contents after it.
func (s *apiServer) pick(q *genRequest) (name string, step int, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(q.Contents) - 1; i >= 0; i-- {
		c := q.Contents[i]
		if c.Role == "model" {
			step++
			continue
		}
		for _, p := range c.Parts {
			// A hook's context may quote an earlier prompt, marker and all
			// (Mnemo's does): only the user's own text selects a script.
			text := hookContextRE.ReplaceAllString(p.Text, "")
			for _, mm := range markerRE.FindAllStringSubmatch(text, -1) {
				if _, found := s.scripts[mm[1]]; found {
					return mm[1], step, true
				}
			}
		}
	}
	return "", 0, false
}

func (s *apiServer) step(name string, n int) apiStep {
	s.mu.Lock()
	defer s.mu.Unlock()
	sc := s.scripts[name]
	if n < len(sc.Steps) {
		return sc.Steps[n]
	}
	return apiStep{Text: fmt.Sprintf("Script %s has no step %d.", name, n)}
}

// genResponseBody is one GenerateContentResponse holding the whole step.
func genResponseBody(st apiStep) map[string]any {
	return genChunk(stepParts(st), true)
}

func stepParts(st apiStep) []map[string]any {
	var parts []map[string]any
	if st.Text != "" {
		parts = append(parts, map[string]any{"text": st.Text})
	}
	for _, c := range st.Calls {
		args := c.Args
		if args == nil {
			args = map[string]any{}
		}
		parts = append(parts, map[string]any{"functionCall": map[string]any{"name": c.Name, "args": args}})
	}
	return parts
}

func genChunk(parts []map[string]any, last bool) map[string]any {
	cand := map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "index": 0}
	out := map[string]any{"candidates": []any{cand}, "modelVersion": "scripted"}
	if last {
		cand["finishReason"] = "STOP"
		out["usageMetadata"] = map[string]any{"promptTokenCount": 1000, "candidatesTokenCount": 20, "totalTokenCount": 1020}
	}
	return out
}

// writeSSE streams the step as the API does with alt=sse: one data event per
// part, the last with finishReason and usage.
func writeSSE(w http.ResponseWriter, st apiStep) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	parts := stepParts(st)
	if len(parts) == 0 {
		parts = []map[string]any{{"text": ""}}
	}
	fl, _ := w.(http.Flusher)
	for i, p := range parts {
		data, _ := json.Marshal(genChunk([]map[string]any{p}, i == len(parts)-1))
		fmt.Fprintf(w, "data: %s\r\n\r\n", data)
		if fl != nil {
			fl.Flush()
		}
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	data, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(data)
}

func writeAPIError(w http.ResponseWriter, code int, msg string) {
	data, _ := json.Marshal(map[string]any{"error": map[string]any{
		"code": code, "message": msg, "status": strings.ToUpper(strings.ReplaceAll(http.StatusText(code), " ", "_")),
	}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(data)
}

// texts returns every text of the request, system instruction first, then
// the contents' text parts and function responses' outputs, in order.
func (r apiRequest) texts() []string {
	if r.parsed == nil {
		return nil
	}
	var out []string
	if si := r.parsed.SystemInstruction; si != nil {
		for _, p := range si.Parts {
			out = append(out, p.Text)
		}
	}
	for _, c := range r.parsed.Contents {
		for _, p := range c.Parts {
			if p.Text != "" {
				out = append(out, p.Text)
			}
			if fr := p.FunctionResponse; fr != nil {
				if o, ok := fr.Response["output"].(string); ok {
					out = append(out, o)
				}
			}
		}
	}
	return out
}

// userText joins the text parts of the user contents, in order.
func (r apiRequest) userText() string {
	if r.parsed == nil {
		return ""
	}
	var b strings.Builder
	for _, c := range r.parsed.Contents {
		if c.Role != "user" {
			continue
		}
		for _, p := range c.Parts {
			if p.Text != "" {
				b.WriteString(p.Text)
				b.WriteString("\n")
			}
		}
	}
	return b.String()
}

// functionResponses returns the function responses of the request by
// function name, in order.
func (r apiRequest) functionResponses() []genResponse {
	if r.parsed == nil {
		return nil
	}
	var out []genResponse
	for _, c := range r.parsed.Contents {
		for _, p := range c.Parts {
			if p.FunctionResponse != nil {
				out = append(out, *p.FunctionResponse)
			}
		}
	}
	return out
}

// toolNames lists the function declarations offered to the model.
func (r apiRequest) toolNames() []string {
	if r.parsed == nil {
		return nil
	}
	var out []string
	for _, t := range r.parsed.Tools {
		for _, f := range t.FunctionDeclarations {
			out = append(out, f.Name)
		}
	}
	return out
}

// TestAPIServer checks the scripted server on its own, without the CLI: a
// script's steps over SSE, the classifier's answer, the unscripted and
// unknown requests, and the record of each.
func TestAPIServer(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := startAPIServer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.register(apiScript{Name: "other"})
	s.register(apiScript{Name: "demo", Steps: []apiStep{
		{Text: "reading", Calls: []apiCall{{Name: "read_file", Args: map[string]any{"file_path": "/x"}}}},
		{Text: "done"},
	}})
	post := func(path string, body any) (int, string) {
		t.Helper()
		data, _ := json.Marshal(body)
		resp, err := http.Post(s.url+path, "application/json", bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(out)
	}
	user := func(text string) map[string]any {
		return map[string]any{"role": "user", "parts": []any{map[string]any{"text": text}}}
	}
	first := map[string]any{"contents": []any{user("<hook_context>" + marker("other") + "</hook_context>\n\n" + marker("demo") + " go")}}
	code, out := post("/v1beta/models/m1:streamGenerateContent?alt=sse", first)
	if code != 200 || strings.Count(out, "data: ") != 2 || !strings.Contains(out, `"functionCall":{"args":{"file_path":"/x"},"name":"read_file"}`) ||
		!strings.Contains(out, `"finishReason":"STOP"`) {
		t.Fatalf("step 0: %d\n%s", code, out)
	}
	second := map[string]any{"contents": []any{
		user(marker("demo") + " go"),
		map[string]any{"role": "model", "parts": []any{map[string]any{"functionCall": map[string]any{"name": "read_file", "args": map[string]any{}}}}},
		map[string]any{"role": "user", "parts": []any{map[string]any{"functionResponse": map[string]any{"name": "read_file", "response": map[string]any{"output": "body"}}}}},
	}}
	if code, out := post("/v1beta/models/m1:streamGenerateContent?alt=sse", second); code != 200 || !strings.Contains(out, `"text":"done"`) {
		t.Fatalf("step 1: %d\n%s", code, out)
	}
	classifier := map[string]any{"contents": []any{user("hi")}, "generationConfig": map[string]any{
		"responseJsonSchema": map[string]any{"properties": map[string]any{"complexity_score": map[string]any{"type": "INTEGER"}}}}}
	if code, out := post("/v1beta/models/lite:generateContent", classifier); code != 200 || !strings.Contains(out, `complexity_score\": 10`) {
		t.Fatalf("classifier: %d\n%s", code, out)
	}
	if code, _ := post("/v1beta/models/m1:streamGenerateContent?alt=sse", map[string]any{"contents": []any{user("no marker")}}); code != 400 {
		t.Fatalf("unscripted: %d", code)
	}
	if code, _ := post("/v1beta/models/m1:countTokens", first); code != 404 {
		t.Fatalf("countTokens: %d", code)
	}
	var kinds []string
	for _, r := range s.requests() {
		kinds = append(kinds, fmt.Sprintf("%d:%s:%s:%d", r.Seq, r.Kind, r.Script, r.Step))
	}
	want := "1:script:demo:0 2:script:demo:1 3:classifier::0 4:unscripted::0 5:not-found::0"
	if got := strings.Join(kinds, " "); got != want {
		t.Errorf("recorded %s, want %s", got, want)
	}
	reqs := s.scripted("demo")
	if len(reqs) != 2 || len(reqs[1].functionResponses()) != 1 || reqs[1].functionResponses()[0].Response["output"] != "body" ||
		!strings.Contains(reqs[0].userText(), "<hook_context>"+marker("other")+"</hook_context>") {
		t.Errorf("scripted requests: %+v", reqs)
	}
}
