package store

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/mnemo-dev/mnemo/memory"
)

// StaleQueueAge is how long an event may wait in the queue before Doctor
// calls it stale.
const StaleQueueAge = 10 * time.Minute

// WithoutEvidence counts the observations of tool events that have no
// evidence: those made before observations kept it, whose raw events are
// gone (an agent's queue entry is deleted once it made them), so that it
// cannot be derived again.
func (m *Memory) WithoutEvidence(ctx context.Context) (without, total int, err error) {
	err = m.store.view(func(txn *badger.Txn) error {
		return scan(txn, pObs, false, func(item *badger.Item) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			var o struct {
				Tool, Source, Evidence string
			}
			if err := item.Value(func(b []byte) error { return json.Unmarshal(b, &o) }); err != nil {
				return err
			}
			if o.Tool == "" || o.Source == memory.SourceSaved {
				return nil
			}
			total++
			if o.Evidence == "" {
				without++
			}
			return nil
		})
	})
	return without, total, err
}

// Doctor checks the invariants of DESIGN §5: every observation's memory
// session is registered to its own session, no memory session is shared by
// two sessions, every index entry points at a record, and no queue entry is
// older than StaleQueueAge.
func (m *Memory) Doctor(ctx context.Context) ([]memory.Problem, error) {
	var problems []memory.Problem
	add := func(check, format string, args ...any) {
		problems = append(problems, memory.Problem{Check: check, Detail: fmt.Sprintf(format, args...)})
	}
	now := m.now()
	err := m.store.view(func(txn *badger.Txn) error {
		owner := map[string]uint64{} // memorySessionId -> session id
		err := scan(txn, pSession, false, func(item *badger.Item) error {
			var s memory.Session
			if err := item.Value(func(b []byte) error { return json.Unmarshal(b, &s) }); err != nil {
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
			if err := item.Value(func(b []byte) error { return json.Unmarshal(b, &o) }); err != nil {
				return err
			}
			if o.Source == memory.SourceSaved {
				return nil
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
			if err := item.Value(func(b []byte) error { return json.Unmarshal(b, &e) }); err != nil {
				add("queue", "queue entry %x does not decode: %v", item.Key(), err)
				return nil
			}
			if age := now.Sub(e.Time); age > StaleQueueAge {
				add("stale-queue", "event %d of session %s has waited %s", e.ID, e.ContentSessionID, age.Round(time.Second))
			}
			return nil
		})
	})
	return problems, err
}
