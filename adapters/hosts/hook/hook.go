package hook

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/mnemo-dev/mnemo/adapters/hosts"
	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/rpc/socket"
)

// MaxPayloadBytes bounds the hook's stdin. A payload up to it is
// recorded, its tool input and output cut to memory.MaxToolJSONBytes each
// (their start and end kept); a bigger one is not recorded. Either way the
// hook answers and exits as always, within its deadline: a 30 MB tool
// output took it 0.4–0.5 s to read, clean and cut on a loaded 2-core
// machine (TestRunHookBigToolResponse).
const MaxPayloadBytes = 64 << 20

// maxPayload is MaxPayloadBytes, lowered by tests of the bound.
var maxPayload = MaxPayloadBytes

// StdinWait bounds the wait for the payload: Claude Code writes it and
// closes stdin as it starts the hook, so only a stdin nobody closes (the
// hook run by hand) waits this long.
const StdinWait = 2 * time.Second

// maxLogBytes is the size at which hook.log is rotated to hook.log.1.
const maxLogBytes = 8 << 20

// Config is what Run needs from its process.
type Config struct {
	// Home is the Mnemo home directory (socket.Home()). Empty: nothing is logged
	// or spooled, and the hook only answers.
	Home string
	// Host is the host the hook was installed for (mnemo-hook --host;
	// ParseArgs), "" for Claude Code. A payload in another host's dialect
	// is read as that host's (dialect.go).
	Host string
	// Event is the event named on the command line, if any. The payload's
	// hook_event_name wins when the two differ: it is what happened.
	Event string
	// ArgsErr is ParseArgs's error: the hook logs it, and still answers
	// and records what it can.
	ArgsErr error
	// Stdin carries the payload; Stdout gets the answer and nothing else.
	Stdin  io.Reader
	Stdout io.Writer
	// Stderr gets log records when the log file cannot be opened; Claude
	// Code keeps a hook's stderr in its debug log.
	Stderr io.Writer
	// DaemonCommand starts the daemon when none runs (DaemonCommand()).
	// Empty, with DaemonCommandFunc nil: the hook never starts one.
	DaemonCommand []string
	// DaemonCommandFunc, when DaemonCommand is empty, returns it; the hook
	// calls it only once no daemon listens, so that a hook with a daemon
	// running does not look for the mnemo binary (DaemonCommand(home): a
	// readlink and a stat, or a PATH search).
	DaemonCommandFunc func() []string
	// Now is the clock for spool entries; nil means time.Now.
	Now func() time.Time
	// Version is the hook's Mnemo version, as the build stamped it
	// (socket.ReleaseVersion reads it when the hook calls the daemon): an
	// older daemon hands over to a new one started with DaemonCommand, a
	// newer one refuses the hook (which then journals the call); see
	// socket.Options.Version.
	Version string
}

// ObserverEnv is set to "1" in the environment of Mnemo's own Claude Code
// observer; hooks that see it do nothing.
const ObserverEnv = "MNEMO_OBSERVER"

// NewEventKey returns a fresh idempotency key: 16 random bytes in hex.
// The key must be unique, not secret: math/rand/v2's generator (ChaCha8,
// seeded by the kernel at the process's start) gives them without
// crypto/rand's first-use setup, 40 µs of a hook's few milliseconds.
func NewEventKey() string {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], rand.Uint64())
	binary.LittleEndian.PutUint64(b[8:], rand.Uint64())
	return hex.EncodeToString(b[:])
}

