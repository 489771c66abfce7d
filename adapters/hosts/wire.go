package hosts

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/mnemo-dev/mnemo/memory/privacy"
)

// ErrIncomplete is DecodeWire's error when data ends inside the value:
// more of it is still to be read.
var ErrIncomplete = errors.New("unexpected end of JSON input")

// DecodeWire decodes the JSON value at the start of data (after white
// space) into a Wire as encoding/json's Decoder does, and returns how many
// bytes of data it used; what follows the value is not read. It is the
// hook's one decode at every start, so it does without reflection: the
// members of the object are matched to Wire's fields by their json names
// (exactly, else ignoring case, as encoding/json does), a member whose
// value has another type than its field is left out and the rest kept
// (encoding/json reports an UnmarshalTypeError for it, the hook reads on),
// unknown members are skipped. A null leaves the Wire empty; any other
// value than an object or null is an error. Invalid JSON is an error, one
// that wraps ErrIncomplete when data ends inside the value.
func DecodeWire(data []byte) (*Wire, int, error) {
	s := &scanner{data: data}
	s.space()
	w := &Wire{}
	if s.i >= len(s.data) {
		return nil, s.i, ErrIncomplete
	}
	switch s.data[s.i] {
	case '{':
	case 'n':
		if err := s.literal("null"); err != nil {
			return nil, s.i, err
		}
		return w, s.i, nil
	default:
		start := s.i
		if _, err := s.value(0); err != nil {
			return nil, s.i, err
		}
		return nil, s.i, fmt.Errorf("json: cannot unmarshal %s into Go value of type hosts.Wire", kindName(s.data[start]))
	}
	s.i++
	s.space()
	if s.peek() == '}' {
		s.i++
		return w, s.i, nil
	}
	for {
		s.space()
		if s.peek() != '"' {
			return nil, s.i, s.unexpected("looking for beginning of object key string")
		}
		kraw, err := s.str()
		if err != nil {
			return nil, s.i, err
		}
		key := unquote(kraw)
		s.space()
		if s.peek() != ':' {
			return nil, s.i, s.unexpected("after object key")
		}
		s.i++
		s.space()
		start := s.i
		if _, err := s.value(1); err != nil {
			return nil, s.i, err
		}
		w.set(key, s.data[start:s.i])
		s.space()
		switch s.peek() {
		case ',':
			s.i++
			continue
		case '}':
			s.i++
			return w, s.i, nil
		}
		return nil, s.i, s.unexpected("after object key:value pair")
	}
}

// wireFields are the json names of Wire's fields, for matching a member
// whose name differs from them only in case.
var wireFields = [...]string{
	"session_id", "hook_event_name", "transcript_path", "cwd", "prompt_id", "permission_mode",
	"agent_id", "agent_type", "source", "model", "prompt", "tool_name", "tool_input",
	"tool_response", "tool_use_id", "duration_ms", "error", "is_interrupt", "stop_hook_active",
	"last_assistant_message", "reason", "turn_id", "timestamp", "prompt_response", "sessionId",
	"hookEventName", "transcriptPath", "toolName", "toolArgs", "toolResult", "tool_result",
	"conversation_id", "generation_id", "workspace_roots", "cursor_version", "command", "output",
	"file_path", "edits", "result_json", "tool_output", "text", "status", "error_message",
	"trajectory_id", "execution_id", "agent_action_name", "tool_info",
}

// set sets the field named key (a json name of Wire's) to the JSON value
// raw, when raw has the field's type.
func (w *Wire) set(key string, raw []byte) {
	if !w.setExact(key, raw) {
		for _, name := range wireFields {
			if strings.EqualFold(name, key) {
				w.setExact(name, raw)
				return
			}
		}
	}
}

