//go:build e2e

package e2e_test

import (
	"testing"

	"github.com/mnemo-dev/mnemo/adapters/claudecode/e2e/harness"
)

// TestMnemoBackfillEqualsLive: a real session (the calc fix: Read, Edit, a
// failing Bash, Edit, Bash) runs with Mnemo's hooks into home A; then
// `mnemo backfill claude-code` feeds the transcript Claude Code wrote of it
// into a fresh home B. The two stores hold the same sessions, prompts,
// observations (type, title, subtitle, files read and modified, tool,
// request) and summaries (request, completed, files). A second back-fill
// into B adds nothing, and a back-fill into A skips the session as
// captured live.
//
// Inherent differences, not compared: ids; times to the millisecond (live
// records take the moment the hook's call arrived, back-filled ones the
// time of their transcript line); the memory session ids
// (each home's agent run has its own), and the context and recall the
// hooks gave the live session (a back-fill shows nothing to an agent, so
// it asks for none). The session runs no sub-agent; sub-agents' tool runs
// are compared with their live records on the recorded transcripts of
// every version (adapters/hosts/backfill/transcripts_test.go).
func TestMnemoBackfillEqualsLive(t *testing.T) {
	h := newHarness(t)
	mnemoBin, hookBin := harness.Mnemo(t, h.root)
	h.installMnemo(t, mnemoBin, hookBin)
	run := h.runFixCalc(t)
	t.Logf("session %s", run.init(t).SessionID)
	h.waitForContext(t, mnemoBin, "calc.py")
	harness.BackfillEqualsLive{
		World: h.World, Env: h.env(), Mnemo: h.mnemo, Bin: mnemoBin,
		Args: []string{"backfill", "claude-code"},
		Said: "back-filled 1 session: 1 prompt, 5 tool events, 1 turn",
	}.Check(t)
}
