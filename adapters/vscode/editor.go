// Package vscode maps an editor's Language Server Protocol session onto
// Mnemo's five stages. VS Code's extension (the TypeScript in extension/)
// and any other LSP client (Neovim, Helix, Zed, Emacs) run `mnemo serve
// --stdio`; its connection gets one Editor, which turns
//
//	initialize            → SessionStart (context in the result)
//	textDocument/didOpen  → PostToolUse, a read (once per file and session)
//	textDocument/didSave  → PostToolUse, a save (the file is modified)
//	idle for a while      → Stop (a summary of what happened)
//	shutdown              → SessionEnd
//
// The mapping lives here, in the sidecar, so that every editor gets the
// same memory from the same events.
package vscode

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/url"
	"path/filepath"
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

	mu          sync.Mutex
	initialized bool
	shutdown    bool
	csid, cwd   string
	platform    string
	opened      map[string]bool
	idle        time.Duration
	timer       *time.Timer
	active      bool // events since the last Stop
	closed      bool
}

// New returns the editor state for one connection.
func New(mem *store.Memory, log *slog.Logger, version string) *Editor {
	if log == nil {
		log = slog.Default()
	}
	return &Editor{mem: mem, log: log, version: version, opened: map[string]bool{}}
}

// Register adds the LSP lifecycle and document methods to mux.
func (e *Editor) Register(mux *rpc.Mux) {
	rpc.Handle(mux, protocol.MethodInitialize, e.initialize)
	rpc.HandleNotify(mux, protocol.MethodInitialized, func(context.Context, json.RawMessage) error { return nil })
	rpc.Handle(mux, protocol.MethodShutdown, e.shutdownCall)
	rpc.HandleNotify(mux, protocol.MethodTextDocumentDidOpen, e.didOpen)
	rpc.HandleNotify(mux, protocol.MethodTextDocumentDidSave, e.didSave)
	rpc.HandleNotify(mux, protocol.MethodTextDocumentDidClose, func(context.Context, json.RawMessage) error { return nil })
	rpc.HandleNotify(mux, protocol.MethodTextDocumentDidChange, func(context.Context, json.RawMessage) error {
		e.touch()
		return nil
	})
}

// lsp decodes params with the protocol package's union-aware decoder.
type lsp[T any] struct{ v T }

func (p *lsp[T]) UnmarshalJSON(b []byte) error { return protocol.Unmarshal(b, &p.v) }

// capabilities asks for open, close and save notifications (no text:
// Mnemo remembers that a file was read or saved, not its content).
var capabilities = json.RawMessage(`{"textDocumentSync":{"openClose":true,"change":0,"save":{"includeText":false}}}`)

// InitializeResult is LSP's, plus what Mnemo remembers for the session.
type InitializeResult struct {
	Capabilities json.RawMessage       `json:"capabilities"`
	ServerInfo   serverInfo            `json:"serverInfo"`
	Mnemo        *memory.ContextResult `json:"mnemo,omitempty"`
}

type serverInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

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

func (e *Editor) ready() (csid, cwd, platform string, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.initialized {
		return "", "", "", rpc.Errorf(rpc.CodeNotInitialized, "initialize first")
	}
	return e.csid, e.cwd, e.platform, nil
}

func (e *Editor) didOpen(ctx context.Context, p lsp[protocol.DidOpenTextDocumentParams]) error {
	path, ok := filePath(string(p.v.TextDocument.URI))
	if !ok {
		return nil
	}
	e.mu.Lock()
	seen := e.opened[path]
	e.opened[path] = true
	e.mu.Unlock()
	if seen {
		return nil // reads are deduplicated per session
	}
	return e.event(ctx, "Open", path)
}

func (e *Editor) didSave(ctx context.Context, p lsp[protocol.DidSaveTextDocumentParams]) error {
	path, ok := filePath(string(p.v.TextDocument.URI))
	if !ok {
		return nil
	}
	return e.event(ctx, "Save", path)
}

func (e *Editor) event(ctx context.Context, tool, path string) error {
	csid, cwd, platform, err := e.ready()
	if err != nil {
		return err
	}
	input, _ := json.Marshal(map[string]string{"file_path": path})
	_, err = e.mem.PostToolUse(ctx, memory.ToolUseParams{
		ContentSessionID: csid, Cwd: cwd, ToolName: tool, ToolInput: input, Platform: platform,
	})
	e.touch()
	return err
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
		e.timer = time.AfterFunc(e.idle, e.onIdle)
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

// Close stops the idle timer; the connection is gone.
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

// filePath turns a file:// URI into a path; other schemes are not files.
func filePath(uri string) (string, bool) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" || u.Path == "" {
		return "", false
	}
	return filepath.FromSlash(u.Path), true
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s = strings.TrimSpace(s); s != "" {
			return s
		}
	}
	return ""
}
