package vscode_test

import (
	"cmp"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/mnemo-dev/mnemo/adapters/vscode"
	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/local"
	"github.com/mnemo-dev/mnemo/memory/store"
	"github.com/mnemo-dev/mnemo/rpc"
)

// The workspace of the tests' editor. Nothing needs to exist on disk: the
// editor only turns URIs into paths.
const (
	root    = "/src/billing-api"
	rootURI = "file://" + root
	project = "billing-api"
)

// The workspace folder, and the documents the tests' editor opens and
// saves.
var (
	workspace = protocol.WorkspaceFolder{URI: rootURI, Name: project}
	invoice   = protocol.TextDocumentItem{URI: rootURI + "/billing/invoice.go", LanguageID: "go", Version: 1, Text: "package billing\n"}
	tax       = protocol.TextDocumentItem{URI: rootURI + "/billing/tax.go", LanguageID: "go", Version: 1, Text: "package billing\n"}
	untitled  = protocol.TextDocumentItem{URI: "untitled:Untitled-1", LanguageID: "plaintext", Version: 1}
)

// memoryStore is the memory as the tests read it back.
type memoryStore interface {
	WaitIdle(ctx context.Context) error
	Session(ctx context.Context, contentSessionID string) (*memory.Session, error)
	Sessions(ctx context.Context) ([]memory.Session, error)
	Search(ctx context.Context, p memory.SearchParams) (memory.SearchResult, error)
	Get(ctx context.Context, p memory.IDsParams) (memory.ObservationsResult, error)
	Summaries(ctx context.Context, sessionID uint64) ([]memory.Summary, error)
}

// An editorConn is one editor connection served in-process the way
// cmd/mnemo serves it: an Editor registered on a real rpc.Mux, over a
// net.Pipe, in front of a real in-memory store, with a fake clock for the
// idle timer.
type editorConn struct {
	t      *testing.T
	editor *vscode.Editor
	mem    memoryStore
	agent  *recorder
	clock  *fakeClock
	client *rpc.Client
	server jsonrpc2.Conn
	exited chan struct{} // closed by the exit notification
	hangUp func()
}

// methodSync answers once every message sent before it was handled: the
// connection's handlers run one at a time in wire order.
const methodSync = "test/sync"

// newEditorConn serves a new editor connection; it is closed at cleanup.
func newEditorConn(t *testing.T) *editorConn {
	t.Helper()
	return newEditorConnWith(t, vscode.Options{})
}

