package modelserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Request is the part of a Messages API request body that the server reads.
// Fields it does not know (thinking, metadata, context_management, …) stay
// in Recorded.Body.
type Request struct {
	Model     string    `json:"model"`
	MaxTokens int       `json:"max_tokens"`
	Stream    bool      `json:"stream"`
	System    Content   `json:"system"`
	Messages  []Message `json:"messages"`
	Tools     []Tool    `json:"tools"`
}

// Message is one entry of Request.Messages. Role is "user", "assistant" or,
// as Claude Code sends for hook context mid-conversation, "system".
type Message struct {
	Role    string  `json:"role"`
	Content Content `json:"content"`
}

// Tool is one entry of Request.Tools; only its name is kept.
type Tool struct {
	Name string `json:"name"`
}

// Content is a list of content blocks. It decodes both forms the API accepts:
// a plain string (one text block) and an array of blocks.
type Content []Block

// Block is a content block: text, tool_use or tool_result (other types keep
// only their Type).
type Block struct {
	Type string `json:"type"`
	// Text is the text of a text block.
	Text string `json:"text,omitempty"`
	// ID, Name and Input describe a tool_use block.
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
	// ToolUseID, Content and IsError describe a tool_result block.
	ToolUseID string  `json:"tool_use_id,omitempty"`
	Content   Content `json:"content,omitempty"`
	IsError   bool    `json:"is_error,omitempty"`
}

// UnmarshalJSON accepts a string, null, or an array of blocks.
func (c *Content) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	switch {
	case bytes.Equal(data, []byte("null")):
		*c = nil
		return nil
	case len(data) > 0 && data[0] == '"':
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return fmt.Errorf("content string: %w", err)
		}
		*c = Content{{Type: "text", Text: s}}
		return nil
	}
	var blocks []Block
	if err := json.Unmarshal(data, &blocks); err != nil {
		return fmt.Errorf("content blocks: %w", err)
	}
	*c = blocks
	return nil
}

// Text joins the text of every block, one block per line: text blocks, the
// content of tool_result blocks, and the name and input of tool_use blocks.
func (c Content) Text() string {
	var b strings.Builder
	c.writeText(&b)
	return b.String()
}

func (c Content) writeText(b *strings.Builder) {
	for _, blk := range c {
		switch blk.Type {
		case "text":
			b.WriteString(blk.Text)
		case "tool_use":
			b.WriteString(blk.Name)
			b.WriteByte(' ')
			b.Write(blk.Input)
		case "tool_result":
			blk.Content.writeText(b)
		default:
			continue
		}
		b.WriteByte('\n')
	}
}

// promptText is the text of the text blocks only (no tool results).
func (c Content) promptText() string {
	var parts []string
	for _, blk := range c {
		if blk.Type == "text" {
			parts = append(parts, blk.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func (c Content) hasToolResult() bool {
	for _, blk := range c {
		if blk.Type == "tool_result" {
			return true
		}
	}
	return false
}

// Text is the whole conversation as plain text: the system prompt, then each
// message's Content.Text.
func (r *Request) Text() string {
	if r == nil {
		return ""
	}
	var b strings.Builder
	r.System.writeText(&b)
	for _, m := range r.Messages {
		m.Content.writeText(&b)
	}
	return b.String()
}

// ToolResult returns the tool_result block answering the tool_use with id.
func (r *Request) ToolResult(id string) (Block, bool) {
	if r == nil {
		return Block{}, false
	}
	for _, m := range r.Messages {
		for _, blk := range m.Content {
			if blk.Type == "tool_result" && blk.ToolUseID == id {
				return blk, true
			}
		}
	}
	return Block{}, false
}

// ToolNames lists the names in Request.Tools.
func (r *Request) ToolNames() []string {
	if r == nil {
		return nil
	}
	names := make([]string, 0, len(r.Tools))
	for _, t := range r.Tools {
		names = append(names, t.Name)
	}
	return names
}

// latestPrompt returns the index of the latest real user prompt: the last
// user message that holds no tool_result and has text outside
// <system-reminder> blocks. It returns -1 when there is none.
func (r *Request) latestPrompt() int {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		m := r.Messages[i]
		if m.Role != "user" || m.Content.hasToolResult() {
			continue
		}
		if strings.TrimSpace(stripReminders(m.Content.promptText())) != "" {
			return i
		}
	}
	return -1
}

// firstUser returns the index of the first user message, or -1.
func (r *Request) firstUser() int {
	for i, m := range r.Messages {
		if m.Role == "user" {
			return i
		}
	}
	return -1
}

// assistantsAfter counts the assistant messages after index i.
func (r *Request) assistantsAfter(i int) int {
	n := 0
	for _, m := range r.Messages[i+1:] {
		if m.Role == "assistant" {
			n++
		}
	}
	return n
}

// lastUserText is the text (text blocks only) of the last user message.
func (r *Request) lastUserText() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return r.Messages[i].Content.promptText()
		}
	}
	return ""
}

// stripReminders removes <system-reminder>…</system-reminder> spans, which
// Claude Code adds to user messages on its own (attribution, CLAUDE.md, …).
func stripReminders(s string) string {
	const open, closing = "<system-reminder>", "</system-reminder>"
	var b strings.Builder
	for {
		i := strings.Index(s, open)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		j := strings.Index(s[i:], closing)
		if j < 0 {
			return b.String()
		}
		s = s[i+j+len(closing):]
	}
}
