//go:build e2e

package e2e_test

import (
	"path/filepath"
	"testing"

	"github.com/mnemo-dev/mnemo/adapters/claudecode/e2e/harness"
)

// TestMnemoBackfillEqualsLive: a real Gemini CLI session (the calc fix:
// read_file, replace, a failing and a passing run_shell_command, replace,
// write_file) runs with Mnemo's hooks into home A; then `mnemo backfill
// gemini` feeds the transcript the CLI wrote of it
// ($HOME/.gemini/tmp/<project>/chats/session-*.jsonl) into a fresh home B.
// The two stores hold the same records (harness.Store); a second back-fill
// into B adds nothing, one into A skips the session as captured live. The
// transcript is kept among the artifacts.
//
// Inherent differences, not compared: as for Claude Code (ids, times,
// memory session ids, the context and recall given live).
func TestMnemoBackfillEqualsLive(t *testing.T) {
	h := newHarness(t)
	mnemoBin, hookBin := harness.Mnemo(t, h.root)
	h.installMnemo(t, mnemoBin, hookBin)
	run := h.runFixCalc(t, "fix-calc")
	id := run.mustSucceed(t).SessionID
	checkHooksQuiet(t, run)
	h.waitForContext(t, mnemoBin, "calc.py")

	transcripts := harness.SaveTranscripts(t, filepath.Join(h.Home, ".gemini", "tmp"), string(filepath.Separator)+"chats"+string(filepath.Separator), ".jsonl", "transcript-")
	if len(transcripts) != 1 {
		t.Fatalf("want the transcript of session %s under $HOME/.gemini/tmp/*/chats, have %q", id, transcripts)
	}
	harness.BackfillEqualsLive{
		World: h.World, Env: h.env(), Mnemo: h.mnemo, Bin: mnemoBin,
		Args: []string{"backfill", "gemini"},
		Said: "back-filled 1 session: 1 prompt, 6 tool events, 1 turn",
	}.Check(t)
}
