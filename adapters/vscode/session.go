package vscode

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"go.lsp.dev/protocol"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/rpc"
)

// Memory is what an editor needs of the memory: the stages its session
// maps onto, and the names of what an edit touched, for the summary of its
// saves. *store.Memory (memory/store) is one.
type Memory interface {
	SessionStart(ctx context.Context, p memory.SessionStartParams) (memory.ContextResult, error)
	PostToolUse(ctx context.Context, p memory.ToolUseParams) (memory.QueueResult, error)
	Stop(ctx context.Context, p memory.StopParams) (memory.QueueResult, error)
	SessionEnd(ctx context.Context, p memory.SessionEndParams) (memory.SessionEndResult, error)
	// EditSymbols names the declarations an edit of file (a path relative
	// to the project) adds, changes or removes, else those its pairs (old
	// and new text) sit in, found in original (the file before the edit);
	// none for a file that is not code.
	EditSymbols(file, original string, pairs [][2]string) []string
}

// InitOptions are the initializationOptions an editor sends.
type InitOptions struct {
	ClientKind       string `json:"clientKind"`
	ProtocolVersion  int    `json:"protocolVersion"`
	ContentSessionID string `json:"contentSessionId"`
	Project          string `json:"project"`
	Cwd              string `json:"cwd"`
	// IdleMinutes is how long the editor may be quiet before the session's
	// work is summarized (Stop); 0 means the default, negative turns it off.
	IdleMinutes float64 `json:"idleMinutes"`
	// SaveWindowSeconds is how long the saves of one file are gathered
	// into one observation of their net change; 0 means the server's
	// setting, negative remembers every save on its own.
	SaveWindowSeconds float64 `json:"saveWindowSeconds"`
}

// DefaultIdle is how long an editor session may be quiet before Stop.
const DefaultIdle = 10 * time.Minute

// DefaultSaveWindow is how long the saves of one file are gathered into
// one observation, unless the idle delay is shorter.
const DefaultSaveWindow = time.Minute

// Options configure an Editor.
type Options struct {
	Logger  *slog.Logger
	Version string // the server's, in the initialize result
	// SaveWindow is how long the saves of one file are gathered into one
	// observation: 0 is DefaultSaveWindow, negative remembers every save
	// on its own. A client's saveWindowSeconds wins.
	SaveWindow time.Duration
	// TextBytes caps the document texts kept: 0 is DefaultTextBytes.
	TextBytes int
}

// Editor is the state of one editor connection.
type Editor struct {
	mem     Memory
	log     *slog.Logger
	version string
	// afterFunc starts the idle and save-window timers: time.AfterFunc,
	// or a test's clock.
	afterFunc  func(d time.Duration, f func()) timer
	saveWindow time.Duration // the server's setting

	// emitMu orders what the editor sends to the memory from timers and
	// handlers: a window's observation, a Stop, the SessionEnd.
	emitMu sync.Mutex

	mu          sync.Mutex
	initialized bool
	shutdown    bool
	csid, cwd   string
	platform    string
	opened      map[string]bool // the files opened in this session (documents.go)
	docs        *texts          // the documents' texts (texts.go)
	window      time.Duration   // this session's save window; 0: none
	period      []changed       // what the saves changed since the last Stop
	idle        time.Duration
	timer       timer
	active      bool // events since the last Stop
	closed      bool
}

// timer is the idle timer: a *time.Timer, or a test's.
type timer interface {
	Reset(d time.Duration) bool
	Stop() bool
}

// New returns the editor state for one connection.
func New(mem Memory, o Options) *Editor {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.SaveWindow == 0 {
		o.SaveWindow = DefaultSaveWindow
	}
	if o.TextBytes <= 0 {
		o.TextBytes = DefaultTextBytes
	}
	return &Editor{
		mem: mem, log: o.Logger, version: o.Version, afterFunc: timeAfterFunc, saveWindow: o.SaveWindow,
		opened: map[string]bool{}, docs: newTexts(o.TextBytes),
	}
}

// timeAfterFunc is time.AfterFunc, returning a timer.
func timeAfterFunc(d time.Duration, f func()) timer { return time.AfterFunc(d, f) }

func (e *Editor) initialize(ctx context.Context, p lsp[protocol.InitializeParams]) (*InitializeResult, error) {
	var opts InitOptions
	if raw := p.v.InitializationOptions; len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &opts); err != nil {
			return nil, rpc.InvalidParams("initializationOptions: %v", err)
		}
	}
	if opts.ProtocolVersion != 0 && opts.ProtocolVersion != rpc.ProtocolVersion {
		return nil, rpc.Errorf(rpc.CodeVersionMismatch, "the editor speaks Mnemo protocol %d, this server %d: update the extension or Mnemo", opts.ProtocolVersion, rpc.ProtocolVersion)
	}
	cwd := opts.Cwd
	if cwd == "" {
		cwd = rootOf(p.v)
	}
	csid := strings.TrimSpace(opts.ContentSessionID)
	if csid == "" {
		// Only when the editor gives none: a session id is never invented
		// over one the client has.
		csid = "editor-" + uuid.NewString()
	}
	platform := firstNonEmpty(opts.ClientKind, p.v.ClientInfo.Name, "lsp")
	e.mu.Lock()
	if e.initialized {
		e.mu.Unlock()
		return nil, rpc.Errorf(rpc.CodeInvalidRequest, "initialize was already called on this connection")
	}
	e.initialized, e.csid, e.cwd, e.platform = true, csid, cwd, platform
	switch {
	case opts.IdleMinutes < 0:
		e.idle = 0
	case opts.IdleMinutes == 0:
		e.idle = DefaultIdle
	default:
		e.idle = time.Duration(opts.IdleMinutes * float64(time.Minute))
	}
	switch {
	case opts.SaveWindowSeconds < 0:
		e.window = 0
	case opts.SaveWindowSeconds > 0:
		e.window = time.Duration(opts.SaveWindowSeconds * float64(time.Second))
	default:
		e.window = max(e.saveWindow, 0)
	}
	if e.idle > 0 && e.window > e.idle {
		// A window never outlasts the idle delay: the idle Stop sees what
		// the saves changed.
		e.window = e.idle
	}
	e.mu.Unlock()

	res, err := e.mem.SessionStart(ctx, memory.SessionStartParams{
		ContentSessionID: csid, Cwd: cwd, Project: opts.Project, Source: "startup", Platform: platform,
	})
	if err != nil {
		return nil, err
	}
	return &InitializeResult{
		Capabilities: capabilities,
		ServerInfo:   serverInfo{Name: "mnemo", Version: e.version},
		Mnemo:        &res,
	}, nil
}

