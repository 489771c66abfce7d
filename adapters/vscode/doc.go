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
//
// An editor has no prompts, so no event maps onto UserPromptSubmit: its
// events belong to the session's turn 0. textDocument/didChange only counts
// as activity for the idle timer, textDocument/didClose does nothing, and a
// URI that is not a file:// URI is ignored. A shutdown summarizes the work
// since the last Stop before it ends the session. The exit notification
// belongs to the connection (cmd/mnemo), which then calls Close; an exit
// without shutdown ends no session.
//
// The files follow the mapping: lsp.go registers the methods on an rpc.Mux
// and holds what is LSP's (the params decoder, the capabilities, URIs);
// session.go is the session's lifecycle (initialize, shutdown, the idle
// timer); documents.go is the documents' events.
package vscode
