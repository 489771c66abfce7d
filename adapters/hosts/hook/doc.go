// Package hook is all that cmd/mnemo-hook links: the hook client that
// every host runs, `mnemo-hook [--host HOST] [EVENT]` (Main).
//
//   - Run reads one hook payload from stdin in the host's dialect
//     (hosts.Wire), maps it onto one call of the daemon (Translate),
//     strips private tags and redacts secrets before anything leaves the
//     process, and hands the call over: a stage whose answer carries
//     nothing for the agent (a tool event, Stop, SessionEnd) appends it
//     to the journal and is done once the system holds it; SessionStart
//     and UserPromptSubmit call the daemon over its Unix socket within a
//     hard per-stage deadline (hosts.Stage.Budget) and print SessionStart's
//     context or a prompt's recall as additionalContext where the host
//     takes it. Every answer is valid in the host's shape (hosts.Answer).
//     It never blocks or breaks its host: on any failure it prints a valid
//     empty answer, exits 0, logs to $MNEMO_HOME/logs/hook.log and, for
//     every stage but SessionStart, journals the call.
//   - The journal, $MNEMO_HOME/spool/journal (AppendJournal,
//     JournalReader; journal.go): calls the daemon takes in order, from
//     where it left off, and syncs to disk within its window. A hook that
//     finds no daemon running fsyncs its record itself and starts one
//     without waiting for it (socket.StartDetached).
//   - The spool, $MNEMO_HOME/spool/hooks.jsonl (AppendSpool, TakeSpool,
//     IngestSpool): calls older hooks could not deliver, and calls the
//     journal could not take, fsynced, for the daemon to ingest when it
//     starts. Every call carries an eventKey, so a call that reached the
//     daemon but whose answer was lost is stored once even when it is
//     replayed, from the journal or the spool.
//   - The hook never reads a transcript: at Stop it sends the transcript's
//     path and the host's last message, and the daemon reads the turn's
//     texts (memory/transcript).
//
// The hook stays small: it imports rpc/socket (the socket, the daemon's
// start and one framed call, with the standard library only), the
// domain's types (memory), memory/privacy and what every host shares
// (adapters/hosts), never rpc itself (its JSON-RPC machinery:
// go.lsp.dev/jsonrpc2, go-json-experiment, package net), memory/store,
// memory/local, vector, Badger or chromem-go, nor the installers or the
// back-fill, so that mnemo-hook starts about as fast as any Go program
// and never touches the data directory's lock. A test checks this with
// go list -deps (deps_test.go).
//
// Data lives in $MNEMO_HOME, never in a plugin's folder: Claude Code
// replaces ${CLAUDE_PLUGIN_ROOT} on every plugin update.
package hook
