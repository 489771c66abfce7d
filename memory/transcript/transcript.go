// Package transcript reads what a turn of a Claude Code session said from
// the session's transcript: the person's prompt, and the texts the agent
// wrote, in order, each with the tool calls that came right after it (the
// text is why the agent made them; the last text is its answer).
//
// A transcript is a JSONL file Claude Code appends to, one object a line:
// "user" and "assistant" messages among many other kinds (attachments,
// queue operations, summaries, API request records…), which are skipped,
// as are lines that do not parse (the last one may still be being
// written), sub-agents' lines (isSidechain) and meta messages. An
// assistant message may take several lines, one content block each: a
// text, a thinking block (skipped), a tool_use.
//
// The daemon reads the last turn at the turn's end (ReadLastTurn), the
// back-fill builds every turn while it reads a transcript from the start
// (Turn.AddAssistant): the two read the texts alike.
//
// Costs: ReadLastTurn reads the file backwards from its end, a chunk at a
// time, and stops at the line of the turn's prompt or after maxBytes; it
// decodes only the lines that may be a prompt or an assistant message,
// and never the tool results that make most of a transcript's bytes.
package transcript

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/mnemo-dev/mnemo/memory"
)

// DefaultMaxBytes is how much of a transcript's end ReadLastTurn reads
// when asked for no bound: a turn whose texts and tool calls take more is
// read from its end only (LastTurn.Complete false).
const DefaultMaxBytes = 4 << 20

// chunk is how much ReadLastTurn reads at a time.
const chunk = 64 << 10

// A Turn is what one turn of a session said.
type Turn struct {
	// Prompt is the text of the person's prompt that opened the turn; ""
	// when the turn was opened by a message Claude Code writes itself (a
	// slash command's output, a task notification) or was not reached.
	Prompt string
	// Texts are the agent's texts, in order.
	Texts []memory.TurnText
	// open is set while the last text may still be followed by the tool
	// calls it explains.
	open bool
}

// AddAssistant adds the content of one assistant line (a string, or an
// array of blocks) to the turn: each text block is a new text; each
// tool_use block that follows a text, with no other text and no tool
// result between them, joins that text's tool calls.
func (t *Turn) AddAssistant(content json.RawMessage) {
	var s string
	if json.Unmarshal(content, &s) == nil {
		t.addText(s)
		return
	}
	var blocks []block
	if json.Unmarshal(content, &blocks) != nil {
		return
	}
	for _, b := range blocks {
		switch b.Type {
		case "text":
			t.addText(b.Text)
		case "tool_use":
			if n := len(t.Texts); n > 0 && t.open && b.ID != "" {
				t.Texts[n-1].ToolUseIDs = append(t.Texts[n-1].ToolUseIDs, b.ID)
			}
		}
	}
}

// ToolResult marks a tool's result in the turn: the calls after it were
// made on what the result said, not for the text before it.
func (t *Turn) ToolResult() { t.open = false }

func (t *Turn) addText(s string) {
	if s = strings.TrimSpace(s); s == "" {
		return
	}
	t.Texts = append(t.Texts, memory.TurnText{Text: s})
	t.open = true
}

// block is one block of a message's content array.
type block struct {
	Type string `json:"type"`
	Text string `json:"text"`
	ID   string `json:"id"`
}

