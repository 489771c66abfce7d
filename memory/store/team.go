package store

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/google/uuid"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/privacy"
)

// Team memory's local half (docs/team.md): the machine id, the outbox of
// operations waiting to be pushed (written in the transaction of the
// change it carries), the tombstones of records forgotten everywhere, the
// cursor of each server, and the origin index of arrived records.
//
//	meta/machine                        this data directory's machine id (a UUID)
//	t/o/<seq>                           outbox entry (outboxRecord), drained in key order
//	t/x/<gid>                           tombstone: the record is forgotten, never applied again
//	t/c/<server id>                     the pull cursor of a server ("<tx>:<seq>")
//	i/og/<gid>                          -> oid of an arrived record
//	i/oa/<oid>                          author of an arrived record (the --author filter)
var (
	keyMachine = []byte("meta/machine")
	pOutbox    = []byte("t/o/")
	pTomb      = []byte("t/x/")
	pCursor    = []byte("t/c/")
	pOrigin    = []byte("i/og/")
	pAuthor    = []byte("i/oa/")
)

// outboxRecord is an outbox entry as stored.
type outboxRecord struct {
	Op      string    `json:"op"`
	GID     string    `json:"gid"`
	OID     uint64    `json:"oid"`
	Project string    `json:"project"`
	Revised time.Time `json:"revised"`
}

// teamState is what the store keeps in memory for team memory.
type teamState struct {
	machine string
	shared  atomic.Pointer[map[string]bool]
	wake    chan struct{}
	outbox  atomic.Int64

	mu      sync.RWMutex
	authors map[uint64]string // arrived observations: id → author
}

// openTeam reads (or makes) the machine id, counts the outbox and loads
// the authors of arrived records.
func (m *Memory) openTeam(ctx context.Context) error {
	m.team.wake = make(chan struct{}, 1)
	m.team.authors = map[uint64]string{}
	empty := map[string]bool{}
	m.team.shared.Store(&empty)
	err := m.store.update(ctx, func(txn *badger.Txn) error {
		item, err := txn.Get(keyMachine)
		switch {
		case errors.Is(err, badger.ErrKeyNotFound):
			m.team.machine = uuid.NewString()
			return txn.Set(keyMachine, []byte(m.team.machine))
		case err != nil:
			return err
		}
		return item.Value(func(b []byte) error { m.team.machine = string(b); return nil })
	})
	if err != nil {
		return fmt.Errorf("machine id: %w", err)
	}
	return m.store.view(func(txn *badger.Txn) error {
		m.team.outbox.Store(int64(countPrefix(txn, pOutbox)))
		return scan(txn, pAuthor, false, func(item *badger.Item) error {
			id := binary.BigEndian.Uint64(item.Key()[len(pAuthor):])
			return item.Value(func(b []byte) error { m.team.authors[id] = string(b); return nil })
		})
	})
}

// Machine is this data directory's machine id: the first part of the
// global ids of the records made here.
func (m *Memory) Machine() string { return m.team.machine }

// SetShared says which projects are shared with a team server: their
// records are queued for pushing from now on.
func (m *Memory) SetShared(projects []string) {
	set := make(map[string]bool, len(projects))
	for _, p := range projects {
		set[p] = true
	}
	m.team.shared.Store(&set)
}

// Shared reports whether project is shared with a team server.
func (m *Memory) Shared(project string) bool { return (*m.team.shared.Load())[project] }

// OutboxSignal receives a value when an operation was queued for pushing.
func (m *Memory) OutboxSignal() <-chan struct{} { return m.team.wake }

// OutboxLen is how many operations wait to be pushed.
func (m *Memory) OutboxLen() int { return int(m.team.outbox.Load()) }

func (m *Memory) signalOutbox() {
	select {
	case m.team.wake <- struct{}{}:
	default:
	}
}

// gidOf is the global id of an observation: its origin's when it arrived,
// else this machine's.
func (m *Memory) gidOf(o *memory.Observation) string {
	if o.Origin != nil {
		return o.Origin.ID
	}
	return memory.GlobalID(m.team.machine, o.ID)
}

