package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/dgraph-io/badger/v4"

	"github.com/mnemo-dev/mnemo/memory"
)

// Correct replaces an observation's title, text or both, keeping what it
// said as an Edit on the record, and indexes it again: keyword and vector
// search find it by its new words only. The text replaces the narrative,
// the subtitle and the facts. New title and text are cleaned as a save's
// are (private parts stripped, secrets redacted). A correction that says
// what the observation already says stores nothing (Changed false). An id
// that does not exist is ErrNotFound, and nothing changes.
func (m *Memory) Correct(ctx context.Context, p memory.CorrectParams) (memory.CorrectResult, error) {
	if err := p.Validate(); err != nil {
		return memory.CorrectResult{}, err
	}
	var title, text string
	if strings.TrimSpace(p.Title) != "" {
		title = strings.TrimSpace(m.clean(p.Title, 200))
		if title == "" {
			return memory.CorrectResult{}, &memory.FieldError{Field: "title", Reason: "is empty once private parts are removed"}
		}
	}
	if strings.TrimSpace(p.Text) != "" {
		text = m.clean(p.Text, memory.MaxMessageBytes)
		if strings.TrimSpace(text) == "" {
			return memory.CorrectResult{}, &memory.FieldError{Field: "text", Reason: "is empty once private parts are removed"}
		}
	}
	var (
		res    memory.CorrectResult
		doc    memory.Observation // what the index gets
		pushed bool
	)
	m.snapMu.RLock()
	defer m.snapMu.RUnlock()
	err := m.store.updateDurable(ctx, func(txn *badger.Txn) error {
		old, err := m.store.observation(txn, p.ID)
		if err != nil {
			return err
		}
		o := *old
		o.Edits = slices.Clone(old.Edits)
		if title != "" {
			o.Title = title
		}
		if text != "" {
			o.Subtitle, o.Narrative, o.Facts = "", text, nil
		}
		if o.Title == old.Title && o.Subtitle == old.Subtitle && o.Narrative == old.Narrative && slices.Equal(o.Facts, old.Facts) {
			res = memory.CorrectResult{Observation: *old}
			return nil
		}
		now := m.now()
		o.Edits = append(o.Edits, memory.Edit{Time: now, Title: old.Title, Subtitle: old.Subtitle, Narrative: old.Narrative, Facts: old.Facts})
		if len(o.FileAnchors) > 0 {
			// A person's correction says what holds of the files as they
			// are now: it clears a review as a keep does.
			o.Kept = m.keepNow(&o)
		}
		if old.Origin != nil {
			origin := *old.Origin
			origin.Revised = now
			o.Origin = &origin
		}
		res = memory.CorrectResult{Observation: o, Changed: true}
		if err := m.store.correctObservation(txn, old, &res.Observation); err != nil {
			return err
		}
		if pushed, err = m.queuePush(txn, memory.OpPut, &res.Observation); err != nil {
			return err
		}
		doc = res.Observation
		if doc.Host == "" && doc.SessionID != 0 {
			// Records older than Observation.Host: the index knows their
			// session's platform (loadIndex).
			if s, err := m.store.session(txn, doc.SessionID); err == nil {
				doc.Host = s.Platform
			}
		}
		return nil
	})
	if errors.Is(err, memory.ErrNotFound) {
		return memory.CorrectResult{}, fmt.Errorf("correct: no observation #%d, nothing changed: %w", p.ID, memory.ErrNotFound)
	}
	if err != nil {
		return memory.CorrectResult{}, fmt.Errorf("correct #%d: %w", p.ID, err)
	}
	if pushed {
		m.queued(1)
	}
	if res.Changed {
		// The old words leave the keyword index and the old vector is
		// replaced: Add replaces the document of the same id.
		m.indexObservations(ctx, []memory.Observation{doc})
		m.publish(observationChange(&doc))
	}
	return res, nil
}

// Pin keeps observations in every SessionStart context of their
// projects, first, whatever their age (buildContext). Unknown ids are
// ErrNotFound, naming them, and nothing changes.
func (m *Memory) Pin(ctx context.Context, p memory.IDsParams) (memory.PinResult, error) {
	return m.setPinned(ctx, p, true)
}

