package claudecode

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
	// LastUserMessage is the text of the person's last prompt
	// (PersonPrompt): not a task notification, a command's output or
	// anything else Claude Code wrote in the person's name.
	LastUserMessage string
	// LastAssistantMessage is the last text the assistant wrote.
	LastAssistantMessage string

	// afterLocal: a later line (read first) was a local command's
	// output, so the command before it was no prompt.
	afterLocal bool
	// lastPrompt is the latest last-prompt line's: the prompt flattened
	// to one line and cut at about 200 characters, and not written for
	// every turn (2.1), so only what is used when no prompt is found.
	lastPrompt string
}

// ReadTranscript reads the last user prompt and the last assistant text of
// the transcript at path, a JSONL file Claude Code appends to (one object
// per line: "user" and "assistant" messages, "last-prompt" records and
// much else). It reads backwards from the end, a chunk at a time, and stops
// when it has both or after MaxTranscriptTail bytes. Lines of subagents
// (isSidechain) are not the session's own and are skipped; so are user
// messages that are not the person's prompt (PersonPrompt: tool results,
// meta messages, task notifications, a command that ran locally), and
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
	if t.LastUserMessage == "" {
		t.LastUserMessage = t.lastPrompt
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
	Type             string `json:"type"`
	IsSidechain      bool   `json:"isSidechain"`
	IsMeta           bool   `json:"isMeta"`
	IsCompactSummary bool   `json:"isCompactSummary"`
	LastPrompt       string `json:"lastPrompt"`
	Message          struct {
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
	if json.Unmarshal(line, &l) != nil || l.IsSidechain {
		return false
	}
	switch {
	case l.Type == "last-prompt" && wantUser && t.lastPrompt == "":
		raw, _ := json.Marshal(l.LastPrompt)
		if text, kind := PersonPrompt(raw, false); kind == PromptPerson || kind == PromptCommand {
			t.lastPrompt = text
		}
	case l.Type == "user" && wantUser:
		text, kind := PersonPrompt(l.Message.Content, l.IsMeta || l.IsCompactSummary)
		switch {
		case kind == PromptLocal:
			t.afterLocal = true
		case kind == PromptCommand && t.afterLocal:
			// It ran locally; 2.1 wrote it as typed just before, too.
		case kind == PromptPerson && t.afterLocal && strings.HasPrefix(text, "/"):
			t.afterLocal = false
		case kind == PromptPerson || kind == PromptCommand:
			t.LastUserMessage = text
		}
	case l.Type == "assistant" && wantAssistant:
		t.LastAssistantMessage = messageText(l.Message.Content, true)
	}
	return t.LastUserMessage != "" && t.LastAssistantMessage != ""
}

// messageText returns the text of a message's content: a string, or the
// text blocks of an array joined by blank lines. A user message whose
// array holds a tool_result is a tool's answer, not a prompt: it has no
// text here.
func messageText(content json.RawMessage, assistant bool) string {
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

// PromptKind says whose a user message of a transcript is.
type PromptKind int

// The kinds of user message.
const (
	// PromptNone has no text: tool results.
	PromptNone PromptKind = iota
	// PromptPerson is what the person typed.
	PromptPerson
	// PromptCommand is a slash command the person typed ("/name args"): a
	// prompt when it reached the model (a custom command, a skill), not
	// when it ran locally (/compact, /cost: a PromptLocal follows).
	PromptCommand
	// PromptLocal is the output of a command that ran locally, or of a
	// shell command the person ran with "!".
	PromptLocal
	// PromptInjected is written by Claude Code in the person's name: meta
	// messages, caveats, task notifications, compaction summaries, skill
	// bodies, interruption notices.
	PromptInjected
)

// caveat starts the meta message Claude Code writes before a local
// command's messages (the command as typed, its output, a refusal).
const caveat = "Caveat: The messages below were generated by the user while running local commands"

// injectedPrefixes start the user messages Claude Code writes itself.
var injectedPrefixes = []string{
	"<task-notification>", "<bash-notification>", "<agent-notification>", "<local-command-caveat>",
	caveat,
	"[Request interrupted by user",
	"This session is being continued from a previous conversation",
	"Base directory for this skill:",
	"<user-memory-input>",
}

// localPrefixes start the outputs of what ran without the model.
var localPrefixes = []string{"<local-command-stdout>", "<local-command-stderr>", "<bash-input>", "<bash-stdout>", "<bash-stderr>"}

// PersonPrompt says whose a user message is, from its content and
// whether the line is a meta message or a compaction summary (isMeta,
// isCompactSummary), and returns the prompt as the person typed it: the
// text, or for a slash command "/name args", as UserPromptSubmit gets it.
//
// What Claude Code adds to a prompt is not part of it: <system-reminder>
// blocks, and the editor's <ide_opened_file> and <ide_selection>.
func PersonPrompt(content json.RawMessage, meta bool) (string, PromptKind) {
	text := messageText(content, false)
	if strings.Contains(text, "<") {
		had := text != ""
		for _, tag := range addedTags {
			text = stripTag(text, tag)
		}
		if text = strings.TrimSpace(text); had && text == "" {
			return "", PromptInjected
		}
	}
	switch {
	case text == "":
		return "", PromptNone
	case meta:
		return "", PromptInjected
	}
	for _, p := range localPrefixes {
		if strings.HasPrefix(text, p) {
			return "", PromptLocal
		}
	}
	for _, p := range injectedPrefixes {
		if strings.HasPrefix(text, p) {
			return "", PromptInjected
		}
	}
	if name, ok := tagText(text, "command-name"); ok && (strings.HasPrefix(text, "<command-") || strings.HasPrefix(text, "<command-message>")) {
		name = strings.TrimSpace(name)
		if name == "" {
			return "", PromptInjected
		}
		if !strings.HasPrefix(name, "/") {
			name = "/" + name
		}
		if args, _ := tagText(text, "command-args"); strings.TrimSpace(args) != "" {
			name += " " + strings.TrimSpace(args)
		}
		return name, PromptCommand
	}
	return text, PromptPerson
}

// addedTags are the blocks Claude Code adds to what the person typed.
var addedTags = []string{"system-reminder", "ide_opened_file", "ide_selection"}

// stripTag removes every <tag>…</tag> span of s (an unclosed one to the
// end).
func stripTag(s, tag string) string {
	open, closing := "<"+tag+">", "</"+tag+">"
	for {
		i := strings.Index(s, open)
		if i < 0 {
			return s
		}
		j := strings.Index(s[i:], closing)
		if j < 0 {
			return s[:i]
		}
		s = s[:i] + s[i+j+len(closing):]
	}
}

// tagText is the text between <tag> and </tag> in s.
func tagText(s, tag string) (string, bool) {
	_, rest, ok := strings.Cut(s, "<"+tag+">")
	if !ok {
		return "", false
	}
	in, _, ok := strings.Cut(rest, "</"+tag+">")
	return in, ok
}
