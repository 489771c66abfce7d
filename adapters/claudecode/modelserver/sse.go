package modelserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"unicode/utf8"
)

// maxChunk bounds the bytes of one text_delta or input_json_delta.
const maxChunk = 128

// message is a reply with its id and model.
type message struct {
	ID    string
	Model string
	reply
}

// wireBlock is a content block as the API sends it in a full message.
func wireBlock(b Block) map[string]any {
	if b.Type == "tool_use" {
		return map[string]any{"type": "tool_use", "id": b.ID, "name": b.Name, "input": json.RawMessage(b.Input)}
	}
	return map[string]any{"type": "text", "text": b.Text}
}

// final is the whole message, as a non-streaming reply.
func (m message) final() map[string]any {
	content := make([]any, 0, len(m.content))
	for _, b := range m.content {
		content = append(content, wireBlock(b))
	}
	return map[string]any{
		"id": m.ID, "type": "message", "role": "assistant", "model": m.Model,
		"content": content, "stop_reason": m.stop, "stop_sequence": nil, "usage": m.usage,
	}
}

// writeStream sends the message as server-sent events, in the order the
// Messages API uses, flushing after each event. The connection is closed
// after the reply, as the probe's server did.
func writeStream(w http.ResponseWriter, m message) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "close")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	send := func(event string, data map[string]any) bool {
		data["type"] = event
		js, err := json.Marshal(data)
		if err != nil {
			return false
		}
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, js); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return true
	}

	startUsage := m.usage
	startUsage.OutputTokens = 1
	if !send("message_start", map[string]any{"message": map[string]any{
		"id": m.ID, "type": "message", "role": "assistant", "model": m.Model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": startUsage,
	}}) {
		return
	}
	for i, b := range m.content {
		var start map[string]any
		var deltas []map[string]any
		if b.Type == "tool_use" {
			start = map[string]any{"type": "tool_use", "id": b.ID, "name": b.Name, "input": map[string]any{}}
			for _, c := range chunks(string(b.Input)) {
				deltas = append(deltas, map[string]any{"type": "input_json_delta", "partial_json": c})
			}
		} else {
			start = map[string]any{"type": "text", "text": ""}
			for _, c := range chunks(b.Text) {
				deltas = append(deltas, map[string]any{"type": "text_delta", "text": c})
			}
		}
		if !send("content_block_start", map[string]any{"index": i, "content_block": start}) {
			return
		}
		for _, d := range deltas {
			if !send("content_block_delta", map[string]any{"index": i, "delta": d}) {
				return
			}
		}
		if !send("content_block_stop", map[string]any{"index": i}) {
			return
		}
	}
	if !send("message_delta", map[string]any{
		"delta": map[string]any{"stop_reason": m.stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": m.usage.OutputTokens},
	}) {
		return
	}
	send("message_stop", map[string]any{})
}

// chunks splits s into pieces of at most maxChunk bytes, at rune boundaries,
// and into at least two pieces when s has two runes or more, so that clients
// always exercise joining deltas.
func chunks(s string) []string {
	size := min(maxChunk, (len(s)+1)/2)
	var out []string
	for len(s) > 0 {
		n := min(max(size, 1), len(s))
		for n < len(s) && !utf8.RuneStart(s[n]) {
			n++
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}
