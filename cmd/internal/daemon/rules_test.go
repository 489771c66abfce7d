package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/client"
	"github.com/mnemo-dev/mnemo/memory/knowledge"
	"github.com/mnemo-dev/mnemo/memory/rules"
)

// syncBuffer is a log destination tests read while the daemon writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) count(substr string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Count(s.b.String(), substr)
}

// TestRulesRefreshDebounce drives a real memory through the daemon's own
// method table: a session's end refreshes the project's marked rules file
// at once; ends that follow within the interval are served by one refresh
// at its end, which sees everything saved before it; a Stop refreshes only
// for a host without SessionEnd; the answers never wait for a refresh.
func TestRulesRefreshDebounce(t *testing.T) {
	root := t.TempDir()
	project := filepath.Join(root, "calc")
	if err := os.MkdirAll(filepath.Join(project, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	agents := filepath.Join(project, "AGENTS.md")
	if _, err := rules.Write(agents, "nothing yet", ""); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MNEMO_MODELS", filepath.Join(root, "no-models"))
	var log syncBuffer
	m := &Main{Home: filepath.Join(root, "mnemo"), Logger: slog.New(slog.NewTextHandler(&log, nil))}
	ctx := context.Background()
	if err := m.Open(ctx); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	// The interval must outlast the calls between the first refresh and the
	// next ends (a save and two starts), or those ends find it over and
	// refresh at once: at 600 ms a loaded machine made that happen.
	const every = 2 * time.Second
	m.rules.every = every

	conn := m.Connect(ctx)
	defer conn.Close()
	cl := client.New(conn.Client)
	save := func(text string) {
		t.Helper()
		if _, err := cl.Save(ctx, memory.SaveParams{Text: text, Title: text, Cwd: project}); err != nil {
			t.Fatal(err)
		}
	}
	session := func(id, platform string) {
		t.Helper()
		if _, err := cl.SessionStart(ctx, memory.SessionStartParams{ContentSessionID: id, Cwd: project, Platform: platform}); err != nil {
			t.Fatal(err)
		}
	}
	end := func(id string) {
		t.Helper()
		start := time.Now()
		if _, err := cl.SessionEnd(ctx, memory.SessionEndParams{ContentSessionID: id}); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d > every/2 {
			t.Errorf("SessionEnd took %v: it waited for the refresh", d)
		}
	}
	waitFor := func(want string) time.Time {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			b, _ := os.ReadFile(agents)
			if strings.Contains(string(b), want) {
				return time.Now()
			}
			if time.Now().After(deadline) {
				t.Fatalf("AGENTS.md never got %q:\n%s", want, b)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}

	save("alpha decision")
	session("codex:1", "codex")
	ended := time.Now() // the first refresh starts after this
	end("codex:1")
	waitFor("alpha decision")
	// The refresh logs once its file is in place (renamed, the folder
	// synced): the line may come a little after the text.
	for deadline := time.Now().Add(5 * time.Second); log.count(`msg="rules file refreshed"`) == 0 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	if n := log.count(`msg="rules file refreshed"`); n != 1 {
		t.Fatalf("%d refreshes after one end, want 1", n)
	}

	// Two more sessions end at once: one refresh, not before the interval,
	// with what was saved in between.
	save("beta decision")
	session("codex:2", "codex")
	session("codex:3", "codex")
	end("codex:2")
	save("gamma decision")
	end("codex:3")
	second := waitFor("gamma decision")
	if gap := second.Sub(ended); gap < every {
		t.Errorf("the second refresh %v after the first end, want at least %v", gap, every)
	}
	time.Sleep(every + 200*time.Millisecond)
	if n := log.count(`msg="rules file refreshed"`); n != 2 {
		t.Errorf("%d refreshes, want 2: the ends within the interval share one", n)
	}

	// A Stop is a session's end only for a host that has no SessionEnd.
	save("delta decision")
	session("codex:4", "codex")
	if _, err := cl.Stop(ctx, memory.StopParams{ContentSessionID: "codex:4"}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(every + 300*time.Millisecond)
	if b, _ := os.ReadFile(agents); strings.Contains(string(b), "delta decision") {
		t.Error("a Codex Stop refreshed the rules file: Codex has SessionEnd")
	}
	session("windsurf:5", "windsurf")
	if _, err := cl.Stop(ctx, memory.StopParams{ContentSessionID: "windsurf:5"}); err != nil {
		t.Fatal(err)
	}
	waitFor("delta decision")

	// A refresh waiting out the interval does not hold up Close.
	save("epsilon decision")
	end("windsurf:5")
	start := time.Now()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > every {
		t.Errorf("Close took %v", d)
	}
}

// After a session ends the daemon derives the project's knowledge again,
// off the hooks' path, and the rules file's block carries it: the command
// that passed in both sessions, for the hosts that read rules files. The
// stored knowledge (mnemo/knowledge without refresh) is what the daemon
// derived.
func TestRulesFileCarriesKnowledge(t *testing.T) {
	root := t.TempDir()
	project := filepath.Join(root, "calc")
	if err := os.MkdirAll(filepath.Join(project, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	agents := filepath.Join(project, "AGENTS.md")
	if _, err := rules.Write(agents, "nothing yet", ""); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MNEMO_MODELS", filepath.Join(root, "no-models"))
	m := &Main{Home: filepath.Join(root, "mnemo"), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	ctx := context.Background()
	if err := m.Open(ctx); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	m.rules.every = 50 * time.Millisecond
	conn := m.Connect(ctx)
	defer conn.Close()
	cl := client.New(conn.Client)
	for i, out := range []string{"ok  \texample.com/calc\t0.011s\n", "ok  \texample.com/calc\t0.013s\n"} {
		csid := fmt.Sprintf("codex:%d", i)
		if _, err := cl.SessionStart(ctx, memory.SessionStartParams{ContentSessionID: csid, Cwd: project, Platform: "codex"}); err != nil {
			t.Fatal(err)
		}
		if _, err := cl.UserPromptSubmit(ctx, memory.UserPromptParams{ContentSessionID: csid, Cwd: project, Prompt: "run the tests"}); err != nil {
			t.Fatal(err)
		}
		if _, err := cl.PostToolUse(ctx, memory.ToolUseParams{ContentSessionID: csid, Cwd: project, ToolName: "Bash",
			ToolInput: json.RawMessage(`{"command":"go test ./..."}`), ToolResponse: json.RawMessage(fmt.Sprintf(`{"stdout":%q}`, out))}); err != nil {
			t.Fatal(err)
		}
		if _, err := cl.SessionEnd(ctx, memory.SessionEndParams{ContentSessionID: csid}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	const want = "- test: `go test ./...` passed 2× in 2 sessions"
	deadline := time.Now().Add(20 * time.Second)
	for {
		b, _ := os.ReadFile(agents)
		if strings.Contains(string(b), want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("AGENTS.md never got %q:\n%s", want, b)
		}
		time.Sleep(10 * time.Millisecond)
	}
	k, err := cl.Knowledge(ctx, memory.KnowledgeParams{Cwd: project})
	if err != nil {
		t.Fatal(err)
	}
	if len(k.Lines) == 0 || !strings.Contains(knowledge.Row(k.Lines[0]), "`go test ./...` passed 2×") || k.Records != 1 {
		t.Errorf("the stored knowledge: %+v", k)
	}
}
