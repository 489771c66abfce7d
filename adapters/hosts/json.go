package hosts

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// The JSON the hosts' payloads carry, and the JSON Mnemo writes for them.

// firstOf is the first of ss that is not empty.
func firstOf(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// firstRaw is the first of rs that is neither absent nor null.
func firstRaw(rs ...json.RawMessage) json.RawMessage {
	for _, r := range rs {
		if len(r) > 0 && string(r) != "null" {
			return r
		}
	}
	return nil
}

// errorText is an error field as text: a string as is, an object's
// message, anything else as its JSON.
func errorText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var o struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &o) == nil && o.Message != "" {
		return o.Message
	}
	return string(raw)
}

// unquoteJSON turns a JSON string that holds JSON into that JSON; any
// other value stays as it is.
func unquoteJSON(raw json.RawMessage) json.RawMessage {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return raw
	}
	if t := strings.TrimSpace(s); t != "" && json.Valid([]byte(t)) {
		return json.RawMessage(t)
	}
	return raw
}

// RawJSON is MarshalJSON's text of v, nil when v cannot be encoded.
func RawJSON(v any) json.RawMessage {
	b, err := MarshalJSON(v)
	if err != nil {
		return nil
	}
	return b
}

// timeMark is a host's timestamp as one text, whatever its form: Copilot
// CLI stamps one event in ms since the epoch in its camelCase dialect and
// in ISO 8601 in its PascalCase one, so both become ms.
func timeMark(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	var iso string
	if json.Unmarshal(raw, &iso) == nil {
		if t, err := time.Parse(time.RFC3339Nano, iso); err == nil {
			return strconv.FormatInt(t.UnixMilli(), 10)
		}
		return iso
	}
	return string(raw)
}

// MarshalJSON encodes v compactly without escaping <, > and &: how the
// hook writes its answers and the installers their entries.
func MarshalJSON(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}
