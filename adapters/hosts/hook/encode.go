package hook

import (
	"encoding/json"
	"reflect"
	"time"
	"unicode/utf8"

	"github.com/mnemo-dev/mnemo/memory"
)

// encodeParams encodes a call's params as encoding/json does, the same
// JSON value: the tool event, every hook's most frequent call, without
// reflection (a first json.Marshal of a type costs a hook a tenth of a
// millisecond); the others with json.Marshal. A test holds the two to the
// same values.
func encodeParams(params any) ([]byte, error) {
	p, ok := params.(*memory.ToolUseParams)
	if !ok || toolUseFields != reflect.TypeFor[memory.ToolUseParams]().NumField() {
		return json.Marshal(params)
	}
	b := make([]byte, 0, 128+len(p.ToolInput)+len(p.ToolResponse))
	b = append(b, `{"contentSessionId":`...)
	b = appendString(b, p.ContentSessionID)
	b = append(b, `,"cwd":`...)
	b = appendString(b, p.Cwd)
	b = append(b, `,"toolName":`...)
	b = appendString(b, p.ToolName)
	if len(p.ToolInput) > 0 {
		b = append(b, `,"toolInput":`...)
		b = append(b, p.ToolInput...)
	}
	if len(p.ToolResponse) > 0 {
		b = append(b, `,"toolResponse":`...)
		b = append(b, p.ToolResponse...)
	}
	b = appendField(b, "toolUseId", p.ToolUseID)
	b = appendField(b, "platform", p.Platform)
	b = appendField(b, "source", p.Source)
	if !p.At.IsZero() {
		b = append(b, `,"at":"`...)
		b = p.At.AppendFormat(b, time.RFC3339Nano)
		b = append(b, '"')
	}
	b = appendField(b, "eventKey", p.EventKey)
	return append(b, '}'), nil
}

// toolUseFields is how many fields encodeParams knows memory.ToolUseParams
// to have: with one more, it falls back to json.Marshal (and its test
// fails until it learns the new one).
const toolUseFields = 10

// appendField appends ,"name":value unless value is empty (omitempty).
func appendField(b []byte, name, value string) []byte {
	if value == "" {
		return b
	}
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return appendString(b, value)
}

// appendString appends s as a JSON string: what JSON requires escaped,
// and U+2028 and U+2029, escaped, invalid UTF-8 as U+FFFD.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
