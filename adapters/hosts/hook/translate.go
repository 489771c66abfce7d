package hook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/mnemo-dev/mnemo/adapters/hosts"
	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/privacy"
)

// Translate's errors: the payload maps onto no daemon call.
var (
	// ErrUnhandledEvent is an event Mnemo does not hook.
	ErrUnhandledEvent = errors.New("event not handled")
	// ErrSkippedTool is a tool run that is not recorded (privacy.Skipped).
	ErrSkippedTool = errors.New("tool skipped")
	// ErrInvalidPayload is a payload the daemon would refuse (no session_id).
	ErrInvalidPayload = errors.New("invalid hook payload")
	// ErrPaused is a stage the session's pause (TranslateOptions.Pause)
	// leaves out: nothing to send.
	ErrPaused = errors.New("paused for this session")
	// ErrNotPrompt is a UserPromptSubmit whose prompt the person did not
	// write (PersonPrompt): a task notification, a command's output.
	ErrNotPrompt = errors.New("not the person's prompt")
)

// PrivateMarker is the prompt the hook sends for a prompt that is entirely
// private (privacy.IsFullyPrivate). The daemon decides privacy from the
// prompt text: an empty private element keeps IsFullyPrivate true there, so
// the turn is counted and stores nothing, while nothing of the original
// (not even its length) leaves the hook. An empty prompt would be read as a
// media prompt, not a private one.
const PrivateMarker = "<private></private>"

// ToolFailure is the toolResponse a PostToolUseFailure becomes, so that the
// observation records what failed and how ("Exit code 3\n…").
type ToolFailure struct {
	Error       string `json:"error"`
	IsError     bool   `json:"isError"`
	Interrupted bool   `json:"interrupted"`
}

// TranslateOptions are the inputs of Translate besides the payload.
type TranslateOptions struct {
	// EventKey is the call's idempotency key (NewEventKey).
	EventKey string
	// SkipTools lists the tools not recorded; nil means
	// privacy.DefaultSkipTools. Run passes SkipTools().
	SkipTools []string
	// Log receives warnings (many private tags); nil discards them.
	Log *slog.Logger
	// Pause is what the session does without (memory.PauseEnv; Run
	// passes SessionPause()): with capture paused, SessionStart and
	// UserPromptSubmit say NoCapture and the other stages are not sent;
	// with injection paused, they say NoContext and NoRecall; with both,
	// nothing is sent.
	Pause memory.Pause
}

// SessionPause reads memory.PauseEnv. A value it cannot read pauses
// everything, with a warning: whoever set it meant to pause something.
func SessionPause(log *slog.Logger) memory.Pause {
	v, ok := os.LookupEnv(memory.PauseEnv)
	if !ok {
		return memory.Pause{}
	}
	p, err := memory.ParsePause(v)
	if err != nil {
		if log != nil {
			log.Warn("unreadable "+memory.PauseEnv+"; pausing capture and injection", "err", err)
		}
		return memory.Pause{Capture: true, Inject: true}
	}
	return p
}

