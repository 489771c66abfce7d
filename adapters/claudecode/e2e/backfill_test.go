//go:build e2e

package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/adapters/claudecode/e2e/harness"
	"github.com/mnemo-dev/mnemo/memory"
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
// it asks for none). Subagents' tool runs are not in this session; live
// they are recorded, a back-fill skips their lines (isSidechain).
func TestMnemoBackfillEqualsLive(t *testing.T) {
	h := newHarness(t)
	mnemoBin, hookBin := harness.Mnemo(t, h.root)
	h.installMnemo(t, mnemoBin, hookBin)
	run := h.runFixCalc(t)
	sid := run.init(t).SessionID
	h.waitForContext(t, mnemoBin, "calc.py")
	live := settle(t, h.mnemo, mnemoBin)

	// Home B: the same HOME (and so the same transcripts), a fresh MNEMO_HOME.
	homeB := harness.Mkdir(t, h.Base, "mnemo-b")
	envB := append(h.env(), "MNEMO_HOME="+homeB)
	mnemoB := func(ctx context.Context, bin string, args ...string) (string, error) {
		return harness.Command(ctx, h.Project, envB, bin, args...)
	}
	harness.StopDaemonAtEnd(t, homeB, mnemoBin, mnemoB)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	began := time.Now()
	out, err := mnemoB(ctx, mnemoBin, "backfill", "claude-code")
	if err != nil {
		t.Fatalf("mnemo backfill claude-code: %v\n%s", err, out)
	}
	t.Logf("backfill into B (%.2fs):\n%s", time.Since(began).Seconds(), out)
	if !strings.Contains(out, "back-filled 1 sessions: 1 prompts, 5 tool events, 1 turns") {
		t.Errorf("backfill into B said:\n%s", out)
	}
	back := settle(t, mnemoB, mnemoBin)

	a, b := storeOf(t, h.mnemo, mnemoBin, h.Base, "a"), storeOf(t, mnemoB, mnemoBin, h.Base, "b")
	if live.Counts != back.Counts {
		t.Errorf("counts: live %+v, back-filled %+v", live.Counts, back.Counts)
	}
	if !slices.Equal(a, b) {
		t.Errorf("the stores differ:\n--- live (A)\n%s\n--- back-filled (B)\n%s", strings.Join(a, "\n"), strings.Join(b, "\n"))
	}
	if !slices.ContainsFunc(a, func(s string) bool { return strings.HasPrefix(s, "summary ") }) ||
		!slices.ContainsFunc(a, func(s string) bool { return strings.Contains(s, "calc.py") }) {
		t.Errorf("the live store has no summary or no calc.py observation:\n%s", strings.Join(a, "\n"))
	}
	t.Logf("compared %d records, session %s", len(a), sid)

	// Again into B: nothing; into A: captured live.
	if out, err = mnemoB(ctx, mnemoBin, "backfill", "claude-code"); err != nil || !strings.Contains(out, "back-filled 0 sessions") || !strings.Contains(out, "1 already back-filled") {
		t.Errorf("second backfill into B: %v\n%s", err, out)
	}
	if out, err = h.mnemo(ctx, mnemoBin, "backfill", "claude-code"); err != nil || !strings.Contains(out, "back-filled 0 sessions") || !strings.Contains(out, "1 captured live") {
		t.Errorf("backfill into A: %v\n%s", err, out)
	}
	if again := settle(t, mnemoB, mnemoBin); again.Counts != back.Counts {
		t.Errorf("a second backfill changed B: %+v, then %+v", back.Counts, again.Counts)
	}
	harness.CheckLogs(t, h.MnemoHome, false)
	harness.CheckLogs(t, homeB, false)
}

// settle polls `mnemo status --json` until the queue is empty and the
// counts stay put for a second.
func settle(t *testing.T, mnemo harness.MnemoFunc, bin string) memory.Status {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), memoryWait)
	defer cancel()
	var last memory.Status
	stable := 0
	for ctx.Err() == nil {
		out, err := mnemo(ctx, bin, "status", "--json")
		var st memory.Status
		if err == nil && json.Unmarshal([]byte(out), &st) == nil {
			if st.Counts.Queued == 0 && st.Counts == last.Counts {
				if stable++; stable >= 5 {
					return st
				}
			} else {
				stable = 0
			}
			last = st
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("the store did not settle within %v: %+v", memoryWait, last.Counts)
	return last
}

// storeOf exports a store and returns what a diff compares, one line per
// record, sorted: sessions (project, platform, prompts, status), prompts,
// observations and summaries, without ids, times and memory session ids.
func storeOf(t *testing.T, mnemo harness.MnemoFunc, bin, dir, name string) []string {
	t.Helper()
	path := filepath.Join(dir, "export-"+name+".jsonl")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if out, err := mnemo(ctx, bin, "export", path); err != nil {
		t.Fatalf("mnemo export: %v\n%s", err, out)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	harness.Save(t, "export-"+name+".jsonl", data)
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var r memory.Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("export line %q: %v", line, err)
		}
		switch {
		case r.Session != nil:
			s := r.Session
			out = append(out, fmt.Sprintf("session %s project=%s platform=%s prompts=%d status=%s private=%v", s.ContentSessionID, s.Project, s.Platform, s.PromptCounter, s.Status, s.PrivatePrompts))
		case r.Prompt != nil:
			out = append(out, fmt.Sprintf("prompt %d %q", r.Prompt.Number, r.Prompt.Text))
		case r.Observation != nil:
			o := r.Observation
			out = append(out, fmt.Sprintf("observation %s prompt=%d type=%s title=%q subtitle=%q tool=%s read=%v modified=%v request=%q",
				o.ContentSessionID, o.PromptNumber, o.Type, o.Title, o.Subtitle, o.Tool, o.FilesRead, o.FilesModified, o.Request))
		case r.Summary != nil:
			s := r.Summary
			out = append(out, fmt.Sprintf("summary %s prompt=%d request=%q completed=%q read=%v modified=%v",
				s.ContentSessionID, s.PromptNumber, s.Request, s.Completed, s.FilesRead, s.FilesModified))
		}
	}
	slices.Sort(out)
	return out
}
