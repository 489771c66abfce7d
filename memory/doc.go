// Package memory is Mnemo's domain: what is remembered and the protocol
// that carries it. It imports only the standard library, so that every
// client can link it — the hook binary included, which must start in a
// millisecond or two — and the types that cross the wire are written once.
//
// # The five stages
//
// Work reaches memory through five lifecycle stages, each a JSON-RPC method
// of the daemon (methods.go names them all) with its params and result:
//
//   - SessionStart (SessionStartParams → ContextResult) opens or reopens a
//     session and returns the context to inject;
//   - UserPromptSubmit (UserPromptParams → UserPromptResult) records a
//     prompt, numbers it, and returns the few memories it recalls that
//     the session has not been given yet;
//   - PostToolUse (ToolUseParams → QueueResult) queues one tool run, or one
//     editor event, for the memory agent;
//   - Stop (StopParams → QueueResult) queues the end of a turn, which the
//     agent turns into a summary;
//   - SessionEnd (SessionEndParams → SessionEndResult) completes a session.
//
// Every stage call carries an EventKey, so that a hook replaying its spool
// has no further effect.
//
// # The records
//
// A Session is one content session (a Claude Code session, an editor
// window). Its Prompts are numbered; an Event is a queued tool run or turn
// end; an Observation is what the memory agent made of events (typed:
// bugfix, feature, decision…, with facts, files and concepts); a Summary
// closes a turn. Record is one line of an export. The session-ID rules of
// docs/architecture.md §5 (one session per contentSessionId, a memory session id only
// once the agent reports one, resume only on continuation prompts, …) are
// stated on the fields that carry them and enforced by memory/store.
//
// # Keeping it true
//
// A record that is wrong is corrected (CorrectParams: its earlier title
// and text stay on it as Edits), pinned into every context of its project
// (mnemo/pin), or forgotten (mnemo/forget); corrections.go. A project, or
// one session (PauseEnv), can pause capture, injection or both; pause.go.
//
// # How records read
//
// The text rules of a record (Clip, FirstLine, FirstNonEmpty, Dedupe;
// text.go) are shared by the agents that write records and the engine that
// writes its own. A record reads the same wherever it is shown, the CLI or
// the MCP tools: Observation.Markdown, and StateMark and SeenMark after a
// row of a listing (format.go).
//
// # The agents
//
// An Agent turns queued events into observations and summaries. Its
// contract, and the errors it may return (ErrResumeRefused, ErrFallback),
// are in agent.go; memory/local is the default, offline one, and
// memory/observer holds the LLM-backed ones.
//
// # Errors
//
// ErrInvalid (a *FieldError names the field), ErrNotFound, ErrClosed and
// ErrSchema are the domain's sentinels, matched with errors.Is. The daemon
// (cmd/internal/daemon) maps them to JSON-RPC codes in one table.
//
// # Around it
//
// memory/store is the engine: the Badger store, the durable queue and its
// worker, search, context and maintenance. memory/privacy strips private
// parts and redacts secrets before anything is stored.
package memory