// newEditorConnWith serves a new editor connection with o (its logger and
// version are the tests').
func newEditorConnWith(t *testing.T, o vscode.Options) *editorConn {
	t.Helper()
	// Nothing may touch the real homes (git reads its global config there).
	t.Setenv("MNEMO_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	log := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	o.Logger, o.Version = log, "test"
	// The one place that names the memory's engine and its local agent.
	agent := &recorder{agent: local.Agent{}}
	mem, err := store.Open(context.Background(), store.Options{InMemory: true, Agent: agent})
	if err != nil {
		t.Fatal(err)
	}
	c := &editorConn{t: t, editor: vscode.New(mem, o), mem: mem, agent: agent, clock: new(fakeClock), exited: make(chan struct{})}
	vscode.SetAfterFunc(c.editor, c.clock.AfterFunc)

	mux := rpc.NewMux(log)
	c.editor.Register(mux)
	// What cmd/mnemo adds to the connection that these tests need.
	var exit sync.Once
	rpc.HandleNotify(mux, protocol.MethodExit, func(context.Context, struct{}) error {
		exit.Do(func() { close(c.exited) })
		return nil
	})
	rpc.Handle(mux, methodSync, func(context.Context, struct{}) (bool, error) { return true, nil })

	a, b := net.Pipe()
	c.server = rpc.Serve(context.Background(), b, mux.Handler())
	c.client = rpc.NewClient(a, nil)
	// As cmd/mnemo's serveConn ends a connection: close it, wait for its
	// handlers, then close the editor.
	c.hangUp = sync.OnceFunc(func() {
		c.client.Close()
		c.server.Close()
		select {
		case <-c.server.Done():
		case <-time.After(5 * time.Second):
			t.Error("the connection did not close in time")
		}
		c.editor.Close()
	})
	t.Cleanup(func() {
		c.hangUp()
		if err := mem.Close(); err != nil {
			t.Error(err)
		}
	})
	return c
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// initParams is what VS Code's extension sends, with opts as its
// initializationOptions.
func initParams(t testing.TB, opts vscode.InitOptions) *protocol.InitializeParams {
	t.Helper()
	raw, err := json.Marshal(opts)
	if err != nil {
		t.Fatal(err)
	}
	p := &protocol.InitializeParams{
		ClientInfo:            protocol.ClientInfo{Name: "Visual Studio Code"},
		InitializationOptions: protocol.LSPAny(raw),
	}
	p.WorkspaceFolders = protocol.NewNullable([]protocol.WorkspaceFolder{workspace})
	return p
}

// vscodeOptions are the extension's initializationOptions for session
// csid in the tests' project.
func vscodeOptions(csid string) vscode.InitOptions {
	return vscode.InitOptions{ClientKind: "vscode", ProtocolVersion: rpc.ProtocolVersion, ContentSessionID: csid, Project: project}
}

// initialize sends initialize with p.
func (c *editorConn) initialize(p *protocol.InitializeParams) (vscode.InitializeResult, error) {
	c.t.Helper()
	var res vscode.InitializeResult
	err := c.call(protocol.MethodInitialize, p, &res)
	return res, err
}

// mustInitialize starts the extension's session csid.
func (c *editorConn) mustInitialize(csid string) vscode.InitializeResult {
	c.t.Helper()
	return c.mustInitializeWith(vscodeOptions(csid))
}

func (c *editorConn) mustInitializeWith(opts vscode.InitOptions) vscode.InitializeResult {
	c.t.Helper()
	res, err := c.initialize(initParams(c.t, opts))
	if err != nil {
		c.t.Fatalf("initialize: %v", err)
	}
	c.notify(protocol.MethodInitialized, &protocol.InitializedParams{})
	return res
}

// call sends an LSP request, its params encoded by go.lsp.dev/protocol (nil
// sends none).
func (c *editorConn) call(method string, params, result any) error {
	c.t.Helper()
	return c.client.Call(ctxT(c.t), method, lspParams(c.t, params), result)
}

// notify sends an LSP notification.
func (c *editorConn) notify(method string, params any) {
	c.t.Helper()
	if err := c.client.Notify(ctxT(c.t), method, lspParams(c.t, params)); err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
}

func lspParams(t testing.TB, params any) any {
	t.Helper()
	if params == nil {
		return nil
	}
	b, err := protocol.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	return jsonrpc2.RawMessage(b)
}

func (c *editorConn) open(doc protocol.TextDocumentItem) {
	c.t.Helper()
	c.notify(protocol.MethodTextDocumentDidOpen, &protocol.DidOpenTextDocumentParams{TextDocument: doc})
}

// save sends didSave without the text (a client that ignores
// save.includeText).
func (c *editorConn) save(doc protocol.TextDocumentItem) {
	c.t.Helper()
	c.notify(protocol.MethodTextDocumentDidSave, &protocol.DidSaveTextDocumentParams{TextDocument: protocol.TextDocumentIdentifier{URI: doc.URI}})
}

// saveText sends didSave with the saved text, as clients do when the
// server asks for it (save.includeText).
func (c *editorConn) saveText(doc protocol.TextDocumentItem, text string) {
	c.t.Helper()
	c.notify(protocol.MethodTextDocumentDidSave, &protocol.DidSaveTextDocumentParams{
		TextDocument: protocol.TextDocumentIdentifier{URI: doc.URI}, Text: &text,
	})
}

// endWindows lets the save window pass: what the saves changed is
// remembered.
func (c *editorConn) endWindows() {
	c.t.Helper()
	c.settle()
	c.clock.Advance(vscode.DefaultSaveWindow)
	c.settle()
}

func (c *editorConn) close(doc protocol.TextDocumentItem) {
	c.t.Helper()
	c.notify(protocol.MethodTextDocumentDidClose, &protocol.DidCloseTextDocumentParams{TextDocument: protocol.TextDocumentIdentifier{URI: doc.URI}})
}

// shutdown sends shutdown and checks its null result.
func (c *editorConn) shutdown() {
	c.t.Helper()
	var res json.RawMessage
	if err := c.call(protocol.MethodShutdown, nil, &res); err != nil {
		c.t.Fatalf("shutdown: %v", err)
	}
	if string(res) != "null" {
		c.t.Fatalf("shutdown answered %s, want null", res)
	}
}

// exit sends exit and ends the connection the way cmd/mnemo does then.
func (c *editorConn) exit() {
	c.t.Helper()
	c.notify(protocol.MethodExit, nil)
	select {
	case <-c.exited:
	case <-time.After(5 * time.Second):
		c.t.Fatal("exit was not handled")
	}
	c.hangUp()
}

// settle waits until the editor has handled everything sent so far and the
// memory's worker has processed what that queued.
func (c *editorConn) settle() {
	c.t.Helper()
	select {
	case <-c.server.Done(): // hung up: nothing more can arrive
	default:
		if err := c.client.Call(ctxT(c.t), methodSync, nil, nil); err != nil {
			c.t.Fatalf("sync: %v", err)
		}
	}
	// A bound, not a measure: 200 events of one turn take the worker about
	// 5 s under the race detector (each reads the turn's observations so
	// far, every one a deflate frame to inflate), more on a loaded machine.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := c.mem.WaitIdle(ctx); err != nil {
		c.t.Fatalf("wait for the worker: %v", err)
	}
}

// session returns the stored session csid, once settled.
func (c *editorConn) session(csid string) *memory.Session {
	c.t.Helper()
	c.settle()
	s, err := c.mem.Session(ctxT(c.t), csid)
	if err != nil {
		c.t.Fatalf("session %q: %v", csid, err)
	}
	return s
}

// sessions returns every stored session, once settled.
func (c *editorConn) sessions() []memory.Session {
	c.t.Helper()
	c.settle()
	s, err := c.mem.Sessions(ctxT(c.t))
	if err != nil {
		c.t.Fatal(err)
	}
	return s
}

// observations returns the project's observations, oldest first, once
// settled.
func (c *editorConn) observations() []memory.Observation {
	c.t.Helper()
	c.settle()
	res, err := c.mem.Search(ctxT(c.t), memory.SearchParams{Project: project, Limit: memory.MaxLimit})
	if err != nil {
		c.t.Fatal(err)
	}
	if len(res.Hits) == 0 {
		return nil
	}
	var ids []uint64
	for _, h := range res.Hits {
		ids = append(ids, h.ID)
	}
	got, err := c.mem.Get(ctxT(c.t), memory.IDsParams{IDs: ids})
	if err != nil {
		c.t.Fatal(err)
	}
	obs := got.Observations
	slices.SortFunc(obs, func(a, b memory.Observation) int { return cmp.Compare(a.ID, b.ID) })
	return obs
}

// summaries returns the summaries of session csid (one per Stop that had
// work to summarize), once settled.
func (c *editorConn) summaries(csid string) []memory.Summary {
	c.t.Helper()
	s := c.session(csid)
	sums, err := c.mem.Summaries(ctxT(c.t), s.ID)
	if err != nil {
		c.t.Fatal(err)
	}
	return sums
}

// events returns the events the editor queued (the agent was given), in
// order, once settled: "<tool> <path>" ("Open", "Save", "Edit",
// "MultiEdit", "Write") or "Stop".
func (c *editorConn) events() []string {
	c.t.Helper()
	c.settle()
	c.agent.mu.Lock()
	defer c.agent.mu.Unlock()
	var out []string
	for _, ev := range c.agent.events {
		switch ev.Kind {
		case memory.EventStop:
			out = append(out, "Stop")
		default:
			var in struct {
				FilePath string `json:"file_path"`
			}
			if err := json.Unmarshal(ev.ToolInput, &in); err != nil {
				c.t.Fatalf("event %d: %v", ev.ID, err)
			}
			out = append(out, ev.ToolName+" "+in.FilePath)
		}
	}
	return out
}

// stops counts the Stops the editor queued, once settled.
func (c *editorConn) stops() int {
	c.t.Helper()
	n := 0
	for _, ev := range c.events() {
		if ev == "Stop" {
			n++
		}
	}
	return n
}

// recorder is the memory's agent: it records the events it is given,
// which are the events the editor queued, and hands them on to agent.
type recorder struct {
	agent  memory.Agent
	mu     sync.Mutex
	events []memory.Event
}

func (r *recorder) Name() string { return r.agent.Name() }

func (r *recorder) Run(ctx context.Context, in memory.AgentInput) (memory.AgentOutput, error) {
	out, err := r.agent.Run(ctx, in)
	if err == nil {
		r.mu.Lock()
		r.events = append(r.events, in.Events...)
		r.mu.Unlock()
	}
	return out, err
}

// fakeClock runs the idle timer by hand: its timers fire only in Advance.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Duration // since the clock was made
	timers []*fakeTimer
}

