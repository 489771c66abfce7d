package hook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// MaxTranscriptTail bounds how much of a transcript ReadTranscript reads,
// from its end.
const MaxTranscriptTail = 4 << 20

// transcriptChunk is how much ReadTranscript reads at a time.
const transcriptChunk = 64 << 10

// Transcript holds the last messages of a Claude Code session transcript.
type Transcript struct {
	// LastUserMessage is the text of the last user prompt.
	LastUserMessage string
	// LastAssistantMessage is the last text the assistant wrote.
	LastAssistantMessage string
}

// ReadTranscript reads the last user prompt and the last assistant text of
// the transcript at path, a JSONL file Claude Code appends to (one object
// per line: "user" and "assistant" messages, "last-prompt" records and
// much else). It reads backwards from the end, a chunk at a time, and stops
// when it has both or after MaxTranscriptTail bytes. Lines of subagents
// (isSidechain) and meta messages (isMeta) are not the session's own and
// are skipped; so are user messages that only carry tool results, and
// lines that do not parse (the last one may still be being written).
//
// A message not found is empty. The error is that of opening or reading
// the file.
func ReadTranscript(path string) (Transcript, error) {
	var t Transcript
	f, err := os.Open(path)
	if err != nil {
		return t, fmt.Errorf("read transcript: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return t, fmt.Errorf("read transcript: %w", err)
	}

	end := fi.Size()
	start := max(0, end-MaxTranscriptTail)
	var carry []byte // the head of a line that began before pos
	for pos := end; pos > start; {
		n := min(int64(transcriptChunk), pos-start)
		pos -= n
		buf := make([]byte, int(n), int(n)+len(carry))
		if _, err := f.ReadAt(buf, pos); err != nil && err != io.EOF {
			return t, fmt.Errorf("read transcript: %w", err)
		}
		buf = append(buf, carry...)
		// Every line after the first newline of buf is whole; the text
		// before it joins the next chunk back, unless this is the start.
		cut := 0
		if pos > start {
			i := bytes.IndexByte(buf, '\n')
			if i < 0 {
				carry = buf
				continue
			}
			cut = i + 1
		} else if start > 0 {
			// The tail begins mid-line: drop that partial line.
			if i := bytes.IndexByte(buf, '\n'); i >= 0 {
				cut = i + 1
			} else {
				cut = len(buf)
			}
		}
		carry = buf[:cut]
		if t.scan(buf[cut:]) {
			return t, nil
		}
	}
	return t, nil
}

// scan reads the lines of b from the last to the first, filling in what t
// lacks, and reports whether t is complete.
func (t *Transcript) scan(b []byte) bool {
	for len(b) > 0 {
		i := bytes.LastIndexByte(b[:len(b)-1], '\n')
		line := b[i+1:]
		b = b[:i+1]
		if t.take(bytes.TrimSpace(line)) {
			return true
		}
	}
	return false
}

// transcriptLine is the part of a transcript line ReadTranscript reads.
type transcriptLine struct {
	Type        string `json:"type"`
	IsSidechain bool   `json:"isSidechain"`
	IsMeta      bool   `json:"isMeta"`
	LastPrompt  string `json:"lastPrompt"`
	Message     struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

var (
	markUser       = []byte(`"user"`)
	markAssistant  = []byte(`"assistant"`)
	markLastPrompt = []byte(`"last-prompt"`)
)

// take fills in t from one line and reports whether t is complete.
func (t *Transcript) take(line []byte) bool {
	if len(line) == 0 {
		return false
	}
	// Most lines are neither; skip them without decoding.
	wantUser := t.LastUserMessage == "" && (bytes.Contains(line, markUser) || bytes.Contains(line, markLastPrompt))
	wantAssistant := t.LastAssistantMessage == "" && bytes.Contains(line, markAssistant)
	if !wantUser && !wantAssistant {
		return false
	}
	var l transcriptLine
	if json.Unmarshal(line, &l) != nil || l.IsSidechain || l.IsMeta {
		return false
	}
	switch {
	case l.Type == "last-prompt" && wantUser:
		t.LastUserMessage = strings.TrimSpace(l.LastPrompt)
	case l.Type == "user" && wantUser:
		t.LastUserMessage = MessageText(l.Message.Content, false)
	case l.Type == "assistant" && wantAssistant:
		t.LastAssistantMessage = MessageText(l.Message.Content, true)
	}
	return t.LastUserMessage != "" && t.LastAssistantMessage != ""
}

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
