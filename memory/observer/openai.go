package observer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/mnemo-dev/mnemo/memory"
)

// Bounds on the conversation an OpenAICompatible agent keeps per memory
// session: older exchanges are dropped first.
const (
	maxHistoryMessages = 24
	maxHistoryChars    = 48000
	historyTTL         = 30 * 24 * time.Hour
	maxMemoryHistories = 256
)

// OpenAICompatible is the memory agent that asks a chat-completions
// endpoint (Ollama, LM Studio, any OpenAI-compatible server). The endpoint
// keeps no state, so the agent keeps each memory session's conversation
// itself, under Options.StateDir, and a resume works across restarts. Its
// memory session ids are the worker's own (NewID, ResumeID). It is safe
// for concurrent use.
type OpenAICompatible struct {
	spending
	o      Options
	system string
	url    string
	client *http.Client

	mu       sync.Mutex // serializes runs: histories are read, extended and saved
	inMemory map[string][]chatMessage
}

// NewOpenAICompatible makes the openai-compatible agent. It needs
// o.BaseURL and o.Model.
func NewOpenAICompatible(o Options) (*OpenAICompatible, error) {
	o.defaults()
	if o.BaseURL == "" || o.Model == "" {
		return nil, fmt.Errorf("%w: the openai-compatible agent needs a base URL and a model", ErrConfig)
	}
	client := o.HTTPClient
	if client == nil {
		client = &http.Client{}
	}
	var path string
	if o.StateDir != "" {
		path = filepath.Join(o.StateDir, "openai-budget.json")
	}
	l, err := openLedger(path, o.Budget, o.Now)
	if err != nil {
		return nil, err
	}
	return &OpenAICompatible{
		o: o, system: systemPrompt(o.ExtraSystemPrompt), url: endpoint(o.BaseURL, "chat/completions"),
		client:   client,
		spending: spending{ledger: l, gate: &gate{name: KindOpenAI, now: o.Now, cooldown: o.Cooldown}},
		inMemory: map[string][]chatMessage{},
	}, nil
}

// endpoint joins a base URL and a path under /v1, without doubling /v1.
func endpoint(base, path string) string {
	base = strings.TrimRight(base, "/")
	if !strings.HasSuffix(base, "/v1") {
		base += "/v1"
	}
	return base + "/" + path
}

// Name implements memory.Agent.
func (a *OpenAICompatible) Name() string { return KindOpenAI }

// chatMessage is one message of a kept conversation. UUID names an
// assistant message (rule 9); it is not sent.
type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
	UUID    string `json:"uuid,omitempty"`
}

type wireMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type chatRequest struct {
	Model       string        `json:"model"`
	Messages    []wireMessage `json:"messages"`
	Temperature float64       `json:"temperature"`
	Stream      bool          `json:"stream"`
}