type fakeTimer struct {
	c     *fakeClock
	f     func()
	at    time.Duration
	armed bool
}

// AfterFunc is time.AfterFunc on this clock.
func (c *fakeClock) AfterFunc(d time.Duration, f func()) vscode.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{c: c, f: f, at: c.now + d, armed: true}
	c.timers = append(c.timers, t)
	return t
}

// Advance moves the clock on by d and runs, on the caller's goroutine, the
// function of every timer that came due. It returns how many ran.
func (c *fakeClock) Advance(d time.Duration) int {
	c.mu.Lock()
	c.now += d
	var due []func()
	for _, t := range c.timers {
		if t.armed && t.at <= c.now {
			t.armed = false
			due = append(due, t.f)
		}
	}
	c.mu.Unlock()
	for _, f := range due {
		f()
	}
	return len(due)
}

// Timers returns how many timers were made.
func (c *fakeClock) Timers() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

func (t *fakeTimer) Reset(d time.Duration) bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := t.armed
	t.at, t.armed = t.c.now+d, true
	return was
}

func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := t.armed
	t.armed = false
	return was
}

// rawEvents returns the events the editor queued, once settled.
func (c *editorConn) rawEvents() []memory.Event {
	c.t.Helper()
	c.settle()
	c.agent.mu.Lock()
	defer c.agent.mu.Unlock()
	return slices.Clone(c.agent.events)
}