// revisedOf is when o's current version was written.
func revisedOf(o *memory.Observation) time.Time {
	if o.Origin != nil && !o.Origin.Revised.IsZero() {
		return o.Origin.Revised
	}
	if n := len(o.Edits); n > 0 {
		return o.Edits[n-1].Time
	}
	return o.Time
}

// queuePush writes an outbox entry for a change of o in txn, when o's
// project is shared: a record made here, or a correction or forget of one
// that arrived (it travels back). It reports whether it queued one.
func (m *Memory) queuePush(txn *badger.Txn, op string, o *memory.Observation) (bool, error) {
	if !m.Shared(o.Project) {
		return false, nil
	}
	seq, err := m.store.next("outbox")
	if err != nil {
		return false, err
	}
	rec := outboxRecord{Op: op, GID: m.gidOf(o), OID: o.ID, Project: o.Project, Revised: revisedOf(o)}
	if err := setJSON(txn, idKey(pOutbox, seq), rec); err != nil {
		return false, err
	}
	return true, nil
}

// queued counts and signals outbox entries after their transaction
// committed.
func (m *Memory) queued(n int) {
	if n > 0 {
		m.team.outbox.Add(int64(n))
		m.signalOutbox()
	}
}

// ShareExisting queues the records of project made here for pushing,
// oldest first (a join). It returns how many it queued.
func (m *Memory) ShareExisting(ctx context.Context, project string) (int, error) {
	var ids []uint64
	err := m.store.view(func(txn *badger.Txn) error {
		return scan(txn, key(pObsProject, []byte(project), []byte{0}), false, func(item *badger.Item) error {
			k := item.Key()
			ids = append(ids, binary.BigEndian.Uint64(k[len(k)-8:]))
			return nil
		})
	})
	if err != nil {
		return 0, err
	}
	n := 0
	for chunk := range slices.Chunk(ids, 500) {
		k := 0
		err := m.store.updateDurable(ctx, func(txn *badger.Txn) error {
			k = 0
			for _, id := range chunk {
				o, err := m.store.observation(txn, id)
				if errors.Is(err, memory.ErrNotFound) {
					continue
				}
				if err != nil {
					return err
				}
				if o.Origin != nil {
					continue // it came from the server
				}
				if _, err := m.queuePush(txn, memory.OpPut, o); err != nil {
					return err
				}
				k++
			}
			return nil
		})
		if err != nil {
			return n, err
		}
		m.queued(k)
		n += k
	}
	return n, nil
}

// Outbox returns up to n operations waiting to be pushed, oldest first,
// each put with its record as it reads now, in the form that leaves the
// machine (pushForm; nil when the record is gone since).
func (m *Memory) Outbox(ctx context.Context, n int) ([]memory.OutboxEntry, error) {
	var out []memory.OutboxEntry
	err := m.store.view(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: pOutbox, PrefetchValues: true, PrefetchSize: 64})
		defer it.Close()
		for it.Rewind(); it.Valid() && len(out) < n; it.Next() {
			item := it.Item()
			var rec outboxRecord
			if err := item.Value(func(b []byte) error { return unmarshalValue(b, &rec) }); err != nil {
				return err
			}
			e := memory.OutboxEntry{Seq: binary.BigEndian.Uint64(item.Key()[len(pOutbox):]), Op: rec.Op, GID: rec.GID, Project: rec.Project, Revised: rec.Revised}
			if rec.Op == memory.OpPut {
				o, err := m.store.observation(txn, rec.OID)
				switch {
				case errors.Is(err, memory.ErrNotFound):
				case err != nil:
					return err
				case m.gidOf(o) == rec.GID:
					e.Revised = revisedOf(o)
					e.Observation = PushForm(o)
					if o.Origin != nil {
						e.Observation.Origin = &memory.Origin{Author: o.Origin.Author}
					}
				}
			}
			out = append(out, e)
		}
		return nil
	})
	return out, err
}

