package store

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/mnemo-dev/mnemo/memory"
)

// Folding: the same fact seen again (memory.Observation.FactKey) is
// counted on the record that first said it instead of being stored once
// more. Each fold writes a bounded number of keys: the record, the copy's
// content hash (an import of the same export again is a duplicate, not a
// new sighting), the session index of the session that saw it again (the
// memory agent's turn and the session's listing still hold it), and one
// key that lists those two for forget.
//
//	i/fa/<factKey:16>                -> oid (the record that takes folds)
//	i/oz/<oid><hash>                 -> sid, prompt (a copy folded into oid)
//	i/os/<sid><oid>                  -> prompt, time (in a session that saw it again)

// foldable reports whether t may take o's fold: a record a person marked
// wrong or corrected, or one that a later record superseded or that was
// undone, stands as it is; the fact seen again is a record of its own.
func foldable(t *memory.Observation) bool {
	return !t.Wrong && len(t.Edits) == 0 && t.SupersededBy == 0 && t.Reverted == 0
}

// fold counts o, whose fact is fk (o.FactKey()), on the stored record of
// the same fact, when there is one that may take it, and returns that
// record as updated; nil when o is to be stored (putObservation makes it
// the record of its fact).
func (s *database) fold(txn *badger.Txn, o *memory.Observation, fk string) (*memory.Observation, error) {
	if fk == "" {
		return nil, nil
	}
	id, err := getID(txn, factKey(fk))
	if errors.Is(err, memory.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	t, err := s.observation(txn, id)
	if errors.Is(err, memory.ErrNotFound) {
		return nil, nil
	}
	if err != nil || !foldable(t) || t.ID == o.ID {
		return nil, err
	}
	t.Fold(o)
	if err := setJSON(txn, idKey(pObs, t.ID), t); err != nil {
		return nil, err
	}
	h := o.ContentHash()
	if _, err := getID(txn, key(pObsHash, []byte(h))); errors.Is(err, memory.ErrNotFound) {
		if err := txn.Set(key(pObsHash, []byte(h)), be64(t.ID)); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, err
	}
	prompt := binary.BigEndian.AppendUint32(nil, uint32(o.PromptNumber))
	if err := txn.Set(foldKey(t.ID, h), append(be64(o.SessionID), prompt...)); err != nil {
		return nil, err
	}
	if o.SessionID != 0 {
		seen := binary.BigEndian.AppendUint64(prompt, uint64(o.Time.UnixNano()))
		if err := txn.Set(key(pObsSession, be64(o.SessionID), be64(t.ID)), seen); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// sighting is where a session's index entry (i/os/<sid><oid>) places the
// observation o in that session: its own prompt and time, or for a fact
// the session saw again, the prompt and time it saw it at.
func sighting(item *badger.Item, o *memory.Observation) (prompt int, at time.Time, err error) {
	prompt, at = o.PromptNumber, o.Time
	err = item.Value(func(v []byte) error {
		if len(v) >= 4 {
			prompt = int(binary.BigEndian.Uint32(v))
		}
		if len(v) >= 12 {
			at = time.Unix(0, int64(binary.BigEndian.Uint64(v[4:12])))
		}
		return nil
	})
	return prompt, at, err
}

func foldKey(id uint64, hash string) []byte { return key(pObsFold, be64(id), []byte(hash)) }

// factKey is the index key of a fact (memory.Observation.FactKey, hex),
// its 16 bytes raw.
func factKey(fk string) []byte {
	b, err := hex.DecodeString(fk)
	if err != nil {
		b = []byte(fk)
	}
	return key(pObsFact, b)
}

// factKeyOf is the key under which o takes folds: its fact as first
// stored (before any correction).
func factKeyOf(o *memory.Observation) string {
	if len(o.Edits) > 0 {
		first := o.Before(o.Edits[0])
		return first.FactKey()
	}
	return o.FactKey()
}

// unfold deletes the keys folds into o wrote and o's own fact key (forget).
func (s *database) unfold(txn *badger.Txn, o *memory.Observation) error {
	var dels [][]byte
	if fk := factKeyOf(o); fk != "" {
		if owner, err := getID(txn, factKey(fk)); err == nil && owner == o.ID {
			dels = append(dels, factKey(fk))
		}
	}
	prefix := key(pObsFold, be64(o.ID))
	err := scan(txn, prefix, false, func(item *badger.Item) error {
		k := item.KeyCopy(nil)
		h := k[len(prefix):]
		dels = append(dels, k)
		if owner, err := getID(txn, key(pObsHash, h)); err == nil && owner == o.ID {
			dels = append(dels, key(pObsHash, h))
		}
		return item.Value(func(v []byte) error {
			if len(v) >= 8 {
				dels = append(dels, key(pObsSession, v[:8], be64(o.ID)))
			}
			return nil
		})
	})
	if err != nil {
		return err
	}
	for _, k := range dels {
		if err := txn.Delete(k); err != nil {
			return err
		}
	}
	return nil
}