// initializedNote is the initialized notification: the session started
// in initialize, so there is nothing left to do.
func (e *Editor) initializedNote(context.Context, json.RawMessage) error { return nil }

func (e *Editor) ready() (csid, cwd, platform string, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.initialized {
		return "", "", "", rpc.Errorf(rpc.CodeNotInitialized, "initialize first")
	}
	return e.csid, e.cwd, e.platform, nil
}

// touch restarts the idle timer; an event worth remembering (work) also
// makes the period one to summarize.
func (e *Editor) touch(work bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.initialized || e.shutdown || e.closed || e.idle <= 0 {
		return
	}
	if work {
		e.active = true
	}
	if !e.active {
		return // nothing to summarize: no timer needed
	}
	if e.timer == nil {
		e.timer = e.afterFunc(e.idle, e.onIdle)
		return
	}
	e.timer.Reset(e.idle)
}

// onIdle ends the waiting save windows, then summarizes the period.
func (e *Editor) onIdle() {
	e.emitMu.Lock()
	defer e.emitMu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	e.mu.Lock()
	gone := e.shutdown || e.closed
	e.mu.Unlock()
	if gone {
		return
	}
	e.flushAll(ctx)
	e.mu.Lock()
	if !e.active || e.shutdown || e.closed {
		e.mu.Unlock()
		return
	}
	e.active = false
	csid, cwd := e.csid, e.cwd
	msg := e.takePeriod()
	e.mu.Unlock()
	if _, err := e.mem.Stop(ctx, memory.StopParams{ContentSessionID: csid, Cwd: cwd, LastAssistantMessage: msg}); err != nil {
		e.log.Warn("idle stop", "session", csid, "err", err)
	}
}

func (e *Editor) shutdownCall(ctx context.Context, _ json.RawMessage) (any, error) {
	csid, cwd, _, err := e.ready()
	if err != nil {
		return nil, err
	}
	e.emitMu.Lock()
	defer e.emitMu.Unlock()
	e.mu.Lock()
	already := e.shutdown
	e.mu.Unlock()
	if already {
		return nil, nil
	}
	// The saves still in a window are remembered before the summary, and
	// the summary before the session ends.
	e.flushAll(ctx)
	e.mu.Lock()
	e.shutdown = true
	active := e.active
	e.active = false
	msg := e.takePeriod()
	if e.timer != nil {
		e.timer.Stop()
	}
	e.mu.Unlock()
	if active {
		if _, err := e.mem.Stop(ctx, memory.StopParams{ContentSessionID: csid, Cwd: cwd, LastAssistantMessage: msg}); err != nil {
			return nil, err
		}
	}
	if _, err := e.mem.SessionEnd(ctx, memory.SessionEndParams{ContentSessionID: csid, Cwd: cwd, Reason: "shutdown"}); err != nil {
		return nil, err
	}
	return nil, nil
}

// Stop prepares a Stop the client asked for itself (mnemo/stop): when it
// is this editor's session, the saves still in a window are remembered
// first, and p gets what the saves of the period changed as its
// LastAssistantMessage unless it has one. The idle timer then has nothing
// to add until new events arrive. The caller queues p.
func (e *Editor) Stop(ctx context.Context, p *memory.StopParams) {
	e.emitMu.Lock()
	defer e.emitMu.Unlock()
	e.mu.Lock()
	mine := e.initialized && p.ContentSessionID == e.csid
	e.mu.Unlock()
	if mine {
		e.flushAll(ctx)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if mine {
		msg := e.takePeriod()
		if strings.TrimSpace(p.LastAssistantMessage) == "" {
			p.LastAssistantMessage = msg
		}
		if p.Cwd == "" {
			p.Cwd = e.cwd
		}
	}
	e.active = false
	if e.timer != nil {
		e.timer.Stop()
	}
}

// ShutDown reports whether the client sent shutdown (LSP: exit then ends
// the process with 0, else 1).
func (e *Editor) ShutDown() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.shutdown
}

// Close remembers the saves still in a window and stops the timers; the
// connection is gone. The connection's owner calls it after the exit
// notification or when the stream ends. The session stays open (no Stop,
// no SessionEnd) unless the client shut it down.
func (e *Editor) Close() {
	e.emitMu.Lock()
	defer e.emitMu.Unlock()
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return
	}
	e.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	e.flushAll(ctx)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closed = true
	if e.timer != nil {
		e.timer.Stop()
	}
}

func rootOf(p protocol.InitializeParams) string {
	if folders, ok := p.WorkspaceFolders.Get(); ok {
		for _, f := range folders {
			if path, ok := filePath(string(f.URI)); ok {
				return path
			}
		}
	}
	if p.RootURI != nil {
		if path, ok := filePath(string(*p.RootURI)); ok {
			return path
		}
	}
	return ""
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s = strings.TrimSpace(s); s != "" {
			return s
		}
	}
	return ""
}
