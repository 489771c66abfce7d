//go:build unix

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/mnemo-dev/mnemo/adapters/vscode"
	mnemod "github.com/mnemo-dev/mnemo/cmd/internal/daemon"
	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/store"
	"github.com/mnemo-dev/mnemo/rpc"
)

// The editor rows: what a save costs the sidecar's editor mapping, and
// what it keeps for the open documents. They run in-process, as `mnemo
// serve --remote=none` runs an editor's connection: the daemon's method
// table (cmd/internal/daemon, adapters/vscode's Editor in it) over
// net.Pipe, in front of a store on disk (Badger, the local agent, the
// hashing embedder).

// editorDocs is how many documents the editor has open.
const editorDocs = 200

// editorResult is what the editor rows measured.
type editorResult struct {
	docs, saves   int
	textMB        float64 // the documents' texts as sent
	open          dist    // didOpen, handled
	save          dist    // didSave with the text, within a window
	firstSave     dist    // of those, each file's first (git check-ignore runs once per file)
	windowEnd     dist    // didSave that ends its window: the diff and the queued Edit
	keptMB        float64 // what the editor counts for the kept texts
	heapMB        float64 // live heap the open documents hold in the editor
	heapOpenMB    float64 // live heap growth of the process from the opens
	events        int     // Edit events queued by the window-ending saves
	formattedOnly int     // of those saves, ones with nothing to remember
}

// editorDoc is the i-th open document: Go source of 4 to 64 KB.
func editorDoc(i int) (path, text string) {
	size := []int{4, 8, 16, 32, 64}[i%5] << 10
	return fmt.Sprintf("/home/dev/src/billing-api/internal/editor/doc_%03d.go", i), sourceFile(size)
}

// editedDoc is doc i after its k-th save: the body of one function
// changed, a call to an identifier of its own added.
func editedDoc(text string, i, k int) string {
	fn := fmt.Sprintf("func total%d(", k%8)
	at := strings.Index(text, fn)
	if at < 0 {
		return text + fmt.Sprintf("\nfunc added%d_%d() {}\n", i, k)
	}
	line := strings.Index(text[at:], "\tvar total float64\n")
	if line < 0 {
		return text
	}
	at += line
	return text[:at] + fmt.Sprintf("\tapplyRate%d_%d(lines)\n", i, k) + text[at:]
}

// measureEditor opens editorDocs documents on an editor connection and
// saves them, first within a save window (what each save costs), then
// with the window off (what a save that ends its window costs); and
// measures the editor's live heap with the documents open.
func measureEditor(ctx context.Context, log *slog.Logger, root string, saves int) (editorResult, error) {
	res := editorResult{docs: editorDocs, saves: saves}
	var texts []string
	for i := range editorDocs {
		_, t := editorDoc(i)
		texts = append(texts, t)
		res.textMB += float64(len(t)) / (1 << 20)
	}

	// Within a window: every save is kept for the window's end.
	conn, err := openEditor(ctx, filepath.Join(root, "editor-window"), 0)
	if err != nil {
		return res, err
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range editorDocs {
		path, text := editorDoc(i)
		took, err := conn.notify(ctx, "textDocument/didOpen", map[string]any{"textDocument": map[string]any{
			"uri": "file://" + path, "languageId": "go", "version": 1, "text": text}})
		if err != nil {
			conn.close()
			return res, err
		}
		res.open = append(res.open, took)
	}
	// The memory's worker makes observations of the opens meanwhile: let
	// it finish, so that the heap measured is the editor's.
	if err := conn.mem.WaitIdle(ctx); err != nil {
		conn.close()
		return res, err
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	res.heapOpenMB = float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / (1 << 20)
	res.keptMB = float64(conn.conn.Editor().TextBytes()) / (1 << 20)
	// What the editor holds: the heap its documents free when they close
	// (the store's own growth from the opens stays).
	for i := range editorDocs {
		path, _ := editorDoc(i)
		if _, err := conn.notify(ctx, "textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": "file://" + path}}); err != nil {
			conn.close()
			return res, err
		}
	}
	var closed runtime.MemStats
	if err := conn.mem.WaitIdle(ctx); err != nil {
		conn.close()
		return res, err
	}
	runtime.GC()
	runtime.ReadMemStats(&closed)
	res.heapMB = float64(int64(after.HeapAlloc)-int64(closed.HeapAlloc)) / (1 << 20)
	for i := range editorDocs {
		path, text := editorDoc(i)
		if _, err := conn.notify(ctx, "textDocument/didOpen", map[string]any{"textDocument": map[string]any{
			"uri": "file://" + path, "languageId": "go", "version": 1, "text": text}}); err != nil {
			conn.close()
			return res, err
		}
	}
	cur := append([]string(nil), texts...)
	for k := range saves {
		i := k % editorDocs
		cur[i] = editedDoc(cur[i], i, k/editorDocs)
		path, _ := editorDoc(i)
		took, err := conn.notify(ctx, "textDocument/didSave", map[string]any{
			"textDocument": map[string]any{"uri": "file://" + path}, "text": cur[i]})
		if err != nil {
			conn.close()
			return res, err
		}
		res.save = append(res.save, took)
		if k < editorDocs {
			res.firstSave = append(res.firstSave, took)
		}
	}
	conn.close()

	// No window: every save ends its own, and queues its Edit event.
	conn, err = openEditor(ctx, filepath.Join(root, "editor-nowindow"), -1)
	if err != nil {
		return res, err
	}
	defer conn.close()
	cur = append(cur[:0], texts...)
	for i := range editorDocs {
		path, text := editorDoc(i)
		if _, err := conn.notify(ctx, "textDocument/didOpen", map[string]any{"textDocument": map[string]any{
			"uri": "file://" + path, "languageId": "go", "version": 1, "text": text}}); err != nil {
			return res, err
		}
	}
	st0, err := conn.mem.Status(ctx)
	if err != nil {
		return res, err
	}
	for k := range saves {
		i := k % editorDocs
		cur[i] = editedDoc(cur[i], i, k/editorDocs)
		path, _ := editorDoc(i)
		took, err := conn.notify(ctx, "textDocument/didSave", map[string]any{
			"textDocument": map[string]any{"uri": "file://" + path}, "text": cur[i]})
		if err != nil {
			return res, err
		}
		res.windowEnd = append(res.windowEnd, took)
	}
	st1, err := conn.mem.Status(ctx)
	if err != nil {
		return res, err
	}
	res.events = st1.Counts.Queued + st1.Counts.Observations - st0.Counts.Queued - st0.Counts.Observations
	res.formattedOnly = saves - res.events
	log.Debug("editor saves", "events", res.events)
	return res, nil
}

