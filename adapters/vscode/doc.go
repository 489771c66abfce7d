// Package vscode maps an editor's Language Server Protocol session onto
// Mnemo's five stages. VS Code's extension (the TypeScript in extension/)
// and any other LSP client (Neovim, Helix, Zed, Emacs) run `mnemo serve
// --stdio`; its connection gets one Editor, which turns
//
//	initialize            → SessionStart (context in the result)
//	textDocument/didOpen  → PostToolUse, a read (once per file and session)
//	textDocument/didSave  → PostToolUse, what the saves of a window changed
//	idle for a while      → Stop (a summary naming what changed)
//	shutdown              → SessionEnd
//
// The mapping lives here, in the sidecar, so that every editor gets the
// same memory from the same events.
//
// A save is remembered as the change it made, the way a Claude Code Edit
// is: the server asks for the text on save (save.includeText; a client
// that sends none is read from disk) and keeps each document's text as it
// was at didOpen or at the last save (a file never opened: its version in
// git's HEAD). The saves of one file within a window (a minute, or the idle
// delay if shorter; initializationOptions.saveWindowSeconds or the server's
// saveWindowSeconds setting) become one event of their net change: tool
// "Edit" or "MultiEdit" with the file and each changed hunk's old and new
// text (a few lines of context, not the next declaration), the original
// file and a structured patch in the response, Source "editor". The memory
// agent names the functions the hunks change or sit in and the identifiers
// they add. A window ends at its time, when its file closes, before an idle
// or a client's Stop (whose summary is then told which functions changed
// in which files), before SessionEnd on shutdown, and when the connection
// ends. Nothing is remembered of a save that only changes whitespace, nor
// of binary (NUL bytes, not UTF-8), huge (over 1 MB), generated ("Code
// generated … DO NOT EDIT", "@generated") or ignored files (git
// check-ignore, and node_modules/, dist/, build/ and vendor/). Texts are
// stripped of private parts and redacted before they are kept, and kept
// within a byte budget (least recently used first; a closed document's
// text goes at once).
//
// An editor has no prompts, so no event maps onto UserPromptSubmit: its
// events belong to the session's turn 0. textDocument/didChange only counts
// as activity for the idle timer, and a URI that is not a file:// URI is
// ignored. A shutdown summarizes the work since the last Stop before it
// ends the session. The exit notification belongs to the connection
// (cmd/internal/daemon), which then calls Close; an exit without shutdown
// ends no session (the saves still in a window are remembered all the
// same).
//
// The editor reaches the memory through Memory (session.go), the stages it
// calls and the names of what an edit touched, which the daemon's
// *store.Memory provides: it links the domain, never the engine.
//
// The files follow the mapping: lsp.go registers the methods on an rpc.Mux
// and holds what is LSP's (the params decoder, the capabilities, URIs);
// session.go is the session's lifecycle (initialize, Stop, shutdown, the
// idle timer); documents.go is the documents' events and the save windows;
// change.go the line diff of a save; files.go which files are remembered
// and what git says of them; texts.go the kept texts and their budget.
package vscode
