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
	"github.com/mnemo-dev/mnemo/memory/store"
	"github.com/mnemo-dev/mnemo/rpc"
)

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
}

// DefaultIdle is how long an editor session may be quiet before Stop.
const DefaultIdle = 10 * time.Minute

// Editor is the state of one editor connection.
type Editor struct {
	mem     *store.Memory
	log     *slog.Logger
	version string
	// afterFunc starts the idle timer: time.AfterFunc, or a test's clock.
	afterFunc func(d time.Duration, f func()) timer

	mu          sync.Mutex
	initialized bool
	shutdown    bool
	csid, cwd   string
	platform    string
	opened      map[string]bool // the files opened in this session (documents.go)
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
func New(mem *store.Memory, log *slog.Logger, version string) *Editor {
	if log == nil {
		log = slog.Default()
	}
	return &Editor{mem: mem, log: log, version: version, afterFunc: timeAfterFunc, opened: map[string]bool{}}
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

// touch records activity and restarts the idle timer.
func (e *Editor) touch() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.initialized || e.shutdown || e.closed || e.idle <= 0 {
		return
	}
	e.active = true
	if e.timer == nil {
		e.timer = e.afterFunc(e.idle, e.onIdle)
		return
	}
	e.timer.Reset(e.idle)
}

func (e *Editor) onIdle() {
	e.mu.Lock()
	if !e.active || e.shutdown || e.closed {
		e.mu.Unlock()
		return
	}
	e.active = false
	csid := e.csid
	e.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := e.mem.Stop(ctx, memory.StopParams{ContentSessionID: csid}); err != nil {
		e.log.Warn("idle stop", "session", csid, "err", err)
	}
}

func (e *Editor) shutdownCall(ctx context.Context, _ json.RawMessage) (any, error) {
	csid, _, _, err := e.ready()
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	already := e.shutdown
	e.shutdown = true
	active := e.active
	e.active = false
	if e.timer != nil {
		e.timer.Stop()
	}
	e.mu.Unlock()
	if already {
		return nil, nil
	}
	if active {
		// Work since the last summary is summarized before the session
		// closes.
		if _, err := e.mem.Stop(ctx, memory.StopParams{ContentSessionID: csid}); err != nil {
			return nil, err
		}
	}
	if _, err := e.mem.SessionEnd(ctx, memory.SessionEndParams{ContentSessionID: csid, Reason: "shutdown"}); err != nil {
		return nil, err
	}
	return nil, nil
}

// Stopped notes that the client asked for a Stop itself (mnemo/stop): the
// work so far is being summarized, so the idle timer has nothing to add
// until new events arrive.
func (e *Editor) Stopped() {
	e.mu.Lock()
	defer e.mu.Unlock()
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

// Close stops the idle timer; the connection is gone. The connection's
// owner calls it after the exit notification or when the stream ends.
func (e *Editor) Close() {
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
