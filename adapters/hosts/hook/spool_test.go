package hook_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/adapters/hosts/hook"
	"github.com/mnemo-dev/mnemo/memory"
)

func entry(i int) hook.SpoolEntry {
	return hook.SpoolEntry{
		Method: memory.MethodPostToolUse,
		Params: json.RawMessage(fmt.Sprintf(`{"contentSessionId":"s","toolName":"Bash","eventKey":"k%06d"}`, i)),
		Time:   time.Date(2026, 1, 2, 3, 4, 5, i, time.UTC),
	}
}

// key is an entry's eventKey.
func key(t *testing.T, e hook.SpoolEntry) string {
	t.Helper()
	var p struct {
		EventKey string `json:"eventKey"`
	}
	if err := json.Unmarshal(e.Params, &p); err != nil {
		t.Fatalf("params %s: %v", e.Params, err)
	}
	return p.EventKey
}

func TestSpoolRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := hook.SpoolPath(dir)
	if path != filepath.Join(dir, "spool", "hooks.jsonl") {
		t.Errorf("SpoolPath = %s", path)
	}

	entries, done, err := hook.TakeSpool(path)
	if err != nil || len(entries) != 0 {
		t.Fatalf("TakeSpool of no spool = %v, %v", entries, err)
	}
	if err := done(); err != nil {
		t.Fatal(err)
	}

	for i := range 3 {
		if err := hook.AppendSpool(path, entry(i)); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{path, filepath.Dir(path)} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]os.FileMode{true: 0o700, false: 0o600}[fi.IsDir()]; fi.Mode().Perm() != want {
			t.Errorf("%s mode %v, want %v", p, fi.Mode().Perm(), want)
		}
	}

	entries, done, err = hook.TakeSpool(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 3 {
		t.Fatalf("took %d entries, want 3", len(entries))
	}
	for i, e := range entries {
		want := entry(i)
		if e.Method != want.Method || string(e.Params) != string(want.Params) || !e.Time.Equal(want.Time) {
			t.Errorf("entry %d = %+v, want %+v", i, e, want)
		}
	}
	// Hooks append to a new spool while the taken one is being stored.
	if err := hook.AppendSpool(path, entry(3)); err != nil {
		t.Fatal(err)
	}
	if err := done(); err != nil {
		t.Fatal(err)
	}
	left, _ := filepath.Glob(path + ".ingesting-*")
	if len(left) != 0 {
		t.Errorf("done left %v", left)
	}
	entries, done, err = hook.TakeSpool(path)
	if err != nil || len(entries) != 1 || key(t, entries[0]) != "k000003" {
		t.Fatalf("second take = %v, %v", entries, err)
	}
	if err := done(); err != nil {
		t.Fatal(err)
	}
}

