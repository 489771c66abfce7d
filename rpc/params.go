package rpc

import (
	"bytes"
	"encoding"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	json "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"go.lsp.dev/jsonrpc2"
)

// validator is what a params type may implement to check itself after
// decoding.
type validator interface{ Validate() error }

// decodeParams decodes raw params into a P with codec (by default
// jsonrpc2.DefaultCodec, json/v2: names match case-sensitively, unknown names
// are ignored). Absent
// or null params leave the zero P. Then Validate runs if *P or P has it. Any
// failure is a CodeInvalidParams *Error whose message names the field.
func decodeParams[P any](codec jsonrpc2.Codec, raw jsonrpc2.RawMessage) (P, *Error) {
	var p P
	if len(raw) > 0 && string(raw) != "null" {
		if err := codec.Unmarshal(raw, &p); err != nil {
			return p, &Error{Code: CodeInvalidParams, Message: "invalid params: " + describeDecodeError(raw, err, func() error {
				var q P
				return jsonrpc2.DefaultCodec.Unmarshal(raw, &q)
			})}
		}
	}
	var verr error
	if v, ok := any(&p).(validator); ok {
		verr = v.Validate()
	} else if v, ok := any(p).(validator); ok {
		verr = v.Validate()
	}
	if verr != nil {
		if e, ok := errors.AsType[*Error](verr); ok {
			return p, e
		}
		return p, InvalidParams("%s", verr.Error())
	}
	return p, nil
}

// isJSONError reports whether err is a json/v2 decode error, which carries
// a JSON pointer.
func isJSONError(err error) bool {
	if _, ok := errors.AsType[*json.SemanticError](err); ok {
		return true
	}
	_, ok := errors.AsType[*jsontext.SyntacticError](err)
	return ok
}

// describeDecodeError renders a decode error of raw for a client:
// `field "limit": expected number, got string`. A json/v2 error names the
// field by its JSON pointer. Another codec's error that ends "at offset N"
// (protocol's) is located in raw. Otherwise plainJSON (a json/v2 decode of
// the same type) may name the field; failing all that, err's own message.
func describeDecodeError(raw []byte, err error, plainJSON func() error) string {
	if msg, ok := describeJSONError(err); ok {
		return msg
	}
	if msg, off, ok := splitOffset(innermost(err).Error()); ok {
		if ptr, kind, ok := locate(raw, off); ok {
			if ptr == "" {
				return fmt.Sprintf("%s (got %s)", msg, kind)
			}
			return fmt.Sprintf("field %q: %s (got %s)", fieldName(ptr), msg, kind)
		}
	}
	if plainJSON != nil {
		if msg, ok := describeJSONError(plainJSON()); ok {
			return msg
		}
	}
	return err.Error()
}

// describeJSONError describes a json/v2 error that names where it failed.
func describeJSONError(err error) (string, bool) {
	var (
		ptr  jsontext.Pointer
		what string
	)
	if se, ok := errors.AsType[*json.SemanticError](err); ok {
		if se.JSONPointer == "" && se.JSONKind == 0 {
			// A type that decodes itself failed inside; nothing located.
			return "", false
		}
		ptr = se.JSONPointer
		what = describeSemantic(se)
	} else if se, ok := errors.AsType[*jsontext.SyntacticError](err); ok {
		ptr = se.JSONPointer
		what = "malformed JSON"
		if se.Err != nil {
			what = se.Err.Error()
		}
	} else {
		return "", false
	}
	if ptr == "" {
		return what, true
	}
	return fmt.Sprintf("field %q: %s", fieldName(ptr), what), true
}

func innermost(err error) error {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
}

// splitOffset splits "pkg: what went wrong at offset 23" into "what went
// wrong" and 23.
func splitOffset(msg string) (string, int64, bool) {
	i := strings.LastIndex(msg, " at offset ")
	if i < 0 {
		return "", 0, false
	}
	off, err := strconv.ParseInt(msg[i+len(" at offset "):], 10, 64)
	if err != nil || off < 0 {
		return "", 0, false
	}
	msg = msg[:i]
	if j := strings.Index(msg, ": "); j > 0 && !strings.ContainsAny(msg[:j], " \"") {
		msg = msg[j+2:] // a "pkg: " prefix
	}
	return msg, off, true
}

// locate finds the JSON value of raw that contains byte offset off, and
// returns its pointer and kind.
func locate(raw []byte, off int64) (jsontext.Pointer, string, bool) {
	dec := jsontext.NewDecoder(bytes.NewReader(raw))
	for {
		tok, err := dec.ReadToken()
		if err != nil {
			return "", "", false
		}
		if dec.InputOffset() > off {
			kind := kindName(tok.Kind())
			if k := tok.Kind(); k == '}' || k == ']' {
				kind = "end of " + map[jsontext.Kind]string{'}': "object", ']': "array"}[k]
			}
			return dec.StackPointer(), kind, true
		}
	}
}

func describeSemantic(se *json.SemanticError) string {
	got := kindName(se.JSONKind)
	want := goKindName(se.GoType)
	switch {
	case se.Err == nil && want != "" && got != "" && want != got:
		return fmt.Sprintf("expected %s, got %s", want, got)
	case se.Err != nil && len(se.JSONValue) > 0:
		return fmt.Sprintf("invalid %s %s: %v", got, truncate(string(se.JSONValue), 40), se.Err)
	case se.Err != nil && got != "":
		return fmt.Sprintf("invalid %s: %v", got, se.Err)
	case se.Err != nil:
		return se.Err.Error()
	case got != "" && se.GoType != nil:
		return fmt.Sprintf("cannot use %s as %s", got, se.GoType)
	default:
		return "cannot decode value"
	}
}

// fieldName turns a JSON pointer into a dotted path: /filter/ids/3 becomes
// filter.ids[3].
func fieldName(ptr jsontext.Pointer) string {
	var b strings.Builder
	for tok := range ptr.Tokens() {
		if _, err := strconv.ParseUint(tok, 10, 64); err == nil && b.Len() > 0 {
			b.WriteString("[" + tok + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(tok)
	}
	return b.String()
}

func kindName(k jsontext.Kind) string {
	switch k {
	case 'n':
		return "null"
	case 't', 'f':
		return "boolean"
	case '"':
		return "string"
	case '0':
		return "number"
	case '{':
		return "object"
	case '[':
		return "array"
	}
	return ""
}

var (
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	jsonFromType        = reflect.TypeFor[json.UnmarshalerFrom]()
)

// goKindName is the JSON kind a Go type decodes from, or "" when the type
// decodes itself (time.Time, custom unmarshalers) or takes anything.
func goKindName(t reflect.Type) string {
	if t == nil {
		return ""
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	pt := reflect.PointerTo(t)
	if pt.Implements(textUnmarshalerType) || pt.Implements(jsonUnmarshalerType) || pt.Implements(jsonFromType) {
		return ""
	}
	switch t.Kind() {
	case reflect.Bool:
		return "boolean"
	case reflect.String:
		return "string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return "" // []byte decodes from a base64 string
		}
		return "array"
	case reflect.Struct, reflect.Map:
		return "object"
	}
	return ""
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
