package store

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/mnemo-dev/mnemo/memory"
)

// SessionRecords returns a session with its prompts, observations (as
// hits, oldest first, at most memory.MaxSessionObservations) and
// summaries. Errors: memory.ErrNotFound for a session it does not have.
func (m *Memory) SessionRecords(ctx context.Context, p memory.SessionParams) (memory.SessionResult, error) {
	if err := p.Validate(); err != nil {
		return memory.SessionResult{}, err
	}
	res := memory.SessionResult{Prompts: []memory.Prompt{}, Observations: []memory.SessionHit{}, Summaries: []memory.Summary{}}
	var (
		at     []time.Time // when the session saw each observation
		folded bool        // the session saw a fact again (fold.go)
	)
	err := m.store.view(func(txn *badger.Txn) error {
		s, err := m.store.sessionByContentID(txn, p.ContentSessionID)
		if err != nil {
			return err
		}
		res.Session = *s
		if err := scan(txn, key(pPrompt, be64(s.ID)), false, func(item *badger.Item) error {
			var pr memory.Prompt
			if err := item.Value(func(b []byte) error { return unmarshalValue(b, &pr) }); err != nil {
				return err
			}
			res.Prompts = append(res.Prompts, pr)
			return nil
		}); err != nil {
			return err
		}
		return scan(txn, key(pObsSession, be64(s.ID)), false, func(item *badger.Item) error {
			res.ObservationTotal++
			if len(res.Observations) >= memory.MaxSessionObservations {
				return nil
			}
			k := item.Key()
			o, err := m.store.observation(txn, binary.BigEndian.Uint64(k[len(k)-8:]))
			if err != nil {
				return err
			}
			hit := hitOf(o)
			hit.State = m.anchors.state(o)
			prompt, seen, err := sighting(item, o)
			if err != nil {
				return err
			}
			folded = folded || item.ValueSize() > 0
			res.Observations = append(res.Observations, memory.SessionHit{Hit: hit, PromptNumber: prompt})
			at = append(at, seen)
			return nil
		})
	})
	if err != nil {
		return memory.SessionResult{}, fmt.Errorf("session %q: %w", p.ContentSessionID, err)
	}
	if folded {
		sortBySighting(res.Observations, at)
	}
	if res.Summaries, err = m.Summaries(ctx, res.Session.ID); err != nil {
		return memory.SessionResult{}, fmt.Errorf("session %q: %w", p.ContentSessionID, err)
	}
	if res.Summaries == nil {
		res.Summaries = []memory.Summary{}
	}
	return res, nil
}