// line is the part of a transcript line the reader decodes.
type line struct {
	Type             string `json:"type"`
	IsSidechain      bool   `json:"isSidechain"`
	IsMeta           bool   `json:"isMeta"`
	IsCompactSummary bool   `json:"isCompactSummary"`
	Message          struct {
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

// UserText returns the text of a user message's content: a string, or
// its text blocks joined by blank lines; "" for a message that carries a
// tool's result (it is the tool run's, not a prompt).
func UserText(content json.RawMessage) string {
	var s string
	if json.Unmarshal(content, &s) == nil {
		return strings.TrimSpace(s)
	}
	var blocks []block
	if json.Unmarshal(content, &blocks) != nil {
		return ""
	}
	var parts []string
	for _, b := range blocks {
		switch {
		case b.Type == "tool_result":
			return ""
		case b.Type == "text" && strings.TrimSpace(b.Text) != "":
			parts = append(parts, strings.TrimSpace(b.Text))
		}
	}
	return strings.Join(parts, "\n\n")
}

// OwnText reports whether the text of a user message is one Claude Code
// writes itself rather than a prompt the person typed: a local slash
// command and its output, an interruption notice, a background task's,
// shell's or agent's notification. Such a message still starts a new
// stretch of the conversation (ReadLastTurn stops there).
func OwnText(text string) bool {
	for _, p := range []string{"<command-name>", "<command-message>", "<local-command-stdout>", "<local-command-stderr>", "<local-command-caveat>", "<task-notification>", "<bash-notification>", "<agent-notification>", "[Request interrupted by user"} {
		if strings.HasPrefix(text, p) {
			return true
		}
	}
	return false
}

// LastTurn is the last turn of a transcript as ReadLastTurn found it.
type LastTurn struct {
	Turn
	// Complete is set when the line of the turn's prompt was read: the
	// turn is whole; else its texts are those of the bytes read.
	Complete bool
	// Read is how many bytes of the file were read.
	Read int64
}

// Markers that tell, before decoding, what a line may be. A quote inside
// a JSON string is escaped, so these appear bare only as the line's own
// structure.
var (
	markUser            = []byte(`"user"`)
	markAssistant       = []byte(`"assistant"`)
	markToolUseID       = []byte(`"tool_use_id"`)
	markToolResult      = []byte(`"tool_result"`)
	markSidechain       = []byte(`"isSidechain":true`)
	markSidechainSpaced = []byte(`"isSidechain": true`)
)

// ReadLastTurn reads the last turn of the Claude Code transcript at path:
// the lines after the last prompt line (a user message with text, not a
// tool's result), read backwards from the end of the file, at most
// maxBytes bytes (DefaultMaxBytes when maxBytes <= 0). A path that is not
// a regular file is refused (a FIFO would block the reader).
//
// The error is that of opening or reading the file; a turn not found is
// an empty LastTurn.
func ReadLastTurn(path string, maxBytes int64) (LastTurn, error) {
	var out LastTurn
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	fi, err := os.Stat(path)
	if err != nil {
		return out, fmt.Errorf("read transcript: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return out, fmt.Errorf("read transcript: %s is not a regular file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return out, fmt.Errorf("read transcript: %w", err)
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return out, fmt.Errorf("read transcript: %w", err)
	}
	end := fi.Size()
	start := max(0, end-maxBytes)
	var (
		carry []byte            // the head of a line that began before pos
		lines []json.RawMessage // the assistant lines' contents, last first; nil for a tool result
	)
	for pos := end; pos > start; {
		n := min(int64(chunk), pos-start)
		pos -= n
		buf := make([]byte, int(n), int(n)+len(carry))
		if _, err := f.ReadAt(buf, pos); err != nil && !errors.Is(err, io.EOF) {
			return out, fmt.Errorf("read transcript: %w", err)
		}
		out.Read += n
		buf = append(buf, carry...)
		// Every line after the first newline of buf is whole; the text
		// before it joins the next chunk back, unless this is the start.
		cut := 0
		switch {
		case pos > start:
			i := bytes.IndexByte(buf, '\n')
			if i < 0 {
				carry = buf
				continue
			}
			cut = i + 1
		case start > 0:
			// The bytes read begin mid-line: that line is not whole.
			if i := bytes.IndexByte(buf, '\n'); i >= 0 {
				cut = i + 1
			} else {
				cut = len(buf)
			}
		}
		carry = buf[:cut]
		for b := buf[cut:]; len(b) > 0; {
			i := bytes.LastIndexByte(b[:len(b)-1], '\n')
			raw := bytes.TrimSpace(b[i+1:])
			b = b[:i+1]
			switch kind, prompt, content := classify(raw); kind {
			case kindAssistant:
				lines = append(lines, content)
			case kindResult:
				lines = append(lines, nil)
			case kindPrompt:
				out.Prompt, out.Complete = prompt, true
				out.build(lines)
				return out, nil
			}
		}
	}
	out.build(lines)
	return out, nil
}

// build adds the assistant contents and tool results (last first) to the
// turn in order.
func (t *LastTurn) build(lines []json.RawMessage) {
	for _, c := range slices.Backward(lines) {
		if c == nil {
			t.ToolResult()
		} else {
			t.AddAssistant(c)
		}
	}
}

// The kinds of line classify tells apart.
const (
	kindOther     = iota
	kindAssistant // an assistant message of the session
	kindResult    // a user message carrying a tool's result
	kindPrompt    // a user message with text: the start of a turn
)

// classify reads one line: an assistant message of the session (and its
// content), a tool's result, a prompt line (and its text, "" for one
// Claude Code wrote itself), or another line.
func classify(raw []byte) (kind int, prompt string, content json.RawMessage) {
	if len(raw) == 0 {
		return kindOther, "", nil
	}
	user := bytes.Contains(raw, markUser)
	assistant := bytes.Contains(raw, markAssistant)
	if !user && !assistant {
		return kindOther, "", nil
	}
	if !assistant && (bytes.Contains(raw, markToolUseID) || bytes.Contains(raw, markToolResult)) {
		// A tool's result: most of the bytes, never decoded. A sub-agent's
		// is not the session's.
		if bytes.Contains(raw, markSidechain) || bytes.Contains(raw, markSidechainSpaced) {
			return kindOther, "", nil
		}
		return kindResult, "", nil
	}
	var l line
	if json.Unmarshal(raw, &l) != nil || l.IsSidechain || l.IsMeta {
		return kindOther, "", nil
	}
	switch l.Type {
	case "assistant":
		if len(l.Message.Content) == 0 {
			return kindOther, "", nil
		}
		return kindAssistant, "", l.Message.Content
	case "user":
		if l.IsCompactSummary {
			return kindOther, "", nil
		}
		text := UserText(l.Message.Content)
		if text == "" {
			return kindOther, "", nil
		}
		if OwnText(text) {
			text = ""
		}
		return kindPrompt, text, nil
	}
	return kindOther, "", nil
}