type chatResponse struct {
	Choices []struct {
		Message struct {
			Content string `json:"content"`
		} `json:"message"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int64 `json:"prompt_tokens"`
		CompletionTokens int64 `json:"completion_tokens"`
		TotalTokens      int64 `json:"total_tokens"`
	} `json:"usage"`
}

// Run implements memory.Agent: one chat completion per event, the memory
// session's conversation sent along. A ResumeID whose conversation the
// agent does not hold returns an error wrapping memory.ErrResumeRefused.
// An endpoint that does not answer, or answers with an HTTP error, and a
// spent budget return errors wrapping memory.ErrFallback.
func (a *OpenAICompatible) Run(ctx context.Context, in memory.AgentInput) (memory.AgentOutput, error) {
	id, resume, err := a.admit("openai-compatible", in)
	if err != nil {
		return memory.AgentOutput{}, err
	}
	csid := in.Session.ContentSessionID
	a.mu.Lock()
	defer a.mu.Unlock()
	var history []chatMessage
	if resume {
		h, err := a.load(id)
		if errors.Is(err, fs.ErrNotExist) {
			return memory.AgentOutput{}, fmt.Errorf("openai-compatible: resume %s: %w", id, memory.ErrResumeRefused)
		}
		if err != nil {
			return memory.AgentOutput{}, fmt.Errorf("openai-compatible: %w", err)
		}
		history = h
	} else {
		a.prune()
	}
	log, err := openStreamLog(a.o.AgentsDir, id, a.o.Now)
	if err != nil {
		a.o.Logger.Warn("openai-compatible agent stream log", "memorySession", id, "err", err)
	}
	defer func() {
		if err := log.Close(); err != nil {
			a.o.Logger.Warn("openai-compatible agent stream log", "memorySession", id, "err", err)
		}
	}()

	rctx, cancel := context.WithTimeout(ctx, a.o.Timeout)
	defer cancel()
	col := newCollector(in, id)
	for _, ev := range in.Events {
		user := chatMessage{Role: "user", Content: prompt(in, ev, !resume && len(history) == 0)}
		reply, tokens, err := a.complete(rctx, history, user, log)
		if tokens > 0 {
			if err := a.ledger.add(csid, tokens); err != nil {
				a.o.Logger.Warn("openai-compatible agent budget", "err", err)
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				return memory.AgentOutput{}, ctx.Err()
			}
			return memory.AgentOutput{}, err
		}
		asst := chatMessage{Role: "assistant", Content: reply, UUID: uuid.NewString()}
		history = bound(append(history, user, asst))
		col.add(ctx, ev, stripThinking(reply))
		col.out.AssistantUUID = asst.UUID
	}
	if err := a.save(id, history); err != nil {
		return memory.AgentOutput{}, fmt.Errorf("openai-compatible: %w", err)
	}
	a.gate.ok()
	return col.out, nil
}

// complete sends one chat completion and returns the reply and the tokens
// it cost: the usage the endpoint reports, else an estimate of four
// characters a token.
func (a *OpenAICompatible) complete(ctx context.Context, history []chatMessage, user chatMessage, log *streamLog) (string, int64, error) {
	req := chatRequest{Model: a.o.Model, Temperature: 0.2, Messages: []wireMessage{{Role: "system", Content: a.system}}}
	chars := len(a.system)
	for _, m := range append(history, user) {
		req.Messages = append(req.Messages, wireMessage{Role: m.Role, Content: m.Content})
		chars += len(m.Content)
	}
	body, err := json.Marshal(req)
	if err != nil {
		return "", 0, fmt.Errorf("openai-compatible: %w", err)
	}
	log.write("request", fmt.Sprintf("POST %s model=%s messages=%d", a.url, a.o.Model, len(req.Messages)))
	log.write("user", user.Content)
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, a.url, bytes.NewReader(body))
	if err != nil {
		return "", 0, fmt.Errorf("openai-compatible: %w", err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	if a.o.APIKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+a.o.APIKey)
	}
	resp, err := a.client.Do(hreq)
	if err != nil {
		log.write("error", err.Error())
		if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return "", 0, ctx.Err()
		}
		return "", 0, a.gate.down(fmt.Sprintf("endpoint %s not answering: %v", a.o.BaseURL, err))
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return "", 0, fmt.Errorf("openai-compatible: read answer: %w", err)
	}
	log.write("response", fmt.Sprintf("%d %s", resp.StatusCode, bytes.TrimSpace(raw)))
	if resp.StatusCode != http.StatusOK {
		return "", 0, a.gate.down(fmt.Sprintf("endpoint %s answered %s: %s", a.o.BaseURL, resp.Status,
			clipLine(strings.Join(strings.Fields(string(raw)), " "), 200)))
	}
	var cr chatResponse
	if err := json.Unmarshal(raw, &cr); err != nil {
		return "", int64(chars / 4), fmt.Errorf("openai-compatible: answer is not a chat completion: %w", err)
	}
	if len(cr.Choices) == 0 {
		return "", int64(chars / 4), errors.New("openai-compatible: answer has no choices")
	}
	reply := cr.Choices[0].Message.Content
	tokens := int64((chars + len(reply)) / 4)
	if u := cr.Usage; u != nil {
		if tokens = u.TotalTokens; tokens == 0 {
			tokens = u.PromptTokens + u.CompletionTokens
		}
	}
	return reply, tokens, nil
}

var thinkRE = regexp.MustCompile(`(?is)<think>.*?(?:</think>|$)`)

// stripThinking drops the <think> blocks reasoning models put before
// their answer.
func stripThinking(s string) string { return thinkRE.ReplaceAllString(s, "") }

// bound drops the oldest exchanges past maxHistoryMessages or
// maxHistoryChars, keeping at least the newest exchange.
func bound(h []chatMessage) []chatMessage {
	size := 0
	for _, m := range h {
		size += len(m.Content)
	}
	for len(h) > 2 && (len(h) > maxHistoryMessages || size > maxHistoryChars) {
		size -= len(h[0].Content) + len(h[1].Content)
		h = h[2:]
	}
	return append([]chatMessage(nil), h...)
}

func (a *OpenAICompatible) historyDir() string {
	return filepath.Join(a.o.StateDir, "openai-sessions")
}

func (a *OpenAICompatible) historyPath(id string) string {
	return filepath.Join(a.historyDir(), filepath.Base(id)+".json")
}

// load reads a memory session's conversation; fs.ErrNotExist when the
// agent holds none.
func (a *OpenAICompatible) load(id string) ([]chatMessage, error) {
	if a.o.StateDir == "" {
		h, ok := a.inMemory[id]
		if !ok {
			return nil, fs.ErrNotExist
		}
		return h, nil
	}
	data, err := os.ReadFile(a.historyPath(id))
	if err != nil {
		return nil, err
	}
	var h []chatMessage
	if err := json.Unmarshal(data, &h); err != nil {
		return nil, fmt.Errorf("conversation of %s: %w", id, err)
	}
	return h, nil
}

func (a *OpenAICompatible) save(id string, h []chatMessage) error {
	if a.o.StateDir == "" {
		if _, ok := a.inMemory[id]; !ok && len(a.inMemory) >= maxMemoryHistories {
			for k := range a.inMemory { // drop one, any
				delete(a.inMemory, k)
				break
			}
		}
		a.inMemory[id] = h
		return nil
	}
	data, err := json.Marshal(h)
	if err != nil {
		return err
	}
	if err := writeFileAtomic(a.historyPath(id), data); err != nil {
		return fmt.Errorf("save conversation: %w", err)
	}
	return nil
}

// prune deletes conversations untouched for historyTTL.
func (a *OpenAICompatible) prune() {
	if a.o.StateDir == "" {
		return
	}
	entries, err := os.ReadDir(a.historyDir())
	if err != nil {
		return
	}
	cutoff := a.o.Now().Add(-historyTTL)
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() && fi.ModTime().Before(cutoff) {
			os.Remove(filepath.Join(a.historyDir(), e.Name()))
		}
	}
}
