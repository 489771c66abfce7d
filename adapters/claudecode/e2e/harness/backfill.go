//go:build e2e

package harness

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

	"github.com/mnemo-dev/mnemo/memory"
)

// SettleWait bounds Settle's wait for a store to settle.
const SettleWait = 30 * time.Second

// Settle polls `mnemo status --json` through mnemo until the queue is
// empty and the counts stay put for a second.
func Settle(t testing.TB, mnemo MnemoFunc, bin string) memory.Status {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), SettleWait)
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
	t.Fatalf("the store did not settle within %v: %+v", SettleWait, last.Counts)
	return last
}

// Store exports a store (saved among the artifacts as export-<name>.jsonl)
// and returns what a diff compares, one line per record, sorted: sessions
// (id, project, platform, prompts, status), prompts, observations and
// summaries, without ids, times and memory session ids.
func Store(t testing.TB, mnemo MnemoFunc, bin, dir, name string) []string {
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
	Save(t, "export-"+name+".jsonl", data)
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

// BackfillEqualsLive is one host's "back-fill equals live" check, run
// after a real session of that host was captured live by Mnemo's hooks
// into w.MnemoHome (home A) and has settled there.
type BackfillEqualsLive struct {
	World World
	// Env is the host CLI's whole environment: the back-fill reads the
	// host's transcripts where the CLI wrote them (HOME, CODEX_HOME…).
	Env []string
	// Mnemo runs mnemo in the project with Env (home A).
	Mnemo MnemoFunc
	Bin   string // the mnemo binary
	// Args back-fills the host: "backfill", "codex".
	Args []string
	// Said is what the back-fill's final count says of the session, e.g.
	// "back-filled 1 session: 1 prompt, 5 tool events, 1 turn".
	Said string
}

// Check back-fills the host's transcripts into a fresh home B and fails
// unless A and B hold the same records (Store), each with a summary and a
// calc.py observation; then back-fills B again (nothing added, "1 already
// back-filled") and A (nothing added, "1 captured live").
func (c BackfillEqualsLive) Check(t *testing.T) {
	t.Helper()
	live := Settle(t, c.Mnemo, c.Bin)

	// Home B: the same HOME (and so the same transcripts), a fresh MNEMO_HOME.
	homeB := Mkdir(t, c.World.Base, "mnemo-b")
	envB := append(slices.Clone(c.Env), "MNEMO_HOME="+homeB)
	mnemoB := func(ctx context.Context, bin string, args ...string) (string, error) {
		return Command(ctx, c.World.Project, envB, bin, args...)
	}
	StopDaemonAtEnd(t, homeB, c.Bin, mnemoB)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	name := strings.Join(c.Args, " ")
	began := time.Now()
	out, err := mnemoB(ctx, c.Bin, c.Args...)
	if err != nil {
		t.Fatalf("mnemo %s: %v\n%s", name, err, out)
	}
	t.Logf("mnemo %s into B (%.2fs):\n%s", name, time.Since(began).Seconds(), out)
	if !strings.Contains(out, c.Said) {
		t.Errorf("mnemo %s into B said:\n%s\nwant %q", name, out, c.Said)
	}
	back := Settle(t, mnemoB, c.Bin)

	a, b := Store(t, c.Mnemo, c.Bin, c.World.Base, "a"), Store(t, mnemoB, c.Bin, c.World.Base, "b")
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
	t.Logf("compared %d records", len(a))

	// Again into B: nothing; into A: captured live.
	if out, err = mnemoB(ctx, c.Bin, c.Args...); err != nil || !strings.Contains(out, "back-filled 0 sessions") || !strings.Contains(out, "1 already back-filled") {
		t.Errorf("second mnemo %s into B: %v\n%s", name, err, out)
	}
	if out, err = c.Mnemo(ctx, c.Bin, c.Args...); err != nil || !strings.Contains(out, "back-filled 0 sessions") || !strings.Contains(out, "1 captured live") {
		t.Errorf("mnemo %s into A: %v\n%s", name, err, out)
	}
	if again := Settle(t, mnemoB, c.Bin); again.Counts != back.Counts {
		t.Errorf("a second back-fill changed B: %+v, then %+v", back.Counts, again.Counts)
	}
	CheckLogs(t, c.World.MnemoHome, false)
	CheckLogs(t, homeB, false)
}

// SaveTranscripts finds the files under root whose path contains part
// and ends in suffix (a host's session transcripts), keeps each among the
// artifacts as prefix+its name, and returns their paths.
func SaveTranscripts(t testing.TB, root, part, suffix, prefix string) []string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.Contains(path, part) || !strings.HasSuffix(path, suffix) {
			return err
		}
		found = append(found, path)
		if data, err := os.ReadFile(path); err == nil {
			Save(t, prefix+filepath.Base(path), data)
		}
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Errorf("look for transcripts under %s: %v", root, err)
	}
	return found
}