// Run runs one hook of Claude Code or any other host and returns the process's exit
// status, which is always 0: a hook must never block or break Claude
// Code.
//
// It reads the payload from cfg.Stdin (at most MaxPayloadBytes), maps it
// with Translate, and hands the call over. A stage whose answer carries
// no context appends it to the journal of cfg.Home (AppendJournal) and
// answers once the system holds it; when no daemon runs it fsyncs the
// record and, when the stage may, starts one with cfg.DaemonCommand (or
// DaemonCommandFunc's) without waiting (socket.StartDetached). SessionStart
// and UserPromptSubmit call the daemon within the stage's Budget: they
// connect as socket.ClientHook, starting the daemon when none runs (lock
// <home>/run/start.lock), and make the one call (socket.CallOnce). It
// prints the answer on cfg.Stdout: for the stages whose answer carries
// context (SessionStart's, a prompt's recall) that context as
// hookSpecificOutput.additionalContext, else {}, and for events Mnemo
// does not handle nothing.
//
// On any failure (bad payload, no daemon, deadline, error response) it
// prints the same empty answer, logs to <home>/logs/hook.log (ids and
// sizes only, never prompt text or tool contents), and, for every stage
// but SessionStart, journals the call (the spool when the journal cannot
// take it).
func Run(ctx context.Context, cfg Config) int {
	start := time.Now()
	h := &hook{cfg: cfg, start: start}
	if h.cfg.Now == nil {
		h.cfg.Now = time.Now
	}
	h.log = slog.New(slog.NewTextHandler(&h.logw, &slog.HandlerOptions{Level: logLevel()}))
	h.logw.path = h.logPath()
	h.logw.fallback = cfg.Stderr
	defer h.logw.Close()
	defer func() {
		if r := recover(); r != nil {
			h.log.Error("hook panicked", "event", h.event, "panic", r, "stack", string(debug.Stack()))
			h.answer(nil)
		}
	}()
	h.run(ctx)
	return 0
}

// hook is one run of Run.
type hook struct {
	cfg      Config
	start    time.Time
	log      *slog.Logger
	logw     lazyFile
	host     string      // the payload's dialect
	event    string      // the host's name for the event
	stage    hosts.Stage // the event's stage, once known (Payload.Stage)
	answered bool
}

