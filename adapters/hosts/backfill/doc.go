// Package backfill rebuilds, from the session transcripts a host keeps on
// this machine, the calls its live hooks would have made, for `mnemo
// backfill` and the daemon's back-fill of sessions held before Mnemo was
// installed. Sources lists the hosts whose transcripts it reads: Claude
// Code (~/.claude/projects), Codex CLI (~/.codex/sessions) and Gemini CLI
// (~/.gemini/tmp/*/chats).
//
// Each rebuilt payload goes through the hook's own reading of its host's
// payloads (hosts.Wire.Normalize, then hook.Translate), so that the
// dialect, the tool names, privacy and the skip list apply alike; each
// call carries an event key derived from the transcript (Key), so that a
// back-fill run again, however much later, stores nothing twice, and the
// time of its work.
package backfill
