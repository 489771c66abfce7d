//go:build e2e

package e2e_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// A step is one scripted answer of the model: a tool call when Tool is
// set, else the text.
type step struct {
	Text string
	Tool string
	Args map[string]any
}

// chatServer is a scripted OpenAI-compatible chat-completions server: it
// answers each conversation's requests with the current script's steps, in
// order (the step is the number of assistant messages the request already
// has), streamed as server-sent events. A request without tools (OpenCode's
// title generator) gets a fixed title.
type chatServer struct {
	t   *testing.T
	ln  net.Listener
	srv *http.Server

	mu       sync.Mutex
	name     string // the current script
	steps    []step
	requests []chatRequest
}

// chatRequest is one request the server got.
type chatRequest struct {
	Script string // the script it was answered with; "" for a title
	Path   string
	Body   json.RawMessage
	chatBody
}

type chatBody struct {
	Model    string        `json:"model"`
	Stream   bool          `json:"stream"`
	Messages []chatMessage `json:"messages"`
	Tools    []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
}

type chatMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCallID string          `json:"tool_call_id"`
	ToolCalls  []struct {
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

// Text is the message's text: its content, a string or an array of text
// parts.
func (m chatMessage) Text() string {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(m.Content, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// System joins the request's system messages.
func (r chatRequest) System() string {
	var out []string
	for _, m := range r.Messages {
		if m.Role == "system" {
			out = append(out, m.Text())
		}
	}
	return strings.Join(out, "\n")
}

// ToolResult returns the text of the tool message answering callID.
func (r chatRequest) ToolResult(callID string) (string, bool) {
	for _, m := range r.Messages {
		if m.Role == "tool" && m.ToolCallID == callID {
			return m.Text(), true
		}
	}
	return "", false
}

func startChatServer(t *testing.T) *chatServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("chat server: %v", err)
	}
	s := &chatServer{t: t, ln: ln}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("chat server: %v", err)
		}
	}()
	t.Cleanup(func() { _ = s.srv.Close() })
	return s
}

// URL is the provider's baseURL.
func (s *chatServer) URL() string { return "http://" + s.ln.Addr().String() + "/v1" }

// Script makes steps the answers of the next conversations.
func (s *chatServer) Script(name string, steps ...step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.name, s.steps = name, steps
}

// Requests returns the requests answered with a script (name "" for all,
// titles included), in order.
func (s *chatServer) Requests(name string) []chatRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []chatRequest
	for _, r := range s.requests {
		if name == "" || r.Script == name {
			out = append(out, r)
		}
	}
	return out
}

// callID names the tool call of a script's step.
func callID(script string, i int) string { return fmt.Sprintf("call_%s_%d", script, i) }

func (s *chatServer) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	req := chatRequest{Path: r.URL.Path, Body: body}
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") || json.Unmarshal(body, &req.chatBody) != nil {
		s.record(req)
		s.t.Errorf("chat server: unexpected %s %s", r.Method, r.URL.Path)
		http.Error(w, "not a chat completion", http.StatusNotFound)
		return
	}
	if !req.Stream {
		s.record(req)
		s.t.Errorf("chat server: a request without stream")
		http.Error(w, "stream only", http.StatusBadRequest)
		return
	}

	var (
		answer step
		toolID string
	)
	if len(req.Tools) == 0 {
		answer = step{Text: "Calc fixes"}
	} else {
		s.mu.Lock()
		req.Script = s.name
		steps := s.steps
		s.mu.Unlock()
		n := 0
		for _, m := range req.Messages {
			if m.Role == "assistant" {
				n++
			}
		}
		if n < len(steps) {
			answer = steps[n]
		} else {
			s.t.Errorf("chat server: script %q has %d steps, the request is at step %d", req.Script, len(steps), n)
			answer = step{Text: "(the script is over)"}
		}
		toolID = callID(req.Script, n)
	}
	s.record(req)

	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	id := fmt.Sprintf("chatcmpl-%d", len(s.Requests("")))
	send := func(delta map[string]any, finish any, usage any) {
		chunk := map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": time.Now().Unix(), "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
		}
		if usage != nil {
			chunk["usage"] = usage
		}
		b, _ := json.Marshal(chunk)
		fmt.Fprintf(w, "data: %s\n\n", b)
	}
	usage := map[string]int{"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
	if answer.Tool != "" {
		args, _ := json.Marshal(answer.Args)
		send(map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{
			"index": 0, "id": toolID, "type": "function",
			"function": map[string]any{"name": answer.Tool, "arguments": string(args)},
		}}}, nil, nil)
		send(map[string]any{}, "tool_calls", usage)
	} else {
		send(map[string]any{"role": "assistant", "content": answer.Text}, nil, nil)
		send(map[string]any{}, "stop", usage)
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func (s *chatServer) record(r chatRequest) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, r)
}

// save writes every request as JSON lines to the artifacts.
func (s *chatServer) save(h *world) {
	var b strings.Builder
	for _, r := range s.Requests("") {
		line, _ := json.Marshal(map[string]any{"script": r.Script, "path": r.Path, "body": r.Body})
		b.Write(line)
		b.WriteByte('\n')
	}
	h.save("chat-requests.jsonl", []byte(b.String()))
}