func (h *hook) run(ctx context.Context) {
	if h.cfg.ArgsErr != nil {
		h.log.Warn("bad arguments", "err", h.cfg.ArgsErr)
	}
	hint := h.cfg.Host
	if hint == "" {
		hint = hosts.ClaudeCode
	}
	// Until a payload says otherwise, the hook answers as the host it was
	// installed for: no payload, or one that cannot be read, still gets
	// that host's answer (nothing for Windsurf, Cursor's prompt stage
	// {"continue":true}).
	h.host, h.event = hint, h.cfg.Event
	h.stage, _ = hosts.StageOf(hint, h.cfg.Event)
	in, ok := h.read(ctx)
	if !ok {
		return
	}
	// The budget is the hook's own work, from the payload on: Claude Code
	// writes it as it starts the hook, so a wait before it is the
	// machine's load, not the daemon's.
	read := time.Now()
	size, err := in.size, in.err
	if err != nil {
		h.log.Warn("unreadable hook payload", "event", h.cfg.Event, "bytes", size, "err", err)
		h.answer(nil)
		return
	}
	p := in.w.Normalize(hint, h.cfg.Event)
	argStage := h.stage
	h.host, h.event, h.stage = p.Host, p.HookEventName, p.Stage
	ok = h.stage.Event != ""
	if arg := h.cfg.Event; arg != "" && arg != h.event && (!ok || argStage.Event != h.stage.Event) {
		// Two names of one stage are not a mismatch: Cursor runs Claude
		// Code's PostToolUse hook for its postToolUse, and VS Code Copilot
		// CLI's agentStop hook for its Stop.
		h.log.Warn("hook argument and payload name different events; following the payload",
			"arg", arg, "event", h.event, "host", h.host)
	}
	if os.Getenv(ObserverEnv) == "1" {
		// Mnemo's own memory agent is a Claude Code too: its events are
		// not the user's work.
		h.log.Debug("skipping the memory agent's own event", "event", h.event)
		h.answer(nil)
		return
	}
	if !ok {
		h.log.Debug("event not handled", "event", h.event, "host", h.host)
		return
	}
	stage := h.stage
	log := h.log.With("event", h.event, "session", p.SessionID)
	if h.host != hosts.ClaudeCode {
		log = log.With("host", h.host)
	}
	if p.ToolName != "" {
		log = log.With("tool", p.ToolName, "toolUseId", p.ToolUseID)
	}

	key := p.EventKey
	if key == "" {
		key = NewEventKey()
	}
	method, params, err := Translate(p, TranslateOptions{EventKey: key, SkipTools: SkipTools(), Log: log, Pause: SessionPause(log)})
	if err != nil {
		if errors.Is(err, ErrSkippedTool) || errors.Is(err, ErrPaused) || errors.Is(err, ErrNotPrompt) {
			log.Debug("not recorded", "reason", err)
		} else {
			log.Warn("not recorded", "bytes", size, "err", err)
		}
		h.answer(nil)
		return
	}

	if h.cfg.Home != "" && h.privateTurn(log, stage, params) {
		log.Debug("not recorded", "reason", "the turn's prompt is private")
		h.answer(nil)
		return
	}
	if !stage.Context && h.cfg.Home != "" {
		// Nothing in the answer for the agent: the event is handed over
		// once the system holds it in the journal, and the daemon takes it
		// from there.
		err := h.journal(stage, method, params, true)
		if err == nil {
			log.Debug("journaled", "method", method, "bytes", size, "took", time.Since(h.start), "stdin", read.Sub(h.start))
			h.answer(nil)
			return
		}
		log.Warn("journal: not written; calling the daemon", "method", method, "err", err)
	}

	deadline := read.Add(stage.Budget)
	if stage.Spools {
		deadline = deadline.Add(-stage.Budget / 10)
	}
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	var result contextAnswer
	err = h.call(ctx, stage, method, params, &result)
	if err == nil {
		log.Debug("delivered", "method", method, "bytes", size, "took", time.Since(h.start), "stdin", read.Sub(h.start), "context", len(result.Context))
		if len(result.Context) > 10_000 {
			log.Warn("context over Claude Code's 10,000-character limit", "bytes", len(result.Context))
		}
		h.answer(&result)
		return
	}

	// Answer first: Claude Code is waiting, the spool is not.
	h.answer(nil)
	// No daemon, a deadline, a daemon of another version: expected now and
	// then, a warning. An error answer from the daemon is a bug.
	level := slog.LevelWarn
	if rerr, ok := errors.AsType[*socket.Error](err); ok && rerr.Code != socket.CodeVersionMismatch && rerr.Code != socket.CodeCanceled {
		level = slog.LevelError
	}
	if !stage.Spools || h.cfg.Home == "" {
		log.Log(ctx, level, "not delivered", "method", method, "took", time.Since(h.start), "err", err)
		return
	}
	// The journal keeps it in its place among the session's events; the
	// daemon takes it when it can (a replay of a call that did arrive
	// changes nothing: its event key).
	jerr := h.journal(stage, method, params, false)
	if jerr == nil {
		log.Log(ctx, level, "not delivered; journaled", "method", method, "took", time.Since(h.start), "err", err)
		return
	}
	raw, merr := json.Marshal(params)
	if merr != nil {
		log.Error("not delivered, and not spooled", "method", method, "err", err, "spoolErr", merr)
		return
	}
	spool := SpoolPath(h.cfg.Home)
	if serr := AppendSpool(spool, SpoolEntry{Method: method, Params: raw, Time: h.cfg.Now()}); serr != nil {
		log.Error("not delivered, and neither journaled nor spooled", "method", method, "err", err, "journalErr", jerr, "spoolErr", serr)
		return
	}
	log.Log(ctx, level, "not delivered, not journaled; spooled", "method", method, "took", time.Since(h.start), "spool", spool, "err", err, "journalErr", jerr)
}

// privateTurn keeps the mark of the session's private turn (private.go)
// and reports whether the call is an event of one: a prompt sets or clears
// the mark, a session's end clears it.
func (h *hook) privateTurn(log *slog.Logger, stage hosts.Stage, params any) bool {
	var err error
	switch p := params.(type) {
	case *memory.UserPromptParams:
		if !p.NoCapture {
			err = markPrivateTurn(h.cfg.Home, p.ContentSessionID, p.Prompt == PrivateMarker)
		}
	case *memory.SessionEndParams:
		err = markPrivateTurn(h.cfg.Home, p.ContentSessionID, false)
	case *memory.ToolUseParams:
		return inPrivateTurn(h.cfg.Home, p.ContentSessionID)
	case *memory.StopParams:
		return inPrivateTurn(h.cfg.Home, p.ContentSessionID)
	}
	if err != nil {
		log.Warn("private turn mark", "stage", stage.Event, "err", err)
	}
	return false
}

