package backfill

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mnemo-dev/mnemo/adapters/hosts"
	"github.com/mnemo-dev/mnemo/adapters/hosts/hook"
	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/transcript"
)

// Call is one daemon call rebuilt from a transcript: what the live
// hook would have sent for one stage.
type Call struct {
	// Event is the hook event the call stands for (EventSessionStart…).
	Event string
	// Method and Params are Translate's: Params is one of the memory
	// *Params types, as a pointer.
	Method string
	Params any
}

// Counts counts what a back-fill rebuilt from transcripts.
type Counts struct {
	Sessions, Prompts, ToolEvents, Turns int
	// SkippedTools counts tool runs Translate did not record (the skip list).
	SkippedTools int
}

// Add adds o to c.
func (c *Counts) Add(o Counts) {
	c.Sessions += o.Sessions
	c.Prompts += o.Prompts
	c.ToolEvents += o.ToolEvents
	c.Turns += o.Turns
	c.SkippedTools += o.SkippedTools
}

// Transcript is one session's transcript found by a Source.
type Transcript struct {
	// SessionID is the session's id as Mnemo stores it: for Claude Code
	// the file's name without .jsonl (the session_id its hooks were
	// given), for the other hosts their id namespaced (codex:<id>).
	SessionID string
	Path      string
	ModTime   time.Time
	Size      int64
	// Cwd is the session's folder where finding the file read it (Codex,
	// Gemini); Claude Code's is read by ClaudeCodeCwd.
	Cwd string
}

