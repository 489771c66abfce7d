package store

import "sync"

// groupSync makes acknowledged writes durable with one fsync for every
// group of concurrent writers (group commit). Badger's own SyncWrites
// syncs the write-ahead log once per transaction even when it batches
// them, which costs an fsync per event; here a writer that commits while a
// sync is running waits for the next one, which covers every commit made
// before it started.
type groupSync struct {
	flush func() error

	mu      sync.Mutex
	cond    *sync.Cond
	issued  uint64 // tickets handed out: one per committed write
	synced  uint64 // every ticket up to this one is on disk
	running bool
	err     error // of the last sync
}

func newGroupSync(flush func() error) *groupSync {
	g := &groupSync{flush: flush}
	g.cond = sync.NewCond(&g.mu)
	return g
}

// Wait returns once everything committed before the call is on disk.
func (g *groupSync) Wait() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.issued++
	ticket := g.issued
	for g.synced < ticket {
		if g.running {
			g.cond.Wait()
			continue
		}
		g.running = true
		upto := g.issued
		g.mu.Unlock()
		err := g.flush()
		g.mu.Lock()
		g.running, g.synced, g.err = false, upto, err
		g.cond.Broadcast()
		if err != nil {
			return err
		}
	}
	return g.err
}