// PushForm is what of an observation leaves the machine: its content,
// every text cleaned again (privacy tags stripped, secrets redacted with
// today's patterns), without what only this machine means (ids, sessions,
// file anchors, pins, marks, states) and without the text of its earlier
// versions.
func PushForm(o *memory.Observation) *memory.Observation {
	clean := func(s string) string {
		s, _ = privacy.Strip(s)
		s, _ = privacy.Redact(s)
		// PostgreSQL's text and jsonb take no NUL.
		return strings.ReplaceAll(s, "\x00", "")
	}
	list := func(in []string) []string {
		out := make([]string, 0, len(in))
		for _, s := range in {
			if s = clean(s); s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	p := &memory.Observation{
		Project: o.Project, Type: o.Type, Title: clean(o.Title), Subtitle: clean(o.Subtitle),
		Facts: list(o.Facts), Narrative: clean(o.Narrative), Concepts: list(o.Concepts),
		FilesRead: list(o.FilesRead), FilesModified: list(o.FilesModified), Evidence: clean(o.Evidence),
		Tool: o.Tool, Request: clean(o.Request), Source: o.Source, Host: o.Host, Time: o.Time,
	}
	if o.Anchor != nil {
		a := *o.Anchor
		a.File = clean(a.File)
		p.Anchor = &a
	}
	return p
}

// Pushed deletes outbox entries once the server committed them.
func (m *Memory) Pushed(ctx context.Context, seqs []uint64) error {
	err := m.store.update(ctx, func(txn *badger.Txn) error {
		for _, s := range seqs {
			if err := txn.Delete(idKey(pOutbox, s)); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		m.team.outbox.Add(-int64(len(seqs)))
	}
	return err
}

// DropOutbox deletes the queued operations of the projects for which keep
// is false (a leave), and returns how many it deleted.
func (m *Memory) DropOutbox(ctx context.Context, keep func(project string) bool) (int, error) {
	var drop [][]byte
	err := m.store.view(func(txn *badger.Txn) error {
		return scan(txn, pOutbox, false, func(item *badger.Item) error {
			var rec outboxRecord
			if err := item.Value(func(b []byte) error { return unmarshalValue(b, &rec) }); err != nil {
				return err
			}
			if !keep(rec.Project) {
				drop = append(drop, item.KeyCopy(nil))
			}
			return nil
		})
	})
	if err != nil {
		return 0, err
	}
	for chunk := range slices.Chunk(drop, 1000) {
		if err := m.store.update(ctx, func(txn *badger.Txn) error {
			for _, k := range chunk {
				if err := txn.Delete(k); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return 0, err
		}
		m.team.outbox.Add(-int64(len(chunk)))
	}
	return len(drop), nil
}

// TeamCursor is where pulls from a server stand ("" before the first).
func (m *Memory) TeamCursor(server string) (string, error) {
	var c string
	err := m.store.view(func(txn *badger.Txn) error {
		item, err := txn.Get(key(pCursor, []byte(server)))
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		return item.Value(func(b []byte) error { c = string(b); return nil })
	})
	return c, err
}

// authorOf is the author of an arrived observation ("" for one made here).
func (m *Memory) authorOf(id uint64) string {
	m.team.mu.RLock()
	defer m.team.mu.RUnlock()
	return m.team.authors[id]
}

// authorFilter is the search filter of SearchParams.Author (nil: all).
func (m *Memory) authorFilter(who string) func(uint64) bool {
	switch who {
	case "":
		return nil
	case memory.AuthorMine:
		return func(id uint64) bool { return m.authorOf(id) == "" }
	case memory.AuthorTeam:
		return func(id uint64) bool { return m.authorOf(id) != "" }
	}
	return func(id uint64) bool { return m.authorOf(id) == who }
}

// localID finds the local record of a global id: this machine's own
// records by their id, arrived ones through the origin index. 0 when
// there is none.
func (m *Memory) localID(txn *badger.Txn, gid string) (uint64, error) {
	if rest, ok := strings.CutPrefix(gid, m.team.machine+"/"); ok {
		id, err := strconv.ParseUint(rest, 10, 64)
		if err != nil {
			return 0, nil
		}
		o, err := m.store.observation(txn, id)
		if errors.Is(err, memory.ErrNotFound) || err == nil && o.Origin != nil {
			return 0, nil
		}
		return id, err
	}
	id, err := getID(txn, key(pOrigin, []byte(gid)))
	if errors.Is(err, memory.ErrNotFound) {
		return 0, nil
	}
	return id, err
}

// newer reports whether a version written at t by machine wins over o's
// (last writer wins, ties by machine id).
func (m *Memory) newer(t time.Time, machine string, o *memory.Observation) bool {
	r := revisedOf(o)
	if !t.Equal(r) {
		return t.After(r)
	}
	own := m.team.machine
	if o.Origin != nil {
		own = o.Origin.Machine
	}
	return machine > own
}

// Arrive applies operations pulled from server, in order, and stores
// cursor as where the pulls stand, all in one transaction: a crash
// applies a batch whole or not at all, and applying one again changes
// nothing. Arrived records are never queued for pushing. It returns how
// many records it stored or changed and how many it deleted.
func (m *Memory) Arrive(ctx context.Context, server, cursor string, ops []memory.Arrival) (stored, deleted int, err error) {
	var (
		index   []memory.Observation
		gone    []uint64
		changes []memory.Change
		authors map[uint64]string
	)
	m.snapMu.RLock()
	defer m.snapMu.RUnlock()
	err = m.store.updateDurable(ctx, func(txn *badger.Txn) error {
		index, gone, changes, authors = index[:0], gone[:0], changes[:0], map[uint64]string{}
		for _, a := range ops {
			switch a.Op {
			case memory.OpForget:
				id, err := m.localID(txn, a.GID)
				if err != nil {
					return err
				}
				if err := txn.Set(key(pTomb, []byte(a.GID)), nil); err != nil {
					return err
				}
				if id == 0 {
					continue
				}
				o, err := m.store.observation(txn, id)
				if err != nil {
					return err
				}
				if err := m.store.deleteObservation(txn, o); err != nil {
					return err
				}
				gone, authors[id] = append(gone, id), ""
			case memory.OpPut:
				if a.Observation == nil {
					continue
				}
				if _, err := txn.Get(key(pTomb, []byte(a.GID))); err == nil {
					continue // a tombstone wins
				} else if !errors.Is(err, badger.ErrKeyNotFound) {
					return err
				}
				o, ok, err := m.applyPut(txn, a)
				if err != nil {
					return err
				}
				if ok {
					index = append(index, *o)
					changes = append(changes, observationChange(o))
					if o.Origin != nil {
						authors[o.ID] = o.Origin.Author
					}
				}
			}
		}
		return txn.Set(key(pCursor, []byte(server)), []byte(cursor))
	})
	if err != nil {
		return 0, 0, fmt.Errorf("arrive: %w", err)
	}
	m.team.mu.Lock()
	for id, a := range authors {
		if a == "" {
			delete(m.team.authors, id)
		} else {
			m.team.authors[id] = a
		}
	}
	m.team.mu.Unlock()
	if len(gone) > 0 {
		m.index.Remove(gone...)
	}
	m.indexObservations(ctx, index)
	m.publish(changes...)
	if len(gone) > 0 {
		m.publish(memory.Change{Kind: memory.KindForget, Time: m.now(), IDs: gone})
		if err := m.dropSnapshot(); err != nil {
			m.log.Error("drop the index snapshot after a forget arrived", "err", err)
		}
		if err := m.store.Compact(); err != nil {
			m.log.Error("compact after a forget arrived", "err", err)
		}
	}
	return len(index), len(gone), nil
}

// applyPut stores an arrived put: a new record, or a newer version of one
// stored here (one that arrived before, or one of this machine's that
// someone corrected). It reports false when nothing changed: an older
// version, or content stored here already.
func (m *Memory) applyPut(txn *badger.Txn, a memory.Arrival) (*memory.Observation, bool, error) {
	in := a.Observation
	o := memory.Observation{
		Project: cmp.Or(in.Project, a.Project), Type: in.Type, Title: in.Title, Subtitle: in.Subtitle,
		Facts: in.Facts, Narrative: in.Narrative, Concepts: in.Concepts, FilesRead: in.FilesRead,
		FilesModified: in.FilesModified, Evidence: in.Evidence, Tool: in.Tool, Request: in.Request,
		Source: in.Source, Host: in.Host, Anchor: in.Anchor, Time: in.Time,
	}
	m.scrubObservation(&o)
	o.Title = m.clean(o.Title, 200)
	id, err := m.localID(txn, a.GID)
	if err != nil {
		return nil, false, err
	}
	if id != 0 {
		old, err := m.store.observation(txn, id)
		if err != nil {
			return nil, false, err
		}
		if !m.newer(a.Revised, a.Machine, old) {
			return nil, false, nil
		}
		if err := m.store.deleteObservation(txn, old); err != nil {
			return nil, false, err
		}
		// The record keeps its identity here; its content is the new
		// version's.
		o.ID, o.SessionID, o.ContentSessionID, o.MemorySessionID, o.PromptNumber = old.ID, old.SessionID, old.ContentSessionID, old.MemorySessionID, old.PromptNumber
		o.Pinned, o.Wrong, o.Project = old.Pinned, old.Wrong, old.Project
		o.Edits = append(slices.Clone(old.Edits), memory.Edit{Time: a.Revised, Title: old.Title, Subtitle: old.Subtitle, Narrative: old.Narrative, Facts: old.Facts})
		if old.Origin != nil {
			origin := *old.Origin
			origin.Revised = a.Revised
			o.Origin = &origin
			o.Edits = nil // only this version travelled
		}
	} else {
		o.Origin = &memory.Origin{ID: a.GID, Author: a.Author, Machine: machineOf(a.GID, a.Machine), Revised: a.Revised}
	}
	o.Hash = ""
	ok, err := m.store.putObservation(txn, &o)
	if err != nil || !ok {
		return nil, false, err
	}
	if o.Origin != nil {
		if err := m.keepOrigin(txn, &o); err != nil {
			return nil, false, err
		}
	}
	return &o, true, nil
}

// keepOrigin indexes a stored record that came from a team server: its
// global id finds it, and its author is known to the search filter (set
// here at once: ids are never reused, so an entry of a transaction that
// failed names no record).
func (m *Memory) keepOrigin(txn *badger.Txn, o *memory.Observation) error {
	if err := txn.Set(key(pOrigin, []byte(o.Origin.ID)), be64(o.ID)); err != nil {
		return err
	}
	if err := txn.Set(idKey(pAuthor, o.ID), []byte(o.Origin.Author)); err != nil {
		return err
	}
	m.team.mu.Lock()
	m.team.authors[o.ID] = o.Origin.Author
	m.team.mu.Unlock()
	return nil
}

// machineOf is the machine part of a global id.
func machineOf(gid, fallback string) string {
	if i := strings.LastIndexByte(gid, '/'); i > 0 {
		return gid[:i]
	}
	return fallback
}

// forgetShared queues the tombstone of a shared record being forgotten in
// txn, and keeps it: a put of it that arrives later is not applied.
func (m *Memory) forgetShared(txn *badger.Txn, o *memory.Observation) (bool, error) {
	queued, err := m.queuePush(txn, memory.OpForget, o)
	if err != nil || !queued {
		return queued, err
	}
	return true, txn.Set(key(pTomb, []byte(m.gidOf(o))), nil)
}

// TeamProjects lists the projects shared now, sorted.
func (m *Memory) TeamProjects() []string {
	return slices.Sorted(maps.Keys(*m.team.shared.Load()))
}
