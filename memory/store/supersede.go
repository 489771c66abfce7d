package store

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"slices"

	"github.com/dgraph-io/badger/v4"

	"github.com/mnemo-dev/mnemo/memory"
)

// Superseding (memory/supersede.go says when): a stored observation is
// linked with the earlier one of the same subject, in the transaction
// that stores it. Reads and command runs find theirs through one key per
// subject; an edit looks at the newest edits of its files; a decision at
// the newest decisions of its project. All of it is bounded.
//
//	i/sj/<hash of the subject:16>       -> oid (the newest of a subject)

// supersedeLookback bounds the observations an edit or a decision is
// compared with.
const supersedeLookback = 50

// subjectKey is the index key of a subject (memory.Observation.Subject):
// 16 bytes of its hash, as a subject may be a long command line.
func subjectKey(subject string) []byte {
	sum := sha256.Sum256([]byte(subject))
	return key(pObsSubject, sum[:16])
}

// supersede links o, just stored, with the earlier observations it
// supersedes, and returns them as rewritten (o is rewritten too when it
// supersedes any).
func (s *database) supersede(txn *badger.Txn, o *memory.Observation) ([]*memory.Observation, error) {
	var older []*memory.Observation
	take := func(p *memory.Observation) {
		if p.ID != o.ID && p.SupersededBy == 0 && p.Reverted == 0 && !p.Time.After(o.Time) &&
			!slices.ContainsFunc(older, func(q *memory.Observation) bool { return q.ID == p.ID }) {
			older = append(older, p)
		}
	}
	if subj := o.Subject(); subj != "" {
		id, err := getID(txn, subjectKey(subj))
		switch {
		case err == nil:
			p, err := s.observation(txn, id)
			if err != nil && !errors.Is(err, memory.ErrNotFound) {
				return nil, err
			}
			if p != nil {
				take(p)
			}
		case !errors.Is(err, memory.ErrNotFound):
			return nil, err
		}
		if err := txn.Set(subjectKey(subj), be64(o.ID)); err != nil {
			return nil, err
		}
	}
	var err error
	switch {
	case len(o.FilesModified) > 0 && o.Reverted == 0 && slices.ContainsFunc(o.FileAnchors, func(a memory.FileAnchor) bool { return len(a.Removed) > 0 }):
		for _, f := range o.FilesModified {
			err = s.newestOf(txn, key(pObsFile, []byte(f), []byte{0}), func(p *memory.Observation) {
				if o.RewroteEdit(p) {
					take(p)
				}
			})
			if err != nil {
				return nil, err
			}
		}
	case o.Type == memory.TypeDecision:
		err = s.newestOf(txn, key(pObsProject, []byte(o.Project), []byte{0}), func(p *memory.Observation) {
			if o.ReplacesDecision(p) {
				take(p)
			}
		})
	}
	if err != nil || len(older) == 0 {
		return nil, err
	}
	for _, p := range older {
		p.SupersededBy = o.ID
		o.Supersedes = append(o.Supersedes, p.ID)
		if err := setJSON(txn, idKey(pObs, p.ID), p); err != nil {
			return nil, err
		}
	}
	return older, setJSON(txn, idKey(pObs, o.ID), o)
}

// newestOf calls fn with the newest supersedeLookback observations of an
// index (keys that end in the observation's id).
func (s *database) newestOf(txn *badger.Txn, prefix []byte, fn func(*memory.Observation)) error {
	n := 0
	return scan(txn, prefix, true, func(item *badger.Item) error {
		if n++; n > supersedeLookback {
			return errStop
		}
		k := item.Key()
		p, err := s.observation(txn, binary.BigEndian.Uint64(k[len(k)-8:]))
		if errors.Is(err, memory.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		fn(p)
		return nil
	})
}

// unsupersede undoes o's links before o is forgotten: what it superseded
// is its own again (and the newest of its subject), and what superseded
// it forgets the link back.
func (s *database) unsupersede(txn *badger.Txn, o *memory.Observation) error {
	subj := o.Subject()
	if subj != "" {
		if owner, err := getID(txn, subjectKey(subj)); err == nil && owner == o.ID {
			if err := txn.Delete(subjectKey(subj)); err != nil {
				return err
			}
		}
	}
	if err := s.release(txn, o); err != nil {
		return err
	}
	o.Supersedes = nil
	if o.SupersededBy == 0 {
		return nil
	}
	n, err := s.observation(txn, o.SupersededBy)
	if errors.Is(err, memory.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	n.Supersedes = slices.DeleteFunc(n.Supersedes, func(id uint64) bool { return id == o.ID })
	return setJSON(txn, idKey(pObs, n.ID), n)
}

// release makes the observations o superseded their own again (o is
// forgotten, or marked wrong), the newest of them its subject's newest.
// o keeps its links back (Supersedes), so that taking the word "wrong"
// back can make them again (relink).
func (s *database) release(txn *badger.Txn, o *memory.Observation) error {
	for _, id := range o.Supersedes {
		p, err := s.observation(txn, id)
		if errors.Is(err, memory.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		if p.SupersededBy != o.ID {
			continue
		}
		p.SupersededBy = 0
		if err := setJSON(txn, idKey(pObs, p.ID), p); err != nil {
			return err
		}
		if subj := p.Subject(); subj != "" && subj == o.Subject() {
			if err := txn.Set(subjectKey(subj), be64(p.ID)); err != nil {
				return err
			}
		}
	}
	return nil
}

// relink supersedes again what o superseded before it was marked wrong
// (release), unless something else superseded it since.
func (s *database) relink(txn *badger.Txn, o *memory.Observation) error {
	for _, id := range o.Supersedes {
		p, err := s.observation(txn, id)
		if errors.Is(err, memory.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		if p.SupersededBy != 0 {
			continue
		}
		p.SupersededBy = o.ID
		if err := setJSON(txn, idKey(pObs, p.ID), p); err != nil {
			return err
		}
		if subj := o.Subject(); subj != "" && subj == p.Subject() {
			if owner, err := getID(txn, subjectKey(subj)); err == nil && owner == p.ID {
				if err := txn.Set(subjectKey(subj), be64(o.ID)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