// TestSpoolCrashLeftovers: a take whose done never ran (the daemon died)
// is taken again by the next TakeSpool, before the newer entries.
func TestSpoolCrashLeftovers(t *testing.T) {
	path := hook.SpoolPath(t.TempDir())
	for i := range 2 {
		if err := hook.AppendSpool(path, entry(i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := hook.TakeSpool(path); err != nil { // and crash: no done
		t.Fatal(err)
	}
	if err := hook.AppendSpool(path, entry(2)); err != nil {
		t.Fatal(err)
	}
	entries, done, err := hook.TakeSpool(path)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, e := range entries {
		keys = append(keys, key(t, e))
	}
	if !slices.Equal(keys, []string{"k000000", "k000001", "k000002"}) {
		t.Errorf("keys = %v", keys)
	}
	if err := done(); err != nil {
		t.Fatal(err)
	}
	if left, _ := filepath.Glob(path + "*"); len(left) != 0 {
		t.Errorf("left %v", left)
	}
}

// TestSpoolCorruptLines: lines that do not decode, and a last line cut
// short, are skipped and reported; the good ones are kept.
func TestSpoolCorruptLines(t *testing.T) {
	path := hook.SpoolPath(t.TempDir())
	if err := hook.AppendSpool(path, entry(0)); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(f, `not json`)
	fmt.Fprintln(f, `{"params":{}}`)
	f.Close()
	if err := hook.AppendSpool(path, entry(1)); err != nil {
		t.Fatal(err)
	}
	f, _ = os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	fmt.Fprint(f, `{"method":"mnemo/stop","par`)
	f.Close()

	entries, done, err := hook.TakeSpool(path)
	if !errors.Is(err, hook.ErrCorruptSpool) {
		t.Fatalf("err = %v, want ErrCorruptSpool", err)
	}
	var ce *hook.CorruptSpoolError
	if !errors.As(err, &ce) || len(ce.Lines) != 3 {
		t.Fatalf("corrupt lines = %v", err)
	}
	for i, want := range []string{":2: ", ":3: no method", ":5: cut short"} {
		if !strings.Contains(ce.Lines[i], want) {
			t.Errorf("line report %d = %q, want %q", i, ce.Lines[i], want)
		}
	}
	if len(entries) != 2 || key(t, entries[0]) != "k000000" || key(t, entries[1]) != "k000001" {
		t.Errorf("entries = %v", entries)
	}
	if done == nil || done() != nil {
		t.Error("done must be usable with a corrupt spool")
	}
}

// TestSpoolConcurrent: 8 goroutines append while TakeSpool takes over and
// over; every entry is taken exactly once.
func TestSpoolConcurrent(t *testing.T) {
	const writers, each = 8, 200
	path := hook.SpoolPath(t.TempDir())
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				if err := hook.AppendSpool(path, entry(w*each+i)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	seen := map[string]int{}
	take := func() {
		entries, done, err := hook.TakeSpool(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			seen[key(t, e)]++
		}
		if err := done(); err != nil {
			t.Fatal(err)
		}
	}
	stop := make(chan struct{})
	go func() { wg.Wait(); close(stop) }()
	takes := 0
	for running := true; running; takes++ {
		select {
		case <-stop:
			running = false
		case <-time.After(time.Millisecond):
		}
		take()
	}
	if len(seen) != writers*each {
		t.Errorf("took %d distinct entries, want %d", len(seen), writers*each)
	}
	for k, n := range seen {
		if n != 1 {
			t.Errorf("%s taken %d times", k, n)
		}
	}
	t.Logf("%d entries in %d takes", len(seen), takes)
}

// TestIngestSpool replays entries in order; a failing call is dropped and
// reported; a cancelled ingest puts what is left back.
func TestIngestSpool(t *testing.T) {
	t.Run("replays in order", func(t *testing.T) {
		path := hook.SpoolPath(t.TempDir())
		for i := range 4 {
			if err := hook.AppendSpool(path, entry(i)); err != nil {
				t.Fatal(err)
			}
		}
		var got []string
		n, err := hook.IngestSpool(context.Background(), path, func(ctx context.Context, method string, params json.RawMessage) error {
			k := key(t, hook.SpoolEntry{Params: params})
			got = append(got, k)
			if k == "k000002" {
				return errors.New("store refused")
			}
			return nil
		})
		if n != 3 || err == nil || !strings.Contains(err.Error(), "store refused") {
			t.Errorf("IngestSpool = %d, %v; want 3 and the refusal", n, err)
		}
		if !slices.Equal(got, []string{"k000000", "k000001", "k000002", "k000003"}) {
			t.Errorf("order = %v", got)
		}
		if left, _ := filepath.Glob(path + "*"); len(left) != 0 {
			t.Errorf("left %v", left)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		path := hook.SpoolPath(t.TempDir())
		for i := range 4 {
			if err := hook.AppendSpool(path, entry(i)); err != nil {
				t.Fatal(err)
			}
		}
		ctx, cancel := context.WithCancel(context.Background())
		n, err := hook.IngestSpool(ctx, path, func(ctx context.Context, method string, params json.RawMessage) error {
			if key(t, hook.SpoolEntry{Params: params}) == "k000001" {
				cancel()
				return ctx.Err()
			}
			return nil
		})
		if n != 1 || !errors.Is(err, context.Canceled) {
			t.Errorf("IngestSpool = %d, %v; want 1, context.Canceled", n, err)
		}
		entries, done, err := hook.TakeSpool(path)
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, e := range entries {
			keys = append(keys, key(t, e))
		}
		if !slices.Equal(keys, []string{"k000001", "k000002", "k000003"}) {
			t.Errorf("kept %v", keys)
		}
		done()
	})
}
