package store

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/mnemo-dev/mnemo/memory"
)

// StaleQueueAge is how long an event may wait in the queue before Doctor
// calls it stale: counted from when it was queued, not from when its work
// happened (a back-fill queues work of months ago).
const StaleQueueAge = 10 * time.Minute

// Doctor checks the invariants of docs/architecture.md §5: every observation's memory
// session is registered to its own session, no memory session is shared by
// two sessions, every index entry points at a record, and no queue entry is
// older than StaleQueueAge. Its notes say what is worth knowing but not
// wrong: how many observations of tool runs were made before observations
// kept their evidence (their events are gone, so it cannot be derived
// again).
func (m *Memory) Doctor(ctx context.Context) (memory.DoctorResult, error) {
	res := memory.DoctorResult{Problems: []memory.Problem{}}
	add := func(check, format string, args ...any) {
		res.Problems = append(res.Problems, memory.Problem{Check: check, Detail: fmt.Sprintf(format, args...)})
	}
	var tools, withoutEvidence int
	var stale int           // events waiting longer than StaleQueueAge
	var oldest memory.Event // the one waiting longest
	var oldestAge time.Duration
	now := m.now()
	err := m.store.view(func(txn *badger.Txn) error {
		owner := map[string]uint64{} // memorySessionId -> session id
		err := scan(txn, pSession, false, func(item *badger.Item) error {
			var s memory.Session
			if err := item.Value(func(b []byte) error { return unmarshalValue(b, &s) }); err != nil {
				return err
			}
			if id, err := getID(txn, key(pContentIdx, []byte(s.ContentSessionID))); err != nil || id != s.ID {
				add("content-session-index", "session %d (%s) is not indexed by its contentSessionId", s.ID, s.ContentSessionID)
			}
			for _, ms := range s.MemorySessions {
				if other, ok := owner[ms]; ok && other != s.ID {
					add("shared-memory-session", "memory session %s is used by sessions %d and %d", ms, other, s.ID)
				}
				owner[ms] = s.ID
			}
			return nil
		})
		if err != nil {
			return err
		}
		err = scan(txn, pObs, false, func(item *badger.Item) error {
			var o memory.Observation
			if err := item.Value(func(b []byte) error { return unmarshalValue(b, &o) }); err != nil {
				return err
			}
			if o.Source == memory.SourceSaved {
				return nil
			}
			if o.Tool != "" {
				tools++
				if o.Evidence == "" {
					withoutEvidence++
				}
			}
			if o.SupersededBy != 0 {
				if _, err := txn.Get(idKey(pObs, o.SupersededBy)); err != nil {
					add("dangling-link", "observation %d is superseded by missing observation %d", o.ID, o.SupersededBy)
				}
			}
			if o.MemorySessionID == "" {
				add("orphan-observation", "observation %d has no memory session", o.ID)
				return nil
			}
			if sid, ok := owner[o.MemorySessionID]; !ok || sid != o.SessionID {
				add("orphan-observation", "observation %d was made under memory session %s, which is not registered to its session %d", o.ID, o.MemorySessionID, o.SessionID)
			}
			return nil
		})
		if err != nil {
			return err
		}
		err = scan(txn, pObsProject, false, func(item *badger.Item) error {
			k := item.Key()
			id := binary.BigEndian.Uint64(k[len(k)-8:])
			if _, err := txn.Get(idKey(pObs, id)); err != nil {
				add("dangling-index", "project index points at missing observation %d", id)
			}
			return nil
		})
		if err != nil {
			return err
		}
		return scan(txn, pQueue, false, func(item *badger.Item) error {
			var e memory.Event
			if err := item.Value(func(b []byte) error { return unmarshalValue(b, &e) }); err != nil {
				add("queue", "queue entry %x does not decode: %v", item.Key(), err)
				return nil
			}
			queued := e.Queued
			if queued.IsZero() {
				queued = e.Time // queued before events kept when
			}
			if age := now.Sub(queued); age > StaleQueueAge {
				stale++
				if age > oldestAge {
					oldest, oldestAge = e, age
				}
			}
			return nil
		})
	})
	if stale > 0 {
		add("stale-queue", "%d events have waited in the queue longer than %v; the oldest, event %d of session %s, for %s",
			stale, StaleQueueAge, oldest.ID, oldest.ContentSessionID, oldestAge.Round(time.Second))
	}
	if withoutEvidence > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%d of %d observations of tool runs were made before observations kept their evidence; their raw events are gone, so search finds them by their notes only", withoutEvidence, tools))
	}
	return res, err
}