// search returns the ids of the observations a search for query finds in
// the tests' project.
func (c *editorConn) search(query string) []uint64 {
	c.t.Helper()
	c.settle()
	res, err := c.mem.Search(ctxT(c.t), memory.SearchParams{Query: query, Project: project, Limit: 20})
	if err != nil {
		c.t.Fatal(err)
	}
	var ids []uint64
	for _, h := range res.Hits {
		ids = append(ids, h.ID)
	}
	return ids
}

// A folder on disk for the tests that read files or ask git: named after
// the project, with files written and, when commit is true, a git
// repository whose HEAD has them.
func newFolder(t *testing.T, files map[string]string, commit bool) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), project)
	for name, text := range files {
		writeFile(t, filepath.Join(dir, name), text)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if commit {
		gitIn(t, dir, "init", "-q")
		gitIn(t, dir, "add", "-A")
		gitIn(t, dir, "-c", "user.name=test", "-c", "user.email=test@example.com", "commit", "-q", "-m", "start")
	}
	return dir
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func gitIn(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// initializeIn starts session csid with folder as the workspace.
func (c *editorConn) initializeIn(folder, csid string, opts vscode.InitOptions) {
	c.t.Helper()
	opts.ClientKind, opts.ProtocolVersion, opts.ContentSessionID, opts.Project = "vscode", rpc.ProtocolVersion, csid, project
	p := initParams(c.t, opts)
	p.WorkspaceFolders = protocol.NewNullable([]protocol.WorkspaceFolder{{URI: uri.URI("file://" + folder), Name: project}})
	if _, err := c.initialize(p); err != nil {
		c.t.Fatalf("initialize: %v", err)
	}
	c.notify(protocol.MethodInitialized, &protocol.InitializedParams{})
}

// docIn is a document of folder.
func docIn(folder, name, lang, text string) protocol.TextDocumentItem {
	return protocol.TextDocumentItem{URI: uri.URI("file://" + filepath.Join(folder, name)), LanguageID: protocol.LanguageKind(lang), Version: 1, Text: text}
}
