package store

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/mnemo-dev/mnemo/memory"
)

// Records: reads and writes of each kind, with their indexes kept in the
// same transaction.

func (s *database) sessionByContentID(txn *badger.Txn, csid string) (*memory.Session, error) {
	id, err := getID(txn, key(pContentIdx, []byte(csid)))
	if err != nil {
		return nil, err
	}
	return s.session(txn, id)
}

func (s *database) session(txn *badger.Txn, id uint64) (*memory.Session, error) {
	var sess memory.Session
	if err := getJSON(txn, idKey(pSession, id), &sess); err != nil {
		if errors.Is(err, memory.ErrNotFound) {
			return nil, fmt.Errorf("no session %d: %w", id, memory.ErrNotFound)
		}
		return nil, err
	}
	return &sess, nil
}

func (s *database) putSession(txn *badger.Txn, sess *memory.Session) error {
	return setJSON(txn, idKey(pSession, sess.ID), sess)
}

// ensureSession finds the session of csid or creates it, in its own
// transaction. Racing callers get the same session (rule 1): the loser's
// commit conflicts, and the retry finds the winner's session.
func (s *database) ensureSession(ctx context.Context, csid, project, cwd, platform string, now time.Time, change func(*badger.Txn, *memory.Session) error) (*memory.Session, error) {
	var out *memory.Session
	err := s.updateDurable(ctx, func(txn *badger.Txn) error {
		sess, err := s.sessionByContentID(txn, csid)
		switch {
		case errors.Is(err, memory.ErrNotFound):
			id, err := s.next("session")
			if err != nil {
				return err
			}
			sess = &memory.Session{
				ID: id, ContentSessionID: csid, Project: project, Cwd: cwd, Platform: platform,
				Status: memory.StatusInitialized, CreatedAt: now,
			}
			if err := txn.Set(key(pContentIdx, []byte(csid)), be64(id)); err != nil {
				return err
			}
		case err != nil:
			return err
		}
		if sess.Project == "" {
			sess.Project = project
		}
		if sess.Cwd == "" {
			sess.Cwd = cwd
		}
		if sess.Platform == "" {
			sess.Platform = platform
		}
		if change != nil {
			if err := change(txn, sess); err != nil {
				return err
			}
		}
		sess.UpdatedAt = now
		out = sess
		return s.putSession(txn, sess)
	})
	return out, err
}

func (s *database) putPrompt(txn *badger.Txn, p *memory.Prompt) error {
	k := key(pPrompt, be64(p.SessionID), binary.BigEndian.AppendUint32(nil, uint32(p.Number)))
	return setJSON(txn, k, p)
}

