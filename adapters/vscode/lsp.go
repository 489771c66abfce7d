package vscode

import (
	"encoding/json"
	"net/url"
	"path/filepath"

	"go.lsp.dev/protocol"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/rpc"
)

// Register adds the LSP lifecycle and document methods to mux.
func (e *Editor) Register(mux *rpc.Mux) {
	rpc.Handle(mux, protocol.MethodInitialize, e.initialize)
	rpc.HandleNotify(mux, protocol.MethodInitialized, e.initializedNote)
	rpc.Handle(mux, protocol.MethodShutdown, e.shutdownCall)
	rpc.HandleNotify(mux, protocol.MethodTextDocumentDidOpen, e.didOpen)
	rpc.HandleNotify(mux, protocol.MethodTextDocumentDidSave, e.didSave)
	rpc.HandleNotify(mux, protocol.MethodTextDocumentDidClose, e.didClose)
	rpc.HandleNotify(mux, protocol.MethodTextDocumentDidChange, e.didChange)
}

// lsp decodes params with the protocol package's union-aware decoder.
type lsp[T any] struct{ v T }

func (p *lsp[T]) UnmarshalJSON(b []byte) error { return protocol.Unmarshal(b, &p.v) }

// capabilities asks for open and close notifications, and for save
// notifications with the saved text: what a save changed is the saved
// text against the text at open or at the last save. No didChange: the
// text on save costs less than following every keystroke (see
// docs/decisions.md).
var capabilities = json.RawMessage(`{"textDocumentSync":{"openClose":true,"change":0,"save":{"includeText":true}}}`)

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

// filePath turns a file:// URI into a path; other schemes are not files.
func filePath(uri string) (string, bool) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" || u.Path == "" {
		return "", false
	}
	return filepath.FromSlash(u.Path), true
}
