//go:build e2e

package main_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Back-filling, killed with SIGKILL midway and run again, stores what one
// uninterrupted back-fill stores: each session, prompt, observation and
// summary once. Observer and live sessions are skipped, and a third run
// adds nothing.
func TestBackfillKill9ThenRerun(t *testing.T) {
	t.Parallel()
	const sessions, turns, tools = 4, 4, 24

	// The reference: one uninterrupted run, after a dry run that stores
	// nothing.
	ref := backfillEnv(t, sessions, turns, tools)
	counts := fmt.Sprintf("%d sessions: %d prompts, %d tool events, %d turns", sessions, sessions*turns, sessions*turns*tools, sessions*turns)
	before := settled(t, ref)
	if out := mnemo(t, ref, "backfill", "claude-code", "--dry-run"); !strings.Contains(out, "would back-fill (dry run) "+counts) {
		t.Fatalf("dry run said:\n%s", out)
	}
	if got := settled(t, ref); got != before {
		t.Fatalf("the dry run stored something: %+v, then %+v", before, got)
	}
	if out := mnemo(t, ref, "backfill", "claude-code", "--dry-run", "--project", ref.userHome); !strings.Contains(out, fmt.Sprintf("%d outside --project", sessions+1)) {
		t.Errorf("--project elsewhere said:\n%s", out)
	}
	if out := mnemo(t, ref, "backfill", "claude-code", "--dry-run", "--since", "2999-01-01"); !strings.Contains(out, fmt.Sprintf("%d before --since", sessions+2)) {
		t.Errorf("--since the future said:\n%s", out)
	}
	out := mnemo(t, ref, "backfill", "claude-code")
	wantLine := "back-filled " + counts
	if !strings.Contains(out, wantLine) || !strings.Contains(out, "1 captured live") || !strings.Contains(out, "1 Mnemo's observer") {
		t.Fatalf("backfill said:\n%s\nwant %q, 1 captured live, 1 Mnemo's observer", out, wantLine)
	}
	want := settled(t, ref)
	// The live session has its one prompt; the back-filled ones theirs.
	if want.Sessions != sessions+1 || want.Prompts != sessions*turns+1 {
		t.Fatalf("reference store: %+v", want)
	}
	t.Logf("reference: %+v", want)

	// Killed while it sends the second session: once the daemon has that
	// session's first prompt.
	env := backfillEnv(t, sessions, turns, tools)
	cmd := exec.Command(mnemoBin, "backfill", "claude-code")
	cmd.Env = env.environ()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(60 * time.Second); ; {
		var st struct {
			Counts storeCounts `json:"counts"`
		}
		json.Unmarshal([]byte(mnemo(t, env, "status", "--json")), &st)
		if st.Counts.Prompts > 1+turns {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the second session never came: %+v", st.Counts)
		}
		time.Sleep(5 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	state, _ := os.ReadFile(filepath.Join(env.home, "backfill", "claude-code.json"))
	t.Logf("killed; state %s", state)
	if !bytes.Contains(state, []byte(`"bf-session-01":{"status":"started"}`)) {
		t.Errorf("the kill did not come within the second session: state %s", state)
	}

	out = mnemo(t, env, "backfill", "claude-code")
	t.Logf("rerun:\n%s", out)
	if !strings.Contains(out, "already back-filled") || !strings.Contains(out, "1 captured live") {
		t.Errorf("rerun said:\n%s", out)
	}
	if got := settled(t, env); got != want {
		t.Errorf("after kill -9 and a rerun the store holds %+v, one run %+v", got, want)
	}
	out = mnemo(t, env, "backfill", "claude-code")
	if !strings.Contains(out, fmt.Sprintf("%d already back-filled", sessions)) || !strings.Contains(out, "back-filled 0 sessions") {
		t.Errorf("third run said:\n%s", out)
	}
	if got := settled(t, env); got != want {
		t.Errorf("after a third run the store holds %+v, want %+v", got, want)
	}
}