// ClaudeCodeRoot is the folder Claude Code keeps its transcripts in:
// $CLAUDE_CONFIG_DIR/projects, else ~/.claude/projects.
func ClaudeCodeRoot() (string, error) {
	if d := os.Getenv("CLAUDE_CONFIG_DIR"); d != "" {
		return filepath.Join(d, "projects"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("transcripts: %w", err)
	}
	return filepath.Join(home, ".claude", "projects"), nil
}

// FindClaudeCode lists the session transcripts under root
// (<root>/<encoded-cwd>/<session-id>.jsonl; subagents' files, in folders
// below, are not sessions), oldest first. A root that does not exist has
// none.
func FindClaudeCode(root string) ([]Transcript, error) {
	var out []Transcript
	err := walkFiles(root, "", []string{".jsonl"}, func(path string, fi os.FileInfo) error {
		if rel, _ := filepath.Rel(root, path); strings.Count(filepath.ToSlash(rel), "/") != 1 {
			return nil
		}
		out = append(out, Transcript{
			SessionID: strings.TrimSuffix(filepath.Base(path), ".jsonl"),
			Path:      path,
			ModTime:   fi.ModTime(),
			Size:      fi.Size(),
		})
		return nil
	})
	sortTranscripts(out)
	return out, err
}

// Key is the event key of one rebuilt stage: memory's
// BackfillKeyPrefix and a hash of the session, the transcript's name for
// the event (a line's uuid, a tool's id, a turn's id) and the stage, so
// that a back-fill run again, however much later, stores nothing twice.
func Key(sessionID, uuid, event string) string {
	h := sha256.Sum256([]byte(sessionID + "\x00" + uuid + "\x00" + event))
	return memory.BackfillKeyPrefix + hex.EncodeToString(h[:16])
}

// ClaudeCodeCwd returns the cwd of the first line of a transcript that
// has one, "" if none does. It reads at most the file's first 1,000 lines.
func ClaudeCodeCwd(path string) (string, error) {
	var cwd string
	err := headLines(path, 1000, func(line []byte) bool {
		var l struct {
			Cwd string `json:"cwd"`
		}
		if json.Unmarshal(line, &l) == nil && l.Cwd != "" {
			cwd = l.Cwd
			return true
		}
		return false
	})
	return cwd, err
}

// headLines calls fn with each of a file's first max lines (of any
// length, without their newline) until fn says it is done.
func headLines(path string, max int, fn func(line []byte) (done bool)) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("read transcript: %w", err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	for range max {
		line, err := readLine(r)
		if len(line) > 0 && fn(line) {
			return nil
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read transcript: %w", err)
		}
	}
	return nil
}

// Options are the inputs of a back-fill besides the transcript.
type Options struct {
	// SkipTools as in TranslateOptions; nil means privacy.DefaultSkipTools.
	SkipTools []string
	// Log as in TranslateOptions.
	Log *slog.Logger
}

// bfLine is the part of a transcript line ClaudeCode reads.
type bfLine struct {
	Type             string          `json:"type"`
	UUID             string          `json:"uuid"`
	Timestamp        time.Time       `json:"timestamp"`
	Cwd              string          `json:"cwd"`
	IsSidechain      bool            `json:"isSidechain"`
	IsMeta           bool            `json:"isMeta"`
	IsCompactSummary bool            `json:"isCompactSummary"`
	ToolUseResult    json.RawMessage `json:"toolUseResult"`
	Message          struct {
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

// bfBlock is one block of a message's content array.
type bfBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// ClaudeCode reads the Claude Code transcript of session sessionID at path, from the
// first line to the last, and rebuilds the calls the live hooks would have
// made, in their order: SessionStart (the first cwd of the lines), each
// user prompt (UserPromptSubmit), each tool_use paired with its
// tool_result (PostToolUse, or PostToolUseFailure when is_error), each
// turn's end (Stop, with the turn's prompt and last assistant text) and
// SessionEnd. Lines of subagents (isSidechain), meta messages, compaction
// summaries and lines that do not parse are skipped, as are user messages
// that only carry tool results (they are the tool runs).
//
// Each call goes through Translate, as the hook's payload would, so that
// privacy and the tool skip list apply alike; the calls carry
// Key's event keys. emit gets each call as soon as it is known; its
// error stops the read and is returned. A transcript with no prompt gives
// no call.
func ClaudeCode(sessionID, path string, o Options, emit func(Call) error) (Counts, error) {
	var counts Counts
	f, err := os.Open(path)
	if err != nil {
		return counts, fmt.Errorf("read transcript: %w", err)
	}
	defer f.Close()

	b := &backfill{sid: sessionID, path: path, o: o, emit: emit, counts: &counts, tools: map[string]bfBlock{}}
	r := bufio.NewReaderSize(f, 64<<10)
	for {
		line, rerr := readLine(r)
		if len(line) > 0 {
			if err := b.line(line); err != nil {
				return counts, err
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return counts, fmt.Errorf("read transcript: %w", rerr)
		}
	}
	if !b.started {
		return counts, nil
	}
	if err := b.endTurn(); err != nil {
		return counts, err
	}
	// Keyed by the last line: a session that went on after a back-fill
	// ends again when topped up.
	if err := b.send(&hosts.Payload{HookEventName: hosts.EventSessionEnd, Reason: "other"}, b.last); err != nil {
		return counts, err
	}
	counts.Sessions = 1
	return counts, nil
}

// readLine reads one line of any length, without its newline.
func readLine(r *bufio.Reader) ([]byte, error) {
	line, err := r.ReadBytes('\n')
	return bytesTrim(line), err
}

func bytesTrim(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r' || b[len(b)-1] == ' ') {
		b = b[:len(b)-1]
	}
	return b
}

// backfill is one run of ClaudeCode.
type backfill struct {
	sid, path string
	o         Options
	emit      func(Call) error
	counts    *Counts

	cwd     string    // the last cwd seen
	at      time.Time // the time of the last line that had one
	last    string    // the uuid of the last line read
	started bool      // SessionStart sent
	// The open turn: its prompt's uuid and text, the last assistant text
	// so far, and its texts as the daemon reads a live turn's
	// (memory/transcript).
	turnUUID, turnPrompt, turnAssistant string
	inTurn                              bool
	turn                                transcript.Turn
	tools                               map[string]bfBlock // tool_use blocks awaiting their result
}

func (b *backfill) line(raw []byte) error {
	var l bfLine
	if json.Unmarshal(raw, &l) != nil || l.IsSidechain || l.IsMeta {
		return nil
	}
	if l.Cwd != "" {
		b.cwd = l.Cwd
	}
	if !l.Timestamp.IsZero() {
		b.at = l.Timestamp
	}
	if l.UUID != "" {
		b.last = l.UUID
	}
	switch l.Type {
	case "assistant":
		var blocks []bfBlock
		if json.Unmarshal(l.Message.Content, &blocks) != nil {
			return nil
		}
		for _, bl := range blocks {
			if bl.Type == "tool_use" && bl.ID != "" {
				b.tools[bl.ID] = bl
			}
		}
		if !b.inTurn {
			return nil
		}
		b.turn.AddAssistant(l.Message.Content)
		if t := hook.MessageText(l.Message.Content, true); t != "" {
			b.turnAssistant = t
		}
	case "user":
		if l.IsCompactSummary {
			return nil
		}
		if prompt := hook.MessageText(l.Message.Content, false); prompt != "" {
			if notPrompt(prompt) {
				// What follows is a stretch of its own, as the daemon
				// reads a live turn's texts (transcript.OwnText).
				b.turn = transcript.Turn{}
				return nil
			}
			return b.prompt(l, prompt)
		}
		return b.results(l)
	}
	return nil
}

// prompt ends the open turn and starts one with a user prompt.
func (b *backfill) prompt(l bfLine, prompt string) error {
	if err := b.endTurn(); err != nil {
		return err
	}
	if !b.started {
		b.started = true
		if err := b.send(&hosts.Payload{HookEventName: hosts.EventSessionStart, Source: "startup"}, ""); err != nil {
			return err
		}
	}
	b.inTurn, b.turnUUID, b.turnPrompt, b.turnAssistant, b.turn = true, l.UUID, prompt, "", transcript.Turn{}
	if err := b.send(&hosts.Payload{HookEventName: hosts.EventUserPromptSubmit, Prompt: prompt}, l.UUID); err != nil {
		return err
	}
	b.counts.Prompts++
	return nil
}

// notPrompt reports whether a user message's text is one Claude Code
// writes itself, never given to UserPromptSubmit: a local slash command
// and its output, an interruption notice.
func notPrompt(text string) bool {
	for _, p := range []string{"<command-name>", "<command-message>", "<local-command-stdout>", "<local-command-stderr>", "<local-command-caveat>", "[Request interrupted by user"} {
		if strings.HasPrefix(text, p) {
			return true
		}
	}
	return false
}

// results sends the tool runs whose results a user line carries.
func (b *backfill) results(l bfLine) error {
	var blocks []bfBlock
	if json.Unmarshal(l.Message.Content, &blocks) != nil {
		return nil
	}
	n := 0
	for _, bl := range blocks {
		if bl.Type == "tool_result" {
			n++
		}
	}
	for _, bl := range blocks {
		if bl.Type != "tool_result" {
			continue
		}
		use, ok := b.tools[bl.ToolUseID]
		if !ok || !b.started {
			continue // a result of nothing seen, or before any prompt
		}
		b.turn.ToolResult()
		delete(b.tools, bl.ToolUseID)
		p := &hosts.Payload{
			HookEventName: hosts.EventPostToolUse,
			ToolName:      use.Name,
			ToolInput:     use.Input,
			ToolUseID:     use.ID,
		}
		if bl.IsError {
			p.HookEventName = hosts.EventPostToolUseFailure
			p.Error = resultText(bl.Content)
		} else {
			// The hook's tool_response is what the transcript keeps as the
			// line's toolUseResult; only a line with one result says whose.
			p.ToolResponse = l.ToolUseResult
			if n != 1 || len(l.ToolUseResult) == 0 || string(l.ToolUseResult) == "null" {
				p.ToolResponse = bl.Content
			}
		}
		err := b.send(p, use.ID)
		switch {
		case errors.Is(err, hook.ErrSkippedTool):
			b.counts.SkippedTools++
		case err != nil:
			return err
		default:
			b.counts.ToolEvents++
		}
	}
	return nil
}

// resultText is the text of a tool_result's content: a string, or its
// text blocks joined by newlines.
func resultText(content json.RawMessage) string {
	var s string
	if json.Unmarshal(content, &s) == nil {
		return s
	}
	var blocks []bfBlock
	if json.Unmarshal(content, &blocks) != nil {
		return ""
	}
	var parts []string
	for _, bl := range blocks {
		if bl.Type == "text" {
			parts = append(parts, bl.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// endTurn sends the open turn's Stop, if it has an answer.
func (b *backfill) endTurn() error {
	if !b.inTurn {
		return nil
	}
	b.inTurn = false
	if b.turnAssistant == "" {
		return nil // interrupted before any answer: Claude Code runs no Stop
	}
	// The turn's texts, which the live daemon reads from the transcript's
	// end at the turn's end: here the transcript's end is long past.
	if err := b.send(&hosts.Payload{HookEventName: hosts.EventStop, LastAssistantMessage: b.turnAssistant, Texts: b.turn.Texts}, b.turnUUID); err != nil {
		return err
	}
	b.counts.Turns++
	return nil
}

// send translates one rebuilt payload and emits its call. uuid names the
// transcript line (or tool) the stage comes from.
func (b *backfill) send(p *hosts.Payload, uuid string) error {
	p.SessionID = b.sid
	p.TranscriptPath = b.path
	p.Cwd = b.cwd
	method, params, err := hook.Translate(p, hook.TranslateOptions{
		EventKey:  Key(b.sid, uuid, p.HookEventName),
		SkipTools: b.o.SkipTools,
		Log:       b.o.Log,
	})
	if err != nil {
		return err
	}
	setAt(params, b.at)
	return b.emit(Call{Event: p.HookEventName, Method: method, Params: params})
}

// setAt dates a rebuilt call when its work happened: the store keeps the
// work's time, not the back-fill's.
func setAt(params any, at time.Time) {
	switch pp := params.(type) {
	case *memory.SessionStartParams:
		pp.At = at
	case *memory.UserPromptParams:
		pp.At = at
	case *memory.ToolUseParams:
		pp.At = at
	case *memory.StopParams:
		pp.At = at
	case *memory.SessionEndParams:
		pp.At = at
	}
}
