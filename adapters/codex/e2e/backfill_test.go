//go:build e2e

package e2e_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/mnemo-dev/mnemo/adapters/claudecode/e2e/harness"
)

// TestMnemoBackfillEqualsLive: a real Codex session (the calc fix: shell
// reads, apply_patch edits, a failing and a passing test run) runs with
// Mnemo's hooks into home A; then `mnemo backfill codex` feeds the rollout
// Codex wrote of it ($CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl) into
// a fresh home B. The two stores hold the same records (harness.Store); a
// second back-fill into B adds nothing, one into A skips the session as
// captured live. The rollout is kept among the artifacts.
//
// Inherent differences, not compared: as for Claude Code (ids, times,
// memory session ids, the context and recall given live).
func TestMnemoBackfillEqualsLive(t *testing.T) {
	h := newHarness(t)
	mnemoBin, hookBin := harness.Mnemo(t, h.root)
	h.installMnemoCodex(t, mnemoBin, hookBin)
	run := h.runFixCalc(t)
	thread := run.threadID(t)
	h.checkSession(t, mnemoBin, thread)
	h.waitForContext(t, mnemoBin, "calc.py")

	rollouts := harness.SaveTranscripts(t, filepath.Join(h.codexHome, "sessions"), "rollout-", ".jsonl", "")
	if len(rollouts) != 1 || !strings.Contains(rollouts[0], thread) {
		t.Fatalf("want one rollout of thread %s under $CODEX_HOME/sessions, have %q", thread, rollouts)
	}
	harness.BackfillEqualsLive{
		World: h.World, Env: h.env(), Mnemo: h.mnemo, Bin: mnemoBin,
		Args: []string{"backfill", "codex"},
		Said: "back-filled 1 session: 1 prompt, 5 tool events, 1 turn",
	}.Check(t)
}