// setExact sets the field whose json name is key, and reports whether
// there is one.
func (w *Wire) setExact(key string, raw []byte) bool {
	var str *string
	var rawf *json.RawMessage
	switch key {
	case "session_id":
		str = &w.SessionID
	case "hook_event_name":
		str = &w.HookEventName
	case "transcript_path":
		str = &w.TranscriptPath
	case "cwd":
		str = &w.Cwd
	case "prompt_id":
		str = &w.PromptID
	case "permission_mode":
		str = &w.PermissionMode
	case "agent_id":
		str = &w.AgentID
	case "agent_type":
		str = &w.AgentType
	case "source":
		str = &w.Source
	case "model":
		str = &w.Model
	case "prompt":
		str = &w.Prompt
	case "tool_name":
		str = &w.ToolName
	case "tool_input":
		rawf = &w.ToolInput
	case "tool_response":
		rawf = &w.ToolResponse
	case "tool_use_id":
		str = &w.ToolUseID
	case "duration_ms":
		if raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9' {
			if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
				w.DurationMS = n
			}
		}
		return true
	case "error":
		rawf = &w.Error
	case "is_interrupt":
		setBool(&w.IsInterrupt, raw)
		return true
	case "stop_hook_active":
		setBool(&w.StopHookActive, raw)
		return true
	case "last_assistant_message":
		str = &w.LastAssistantMessage
	case "reason":
		str = &w.Reason
	case "turn_id":
		str = &w.TurnID
	case "timestamp":
		rawf = &w.Timestamp
	case "prompt_response":
		str = &w.PromptResponse
	case "sessionId":
		str = &w.SessionIDCamel
	case "hookEventName":
		str = &w.HookEventNameCamel
	case "transcriptPath":
		str = &w.TranscriptPathCamel
	case "toolName":
		str = &w.ToolNameCamel
	case "toolArgs":
		rawf = &w.ToolArgs
	case "toolResult":
		rawf = &w.ToolResult
	case "tool_result":
		rawf = &w.ToolResultSnake
	case "conversation_id":
		str = &w.ConversationID
	case "generation_id":
		str = &w.GenerationID
	case "workspace_roots":
		setStrings(&w.WorkspaceRoots, raw)
		return true
	case "cursor_version":
		str = &w.CursorVersion
	case "command":
		str = &w.Command
	case "output":
		str = &w.Output
	case "file_path":
		str = &w.FilePath
	case "edits":
		rawf = &w.Edits
	case "result_json":
		rawf = &w.ResultJSON
	case "tool_output":
		rawf = &w.ToolOutput
	case "text":
		str = &w.Text
	case "status":
		str = &w.Status
	case "error_message":
		str = &w.ErrorMessage
	case "trajectory_id":
		str = &w.TrajectoryID
	case "execution_id":
		str = &w.ExecutionID
	case "agent_action_name":
		str = &w.AgentActionName
	case "tool_info":
		rawf = &w.ToolInfo
	default:
		return false
	}
	switch {
	case rawf != nil:
		*rawf = append((*rawf)[:0], raw...)
	case raw[0] == '"':
		*str = unquote(raw)
	}
	return true
}

func setBool(b *bool, raw []byte) {
	switch raw[0] {
	case 't':
		*b = true
	case 'f':
		*b = false
	}
}

// setStrings sets ss to a JSON array of strings; elements of another type
// are left "", and a value that is not an array leaves ss as it is.
func setStrings(ss *[]string, raw []byte) {
	switch raw[0] {
	case 'n':
		*ss = nil
		return
	case '[':
	default:
		return
	}
	s := &scanner{data: raw, i: 1}
	out := (*ss)[:0]
	for {
		s.space()
		if s.peek() == ']' {
			break
		}
		start := s.i
		s.value(1) // raw is valid
		v := ""
		if e := raw[start:s.i]; e[0] == '"' {
			v = unquote(e)
		}
		out = append(out, v)
		s.space()
		if s.peek() == ',' {
			s.i++
		}
	}
	if out == nil {
		out = []string{}
	}
	*ss = out
}

// unquote returns the text of the valid JSON string raw (quotes
// included), as encoding/json decodes it.
func unquote(raw []byte) string {
	s, _ := privacy.UnquoteJSON(raw)
	return s
}

// kindName names a JSON value by its first byte, as encoding/json's errors
// do.
func kindName(c byte) string {
	switch c {
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "bool"
	}
	return "number"
}

// maxDepth is encoding/json's bound on nesting.
const maxDepth = 10000

// scanner validates JSON values in data from i, as encoding/json's
// scanner does.
type scanner struct {
	data []byte
	i    int
}

func (s *scanner) peek() byte {
	if s.i < len(s.data) {
		return s.data[s.i]
	}
	return 0
}

func (s *scanner) space() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// unexpected is the error for the byte at i: ErrIncomplete at the end.
func (s *scanner) unexpected(context string) error {
	if s.i >= len(s.data) {
		return ErrIncomplete
	}
	return fmt.Errorf("invalid character %q %s", s.data[s.i], context)
}

