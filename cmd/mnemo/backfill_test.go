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

// writeTranscript writes a Claude Code transcript in the shape of
// 2.1.330's (testdata of adapters/claudecode): turns of a prompt, tool runs
// (an Edit of a file of its own each, its result in a user line with
// toolUseResult) and a closing text. It returns the tool runs written.
func writeTranscript(t *testing.T, path, sid, cwd string, turns, tools int) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	line := func(v map[string]any) {
		v["sessionId"], v["cwd"], v["isSidechain"] = sid, cwd, false
		json.NewEncoder(&b).Encode(v)
	}
	for turn := range turns {
		line(map[string]any{"type": "user", "uuid": fmt.Sprintf("%s-u%d", sid, turn),
			"message": map[string]any{"role": "user", "content": fmt.Sprintf("turn %d of %s: rename the handlers", turn, sid)}})
		for i := range tools {
			id := fmt.Sprintf("toolu_%s_%d_%d", sid, turn, i)
			file := filepath.Join(cwd, fmt.Sprintf("pkg%d/handler%d.go", turn, i))
			line(map[string]any{"type": "assistant", "uuid": id + "-a",
				"message": map[string]any{"role": "assistant", "content": []any{map[string]any{
					"type": "tool_use", "id": id, "name": "Edit",
					"input": map[string]any{"file_path": file, "old_string": "oldName", "new_string": "newName", "replace_all": false},
				}}}})
			line(map[string]any{"type": "user", "uuid": id + "-r",
				"message":       map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": id, "content": "The file " + file + " has been updated successfully."}}},
				"toolUseResult": map[string]any{"filePath": file, "oldString": "oldName", "newString": "newName", "userModified": false, "replaceAll": false}})
		}
		line(map[string]any{"type": "assistant", "uuid": fmt.Sprintf("%s-e%d", sid, turn),
			"message": map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "text", "text": fmt.Sprintf("Renamed the handlers of pkg%d.", turn)}}}})
	}
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}

type storeCounts struct {
	Sessions, Prompts, Observations, Summaries, Queued int
}

// settled waits for the daemon's queue to be empty and its counts to stay
// the same for a moment, and returns them.
func settled(t *testing.T, env *testEnv) storeCounts {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	var last storeCounts
	same := 0
	for time.Now().Before(deadline) {
		var st struct {
			Counts storeCounts `json:"counts"`
		}
		if err := json.Unmarshal([]byte(mnemo(t, env, "status", "--json")), &st); err != nil {
			t.Fatal(err)
		}
		if st.Counts.Queued == 0 && st.Counts == last {
			if same++; same >= 3 {
				return last
			}
		} else {
			same = 0
		}
		last = st.Counts
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("the daemon did not settle: %+v", last)
	return last
}

// backfillEnv is a test home with transcripts: sessions of turns of tool
// runs in the project, one session of Mnemo's observer (its cwd in
// $MNEMO_HOME/agents), and one that the hooks capture live first.
func backfillEnv(t *testing.T, sessions, turns, tools int) *testEnv {
	env := newTestEnv(t)
	projects := filepath.Join(env.userHome, ".claude", "projects")
	enc := strings.ReplaceAll(env.project, "/", "-")
	for s := range sessions {
		sid := fmt.Sprintf("bf-session-%02d", s)
		writeTranscript(t, filepath.Join(projects, enc, sid+".jsonl"), sid, env.project, turns, tools)
	}
	agents := filepath.Join(env.home, "agents", "claude")
	writeTranscript(t, filepath.Join(projects, strings.ReplaceAll(agents, "/", "-"), "observer-1.jsonl"), "observer-1", agents, 1, 2)
	writeTranscript(t, filepath.Join(projects, enc, "live-1.jsonl"), "live-1", env.project, 1, 2)
	t.Cleanup(func() { stopDaemon(t, env) })

	// live-1 was captured by the hooks as it ran.
	for _, p := range []map[string]any{
		{"session_id": "live-1", "cwd": env.project, "hook_event_name": "SessionStart", "source": "startup"},
		{"session_id": "live-1", "cwd": env.project, "hook_event_name": "UserPromptSubmit", "prompt": "turn 0 of live-1: rename the handlers"},
	} {
		b, _ := json.Marshal(p)
		cmd := exec.Command(hookBin, p["hook_event_name"].(string))
		cmd.Env = env.environ()
		cmd.Stdin = bytes.NewReader(b)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("hook: %v\n%s", err, out)
		}
	}
	return env
}

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

