package privacy

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// ErrInvalidJSON is returned by CleanJSON for a payload that is not one
// valid JSON document; callers then clean the payload as a string.
var ErrInvalidJSON = errors.New("invalid JSON")

// CleanJSON applies Clean to every string in the JSON document raw, object
// keys included, and returns the document re-encoded compactly, with its
// keys in their order and its numbers as written.
//
// A string value whose key names a secret (password, api_key, token,
// Authorization and the other names Redact knows after "=" or ":") is
// redacted as the value of that assignment would be.
//
// Each string is cleaned on its own: a tag opened in one string and closed
// in another strips the first to its end and leaves a stray closing tag,
// removed, in the second; the document stays valid JSON. Cleaning is done
// on the decoded text, so a tag or a secret split by an escape (\u003c) is
// still found.
//
// A raw that is not exactly one valid JSON value returns ErrInvalidJSON.
func CleanJSON(raw []byte) ([]byte, error) {
	if !json.Valid(raw) {
		var v json.RawMessage
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidJSON, err)
		}
		return nil, ErrInvalidJSON
	}
	return CleanValidJSON(raw)
}

// CleanValidJSON is CleanJSON for a raw that is known to be one valid JSON
// value (a validating decoder read it, or an encoder wrote it): it does
// without CleanJSON's check, a pass over raw that the hook, which decoded
// the payload, has made already.
func CleanValidJSON(raw []byte) ([]byte, error) {
	dec := tokens{raw: raw}
	out := make([]byte, 0, len(raw))
	// One entry per open container: whether it is an object, and how many
	// keys and values it has had so far.
	type level struct {
		object bool
		n      int
		key    string // in an object, the last key read
	}
	var stack []level
	for {
		tok, err := dec.next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			// json.Valid accepted raw, so this is not expected.
			return nil, fmt.Errorf("%w: %w", ErrInvalidJSON, err)
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			out = append(out, byte(d))
			continue
		}
		key, isKey := "", false
		if k := len(stack); k > 0 {
			top := &stack[k-1]
			switch {
			case top.object && top.n%2 == 1:
				out = append(out, ':')
				key = top.key
			case top.n > 0:
				out = append(out, ',')
			}
			isKey = top.object && top.n%2 == 0
			if isKey {
				top.key, _ = tok.(string)
			}
			top.n++
		}
		switch v := tok.(type) {
		case json.Delim:
			out = append(out, byte(v))
			stack = append(stack, level{object: v == '{'})
		case string:
			v = Clean(v)
			if !isKey && key != "" {
				v = redactAssigned(key, v)
			}
			out = appendString(out, v)
		case json.Number:
			out = append(out, v...)
		case bool:
			if v {
				out = append(out, "true"...)
			} else {
				out = append(out, "false"...)
			}
		case nil:
			out = append(out, "null"...)
		}
	}
}

// tokens reads the tokens of a valid JSON document as json.Decoder's Token
// with UseNumber does (json.Delim, string, json.Number, bool, nil; commas
// and colons skipped), without its cost per token: a string without
// escapes that is valid UTF-8 is its raw bytes; any other goes through
// json.Unmarshal, so it decodes exactly as Token decodes it. raw must have
// passed json.Valid.
type tokens struct {
	raw []byte
	i   int
}

func (t *tokens) next() (json.Token, error) {
	raw := t.raw
	for t.i < len(raw) {
		switch raw[t.i] {
		case ' ', '\t', '\n', '\r', ',', ':':
			t.i++
			continue
		}
		break
	}
	if t.i >= len(raw) {
		return nil, io.EOF
	}
	start := t.i
	switch c := raw[start]; c {
	case '{', '}', '[', ']':
		t.i++
		return json.Delim(c), nil
	case '"':
		escaped := false
		j := start + 1
		for ; j < len(raw) && raw[j] != '"'; j++ {
			if raw[j] == '\\' {
				escaped = true
				j++
			}
		}
		t.i = j + 1
		if t.i > len(raw) {
			return nil, io.ErrUnexpectedEOF
		}
		body := raw[start+1 : j]
		if !escaped && utf8.Valid(body) {
			return string(body), nil
		}
		s, ok := UnquoteJSON(raw[start:t.i])
		if !ok {
			return nil, fmt.Errorf("invalid string at offset %d", start)
		}
		return s, nil
	case 't':
		t.i += len("true")
		return true, nil
	case 'f':
		t.i += len("false")
		return false, nil
	case 'n':
		t.i += len("null")
		return nil, nil
	}
	j := start
	for j < len(raw) && strings.IndexByte("+-.0123456789eE", raw[j]) >= 0 {
		j++
	}
	if j == start {
		return nil, fmt.Errorf("unexpected %q at offset %d", raw[start], start)
	}
	t.i = j
	return json.Number(raw[start:j]), nil
}

