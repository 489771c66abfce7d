package store_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

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
