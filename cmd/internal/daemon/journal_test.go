package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/adapters/hosts/hook"
	"github.com/mnemo-dev/mnemo/memory"
)

// openTestMain opens a Main in a temporary home with the hashing embedder.
func openTestMain(t *testing.T) (*Main, *syncBuffer) {
	t.Helper()
	root := t.TempDir()
	project := filepath.Join(root, "shop")
	if err := os.MkdirAll(filepath.Join(project, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MNEMO_MODELS", filepath.Join(root, "no-models"))
	var log syncBuffer
	m := &Main{Home: filepath.Join(root, "mnemo"), Logger: slog.New(slog.NewTextHandler(&log, nil))}
	if err := m.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m, &log
}

// journalTool appends a tool event of session to m's journal, as a hook
// does, with event key key and a marker in its command.
func journalTool(t *testing.T, m *Main, session, key string) {
	t.Helper()
	p := memory.ToolUseParams{ContentSessionID: session, Cwd: filepath.Join(filepath.Dir(m.Home), "shop"), ToolName: "Bash",
		ToolInput:    json.RawMessage(fmt.Sprintf(`{"command":"go test ./%s/..."}`, key)),
		ToolResponse: json.RawMessage(fmt.Sprintf(`{"stdout":"ok  \tshop/%s\t0.01s","exitCode":0}`, key)),
		EventKey:     key, At: time.Now()}
	raw, _ := json.Marshal(p)
	if err := hook.AppendJournal(hook.JournalPath(m.Home), memory.MethodPostToolUse, raw, p.At, false); err != nil {
		t.Fatal(err)
	}
}

func queued(t *testing.T, m *Main) int {
	t.Helper()
	c, err := m.Memory.Counts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return c.Queued + c.Observations
}

// The daemon takes the journal's records through its method table, keeps
// how far it read, lets the journal go of them once synced, and takes none
// twice: not after a restart, and not when it read them again because it
// was killed before it kept how far it read.
func TestJournalTakesEveryRecordOnce(t *testing.T) {
	m, _ := openTestMain(t)
	ctx := context.Background()
	for i := range 5 {
		journalTool(t, m, "j1", fmt.Sprintf("j1-%d", i))
	}
	j, err := openJournal(m, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := j.catchUp(ctx); err != nil {
		t.Fatal(err)
	}
	if n := queued(t, m); n != 5 {
		t.Fatalf("%d events stored, want 5", n)
	}
	if st := j.status(); st.Taken != 5 || st.Unread != 0 || st.Rejected != 0 {
		t.Errorf("status %+v", st)
	}
	j.release()
	if b, _ := os.ReadFile(hook.JournalPath(m.Home)); bytes.Contains(b, []byte("j1-")) {
		t.Errorf("the journal keeps records that are stored and synced")
	}

	// Killed after storing records and before keeping how far it read:
	// the next reader reads them again, and they change nothing.
	before, err := m.Memory.JournalPositions()
	if err != nil {
		t.Fatal(err)
	}
	for i := 5; i < 8; i++ {
		journalTool(t, m, "j1", fmt.Sprintf("j1-%d", i))
	}
	if err := j.catchUp(ctx); err != nil {
		t.Fatal(err)
	}
	j.Close()
	if err := m.Memory.SetJournalPositions(ctx, before); err != nil {
		t.Fatal(err)
	}
	journalTool(t, m, "j1", "j1-8")
	j2, err := openJournal(m, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer j2.Close()
	if err := j2.catchUp(ctx); err != nil {
		t.Fatal(err)
	}
	if n := queued(t, m); n != 9 {
		t.Fatalf("%d events stored, want 9 (each once)", n)
	}
}

// A record the memory refuses for what it holds is logged and skipped;
// the records after it are taken.
func TestJournalSkipsARefusedRecord(t *testing.T) {
	m, log := openTestMain(t)
	ctx := context.Background()
	path := hook.JournalPath(m.Home)
	if err := hook.AppendJournal(path, memory.MethodPostToolUse, []byte(`{"contentSessionId":"j2","eventKey":"no-tool"}`), time.Now(), false); err != nil {
		t.Fatal(err)
	}
	if err := hook.AppendJournal(path, memory.MethodSessionEnd, []byte(`{"contentSessionId":"nobody","eventKey":"end-nobody"}`), time.Now(), false); err != nil {
		t.Fatal(err)
	}
	journalTool(t, m, "j2", "j2-0")
	j, err := openJournal(m, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if err := j.catchUp(ctx); err != nil {
		t.Fatal(err)
	}
	if n := queued(t, m); n != 1 {
		t.Fatalf("%d events stored, want 1", n)
	}
	if st := j.status(); st.Taken != 1 || st.Rejected != 2 {
		t.Errorf("status %+v, want 1 taken and 2 rejected", st)
	}
	if log.count("journal: record not stored") != 2 {
		t.Errorf("the refused records are not logged:\n%s", log.b.String())
	}
}