// Unpin undoes Pin: the observations compete for the context by their
// worth and age again.
func (m *Memory) Unpin(ctx context.Context, p memory.IDsParams) (memory.PinResult, error) {
	return m.setPinned(ctx, p, false)
}

func (m *Memory) setPinned(ctx context.Context, p memory.IDsParams, pinned bool) (memory.PinResult, error) {
	verb := "pin"
	if !pinned {
		verb = "unpin"
	}
	return m.setFlag(ctx, p, verb, pinned, func(o *memory.Observation) bool { return o.Pinned },
		func(txn *badger.Txn, o *memory.Observation) error { return m.store.pinObservation(txn, o, pinned) })
}

// MarkWrong records a person's word that observations are wrong: they are
// kept (and shown as wrong), and never given as facts again.
func (m *Memory) MarkWrong(ctx context.Context, p memory.IDsParams) (memory.PinResult, error) {
	return m.setWrong(ctx, p, true)
}

// UnmarkWrong takes that word back.
func (m *Memory) UnmarkWrong(ctx context.Context, p memory.IDsParams) (memory.PinResult, error) {
	return m.setWrong(ctx, p, false)
}

func (m *Memory) setWrong(ctx context.Context, p memory.IDsParams, wrong bool) (memory.PinResult, error) {
	verb := "mark wrong"
	if !wrong {
		verb = "unmark wrong"
	}
	return m.setFlag(ctx, p, verb, wrong, func(o *memory.Observation) bool { return o.Wrong },
		func(txn *badger.Txn, o *memory.Observation) error {
			o.Wrong = wrong
			// What a wrong record superseded is true again, and superseded
			// again when the word is taken back.
			release := m.store.release
			if !wrong {
				release = m.store.relink
			}
			if err := release(txn, o); err != nil {
				return err
			}
			if wrong {
				if err := dropKnowledgeOf(txn, o); err != nil {
					return err
				}
			}
			return setJSON(txn, idKey(pObs, o.ID), o)
		})
}

// setFlag sets one flag of observations (get reads it, set writes it) in
// one transaction: all of them, or none when an id does not exist.
func (m *Memory) setFlag(ctx context.Context, p memory.IDsParams, verb string, to bool, get func(*memory.Observation) bool, set func(*badger.Txn, *memory.Observation) error) (memory.PinResult, error) {
	if err := p.Validate(); err != nil {
		return memory.PinResult{}, err
	}
	var (
		res     memory.PinResult
		missing []string
		changed []memory.Change
	)
	err := m.store.updateDurable(ctx, func(txn *badger.Txn) error {
		res, missing, changed = memory.PinResult{Changed: []uint64{}, Unchanged: []uint64{}}, nil, nil
		var obs []*memory.Observation
		for _, id := range p.IDs {
			o, err := m.store.observation(txn, id)
			if errors.Is(err, memory.ErrNotFound) {
				missing = append(missing, "#"+strconv.FormatUint(id, 10))
				continue
			}
			if err != nil {
				return err
			}
			obs = append(obs, o)
		}
		if len(missing) > 0 {
			return memory.ErrNotFound
		}
		for _, o := range obs {
			if get(o) == to || slices.Contains(res.Changed, o.ID) {
				if !slices.Contains(res.Changed, o.ID) && !slices.Contains(res.Unchanged, o.ID) {
					res.Unchanged = append(res.Unchanged, o.ID)
				}
				continue
			}
			if err := set(txn, o); err != nil {
				return err
			}
			res.Changed = append(res.Changed, o.ID)
			changed = append(changed, observationChange(o))
		}
		return nil
	})
	if errors.Is(err, memory.ErrNotFound) && len(missing) > 0 {
		return memory.PinResult{}, fmt.Errorf("%s: no observation %s, nothing changed: %w", verb, strings.Join(missing, ", "), memory.ErrNotFound)
	}
	if err != nil {
		return memory.PinResult{}, fmt.Errorf("%s: %w", verb, err)
	}
	m.publish(changed...)
	return res, nil
}