// journal appends the call to the journal (AppendJournal), stamped with
// the time of the event. When no daemon runs it also fsyncs the record
// (no daemon will sync it within its window) and, for a stage that may
// (start: the stage's StartsDaemon), starts one without waiting for it.
func (h *hook) journal(stage hosts.Stage, method string, params any, start bool) error {
	now := h.cfg.Now().UTC() // no time zone to load
	SetAt(params, now)
	raw, err := encodeParams(params)
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	sock := socket.Path(h.cfg.Home)
	running := socket.Running(sock)
	if err := AppendJournal(JournalPath(h.cfg.Home), method, raw, now, !running); err != nil {
		return err
	}
	if running || !start || !stage.StartsDaemon {
		return nil
	}
	command := h.cfg.DaemonCommand
	if len(command) == 0 && h.cfg.DaemonCommandFunc != nil {
		command = h.cfg.DaemonCommandFunc()
	}
	if len(command) > 0 {
		if _, err := socket.StartDetached(socket.StartFor(h.cfg.Home, command, 0)); err != nil {
			h.log.Warn("journaled; no daemon running, and it did not start", "err", err)
		}
	}
	return nil
}

// call makes the stage's call to the daemon, bounded by ctx: the hello and
// the call in one write (socket.CallOnce), and when the daemon is of an older
// Mnemo, the hand-over to the mnemo next to this hook once it answered. It dials once (Attempts: 1), even
// when a dying daemon drops the connection during the hello: the stages
// that spool make up for it.
func (h *hook) call(ctx context.Context, stage hosts.Stage, method string, params, result any) error {
	if h.cfg.Home == "" {
		return errors.New("no Mnemo home directory")
	}
	o := socket.Options{Home: h.cfg.Home, Client: socket.ClientHook, Attempts: 1, Version: socket.ReleaseVersion(h.cfg.Version), Logger: h.log}
	if stage.StartsDaemon {
		// The command is looked for only once a daemon must be started:
		// none listens, or an older one hands over.
		o.Command, o.CommandFunc = h.cfg.DaemonCommand, h.cfg.DaemonCommandFunc
	}
	// The deadline bounds every read and write, also a write to a daemon
	// that stopped reading.
	o.Deadline, _ = ctx.Deadline()
	if !stage.Context {
		result = nil
	}
	return socket.CallOnce(ctx, o, method, params, result)
}

// contextAnswer is what the hook reads of the answer of a stage with
// context: SessionStart's memory.ContextResult, UserPromptSubmit's
// memory.UserPromptResult.
type contextAnswer struct {
	Context string `json:"context"`
}

// answer prints the hook's answer once, in the host's shape
// (hosts.Answer): the stage's context when the host takes it, else the
// host's empty answer.
func (h *hook) answer(res *contextAnswer) {
	if h.answered || h.cfg.Stdout == nil {
		return
	}
	h.answered = true
	ctx := ""
	if res != nil {
		ctx = res.Context
	}
	out := hosts.Answer(h.host, h.event, h.stage.Event, ctx)
	if len(out) == 0 {
		return
	}
	if _, err := h.cfg.Stdout.Write(out); err != nil {
		h.log.Warn("write answer", "err", err)
	}
}

// input is the payload read from stdin, its size, and the read's error.
type input struct {
	w    *hosts.Wire
	size int64
	err  error
}

// read reads the payload, waiting at most StdinWait: a stdin that nobody
// writes or closes must not hold the hook. When the wait ends first it
// answers, logs and reports false; the read is abandoned.
//
// A stdin that is a file (the hook's process: a pipe from Claude Code) is
// read on this goroutine where readFile can bound each read by the wait
// (Unix: poll(2)); any other reader, and any file on Windows, on a goroutine
// of its own, which is abandoned when the wait ends.
func (h *hook) read(ctx context.Context) (input, bool) {
	wait := h.start.Add(StdinWait)
	if f, ok := h.cfg.Stdin.(*os.File); ok {
		if in, ok := readFile(ctx, f, wait); ok {
			if !errors.Is(in.err, errStdinWait) {
				return in, true
			}
			h.noPayload()
			return input{}, false
		}
	}
	done := make(chan input, 1)
	go func() {
		w, size, err := readPayload(h.cfg.Stdin)
		done <- input{w, size, err}
	}()
	timer := time.NewTimer(time.Until(wait))
	defer timer.Stop()
	select {
	case in := <-done:
		return in, true
	case <-timer.C:
	case <-ctx.Done():
	}
	h.noPayload()
	return input{}, false
}