func (s *database) prompt(txn *badger.Txn, sid uint64, n int) (*memory.Prompt, error) {
	var p memory.Prompt
	k := key(pPrompt, be64(sid), binary.BigEndian.AppendUint32(nil, uint32(n)))
	if err := getJSON(txn, k, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

func (s *database) observation(txn *badger.Txn, id uint64) (*memory.Observation, error) {
	var o memory.Observation
	if err := getJSON(txn, idKey(pObs, id), &o); err != nil {
		if errors.Is(err, memory.ErrNotFound) {
			return nil, fmt.Errorf("no observation #%d: %w", id, memory.ErrNotFound)
		}
		return nil, err
	}
	return &o, nil
}

// putObservation stores a new observation and its indexes. It reports
// false, storing nothing, when an observation with the same content hash
// exists (or one that read so before a correction). A corrected
// observation (one with Edits, from an import) is indexed under the hashes
// of its earlier versions too.
func (s *database) putObservation(txn *badger.Txn, o *memory.Observation) (bool, error) {
	return s.putFact(txn, o, factKeyOf(o))
}

// putFact is putObservation of o, whose fact key (factKeyOf) is fk.
func (s *database) putFact(txn *badger.Txn, o *memory.Observation, fk string) (bool, error) {
	if o.Hash == "" {
		o.Hash = o.ContentHash()
	}
	hashes := append([]string{o.Hash}, o.PastHashes()...)
	if dup, err := s.hashed(txn, hashes); dup != 0 || err != nil {
		return false, err
	}
	if o.ID == 0 {
		id, err := s.next("obs")
		if err != nil {
			return false, err
		}
		o.ID = id
	}
	if err := setJSON(txn, idKey(pObs, o.ID), o); err != nil {
		return false, err
	}
	sets := [][2][]byte{
		{projectKey(pObsProject, o.Project, o.Time, o.ID), nil},
		{key(pObsSession, be64(o.SessionID), be64(o.ID)), nil},
	}
	for _, h := range hashes {
		sets = append(sets, [2][]byte{key(pObsHash, []byte(h)), be64(o.ID)})
	}
	if o.Pinned {
		sets = append(sets, [2][]byte{pinKey(o.Project, o.ID), nil})
	}
	if learned(o) {
		sets = append(sets, [2][]byte{projectKey(pObsLearned, o.Project, o.Time, o.ID), nil})
	}
	for _, f := range o.Files() {
		sets = append(sets, [2][]byte{fileKey(f, o.ID), nil})
	}
	if fk != "" && foldable(o) {
		// The newest record of a fact takes its folds.
		sets = append(sets, [2][]byte{factKey(fk), be64(o.ID)})
	}
	for _, kv := range sets {
		if err := txn.Set(kv[0], kv[1]); err != nil {
			return false, err
		}
	}
	return true, nil
}

// hashed returns the stored observation that one of hashes names, or 0.
// A hash key left by a record since forgotten names nothing.
func (s *database) hashed(txn *badger.Txn, hashes []string) (uint64, error) {
	for _, h := range hashes {
		id, err := getID(txn, key(pObsHash, []byte(h)))
		if errors.Is(err, memory.ErrNotFound) {
			continue
		}
		if err != nil {
			return 0, err
		}
		if _, err := txn.Get(idKey(pObs, id)); err == nil {
			return id, nil
		} else if !errors.Is(err, badger.ErrKeyNotFound) {
			return 0, err
		}
	}
	return 0, nil
}

// correctObservation stores o, a correction of its stored version old
// (same id, project, time, session and files), indexed under its new
// content hash and the hashes of its earlier versions (an old hash that
// none of those reproduces, from a Mnemo that hashed otherwise, is
// dropped: every hash key of an observation can be found from it, which
// forget needs). It fails with ErrInvalid when o's new content is
// another observation's.
func (s *database) correctObservation(txn *badger.Txn, old, o *memory.Observation) error {
	o.Hash = o.ContentHash()
	hashes := append([]string{o.Hash}, o.PastHashes()...)
	for _, h := range hashes {
		owner, err := getID(txn, key(pObsHash, []byte(h)))
		switch {
		case errors.Is(err, memory.ErrNotFound):
			if err := txn.Set(key(pObsHash, []byte(h)), be64(o.ID)); err != nil {
				return err
			}
		case err != nil:
			return err
		case owner != o.ID:
			return &memory.FieldError{Field: "text", Reason: fmt.Sprintf("would make #%d read exactly as #%d; forget one of them instead", o.ID, owner)}
		}
	}
	if !slices.Contains(hashes, old.Hash) {
		if owner, err := getID(txn, key(pObsHash, []byte(old.Hash))); err == nil && owner == o.ID {
			if err := txn.Delete(key(pObsHash, []byte(old.Hash))); err != nil {
				return err
			}
		}
	}
	return setJSON(txn, idKey(pObs, o.ID), o)
}

// pinObservation stores o pinned or not, and its project's pin index.
func (s *database) pinObservation(txn *badger.Txn, o *memory.Observation, pinned bool) error {
	o.Pinned = pinned
	var err error
	if pinned {
		err = txn.Set(pinKey(o.Project, o.ID), nil)
	} else {
		err = txn.Delete(pinKey(o.Project, o.ID))
	}
	if err != nil {
		return err
	}
	return setJSON(txn, idKey(pObs, o.ID), o)
}

// pinned returns the ids of a project's pinned observations.
// learned reports whether an observation is what was learned or decided
// rather than what a tool did: a decision, a record of what a turn's
// conversation settled, a memory saved on purpose (none of them made from
// a tool call), a tool call whose why explains it (explained). The
// context leads with them, from their own index. A prompt kept as a
// record of its own (memory.TypePrompt) is what was asked, not what was
// learned.
func learned(o *memory.Observation) bool {
	return o.Tool == "" && o.Type != memory.TypePrompt || o.Type == memory.TypeDecision || explained(o.Why)
}

// minExplainedWhy is how many bytes of text a why needs to explain its
// call rather than announce it.
const minExplainedWhy = 160

// explained reports whether the text the agent wrote before a tool call
// explains it — a cause found, the reason for a change ("the retry
// creates a second VM. The API takes an Idempotency-Key header, I'll send
// one per create.") — rather than announcing it ("Twenty seconds is a DNS
// timeout. Let me see what it resolves."): two sentences or more in
// minExplainedWhy bytes or more.
func explained(why string) bool {
	why = strings.Join(strings.Fields(why), " ")
	return len(why) >= minExplainedWhy && strings.Count(why+" ", ". ") >= 2
}

// learnedIDs returns the newest n learned observations of a project,
// newest first.
func (s *database) learnedIDs(txn *badger.Txn, project string, n int) ([]uint64, error) {
	var out []uint64
	err := scan(txn, key(pObsLearned, []byte(project), []byte{0}), true, func(item *badger.Item) error {
		k := item.Key()
		out = append(out, binary.BigEndian.Uint64(k[len(k)-8:]))
		if len(out) == n {
			return errStop
		}
		return nil
	})
	return out, err
}

func (s *database) pinned(txn *badger.Txn, project string) ([]uint64, error) {
	var out []uint64
	err := scan(txn, key(pObsPinned, []byte(project), []byte{0}), false, func(item *badger.Item) error {
		k := item.Key()
		out = append(out, binary.BigEndian.Uint64(k[len(k)-8:]))
		return nil
	})
	return out, err
}

// deleteObservation removes an observation, its indexes and its vector,
// and what the facts folded into it left (fold.go): forgetting a fact
// seen many times forgets it whole, its count with it.
func (s *database) deleteObservation(txn *badger.Txn, o *memory.Observation) error {
	if err := s.unfold(txn, o); err != nil {
		return err
	}
	if err := s.unsupersede(txn, o); err != nil {
		return err
	}
	dels := [][]byte{
		idKey(pObs, o.ID),
		key(pObsHash, []byte(o.Hash)),
		projectKey(pObsProject, o.Project, o.Time, o.ID),
		key(pObsSession, be64(o.SessionID), be64(o.ID)),
		idKey(pVector, o.ID),
	}
	for _, h := range o.PastHashes() {
		if owner, err := getID(txn, key(pObsHash, []byte(h))); err == nil && owner == o.ID {
			dels = append(dels, key(pObsHash, []byte(h)))
		}
	}
	if o.Pinned {
		dels = append(dels, pinKey(o.Project, o.ID))
	}
	if learned(o) {
		dels = append(dels, projectKey(pObsLearned, o.Project, o.Time, o.ID))
	}
	if o.Origin != nil {
		dels = append(dels, key(pOrigin, []byte(o.Origin.ID)), idKey(pAuthor, o.ID))
	}
	for _, f := range o.Files() {
		dels = append(dels, fileKey(f, o.ID))
	}
	for _, k := range dels {
		if err := txn.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

func (s *database) putSummary(txn *badger.Txn, m *memory.Summary) error {
	if m.ID == 0 {
		id, err := s.next("summary")
		if err != nil {
			return err
		}
		m.ID = id
	}
	if err := setJSON(txn, idKey(pSummary, m.ID), m); err != nil {
		return err
	}
	return txn.Set(projectKey(pSumProject, m.Project, m.Time, m.ID), nil)
}

// summaryStored reports whether a summary of m's session, prompt, time and
// request is stored (m already cleaned as it would be stored).
func (s *database) summaryStored(txn *badger.Txn, m *memory.Summary) (bool, error) {
	prefix := key(pSumProject, []byte(m.Project), []byte{0}, binary.BigEndian.AppendUint64(nil, uint64(m.Time.UnixNano())))
	found := false
	err := scan(txn, prefix, false, func(item *badger.Item) error {
		k := item.Key()
		var old memory.Summary
		if err := getJSON(txn, idKey(pSummary, binary.BigEndian.Uint64(k[len(k)-8:])), &old); err != nil {
			return err
		}
		if old.SessionID == m.SessionID && old.PromptNumber == m.PromptNumber && old.Request == m.Request {
			found = true
			return errStop
		}
		return nil
	})
	if errors.Is(err, errStop) {
		err = nil
	}
	return found, err
}

func (s *database) putEvent(txn *badger.Txn, e *memory.Event) error {
	if e.ID == 0 {
		id, err := s.next("event")
		if err != nil {
			return err
		}
		e.ID = id
	}
	return setJSON(txn, idKey(pQueue, e.ID), e)
}

// queued returns up to n events in queue order.
func (s *database) queued(n int) ([]memory.Event, error) {
	var out []memory.Event
	err := s.view(func(txn *badger.Txn) error {
		return scan(txn, pQueue, false, func(item *badger.Item) error {
			var e memory.Event
			if err := item.Value(func(b []byte) error { return unmarshalValue(b, &e) }); err != nil {
				return fmt.Errorf("decode queued event %x: %w", item.Key(), err)
			}
			out = append(out, e)
			if len(out) >= n {
				return errStop
			}
			return nil
		})
	})
	return out, err
}

// sessionObservations returns a session's observations of one prompt
// (promptNumber < 0: all of them), oldest first: a fact the session saw
// again (fold.go) where the session saw it.
func (s *database) sessionObservations(txn *badger.Txn, sid uint64, promptNumber int) ([]memory.Observation, error) {
	var (
		out    []memory.Observation
		at     []time.Time
		folded bool
	)
	err := scan(txn, key(pObsSession, be64(sid)), false, func(item *badger.Item) error {
		k := item.Key()
		o, err := s.observation(txn, binary.BigEndian.Uint64(k[len(k)-8:]))
		if err != nil {
			return err
		}
		prompt, seen, err := sighting(item, o)
		if err != nil {
			return err
		}
		if promptNumber < 0 || prompt == promptNumber {
			folded = folded || item.ValueSize() > 0
			out, at = append(out, *o), append(at, seen)
		}
		return nil
	})
	if folded {
		sortBySighting(out, at)
	}
	return out, err
}

// sortBySighting orders observations by when their session saw them (at,
// beside them), keeping the id order of those seen at the same time.
func sortBySighting[T any](obs []T, at []time.Time) {
	idx := make([]int, len(obs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return at[a].Compare(at[b]) })
	sorted := make([]T, len(obs))
	for i, j := range idx {
		sorted[i] = obs[j]
	}
	copy(obs, sorted)
}