// A session back-filled while it still ran, whose transcript grew since,
// is topped up by the next back-fill: only what is new is stored, and the
// session ends again. One that its hooks went on capturing live since is
// left alone, so nothing is stored twice.
func TestBackfillTopsUpASessionThatWentOn(t *testing.T) {
	t.Parallel()
	env := backfillEnv(t, 2, 2, 2)
	projects := filepath.Join(env.userHome, ".claude", "projects", strings.ReplaceAll(env.project, "/", "-"))
	out := mnemo(t, env, "backfill", "claude-code")
	if !strings.Contains(out, "back-filled 2 sessions: 4 prompts, 8 tool events, 4 turns") {
		t.Fatalf("first back-fill said:\n%s", out)
	}
	first := settled(t, env)

	// Both sessions went on for a third turn; session 01's hooks were
	// installed meanwhile and captured one more prompt live.
	for _, sid := range []string{"bf-session-00", "bf-session-01"} {
		writeTranscript(t, filepath.Join(projects, sid+".jsonl"), sid, env.project, 3, 2)
	}
	b, _ := json.Marshal(map[string]any{"session_id": "bf-session-01", "cwd": env.project, "hook_event_name": "UserPromptSubmit", "prompt": "turn 2 of bf-session-01: rename the handlers"})
	cmd := exec.Command(hookBin, "UserPromptSubmit")
	cmd.Env = env.environ()
	cmd.Stdin = bytes.NewReader(b)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hook: %v\n%s", err, out)
	}

	out = mnemo(t, env, "backfill", "claude-code")
	t.Logf("second back-fill:\n%s", out)
	if !strings.Contains(out, "back-filled 1 session: 3 prompts, 6 tool events, 3 turns; 1 of them topped up") ||
		!strings.Contains(out, "1 already back-filled") {
		t.Errorf("second back-fill said:\n%s", out)
	}
	got := settled(t, env)
	// Session 00: one more prompt, its two edits and its summary; session
	// 01: the prompt its hook sent.
	if got.Sessions != first.Sessions || got.Prompts != first.Prompts+2 || got.Observations != first.Observations+2 || got.Summaries != first.Summaries+1 {
		t.Errorf("after the top-up the store holds %+v; before, %+v", got, first)
	}
	var sessions struct {
		Sessions []struct {
			ContentSessionID string `json:"contentSessionId"`
			Status           string `json:"status"`
			PromptCounter    int    `json:"promptCounter"`
		} `json:"sessions"`
	}
	if err := json.Unmarshal([]byte(mnemo(t, env, "sessions", "--json")), &sessions); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, s := range sessions.Sessions {
		if s.ContentSessionID == "bf-session-00" {
			found = true
			if s.PromptCounter != 3 || s.Status != "completed" {
				t.Errorf("topped-up session: %+v, want 3 prompts, completed", s)
			}
		}
	}
	if !found {
		t.Errorf("no session bf-session-00: %+v", sessions.Sessions)
	}

	// Nothing grew since: nothing more.
	if out = mnemo(t, env, "backfill", "claude-code"); !strings.Contains(out, "back-filled 0 sessions") {
		t.Errorf("third back-fill said:\n%s", out)
	}
	if again := settled(t, env); again != got {
		t.Errorf("a third back-fill changed the store: %+v, then %+v", got, again)
	}
}