// noPayload answers, and logs that no payload came in time.
func (h *hook) noPayload() {
	h.log.Warn("no payload on stdin in time; not recorded", "event", h.cfg.Event, "wait", StdinWait)
	h.answer(nil)
}

// errStdinWait is pollReader's error when its deadline or ctx ended first.
var errStdinWait = errors.New("no payload on stdin in time")

// readPayload decodes one JSON object from r, in any host's dialect,
// reading at most MaxPayloadBytes, and no further than the object's end
// (a host may keep its end of the pipe open). A field of an unexpected
// type is left empty and the rest is kept: a host may change a field's
// type, and the hook should record what it can (hosts.DecodeWire).
func readPayload(r io.Reader) (*hosts.Wire, int64, error) {
	if r == nil {
		return nil, 0, errors.New("no stdin")
	}
	buf := make([]byte, 0, 16<<10)
	var end valueEnd
	for !end.done {
		if len(buf) == cap(buf) {
			if len(buf) > maxPayload {
				return nil, int64(len(buf)), fmt.Errorf("payload over %d bytes", maxPayload)
			}
			// Four times as much each time: a big payload is copied
			// about a third of its size more, not its size. A new buffer
			// of that size is fresh memory the runtime need not clear
			// (append would clear and copy the growth too).
			grown := make([]byte, len(buf), len(buf)+min(3*cap(buf), maxPayload+1-len(buf)))
			copy(grown, buf)
			buf = grown
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		end.feed(buf[len(buf) : len(buf)+n])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, int64(len(buf)), err
		}
	}
	if len(buf) > maxPayload {
		return nil, int64(len(buf)), fmt.Errorf("payload over %d bytes", maxPayload)
	}
	w, _, err := hosts.DecodeWire(buf)
	return w, int64(len(buf)), err
}

// valueEnd finds where the JSON value a stream starts with ends, as its
// bytes come in: an object's or an array's closing bracket (done); a
// value of another kind ends with the stream.
type valueEnd struct {
	started, done, scalar bool
	depth                 int
	inString, escaped     bool
}

func (v *valueEnd) feed(b []byte) {
	for i := 0; i < len(b) && !v.done && !v.scalar; i++ {
		c := b[i]
		if !v.started {
			switch c {
			case ' ', '\t', '\n', '\r':
				continue
			case '{', '[':
				v.started, v.depth = true, 1
			default:
				v.started, v.scalar = true, true
			}
			continue
		}
		if v.inString {
			switch {
			case v.escaped:
				v.escaped = false
			case c == '\\':
				v.escaped = true
			case c == '"':
				v.inString = false
			}
			continue
		}
		switch c {
		case '"':
			v.inString = true
		case '{', '[':
			v.depth++
		case '}', ']':
			v.depth--
			v.done = v.depth == 0
		}
	}
}

// logPath is <home>/logs/hook.log, or "" without a home.
func (h *hook) logPath() string {
	if h.cfg.Home == "" {
		return ""
	}
	return LogPath(h.cfg.Home)
}

// logLevel is MNEMO_LOG_LEVEL's (debug, info, warn, error), default info.
// Delivered events log at debug, so a healthy hook writes nothing.
func logLevel() slog.Level {
	v := strings.TrimSpace(os.Getenv("MNEMO_LOG_LEVEL"))
	if v == "" {
		return slog.LevelInfo
	}
	var l slog.Level
	if err := l.UnmarshalText([]byte(v)); err != nil {
		return slog.LevelInfo
	}
	return l
}

// lazyFile is an append-only log file opened on the first write, so that
// a hook with nothing to say touches no file. It rotates the file to
// <path>.1 when it has grown past maxLogBytes, and writes to fallback when
// the file cannot be opened.
type lazyFile struct {
	path     string
	fallback io.Writer

	mu     sync.Mutex
	f      *os.File
	opened bool
}

func (l *lazyFile) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.opened {
		l.opened = true
		l.f = openLog(l.path)
	}
	if l.f != nil {
		return l.f.Write(p)
	}
	if l.fallback != nil {
		return l.fallback.Write(p)
	}
	return len(p), nil
}

func (l *lazyFile) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

func openLog(path string) *os.File {
	if path == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil
	}
	if fi, err := os.Stat(path); err == nil && fi.Size() > maxLogBytes {
		_ = os.Rename(path, path+".1")
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil
	}
	return f
}
