package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/mnemo-dev/mnemo/adapters/hosts/hook"
	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/rpc"
)

// The hooks' journal (docs/architecture.md §2): a hook whose answer
// carries nothing for its agent appends its call to <home>/spool/journal
// and exits; the daemon takes every record into the memory through the
// same method table a socket client gets, in the order they were written,
// and keeps how far it read in the store. Every record carries its event
// key, stored in the transaction of its effect, so a record read again
// after a crash changes nothing: each is stored exactly once.

// journalRotate is the size past which the journal, once all of it is
// taken, is renamed away so that hooks start a new file.
const journalRotate = 4 << 20

// journalPoll is how often the journal is read when no change
// notification comes (where the system has none, or one was missed).
var journalPoll = time.Second

// journalSettle is how long the reader waits after a change before it
// reads: the hook that wrote has exited by then (the reader does not take
// the CPU from it), and a burst of hooks is taken in one pass, one sync.
const journalSettle = 5 * time.Millisecond

// journalRetries is how many passes a record that fails inside the daemon
// (not for its own content) is tried in before it is logged and skipped.
const journalRetries = 3

// journalHost takes the hooks' journal into the memory.
type journalHost struct {
	m    *Main
	log  *slog.Logger
	path string
	conn *connection // the method table the records are handled with

	// mu serializes passes: the background reader's and those of the
	// calls that must see every event before them (catchUp).
	mu       sync.Mutex
	r        *hook.JournalReader
	failures int // passes the record at the head has failed in

	taken, rejected atomic.Int64
	active          func() // called when records were taken
}

// openJournal opens the journal of m's home for reading, from the
// positions the store holds.
func openJournal(m *Main, active func()) (*journalHost, error) {
	path := hook.JournalPath(m.Home)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	pos, err := m.Memory.JournalPositions()
	if err != nil {
		return nil, err
	}
	r, err := hook.OpenJournalReader(path, pos)
	if err != nil {
		return nil, err
	}
	if active == nil {
		active = func() {}
	}
	return &journalHost{m: m, log: m.Logger, path: path, conn: newConnection(m, m.Logger), r: r, active: active}, nil
}

// run reads the journal whenever it changes (or every journalPoll) until
// ctx ends, and rotates it when it has grown.
func (j *journalHost) run(ctx context.Context) {
	changed, stop, err := watchDir(filepath.Dir(j.path))
	if err != nil {
		j.log.Warn("journal: no change notifications; polling", "every", journalPoll, "err", err)
	}
	defer stop()
	poll := time.NewTicker(journalPoll)
	defer poll.Stop()
	for {
		if err := j.catchUp(ctx); err != nil && ctx.Err() == nil {
			j.log.Error("journal: read", "err", err)
		}
		j.release()
		select {
		case <-ctx.Done():
			return
		case <-changed:
			select {
			case <-ctx.Done():
				return
			case <-time.After(journalSettle):
			}
		case <-poll.C:
		}
	}
}

// catchUp takes every record written so far: what the stages whose
// answers carry context run before they answer, so that a prompt's recall
// and a session's context see every event acknowledged before them.
func (j *journalHost) catchUp(ctx context.Context) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	before := j.r.Positions()
	n, err := j.r.Read(func(e hook.SpoolEntry) error { return j.take(ctx, e) })
	if errors.Is(err, hook.ErrCorruptSpool) {
		// A hook killed in the middle of its write: its event was never
		// acknowledged.
		j.log.Warn("journal: skipped records cut short", "err", err)
		err = nil
	}
	if n > 0 {
		j.active()
	}
	if after := j.r.Positions(); !samePositions(before, after) {
		// Stored once its records are: a record read again after a crash
		// in between finds its event key and changes nothing.
		if perr := j.m.Memory.SetJournalPositions(context.WithoutCancel(ctx), after); perr != nil {
			return errors.Join(err, perr)
		}
	}
	if err != nil {
		return err
	}
	if _, rerr := j.r.Rotate(journalRotate); rerr != nil {
		return rerr
	}
	return nil
}

// release lets the journal go of the records taken so far, once the
// writes that stored them are on disk: until then the journal is their
// copy that survives a power loss, after it holds nothing the memory has.
func (j *journalHost) release() {
	j.mu.Lock()
	if !j.r.Pending() {
		j.mu.Unlock()
		return
	}
	mark := j.r.Mark()
	j.mu.Unlock()
	if err := j.m.Memory.WaitSynced(); err != nil {
		j.log.Warn("journal: records kept until a sync succeeds", "err", err)
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.r.Release(mark); err != nil {
		j.log.Warn("journal: release", "err", err)
	}
}

// take stores one record. A record the memory refuses for what it holds
// (invalid params, a session it does not know) is logged and skipped; one
// that fails inside the daemon stops the pass, and is tried again in the
// next ones before it is skipped too.
func (j *journalHost) take(ctx context.Context, e hook.SpoolEntry) error {
	_, err := j.conn.mux.Call(ctx, e.Method, e.Params)
	if err == nil {
		j.taken.Add(1)
		j.failures = 0
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	switch rpc.CodeOf(err) {
	case rpc.CodeInvalidParams, rpc.CodeNotFound, rpc.CodeMethodNotFound:
		j.log.Warn("journal: record not stored", "method", e.Method, "time", e.Time, "err", err)
		j.rejected.Add(1)
		return nil
	}
	j.failures++
	if j.failures >= journalRetries {
		j.log.Error("journal: record not stored; skipped after retries", "method", e.Method, "time", e.Time, "tries", j.failures, "err", err)
		j.rejected.Add(1)
		j.failures = 0
		return nil
	}
	return fmt.Errorf("journal: %s of %s: %w", e.Method, e.Time.Format(time.RFC3339Nano), err)
}

// status is the journal's part of mnemo/status.
func (j *journalHost) status() *memory.JournalStatus {
	j.mu.Lock()
	defer j.mu.Unlock()
	return &memory.JournalStatus{Taken: j.taken.Load(), Rejected: j.rejected.Load(), Unread: j.r.Unread()}
}

// unread says whether hooks wrote records not yet taken.
func (j *journalHost) unread() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.r.Unread() > 0
}

// Close closes the journal; what was not taken is taken at the next start.
func (j *journalHost) Close() {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.r.Close()
	j.conn.Close()
}

// barrier is the middleware of socket connections that takes the journal
// in before every call: whatever a client asks, the answer sees every
// event a hook handed over before it.
func (j *journalHost) barrier(next jsonrpc2.Handler) jsonrpc2.Handler {
	return func(ctx context.Context, req *jsonrpc2.Request) (any, error) {
		if req.IsCall() && strings.HasPrefix(req.Method(), "mnemo/") {
			if err := j.catchUp(ctx); err != nil && ctx.Err() == nil {
				j.log.Error("journal: read before a call", "method", req.Method(), "err", err)
			}
		}
		return next(ctx, req)
	}
}

func samePositions(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
