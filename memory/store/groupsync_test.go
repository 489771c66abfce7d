package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/store"
)

// Every Wait returns only after a flush that started after it was called,
// and concurrent writers share flushes.
func TestGroupSyncCoversEveryWriterAndShares(t *testing.T) {
	var (
		flushes  atomic.Int64
		started  atomic.Int64 // time the running flush started
		inFlight atomic.Int64
	)
	g := store.NewGroupSync(func() error {
		if inFlight.Add(1) != 1 {
			t.Error("two flushes ran at once")
		}
		started.Store(time.Now().UnixNano())
		time.Sleep(2 * time.Millisecond)
		flushes.Add(1)
		inFlight.Add(-1)
		return nil
	})
	const writers, rounds = 16, 20
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for range rounds {
				called := time.Now().UnixNano()
				if err := g.Wait(); err != nil {
					t.Error(err)
				}
				if s := started.Load(); s < called {
					t.Errorf("Wait returned after a flush that started before the call")
				}
			}
		})
	}
	wg.Wait()
	if n := flushes.Load(); n >= writers*rounds/2 {
		t.Fatalf("%d flushes for %d writes: writers did not share them", n, writers*rounds)
	}
}

// Soon never waits for the disk: with a flush stuck on the disk, every
// Soon returns, and the writes are synced once the disk answers. (A bound
// on Soon's wall time instead failed under -race on a loaded machine: it
// measured the scheduler, not the wait.)
func TestGroupSyncSoonNeverWaitsForTheDisk(t *testing.T) {
	stuck := make(chan struct{})
	var flushes atomic.Int64
	g := store.NewGroupSync(func() error {
		<-stuck
		flushes.Add(1)
		return nil
	})
	defer g.Close()
	returned := make(chan struct{})
	go func() {
		for range 100 {
			g.Soon()
		}
		close(returned)
	}()
	select {
	case <-returned:
	case <-time.After(10 * time.Second):
		close(stuck)
		t.Fatal("Soon waited for a flush that the disk had not finished")
	}
	if n := flushes.Load(); n != 0 {
		t.Fatalf("%d flushes ended while the disk was stuck", n)
	}
	close(stuck)
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	if flushes.Load() == 0 {
		t.Fatal("no flush after the disk answered")
	}
}

// The sync that covers a write Soon announced starts at once (or when the
// running one ends) and ends within the window, for writers arriving one by
// one and in bursts.
func TestGroupSyncSoonSyncsWithinTheWindow(t *testing.T) {
	var (
		mu      sync.Mutex
		flushed []time.Time // when each flush ended
	)
	g := store.NewGroupSync(func() error {
		time.Sleep(3 * time.Millisecond) // a disk that takes a while
		mu.Lock()
		flushed = append(flushed, time.Now())
		mu.Unlock()
		return nil
	})
	defer g.Close()
	var writes []time.Time
	for i := range 60 {
		start := time.Now()
		g.Soon()
		writes = append(writes, start)
		if i%10 == 0 {
			time.Sleep(5 * time.Millisecond) // now and then a pause, else a burst
		}
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for i, w := range writes {
		// The first flush that ended after the write started after it
		// (Soon rang while it ran, or before it): the second flush ending
		// after w covers it for sure.
		var ends []time.Time
		for _, f := range flushed {
			if f.After(w) {
				ends = append(ends, f)
			}
		}
		if len(ends) == 0 {
			t.Fatalf("write %d: no sync after it", i)
		}
		covered := ends[min(1, len(ends)-1)]
		if lag := covered.Sub(w); lag > store.SyncWindow {
			t.Errorf("write %d synced %v after it, window %v", i, lag, store.SyncWindow)
		}
	}
	st := g.Stats()
	if st.Syncs == 0 || st.MaxLag > store.SyncWindow || st.MaxLag <= 0 {
		t.Errorf("stats %+v: want syncs, and a max lag within %v", st, store.SyncWindow)
	}
	if st.Syncs >= uint64(len(writes)) {
		t.Errorf("%d syncs for %d writes: bursts did not share them", st.Syncs, len(writes))
	}
}

// A failing disk: Wait reports the error, the syncer tries again, and
// once the disk recovers the writes are synced.
func TestGroupSyncRetriesAFailedSync(t *testing.T) {
	var fail atomic.Bool
	fail.Store(true)
	var flushes atomic.Int64
	g := store.NewGroupSync(func() error {
		flushes.Add(1)
		if fail.Load() {
			return errDisk
		}
		return nil
	})
	defer g.Close()
	if err := g.Wait(); err != errDisk {
		t.Fatalf("Wait = %v, want the disk's error", err)
	}
	g.Soon()
	time.Sleep(30 * time.Millisecond)
	if flushes.Load() < 2 {
		t.Fatalf("%d flushes: the failed sync was not tried again", flushes.Load())
	}
	fail.Store(false)
	if err := g.Wait(); err != nil {
		t.Fatalf("Wait after recovery = %v", err)
	}
	if st := g.Stats(); st.Errors == 0 || st.Syncs == 0 {
		t.Errorf("stats %+v: want the errors and a sync counted", st)
	}
}

var errDisk = errorString("disk on fire")

type errorString string

func (e errorString) Error() string { return string(e) }

// On Badger on disk, the stages answer without waiting for the disk, and
// every acknowledged write is synced within the window (this machine's disk
// permitting: a disk that takes longer than the window for one sync
// stretches it, and this test says so).
func TestAcknowledgedWritesAreSyncedWithinTheWindow(t *testing.T) {
	m := MustOpen(t, store.Options{Dir: filepath.Join(t.TempDir(), "db"), Agent: blockedAgent{}})
	ctx := context.Background()
	for i := range 40 {
		if _, err := m.PostToolUse(ctx, memory.ToolUseParams{ContentSessionID: "window", Cwd: "/src/shop", ToolName: "Bash",
			ToolInput: json.RawMessage(fmt.Sprintf(`{"command":"go test ./... # %d"}`, i)), EventKey: fmt.Sprintf("window-%d", i)}); err != nil {
			t.Fatal(err)
		}
		if i%8 == 0 {
			time.Sleep(20 * time.Millisecond)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	var st store.SyncStats
	for {
		if st = m.SyncStats(); st.Syncs > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no group sync after 40 acknowledged writes: %+v", st)
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(store.SyncWindow)
	st = m.SyncStats()
	t.Logf("%d syncs for 40 writes; lag last %v, max %v; its sync started at most %v after a write; the longest sync %v", st.Syncs, st.LastLag, st.MaxLag, st.MaxStart, st.MaxSync)
	// A disk that takes more than half the window for one sync stretches
	// it (the write waits for the sync running, then for its own): that is
	// the disk's time, not the daemon's.
	if st.MaxLag > store.SyncWindow && st.MaxSync <= store.SyncWindow/2 {
		t.Errorf("a write waited %v for its sync, though no sync took over %v; the window is %v", st.MaxLag, st.MaxSync, store.SyncWindow)
	}
	if st.Errors > 0 {
		t.Errorf("%d syncs failed", st.Errors)
	}
}
