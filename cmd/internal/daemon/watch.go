package daemon

import (
	"context"
	"log/slog"
	"sync"

	"go.lsp.dev/jsonrpc2"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/store"
)

// liveChanges tells one connection the memory's changes once it asked
// (memory.MethodWatch), each as a memory.MethodChanged notification, until
// the connection closes. It owns the goroutine that sends them.
type liveChanges struct {
	mem    *store.Memory
	log    *slog.Logger
	ctx    context.Context // ends with close
	cancel context.CancelFunc
	bound  chan struct{} // closed by bind, once conn is set
	conn   jsonrpc2.Conn
	once   sync.Once // the first watch starts the sender
	wg     sync.WaitGroup
}

func newLiveChanges(mem *store.Memory, log *slog.Logger) *liveChanges {
	ctx, cancel := context.WithCancel(context.Background())
	return &liveChanges{mem: mem, log: log, ctx: ctx, cancel: cancel, bound: make(chan struct{})}
}

// bind gives the connection the changes are sent on; call it once, as
// soon as the connection is served.
func (l *liveChanges) bind(conn jsonrpc2.Conn) {
	l.conn = conn
	close(l.bound)
}

// watch serves memory.MethodWatch: the changes are watched from the
// moment it returns, so a change the client causes after the answer is
// always told.
func (l *liveChanges) watch(context.Context, struct{}) (memory.WatchResult, error) {
	l.once.Do(func() {
		changes := l.mem.Watch(l.ctx)
		l.wg.Go(func() { l.send(changes) })
	})
	return memory.WatchResult{}, nil
}

// send notifies the connection of each change until the watch ends or a
// notification cannot be written (the connection is gone). A slow client
// only slows this goroutine: the memory drops what does not fit and then
// sends memory.KindLost.
func (l *liveChanges) send(changes <-chan memory.Change) {
	select {
	case <-l.bound:
	case <-l.ctx.Done():
		return
	}
	for c := range changes {
		if err := l.conn.Notify(l.ctx, memory.MethodChanged, c); err != nil {
			l.log.Debug("watch: the connection took no more changes", "err", err)
			l.cancel() // ends the memory's watch
			return
		}
	}
}

// close stops the watch and waits for its sender. Close the connection
// first, so that a notification blocked on a stuck client returns.
func (l *liveChanges) close() {
	l.cancel()
	l.wg.Wait()
}