// appendString appends s to out as a JSON string. It escapes what JSON
// requires and U+2028 and U+2029, and writes invalid UTF-8 as U+FFFD.
func appendString(out []byte, s string) []byte {
	const hex = "0123456789abcdef"
	out = append(out, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			invalid := r == utf8.RuneError && size == 1
			if !invalid && r != '\u2028' && r != '\u2029' {
				i += size
				continue
			}
			out = append(out, s[start:i]...)
			switch {
			case invalid:
				out = append(out, `\ufffd`...)
			default:
				out = append(out, `\u202`...)
				out = append(out, hex[r&0xf])
			}
			i += size
			start = i
			continue
		}
		if c >= 0x20 && c != '"' && c != '\\' {
			i++
			continue
		}
		out = append(out, s[start:i]...)
		switch c {
		case '"', '\\':
			out = append(out, '\\', c)
		case '\n':
			out = append(out, `\n`...)
		case '\r':
			out = append(out, `\r`...)
		case '\t':
			out = append(out, `\t`...)
		default:
			out = append(out, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		i++
		start = i
	}
	out = append(out, s[start:]...)
	return append(out, '"')
}

// UnquoteJSON returns the text of the JSON string literal raw (its quotes
// included) as encoding/json decodes it: escapes resolved, a lone
// surrogate and invalid UTF-8 as U+FFFD; false when raw is not a valid
// string literal. It does without encoding/json's reflection, which a
// hook would pay for at every start.
func UnquoteJSON(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	s := raw[1 : len(raw)-1]
	r := 0
	for r < len(s) {
		c := s[r]
		if c == '\\' || c == '"' || c < ' ' {
			break
		}
		if c < utf8.RuneSelf {
			r++
			continue
		}
		rr, size := utf8.DecodeRune(s[r:])
		if rr == utf8.RuneError && size == 1 {
			break
		}
		r += size
	}
	if r == len(s) {
		return string(s), true
	}
	b := make([]byte, 0, len(s)+2*utf8.UTFMax)
	b = append(b, s[:r]...)
	for r < len(s) {
		// A run of plain ASCII is copied at once.
		run := r
		for run < len(s) {
			if c := s[run]; c < ' ' || c == '\\' || c == '"' || c >= utf8.RuneSelf {
				break
			}
			run++
		}
		if run > r {
			b = append(b, s[r:run]...)
			r = run
			continue
		}
		switch c := s[r]; {
		case c == '\\':
			r++
			if r >= len(s) {
				return "", false
			}
			switch s[r] {
			case '"', '\\', '/', '\'':
				b = append(b, s[r])
				r++
			case 'b':
				b = append(b, '\b')
				r++
			case 'f':
				b = append(b, '\f')
				r++
			case 'n':
				b = append(b, '\n')
				r++
			case 'r':
				b = append(b, '\r')
				r++
			case 't':
				b = append(b, '\t')
				r++
			case 'u':
				r--
				rr := getu4(s[r:])
				if rr < 0 {
					return "", false
				}
				r += 6
				if utf16.IsSurrogate(rr) {
					if dec := utf16.DecodeRune(rr, getu4(s[r:])); dec != utf8.RuneError {
						r += 6
						b = utf8.AppendRune(b, dec)
						break
					}
					rr = utf8.RuneError
				}
				b = utf8.AppendRune(b, rr)
			default:
				return "", false
			}
		case c == '"', c < ' ':
			return "", false
		case c < utf8.RuneSelf:
			b = append(b, c)
			r++
		default:
			rr, size := utf8.DecodeRune(s[r:])
			r += size
			b = utf8.AppendRune(b, rr)
		}
	}
	return string(b), true
}

// getu4 decodes \uXXXX at the start of s, or returns -1.
func getu4(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range s[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}