// Translate maps a payload onto the daemon call of its stage: the method
// and its params (one of the *Params types, as a pointer). The stage is
// the one the payload was read with (Payload.Stage, set by
// hosts.Wire.Normalize); a payload built by hand without it has its stage
// looked up here, from its host and event. Text is
// cleaned here, before anything leaves the process: the prompt and the
// messages with privacy.Clean (an entirely private prompt becomes
// PrivateMarker), the tool input and response with privacy.CleanJSON.
//
// Errors: ErrUnhandledEvent for an event not in Stages, ErrSkippedTool
// for a tool in the skip list, ErrNotPrompt for a prompt the person did
// not write, ErrInvalidPayload for a payload without a
// session_id or (PostToolUse) a tool_name, ErrPaused for a stage that
// o.Pause leaves out.
func Translate(p *hosts.Payload, o TranslateOptions) (method string, params any, err error) {
	host := p.Host
	if host == "" {
		host = hosts.ClaudeCode
	}
	stage, ok := p.Stage, p.Stage.Event != ""
	if !ok {
		stage, ok = hosts.StageOf(host, p.HookEventName)
	}
	if !ok {
		return "", nil, fmt.Errorf("%w: %q", ErrUnhandledEvent, p.HookEventName)
	}
	if p.SessionID == "" {
		return "", nil, fmt.Errorf("%w: no session_id", ErrInvalidPayload)
	}
	h, _ := hosts.Named(host)
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cwd := p.Cwd
	if cwd == "" {
		cwd, _ = os.Getwd()
	}

	if o.Pause.Capture && (o.Pause.Inject || stage.Event != hosts.EventSessionStart && stage.Event != hosts.EventUserPromptSubmit) {
		return "", nil, fmt.Errorf("%w: %s=%s", ErrPaused, memory.PauseEnv, o.Pause)
	}

	switch stage.Event {
	case hosts.EventSessionStart:
		return stage.Method, &memory.SessionStartParams{
			ContentSessionID: p.SessionID,
			Cwd:              cwd,
			Source:           p.Source,
			Platform:         host,
			NoContext:        !h.Injects(hosts.EventSessionStart) || o.Pause.Inject,
			NoCapture:        o.Pause.Capture,
			EventKey:         o.EventKey,
		}, nil

	case hosts.EventUserPromptSubmit:
		if raw, _ := json.Marshal(p.Prompt); p.Prompt != "" {
			if _, kind := PersonPrompt(raw, false); kind == PromptInjected || kind == PromptLocal {
				return "", nil, fmt.Errorf("%w: %.40q", ErrNotPrompt, p.Prompt)
			}
		}
		prompt := PrivateMarker
		if !privacy.IsFullyPrivate(p.Prompt) {
			prompt = cleanText(log, "prompt", p.Prompt)
		}
		return stage.Method, &memory.UserPromptParams{
			ContentSessionID: p.SessionID,
			Cwd:              cwd,
			Prompt:           prompt,
			Platform:         host,
			NoRecall:         !h.Injects(hosts.EventUserPromptSubmit) || o.Pause.Inject,
			NoCapture:        o.Pause.Capture,
			EventKey:         o.EventKey,
		}, nil

	case hosts.EventPostToolUse, hosts.EventPostToolUseFailure:
		if p.ToolName == "" {
			return "", nil, fmt.Errorf("%w: no tool_name", ErrInvalidPayload)
		}
		skip := o.SkipTools
		if skip == nil {
			skip = privacy.DefaultSkipTools
		}
		if privacy.Skipped(p.ToolName, skip) {
			return "", nil, fmt.Errorf("%w: %s", ErrSkippedTool, p.ToolName)
		}
		response := cleanJSON(log, "tool_response", p.ToolResponse)
		if stage.Event == hosts.EventPostToolUseFailure {
			response, _ = json.Marshal(ToolFailure{
				Error:       cleanText(log, "error", p.Error),
				IsError:     true,
				Interrupted: p.IsInterrupt,
			})
		}
		return stage.Method, &memory.ToolUseParams{
			ContentSessionID: p.SessionID,
			Cwd:              cwd,
			ToolName:         p.ToolName,
			ToolInput:        cleanJSON(log, "tool_input", p.ToolInput),
			ToolResponse:     response,
			ToolUseID:        p.ToolUseID,
			Platform:         host,
			EventKey:         o.EventKey,
		}, nil

	case hosts.EventStop:
		// The hook never reads the transcript: the daemon reads a Claude
		// Code turn's texts at its end (memory/transcript).
		var texts []memory.TurnText
		for _, t := range p.Texts {
			t.Text = cleanText(log, "texts", t.Text)
			texts = append(texts, t)
		}
		return stage.Method, &memory.StopParams{
			ContentSessionID:     p.SessionID,
			Cwd:                  cwd,
			LastUserMessage:      cleanText(log, "lastUserMessage", p.LastUserMessage),
			LastAssistantMessage: cleanText(log, "lastAssistantMessage", p.LastAssistantMessage),
			TranscriptPath:       p.TranscriptPath,
			Texts:                texts,
			EventKey:             o.EventKey,
		}, nil

	case hosts.EventSessionEnd:
		return stage.Method, &memory.SessionEndParams{
			ContentSessionID: p.SessionID,
			Reason:           p.Reason,
			Cwd:              cwd,
			EventKey:         o.EventKey,
		}, nil
	}
	return "", nil, fmt.Errorf("%w: %q", ErrUnhandledEvent, p.HookEventName)
}

// cleanText strips private tags and redacts secrets, warning when a text
// carries unusually many tags.
func cleanText(log *slog.Logger, field, s string) string {
	stripped, n := privacy.Strip(s)
	if n > privacy.WarnTags {
		log.Warn("many private tags stripped", "field", field, "tags", n)
	}
	red, _ := privacy.Redact(stripped)
	return red
}