// value moves past one JSON value at i (white space before it skipped by
// the caller) and returns its first byte.
func (s *scanner) value(depth int) (byte, error) {
	if depth > maxDepth {
		return 0, errors.New("exceeded max depth")
	}
	c := s.peek()
	switch {
	case c == '"':
		_, err := s.str()
		return c, err
	case c == '{':
		return c, s.object(depth)
	case c == '[':
		return c, s.array(depth)
	case c == 't':
		return c, s.literal("true")
	case c == 'f':
		return c, s.literal("false")
	case c == 'n':
		return c, s.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		return c, s.number()
	}
	return c, s.unexpected("looking for beginning of value")
}

func (s *scanner) object(depth int) error {
	s.i++ // {
	s.space()
	if s.peek() == '}' {
		s.i++
		return nil
	}
	for {
		s.space()
		if s.peek() != '"' {
			return s.unexpected("looking for beginning of object key string")
		}
		if _, err := s.str(); err != nil {
			return err
		}
		s.space()
		if s.peek() != ':' {
			return s.unexpected("after object key")
		}
		s.i++
		s.space()
		if _, err := s.value(depth + 1); err != nil {
			return err
		}
		s.space()
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return nil
		default:
			return s.unexpected("after object key:value pair")
		}
	}
}

func (s *scanner) array(depth int) error {
	s.i++ // [
	s.space()
	if s.peek() == ']' {
		s.i++
		return nil
	}
	for {
		s.space()
		if _, err := s.value(depth + 1); err != nil {
			return err
		}
		s.space()
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			return nil
		default:
			return s.unexpected("after array element")
		}
	}
}

// str moves past a string at i and returns it, quotes included.
func (s *scanner) str() ([]byte, error) {
	start := s.i
	s.i++ // "
	for s.i < len(s.data) {
		c := s.data[s.i]
		switch {
		case c == '"':
			s.i++
			return s.data[start:s.i], nil
		case c == '\\':
			s.i++
			if s.i >= len(s.data) {
				return nil, ErrIncomplete
			}
			switch s.data[s.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i++
			case 'u':
				s.i++
				for range 4 {
					if s.i >= len(s.data) {
						return nil, ErrIncomplete
					}
					if !isHex(s.data[s.i]) {
						return nil, s.unexpected("in \\u hexadecimal character escape")
					}
					s.i++
				}
			default:
				return nil, s.unexpected("in string escape code")
			}
		case c < 0x20:
			return nil, s.unexpected("in string literal")
		default:
			s.i++
		}
	}
	return nil, ErrIncomplete
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func (s *scanner) literal(lit string) error {
	for k := range len(lit) {
		if s.i >= len(s.data) {
			return ErrIncomplete
		}
		if s.data[s.i] != lit[k] {
			return s.unexpected("in literal " + lit)
		}
		s.i++
	}
	return s.end("literal")
}

// number moves past a number at i, by JSON's grammar.
func (s *scanner) number() error {
	if s.peek() == '-' {
		s.i++
	}
	switch c := s.peek(); {
	case c == '0':
		s.i++
	case c >= '1' && c <= '9':
		for s.i < len(s.data) && s.data[s.i] >= '0' && s.data[s.i] <= '9' {
			s.i++
		}
	default:
		return s.unexpected("in numeric literal")
	}
	if s.peek() == '.' {
		s.i++
		if !s.digits() {
			return s.unexpected("after decimal point in numeric literal")
		}
	}
	if c := s.peek(); c == 'e' || c == 'E' {
		s.i++
		if c := s.peek(); c == '+' || c == '-' {
			s.i++
		}
		if !s.digits() {
			return s.unexpected("in exponent of numeric literal")
		}
	}
	return s.end("numeric literal")
}

func (s *scanner) digits() bool {
	start := s.i
	for s.i < len(s.data) && s.data[s.i] >= '0' && s.data[s.i] <= '9' {
		s.i++
	}
	return s.i > start
}

// end checks what follows a number or a literal: the end of the data
// (the value's end: DecodeWire is given the whole value), or a byte that
// may follow a value.
func (s *scanner) end(what string) error {
	if s.i >= len(s.data) {
		return nil
	}
	switch s.data[s.i] {
	case ' ', '\t', '\n', '\r', ',', '}', ']', ':':
		return nil
	}
	return fmt.Errorf("invalid character %q after %s", s.data[s.i], what)
}