// editorConn is one editor connection served in-process: the daemon's
// own method table (cmd/internal/daemon) on a Mnemo home of its own.
type editorConn struct {
	m    *mnemod.Main
	mem  *store.Memory
	conn *mnemod.Conn
}

// openEditor opens a Mnemo home in dir (the hashing embedder, and the
// given save window: 0 the default, -1 none) and connects an editor to it
// in-process, as `mnemo serve --remote=none` serves one.
func openEditor(ctx context.Context, dir string, saveWindowSeconds int) (*editorConn, error) {
	settings, err := json.Marshal(map[string]any{"embedder": "hash", "saveWindowSeconds": saveWindowSeconds})
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(mnemod.SettingsFile(dir), settings, 0o600); err != nil {
		return nil, err
	}
	m := &mnemod.Main{Home: dir, Logger: slog.New(slog.DiscardHandler)}
	if err := m.Open(ctx); err != nil {
		return nil, err
	}
	c := &editorConn{m: m, mem: m.Memory, conn: m.Connect(ctx)}
	var res json.RawMessage
	init := map[string]any{"processId": nil, "rootUri": "file:///home/dev/src/billing-api", "capabilities": map[string]any{},
		"initializationOptions": map[string]any{"clientKind": "bench", "protocolVersion": rpc.ProtocolVersion, "contentSessionId": "bench-editor-" + filepath.Base(dir), "idleMinutes": -1}}
	if err := c.conn.Client.Call(ctx, "initialize", init, &res); err != nil {
		c.close()
		return nil, fmt.Errorf("initialize: %w", err)
	}
	return c, nil
}

// notify sends a notification and waits until it is handled (the call
// after it answers: the connection handles them in order): its time is
// the handler's, plus one round trip of mnemo/teamStatus, the table's
// cheapest call (no store read).
func (c *editorConn) notify(ctx context.Context, method string, params any) (time.Duration, error) {
	t0 := time.Now()
	if err := c.conn.Client.Notify(ctx, method, params); err != nil {
		return 0, err
	}
	if err := c.conn.Client.Call(ctx, memory.MethodTeamStatus, nil, nil); err != nil {
		return 0, err
	}
	return time.Since(t0), nil
}

func (c *editorConn) close() {
	c.conn.Close()
	c.m.Close()
}

// editorRows are the table's rows of the editor.
func (r editorResult) rows() []row {
	return []row{
		{"editor save (didSave with the text), sidecar, within a save window", p50p99(r.save), "", "",
			fmt.Sprintf("%d saves of %d open Go files of 4–64 KB (%.1f MB in all), each changing one function; handled and acknowledged by a call after it, mnemo/teamStatus (in-process: the daemon's method table over net.Pipe, as `mnemo serve --remote=none` serves it); privacy stripping and redaction of the whole text included; a file's first save also asks git whether it is ignored (%s), the later ones do not; didOpen (which queues the read durably) %s",
				len(r.save), r.docs, r.textMB, p50p99(r.firstSave), p50p99(r.open))},
		{"editor save that ends its window, sidecar", p50p99(r.windowEnd), "", "",
			fmt.Sprintf("the same saves with the window off: each is diffed against the text before it and queued durably as an Edit (Badger on disk, group sync); %d events queued, %d saves had nothing to remember", r.events, r.formattedOnly)},
		{fmt.Sprintf("editor memory, %d open documents", r.docs), fmt.Sprintf("%.1f MB live heap", r.heapMB), "", "",
			fmt.Sprintf("live heap the %d documents (%.1f MB of text sent with didOpen) free when they close, after a GC; the editor counts %.1f MB of kept texts (budget %d MB per connection); the process's heap grew %.1f MB with the opens (the store's share: the Open events, the index)",
				r.docs, r.textMB, r.keptMB, vscode.DefaultTextBytes>>20, r.heapOpenMB)},
	}
}
