package hook

import (
	"encoding/json"
	"strings"
)

// The hook never reads a transcript: the daemon reads a Claude Code
// turn's texts at the turn's end (memory/transcript); the back-fill reads
// whole transcripts (adapters/hosts/backfill).

// MessageText returns the text of a message's content: a string, or the
// text blocks of an array joined by blank lines. A user message whose
// array holds a tool_result is a tool's answer, not a prompt: it has no
// text here.
func MessageText(content json.RawMessage, assistant bool) string {
	var s string
	if json.Unmarshal(content, &s) == nil {
		return strings.TrimSpace(s)
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(content, &blocks) != nil {
		return ""
	}
	var parts []string
	for _, b := range blocks {
		switch {
		case b.Type == "tool_result" && !assistant:
			return ""
		case b.Type == "text" && strings.TrimSpace(b.Text) != "":
			parts = append(parts, strings.TrimSpace(b.Text))
		}
	}
	return strings.Join(parts, "\n\n")
}