// cleanJSON cleans every string of a JSON value. A value that is not JSON
// (it cannot be: it came out of the payload's decoder) is cleaned as text
// and sent as a JSON string. Absent and null values stay absent.
//
// Inlined binary data (an image the CLI read or was given, as base64) is
// replaced by a note of its size: it is nothing a memory can search. A
// value over memory.MaxToolJSONBytes is cut to it (memory.ShrinkJSON): the
// daemon keeps no more, and the journal's record stays small.
func cleanJSON(log *slog.Logger, field string, raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if len(raw) > preCut && !privacy.MayHaveTag(raw) {
		raw = memory.ShrinkJSON(raw, preCut)
	}
	// The payload's decoder validated it (hosts.DecodeWire), and the
	// JSON a dialect rewrites is json.Marshal's. Cleaned whole first: a
	// cut must not split a secret or a private part.
	out, err := privacy.CleanValidJSON(raw)
	if err == nil {
		return memory.ShrinkJSON(dropBase64(out), memory.MaxToolJSONBytes)
	}
	log.Warn("clean JSON as text", "field", field, "err", err)
	out, _ = json.Marshal(cleanText(log, field, string(raw)))
	return out
}

// preCut is the size past which a tool's JSON is cut before it is
// cleaned, to four times what is kept of it: cleaning is most of a big
// event's cost (a 30 MB output took 0.5 s of a loaded machine's time to
// clean whole). It is safe: what the hook keeps in the end lies within the
// first and last quarter of what the pre-cut keeps of each string, so a
// secret the pre-cut splits is never in it and is cut away whole; and the
// pre-cut is made only when the JSON holds no tag the privacy filter
// strips, whose pairs a cut could break.
const preCut = 4 * memory.MaxToolJSONBytes

// minBase64 is the shortest JSON string dropBase64 takes for data.
const minBase64 = 1024

// dropBase64 replaces each string of a valid JSON document that holds
// nothing but base64 data of minBase64 bytes or more (a data: URI
// included) with "[N bytes of base64 data]".
func dropBase64(raw []byte) []byte {
	if len(raw) < minBase64 {
		return raw
	}
	var out []byte // nil until a string is replaced
	last := 0      // raw[:last] is in out
	for i := 0; i < len(raw); i++ {
		if raw[i] != '"' {
			continue
		}
		start, data := i+1, true
		j := start
		if rest := raw[start:]; bytes.HasPrefix(rest, []byte("data:")) {
			if k := bytes.Index(rest[:min(len(rest), 100)], []byte(";base64,")); k > 0 {
				j = start + k + len(";base64,")
			}
		}
		for ; j < len(raw) && raw[j] != '"'; j++ {
			c := raw[j]
			if c == '\\' {
				data = false
				j++
				continue
			}
			if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '=') {
				data = false
			}
		}
		if data && j-start >= minBase64 {
			out = append(out, raw[last:i]...)
			out = fmt.Appendf(out, `"[%d bytes of base64 data]"`, j-start)
			last = j + 1
		}
		i = j // the closing quote
	}
	if out == nil {
		return raw
	}
	return append(out, raw[last:]...)
}

// SkipTools returns the tools the hook does not record:
// privacy.DefaultSkipTools plus the comma-separated names in
// MNEMO_SKIP_TOOLS.
func SkipTools() []string {
	skip := privacy.DefaultSkipTools
	env := os.Getenv("MNEMO_SKIP_TOOLS")
	if strings.TrimSpace(env) == "" {
		return skip
	}
	skip = append([]string(nil), skip...)
	for name := range strings.SplitSeq(env, ",") {
		if name = strings.TrimSpace(name); name != "" {
			skip = append(skip, name)
		}
	}
	return skip
}

// SetAt dates the call Translate made (params' At): when its work
// happened, for a call the daemon takes later than that (the journal) or
// that is rebuilt after the fact (a back-fill). The store keeps the work's
// time, not the call's.
func SetAt(params any, at time.Time) {
	switch p := params.(type) {
	case *memory.SessionStartParams:
		p.At = at
	case *memory.UserPromptParams:
		p.At = at
	case *memory.ToolUseParams:
		p.At = at
	case *memory.StopParams:
		p.At = at
	case *memory.SessionEndParams:
		p.At = at
	}
}
