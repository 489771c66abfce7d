package store

import (
	"sync"
	"time"
)

// SyncWindow is how long after an acknowledged write the group sync that
// covers it ends, at most, on a running daemon: the writes a power loss or
// a kernel crash may lose (docs/architecture.md §2). The sync starts at
// once, or as soon as the one running ends, so the window is a sync or two
// (a few milliseconds on a quiet disk); a disk that takes longer than half
// of it for one sync stretches it (SyncStats.MaxSync says).
const SyncWindow = 100 * time.Millisecond

// groupSync makes acknowledged writes durable in groups (group commit). A
// write is acknowledged once Badger holds it: its write-ahead log is
// written through a shared mapping of the file, so the operating system
// holds it and it survives a kill of the process. Soon then starts the
// sync that carries it to the disk, on the syncer's goroutine, at once or
// as soon as the sync running ends: every write committed while a sync
// runs is covered by the next one. Badger's own SyncWrites would sync the
// write-ahead log once per transaction and make the writer wait for it.
type groupSync struct {
	flush func() error

	mu     sync.Mutex
	cond   *sync.Cond
	issued uint64    // tickets handed out: one per committed write
	synced uint64    // every ticket up to this one is on disk
	oldest time.Time // when the oldest ticket not yet synced was issued
	failed uint64    // the last sync that failed covered the tickets up to this one
	closed bool
	err    error // of the last sync
	stats  SyncStats

	wake chan struct{} // the syncer's doorbell
	done chan struct{} // closed when the syncer has returned
}

// SyncStats say how the group sync has kept its window: how many syncs
// ran, and how long after a write's acknowledgement the sync that covered
// it ended (for the oldest write each sync covered: the longest wait).
type SyncStats struct {
	Syncs   uint64
	LastLag time.Duration
	MaxLag  time.Duration
	// MaxStart is the longest a write waited for the sync that covered it
	// to start: at once, or when the sync running ended.
	MaxStart time.Duration
	// MaxSync is the longest one sync took the disk.
	MaxSync time.Duration
	// Errors counts the syncs that failed; the write stays held by the
	// operating system, and the next sync tries again.
	Errors uint64
}

func newGroupSync(flush func() error) *groupSync {
	g := &groupSync{flush: flush, wake: make(chan struct{}, 1), done: make(chan struct{})}
	g.cond = sync.NewCond(&g.mu)
	go g.run()
	return g
}

// Soon notes a committed write and returns at once; the syncer syncs it
// within the window.
func (g *groupSync) Soon() {
	g.mu.Lock()
	g.ticket()
	g.mu.Unlock()
	g.ring()
}

// Wait returns once everything committed before the call is on disk.
func (g *groupSync) Wait() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	t := g.ticket()
	g.ring()
	for g.synced < t && g.failed < t && !g.closed {
		g.cond.Wait()
	}
	if g.synced >= t {
		return nil
	}
	return g.err
}

// ticket issues the next ticket; callers hold mu.
func (g *groupSync) ticket() uint64 {
	if g.synced == g.issued {
		g.oldest = time.Now()
	}
	g.issued++
	return g.issued
}

func (g *groupSync) ring() {
	select {
	case g.wake <- struct{}{}:
	default:
	}
}

// Stats returns how the syncs went so far.
func (g *groupSync) Stats() SyncStats {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.stats
}

// run is the syncer: each time it is woken it syncs every write issued so
// far, until Close.
func (g *groupSync) run() {
	defer close(g.done)
	for range g.wake {
		g.mu.Lock()
		if g.closed {
			g.mu.Unlock()
			return
		}
		upto, oldest := g.issued, g.oldest
		if g.synced >= upto {
			g.mu.Unlock()
			continue
		}
		g.mu.Unlock()
		started := time.Now()
		err := g.flush()
		g.mu.Lock()
		g.err = err
		if err != nil {
			g.stats.Errors++
			g.failed = upto
			g.mu.Unlock()
			// The writes stay held by the system; try again shortly
			// rather than spin on a failing disk.
			time.AfterFunc(10*time.Millisecond, g.ring)
			g.cond.Broadcast()
			continue
		}
		g.synced = upto
		lag := time.Since(oldest)
		g.stats.Syncs++
		g.stats.LastLag = lag
		g.stats.MaxLag = max(g.stats.MaxLag, lag)
		g.stats.MaxStart = max(g.stats.MaxStart, started.Sub(oldest))
		g.stats.MaxSync = max(g.stats.MaxSync, time.Since(started))
		if g.issued > g.synced {
			// Writes came in while this sync ran: the next sync covers
			// them; their wait counts from its start at the latest.
			g.oldest = started
			g.ring()
		}
		g.cond.Broadcast()
		g.mu.Unlock()
	}
}

// Close syncs what is left and stops the syncer. Waiters return.
func (g *groupSync) Close() error {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return nil
	}
	pending := g.synced < g.issued
	g.mu.Unlock()
	var err error
	if pending {
		err = g.Wait()
	}
	g.mu.Lock()
	g.closed = true
	g.cond.Broadcast()
	g.mu.Unlock()
	g.ring()
	<-g.done
	return err
}
