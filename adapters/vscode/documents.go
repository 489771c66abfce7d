package vscode

import (
	"context"
	"encoding/json"

	"go.lsp.dev/protocol"

	"github.com/mnemo-dev/mnemo/memory"
)

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

// didClose does nothing: a closed file stays opened for the session.
func (e *Editor) didClose(context.Context, json.RawMessage) error { return nil }

// didChange is activity: it restarts the idle timer, and records nothing.
func (e *Editor) didChange(context.Context, json.RawMessage) error {
	e.touch()
	return nil
}

// event records a document event as a PostToolUse of tool on path.
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
