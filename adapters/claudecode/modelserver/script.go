package modelserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// MarkerPrefix starts a script marker: SCENARIO:<name>, where name is made of
// letters, digits, '_' and '-'.
const MarkerPrefix = "SCENARIO:"

// CompactionPhrase is what Claude Code's compaction request asks for in its
// last user message; such a request gets an <analysis>/<summary> answer.
const CompactionPhrase = "create a detailed summary of the conversation"

// ErrBadScript is returned by Server.Register and Server.SetDefault for a
// script or step that cannot be served.
var ErrBadScript = errors.New("bad script")

var (
	markerRE = regexp.MustCompile(`SCENARIO:([A-Za-z0-9_-]+)`)
	nameRE   = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
)

// Marker returns the marker that selects the script called name.
func Marker(name string) string { return MarkerPrefix + name }

// Script is a scripted conversation, selected by Marker(Name).
//
// The reply to a request is Steps[step], where step is the number of
// assistant messages after the message that selected the script (see
// Server). Past the last step the reply is the text
// "Done: scenario <Name> finished after <n> step(s)." with stop reason
// end_turn. When Respond is set it decides every reply and Steps is unused;
// it may be called from several requests at once.
type Script struct {
	Name    string
	Steps   []Step
	Respond func(Turn) Step
}

// Step is one assistant reply: an optional text block followed by zero or more
// tool_use blocks, or an API error.
type Step struct {
	Text     string
	ToolUses []ToolUse
	// StopReason overrides the default: "tool_use" when ToolUses is not
	// empty, else "end_turn".
	StopReason string
	// Usage overrides the default usage (1000 input and 20 output tokens).
	Usage *Usage
	// Delay is waited before the reply starts (bounded by the request).
	Delay time.Duration
	// Error, when set, is returned instead of a message.
	Error *APIError
}

// ToolUse is a tool call in a Step. Input must marshal to a JSON object;
// a json.RawMessage is sent as is. ID defaults to a fresh "toolu_fake_NNNN".
type ToolUse struct {
	Name  string
	Input any
	ID    string
}

// Usage is the token accounting reported in message_start and message_delta.
type Usage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
}

// APIError is an error answer: HTTP Status with the body
// {"type":"error","error":{"type":Type,"message":Message}}.
type APIError struct {
	Status  int
	Type    string
	Message string
}

// Turn is what Script.Respond sees.
type Turn struct {
	// Script is the name of the selected script.
	Script string
	// Source says where its marker was found.
	Source Source
	// Step is the number of assistant messages after the selecting message.
	Step int
	// Prompt is the text of the latest real user prompt, with
	// <system-reminder> blocks removed.
	Prompt string
	// Request is the parsed request.
	Request *Request
}

// Source says where the marker that selected a script was found.
type Source string

// The places a marker is looked for, in order of precedence.
const (
	SourceSystem       Source = "system"        // the top-level system prompt
	SourcePrompt       Source = "prompt"        // the latest real user prompt
	SourceFirstMessage Source = "first-message" // the first user message
)

var defaultUsage = Usage{InputTokens: 1000, OutputTokens: 20}

// compile checks a step and turns it into the blocks the server sends.
// ids gives fresh tool_use ids.
func (st Step) compile(ids func() string) (reply, error) {
	if st.Error != nil {
		if st.Error.Status < 400 || st.Error.Status > 599 {
			return reply{}, fmt.Errorf("%w: error status %d is not 4xx or 5xx", ErrBadScript, st.Error.Status)
		}
		return reply{err: st.Error}, nil
	}
	if st.Text == "" && len(st.ToolUses) == 0 {
		return reply{}, fmt.Errorf("%w: step has neither text nor tool uses", ErrBadScript)
	}
	r := reply{stop: st.StopReason, usage: defaultUsage, delay: st.Delay}
	if st.Usage != nil {
		r.usage = *st.Usage
	}
	if st.Text != "" {
		r.content = append(r.content, Block{Type: "text", Text: st.Text})
	}
	for _, tu := range st.ToolUses {
		if tu.Name == "" {
			return reply{}, fmt.Errorf("%w: tool use without a name", ErrBadScript)
		}
		input, err := json.Marshal(tu.Input)
		if err != nil {
			return reply{}, fmt.Errorf("%w: tool %s input: %v", ErrBadScript, tu.Name, err)
		}
		if tu.Input == nil {
			input = []byte("{}")
		}
		if t := bytes.TrimSpace(input); len(t) == 0 || t[0] != '{' {
			return reply{}, fmt.Errorf("%w: tool %s input is not a JSON object", ErrBadScript, tu.Name)
		}
		id := tu.ID
		if id == "" && ids != nil {
			id = ids()
		}
		r.content = append(r.content, Block{Type: "tool_use", ID: id, Name: tu.Name, Input: input})
	}
	if r.stop == "" {
		r.stop = "end_turn"
		if len(st.ToolUses) > 0 {
			r.stop = "tool_use"
		}
	}
	return r, nil
}

// reply is a compiled Step.
type reply struct {
	content []Block
	stop    string
	usage   Usage
	delay   time.Duration
	err     *APIError
}

func (s *Script) validate() error {
	if !nameRE.MatchString(s.Name) {
		return fmt.Errorf("%w: name %q: want letters, digits, '_' or '-'", ErrBadScript, s.Name)
	}
	if s.Respond == nil && len(s.Steps) == 0 {
		return fmt.Errorf("%w: script %s has no steps and no Respond", ErrBadScript, s.Name)
	}
	for i, st := range s.Steps {
		if _, err := st.compile(nil); err != nil {
			return fmt.Errorf("script %s step %d: %w", s.Name, i, err)
		}
	}
	return nil
}

// step returns the Step for a turn.
func (s *Script) step(t Turn) Step {
	if s.Respond != nil {
		return s.Respond(t)
	}
	if t.Step < len(s.Steps) {
		return s.Steps[t.Step]
	}
	return Step{Text: fmt.Sprintf("Done: scenario %s finished after %d step(s).", s.Name, t.Step)}
}

// lastMarker returns the last marker in text whose name is registered.
func lastMarker(text string, known func(string) bool) string {
	ms := markerRE.FindAllStringSubmatch(text, -1)
	for i := len(ms) - 1; i >= 0; i-- {
		if known(ms[i][1]) {
			return ms[i][1]
		}
	}
	return ""
}

// unknownMarkers lists marker names in text that are not registered.
func unknownMarkers(text string, known func(string) bool) []string {
	var out []string
	for _, m := range markerRE.FindAllStringSubmatch(text, -1) {
		if !known(m[1]) {
			out = append(out, m[1])
		}
	}
	return out
}

// compactionReply is the answer to a compaction request. Without the
// <summary> block Claude Code sends the request again.
func compactionReply(summary string) Step {
	return Step{Text: "<analysis>Scripted analysis of the conversation.</analysis>\n<summary>" +
		strings.TrimSpace(summary) + "</summary>"}
}
