package store_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/store"
)

// logBuffer collects a memory's log lines.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// openAt opens the memory in dir, logging into a new buffer.
func openAt(t *testing.T, dir string) (*store.Memory, *logBuffer) {
	t.Helper()
	logs := new(logBuffer)
	m, err := store.Open(context.Background(), store.Options{Dir: dir, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return m, logs
}

// addReads stores one observation per file (the local agent makes one of
// each Read).
func addReads(t *testing.T, m *store.Memory, csid string, files ...string) {
	t.Helper()
	for _, f := range files {
		in := fmt.Sprintf(`{"file_path":"/src/shop/%s"}`, f)
		out := fmt.Sprintf(`{"type":"text","file":{"filePath":"/src/shop/%s","content":"package shop\n\nfunc %s() {}\n"}}`, f, strings.TrimSuffix(filepath.Base(f), ".go"))
		mustTool(t, m, csid, "Read", in, out)
	}
	waitIdle(t, m)
}

func hitIDs(t *testing.T, m *store.Memory, q string) []uint64 {
	t.Helper()
	res, err := m.Search(context.Background(), memory.SearchParams{Query: q, Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	var out []uint64
	for _, h := range res.Hits {
		out = append(out, h.ID)
	}
	return out
}

func TestIndexSnapshotAcrossRestarts(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	snap := dir + ".snapshot"
	// A snapshot of an empty memory, put back after observations were
	// made, as after a crash: they load from Badger.
	m, _ := openAt(t, dir)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	empty, err := os.ReadFile(snap)
	if err != nil {
		t.Fatalf("no snapshot of the empty memory: %v", err)
	}
	m, _ = openAt(t, dir)
	mustPrompt(t, m, "s0", "read the shop")
	addReads(t, m, "s0", "cart/emptyStart.go")
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(snap, empty, 0o600); err != nil {
		t.Fatal(err)
	}
	m, _ = openAt(t, dir)
	if got := hitIDs(t, m, "emptyStart"); len(got) != 1 {
		t.Errorf("after an empty snapshot: hits %v", got)
	}

	mustPrompt(t, m, "s1", "read the shop")
	addReads(t, m, "s1", "cart/computeTotal.go", "cart/applyCoupon.go", "billing/refundLedger.go")
	before := hitIDs(t, m, "computeTotal")
	if len(before) == 0 {
		t.Fatal("nothing found before the restart")
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	var old []byte
	old, err = os.ReadFile(snap)
	if err != nil {
		t.Fatal(err)
	}

	// Started from the snapshot: the same hits; then more observations.
	m, logs := openAt(t, dir)
	if got := hitIDs(t, m, "computeTotal"); !slices.Equal(got, before) {
		t.Errorf("after the restart %v, before %v", got, before)
	}
	if !strings.Contains(logs.String(), "index snapshot loaded") || !strings.Contains(logs.String(), "stale=0") {
		t.Errorf("the index was not loaded from the snapshot alone:\n%s", logs)
	}
	addReads(t, m, "s1", "shipping/zanzibarRates.go")
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}

	// An older snapshot, as after a crash: what Badger has since is loaded
	// from Badger.
	if err := os.WriteFile(snap, old, 0o600); err != nil {
		t.Fatal(err)
	}
	m, logs = openAt(t, dir)
	if got := hitIDs(t, m, "zanzibarRates"); len(got) != 1 {
		t.Errorf("an observation newer than the snapshot: hits %v\n%s", got, logs)
	}
	if got := hitIDs(t, m, "computeTotal"); !slices.Equal(got, before) {
		t.Errorf("with an old snapshot %v, want %v", got, before)
	}

	// Forget deletes the snapshot at once; an older one put back is not
	// trusted for what Badger no longer has.
	res, err := m.Forget(context.Background(), memory.IDsParams{IDs: before[:1]})
	if err != nil || len(res.Deleted) != 1 {
		t.Fatalf("forget: %+v %v", res, err)
	}
	if _, err := os.Stat(snap); !os.IsNotExist(err) {
		t.Errorf("the snapshot is still there after forget: %v", err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(snap); err != nil || bytes.Contains(b, []byte("computetotal")) {
		t.Errorf("the snapshot written after forget holds the forgotten path (err %v)", err)
	}
	if err := os.WriteFile(snap, old, 0o600); err != nil {
		t.Fatal(err)
	}
	m, logs = openAt(t, dir)
	if got := hitIDs(t, m, "computeTotal"); slices.Contains(got, before[0]) {
		t.Errorf("a forgotten observation came back from an old snapshot: %v", got)
	}
	// Search hides what Badger no longer has anyway; the index must not
	// hold it either.
	if !strings.Contains(logs.String(), "stale=1") {
		t.Errorf("the forgotten observation was not left out of the old snapshot:\n%s", logs)
	}

	// A damaged snapshot is refused and the index loads from Badger.
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(snap)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0xff
	if err := os.WriteFile(snap, b, 0o600); err != nil {
		t.Fatal(err)
	}
	m, logs = openAt(t, dir)
	defer m.Close()
	if got := hitIDs(t, m, "applyCoupon"); len(got) != 1 {
		t.Errorf("after a damaged snapshot: hits %v", got)
	}
	if !strings.Contains(logs.String(), "index snapshot refused") {
		t.Errorf("a damaged snapshot was not refused:\n%s", logs)
	}
}

func TestIndexSnapshotWrittenOnlyWhenChanged(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	snap := dir + ".snapshot"
	m, _ := openAt(t, dir)
	mustPrompt(t, m, "s1", "read the shop")
	addReads(t, m, "s1", "cart/computeTotal.go")
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	written, err := os.Stat(snap)
	if err != nil {
		t.Fatal(err)
	}

	// Started from the snapshot and only read: the file stays as it was.
	m, logs := openAt(t, dir)
	if got := hitIDs(t, m, "computeTotal"); len(got) != 1 {
		t.Fatalf("hits %v", got)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "index snapshot unchanged") || strings.Contains(logs.String(), "index snapshot written") {
		t.Errorf("a memory that only read wrote its snapshot again:\n%s", logs)
	}
	if st, err := os.Stat(snap); err != nil || !st.ModTime().Equal(written.ModTime()) {
		t.Errorf("the snapshot was touched: %v", err)
	}

	// One more observation: written again, and the next start finds it in
	// the snapshot alone.
	m, logs = openAt(t, dir)
	addReads(t, m, "s1", "billing/refundLedger.go")
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "index snapshot written") {
		t.Errorf("a changed index was not written:\n%s", logs)
	}
	m, logs = openAt(t, dir)
	defer m.Close()
	if got := hitIDs(t, m, "refundLedger"); len(got) != 1 {
		t.Errorf("hits %v", got)
	}
	if !strings.Contains(logs.String(), "stale=0") {
		t.Errorf("the new observation was not in the snapshot:\n%s", logs)
	}
}
