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
	"sort"
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
	// Sidechains are the transcripts of the session's sub-agents that are
	// files of their own (Claude Code: agent-*.jsonl beside the session,
	// or in <session>/subagents/); their tool runs are the session's.
	Sidechains []string
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
// (<root>/<encoded-cwd>/<session-id>.jsonl), oldest first, each with its
// sub-agents' transcripts: the <session-id>/subagents/agent-*.jsonl
// files of Claude Code 2.1, and the agent-*.jsonl files beside the
// sessions (2.0) whose lines name the session. A root that does not
// exist has none.
func FindClaudeCode(root string) ([]Transcript, error) {
	var out []Transcript
	byDir := map[string][]string{} // agent-*.jsonl beside the sessions, by folder
	err := walkFiles(root, "", []string{".jsonl"}, func(path string, fi os.FileInfo) error {
		rel, _ := filepath.Rel(root, path)
		if strings.Count(filepath.ToSlash(rel), "/") != 1 {
			return nil // below a session's folder: read with the session
		}
		if strings.HasPrefix(filepath.Base(path), "agent-") {
			byDir[filepath.Dir(path)] = append(byDir[filepath.Dir(path)], path)
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
	// Each agent file beside the sessions belongs to the session its
	// first line names.
	owner := map[string][]string{} // session file → its agents' files
	for dir, agents := range byDir {
		for _, a := range agents {
			if sid := transcriptSessionID(a); sid != "" {
				p := filepath.Join(dir, sid+".jsonl")
				owner[p] = append(owner[p], a)
			}
		}
	}
	for i := range out {
		out[i].Sidechains = append(owner[out[i].Path], subagentFiles(out[i].Path)...)
		sort.Strings(out[i].Sidechains)
	}
	sortTranscripts(out)
	return out, err
}

// sidechainsOf finds the sub-agents' transcripts of the session sessionID
// whose transcript is path, as FindClaudeCode does.
func sidechainsOf(sessionID, path string) []string {
	var out []string
	beside, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "agent-*.jsonl"))
	for _, a := range beside {
		if transcriptSessionID(a) == sessionID {
			out = append(out, a)
		}
	}
	out = append(out, subagentFiles(path)...)
	sort.Strings(out)
	return out
}

// subagentFiles lists <session>/subagents/*.jsonl of a session transcript.
func subagentFiles(path string) []string {
	files, _ := filepath.Glob(filepath.Join(strings.TrimSuffix(path, ".jsonl"), "subagents", "*.jsonl"))
	return files
}

// transcriptSessionID is the sessionId of a transcript's first line that
// has one, "" if none of its first 50 lines does.
func transcriptSessionID(path string) string {
	var sid string
	_ = headLines(path, 50, func(line []byte) bool {
		var l struct {
			SessionID string `json:"sessionId"`
		}
		if json.Unmarshal(line, &l) == nil && l.SessionID != "" {
			sid = l.SessionID
			return true
		}
		return false
	})
	return sid
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
		ID         string          `json:"id"`
		StopReason string          `json:"stop_reason"`
		Content    json.RawMessage `json:"content"`
	} `json:"message"`

	sidechain bool // a sub-agent's line: flagged, or read from its own file
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

// ClaudeCode reads the Claude Code transcript of session sessionID at
// path, from the first line to the last, with its sub-agents' transcripts
// (FindClaudeCode says where they are), and rebuilds the calls the live
// hooks would have
// made, in their order: SessionStart (the first cwd of the lines), each
// prompt of the person (UserPromptSubmit), each tool_use paired with its
// tool_result (PostToolUse, or PostToolUseFailure when is_error), the
// sub-agents' as well (their lines merged in by time, as their hooks
// fired), each turn's end (Stop, with the turn's prompt and last
// assistant text: at the answer that ends the turn, else when the person
// types again; a background task's notification the model answers ends
// the turn before and opens one under the same prompt) and SessionEnd.
//
// A prompt is what the person typed: a slash command that reached the
// model is its "/name args"; what Claude Code writes in the person's name
// is not (hook.PersonPrompt: command outputs, caveats, task notifications,
// skill bodies, compaction summaries, meta messages), and neither is a
// turn copied from an earlier transcript (a resumed or forked session
// starts with the conversation it continues; an SDK session in 1.0 writes
// the conversation again before each new message): a copied prompt's
// answer was written in the same instant as the prompt, or had been
// written before. Lines that do not parse are skipped.
//
// Each call goes through Translate, as the hook's payload would, so that
// privacy and the tool skip list apply alike; the calls carry
// Key's event keys. emit gets each call as soon as it is known; its
// error stops the read and is returned. A transcript with no prompt gives
// no call.
func ClaudeCode(sessionID, path string, o Options, emit func(Call) error) (Counts, error) {
	return claudeCode(Transcript{SessionID: sessionID, Path: path, Sidechains: sidechainsOf(sessionID, path)}, o, emit)
}

// copiedWithin is how soon after a prompt its answer was written for the
// turn to be a copy: a model's answer takes longer than this to come.
const copiedWithin = 50 * time.Millisecond

// claudeCode is ClaudeCode of a transcript FindClaudeCode found, with the
// sub-agents' transcripts it found for it.
func claudeCode(f Transcript, o Options, emit func(Call) error) (Counts, error) {
	var counts Counts
	main, err := openLines(f.Path, false)
	if err != nil {
		return counts, err
	}
	defer main.close()
	var sides []*lineReader
	defer func() {
		for _, s := range sides {
			s.close()
		}
	}()
	for _, p := range f.Sidechains {
		s, err := readSidechain(p)
		if err != nil {
			return counts, err
		}
		sides = append(sides, s)
	}

	b := &backfill{sid: f.SessionID, path: f.Path, o: o, emit: emit, counts: &counts,
		tools: map[string]bfBlock{}, copied: map[string]bool{}, answers: map[string]bool{}}
	// drain handles the sub-agents' lines written before t (all of them
	// when t is zero), oldest first.
	drain := func(t time.Time) error {
		for {
			var next *lineReader
			for _, s := range sides {
				l, ok, err := s.peek()
				if err != nil {
					return err
				}
				if ok && (t.IsZero() || l.Timestamp.Before(t)) && (next == nil || l.Timestamp.Before(next.next.Timestamp)) {
					next = s
				}
			}
			if next == nil {
				return nil
			}
			if err := b.line(next.take()); err != nil {
				return err
			}
		}
	}
	for {
		l, ok, err := main.peek()
		if err != nil {
			return counts, err
		}
		if !ok {
			break
		}
		if !l.Timestamp.IsZero() {
			if err := drain(l.Timestamp); err != nil {
				return counts, err
			}
		}
		if err := b.line(main.take()); err != nil {
			return counts, err
		}
	}
	if err := drain(time.Time{}); err != nil {
		return counts, err
	}
	if err := b.flush(); err != nil {
		return counts, err
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

// lineReader reads a transcript's lines one at a time, with one line of
// look-ahead; lines that do not parse are skipped. A sub-agent's
// transcript is read whole and ordered by time (readSidechain).
type lineReader struct {
	f         *os.File
	r         *bufio.Reader
	sidechain bool
	next      bfLine
	has, eof  bool
	lines     []bfLine // the lines still to come, when read whole
}

// readSidechain reads a sub-agent's transcript whole, its lines ordered by
// time: 2.1 writes them out of order (a tool's result before the call).
// A line without a time keeps the place of the line before it.
func readSidechain(path string) (*lineReader, error) {
	lr, err := openLines(path, true)
	if err != nil {
		return nil, err
	}
	defer lr.close()
	var lines []bfLine
	var last time.Time
	for {
		l, ok, err := lr.peek()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		lr.take()
		if l.Timestamp.IsZero() {
			l.Timestamp = last
		}
		last = l.Timestamp
		lines = append(lines, l)
	}
	sort.SliceStable(lines, func(i, j int) bool { return lines[i].Timestamp.Before(lines[j].Timestamp) })
	return &lineReader{sidechain: true, lines: lines, eof: true}, nil
}

func openLines(path string, sidechain bool) (*lineReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read transcript: %w", err)
	}
	return &lineReader{f: f, r: bufio.NewReaderSize(f, 64<<10), sidechain: sidechain}, nil
}

func (lr *lineReader) close() {
	if lr.f != nil {
		lr.f.Close()
	}
}

// peek returns the next line without taking it; ok is false at the end.
func (lr *lineReader) peek() (bfLine, bool, error) {
	if !lr.has && len(lr.lines) > 0 {
		lr.next, lr.has, lr.lines = lr.lines[0], true, lr.lines[1:]
	}
	for !lr.has && !lr.eof {
		raw, err := readLine(lr.r)
		if err == io.EOF {
			lr.eof = true
		} else if err != nil {
			return bfLine{}, false, fmt.Errorf("read transcript: %w", err)
		}
		var l bfLine
		if len(raw) > 0 && json.Unmarshal(raw, &l) == nil {
			l.sidechain = lr.sidechain || l.IsSidechain
			lr.next, lr.has = l, true
		}
	}
	return lr.next, lr.has, nil
}

// take returns the line peek returned and moves past it.
func (lr *lineReader) take() bfLine {
	lr.has = false
	return lr.next
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
	at      time.Time // the time of the line being read
	last    string    // the uuid of the last line read
	started bool      // SessionStart sent
	// A prompt not yet sent: it is the person's when an answer follows
	// that is not a copy, and for a slash command, when it reached the
	// model at all.
	pending *pendingPrompt
	// The open turn: its prompt's uuid and text, the last assistant text
	// so far, and its texts as the daemon reads a live turn's
	// (memory/transcript).
	turnUUID, turnPrompt, turnAssistant string
	inTurn                              bool
	turn                                transcript.Turn
	// stretch: a line the daemon's reader stops at came after the turn's
	// texts so far; what the model writes next starts them again.
	stretch bool
	// copying: the turn being read is a copy of an earlier one.
	copying bool
	caveat  time.Time          // when the last local command's caveat was written
	tools   map[string]bfBlock // tool_use blocks awaiting their result
	copied  map[string]bool    // tool_use ids of copied turns
	answers map[string]bool    // the ids of the model's messages read so far
	// lastAnswer is the id of the message of the last line of the model's,
	// copiedAnswer that of the last message found to be a copy.
	lastAnswer, copiedAnswer string
}

// pendingPrompt is a prompt waiting for its turn's first answer.
type pendingPrompt struct {
	line    bfLine
	text    string
	command bool // a slash command: a prompt only if the model answered it
}

func (b *backfill) line(l bfLine) error {
	if l.UUID != "" && !l.sidechain {
		b.last = l.UUID
	}
	if l.Cwd != "" && !l.sidechain {
		b.cwd = l.Cwd
	}
	if !l.Timestamp.IsZero() {
		b.at = l.Timestamp
	}
	switch l.Type {
	case "assistant":
		var blocks []bfBlock
		if json.Unmarshal(l.Message.Content, &blocks) != nil {
			return nil
		}
		copied := false
		if !l.sidechain {
			var err error
			if copied, err = b.answered(l); err != nil {
				return err
			}
		}
		for _, bl := range blocks {
			if bl.Type == "tool_use" && bl.ID != "" {
				if b.copying || copied {
					b.copied[bl.ID] = true
				} else {
					b.tools[bl.ID] = bl
				}
			}
		}
		if l.sidechain || !b.inTurn || b.copying || copied {
			return nil
		}
		if b.stretch {
			b.turn, b.stretch = transcript.Turn{}, false
		}
		b.turn.AddAssistant(l.Message.Content)
		if t := hook.MessageText(l.Message.Content, true); t != "" {
			b.turnAssistant = t
		}
		if l.Message.StopReason == "end_turn" {
			// The model is done: the turn ends here, as the live Stop
			// fires, before what a background sub-agent does next.
			return b.endTurn()
		}
	case "user":
		if l.sidechain {
			return b.results(l) // a sub-agent's prompt is not the person's
		}
		if !l.IsMeta && !l.IsCompactSummary && transcript.UserText(l.Message.Content) != "" {
			// What the model writes after this line is a stretch of its
			// own, as the daemon reads a live turn's texts
			// (transcript.ReadLastTurn stops at such a line); if the turn
			// ends first, its Stop came before the line.
			b.stretch = true
		}
		text, kind := hook.PersonPrompt(l.Message.Content, l.IsMeta || l.IsCompactSummary)
		if t := lineText(l); l.IsMeta && (strings.HasPrefix(t, hook.Caveat) || strings.HasPrefix(t, "<local-command-caveat>")) {
			b.caveat = l.Timestamp
			b.dropLocal()
		}
		if (kind == hook.PromptPerson || kind == hook.PromptCommand) && !b.caveat.IsZero() && l.Timestamp.Sub(b.caveat) < copiedWithin {
			// Written with a caveat: a local command as typed, or what
			// it said ("This slash command can only be invoked by
			// Claude"), never the model's.
			kind = hook.PromptLocal
		}
		if p := b.pending; kind == hook.PromptPerson && p != nil && p.command && l.Timestamp.Sub(p.line.Timestamp) < copiedWithin {
			return nil // the command's body, written with it: what the model got
		}
		switch kind {
		case hook.PromptPerson, hook.PromptCommand:
			// The person typed again: the turn before has ended.
			if err := b.flush(); err != nil {
				return err
			}
			if err := b.endTurn(); err != nil {
				return err
			}
			b.pending = &pendingPrompt{line: l, text: text, command: kind == hook.PromptCommand}
			return nil
		case hook.PromptLocal:
			b.dropLocal()
			return nil
		case hook.PromptInjected:
			if notice(lineText(l)) && b.started && !b.copying {
				// The model answers a task's notification in a turn of its
				// own: the turn before ends (its Stop, as live), the
				// person's prompt stays the turn's.
				if err := b.endTurn(); err != nil {
					return err
				}
				b.inTurn, b.turnUUID, b.turnAssistant, b.turn, b.stretch = true, l.UUID, "", transcript.Turn{}, false
			}
			return nil
		}
		return b.results(l)
	}
	return nil
}

// notice reports a notification Claude Code sends the model when a
// background task ends.
func notice(text string) bool {
	for _, p := range []string{"<task-notification>", "<bash-notification>", "<agent-notification>"} {
		if strings.HasPrefix(text, p) {
			return true
		}
	}
	return false
}

// lineText is a user line's text.
func lineText(l bfLine) string { return hook.MessageText(l.Message.Content, false) }

// answered reads a line of the model's answer in the session's own
// thread and reports whether it is a copy: a message read before (its
// blocks are lines one after the other; a message whose id comes back
// after another's is written again). The first answer of a pending prompt
// decides whose the prompt's turn is: the person's, or a copy's.
func (b *backfill) answered(l bfLine) (copied bool, err error) {
	id := l.Message.ID
	copied = id != "" && (b.answers[id] && id != b.lastAnswer || id == b.copiedAnswer)
	if id != "" {
		b.answers[id], b.lastAnswer = true, id
		if copied {
			b.copiedAnswer = id // its other blocks too
		}
	}
	p := b.pending
	if p == nil {
		return copied, nil
	}
	b.pending = nil
	at := p.line.Timestamp
	if copied || !at.IsZero() && !l.Timestamp.IsZero() && l.Timestamp.Sub(at) < copiedWithin {
		b.copying = true
		return true, nil
	}
	err = b.prompt(p.line, p.text)
	b.at = l.Timestamp
	return false, err
}

// dropLocal drops a pending slash command: a local command's output (or
// its caveat) came before any answer, so it ran locally. 2.1 writes the
// command first as typed ("/compact"), then as a command.
func (b *backfill) dropLocal() {
	if p := b.pending; p != nil && (p.command || strings.HasPrefix(p.text, "/")) {
		b.pending = nil
	}
}

// flush sends a pending prompt that had no answer: the person's (the
// turn was interrupted before any answer), not a slash command's (it ran
// locally, or not at all).
func (b *backfill) flush() error {
	p := b.pending
	b.pending = nil
	if p == nil || p.command {
		return nil
	}
	return b.prompt(p.line, p.text)
}

// prompt ends the open turn and starts one with a user prompt.
func (b *backfill) prompt(l bfLine, prompt string) error {
	if err := b.endTurn(); err != nil {
		return err
	}
	b.copying = false
	if !l.Timestamp.IsZero() {
		b.at = l.Timestamp
	}
	if !b.started {
		b.started = true
		if err := b.send(&hosts.Payload{HookEventName: hosts.EventSessionStart, Source: "startup"}, ""); err != nil {
			return err
		}
	}
	b.inTurn, b.turnUUID, b.turnPrompt, b.turnAssistant, b.turn, b.stretch = true, l.UUID, prompt, "", transcript.Turn{}, false
	if err := b.send(&hosts.Payload{HookEventName: hosts.EventUserPromptSubmit, Prompt: prompt}, l.UUID); err != nil {
		return err
	}
	b.counts.Prompts++
	return nil
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
		if b.copied[bl.ToolUseID] {
			continue // a copied turn's: sent with the turn it copies, if at all
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
	hook.SetAt(params, b.at)
	return b.emit(Call{Event: p.HookEventName, Method: method, Params: params})
}
