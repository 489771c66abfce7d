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
	"github.com/mnemo-dev/mnemo/memory/local"
)

func hitOf(o *memory.Observation) memory.Hit {
	var author string
	if o.Origin != nil {
		author = o.Origin.Author
	}
	return memory.Hit{ID: o.ID, Title: o.Title, Type: o.Type, Project: o.Project, Host: o.Host, Author: author, Time: o.Time, Files: o.Files(),
		Snippet:      memory.Clip(memory.FirstNonEmpty(o.Subtitle, o.Narrative, strings.Join(o.Facts, "; ")), 160),
		SupersededBy: o.SupersededBy, Count: o.Count, LastSeen: o.LastSeen}
}

// eachObservation calls fn for the observations of a project (all
// projects when project is ""), newest first, until fn returns errStop.
func (m *Memory) eachObservation(ctx context.Context, project string, fn func(*memory.Observation) error) error {
	return m.store.view(func(txn *badger.Txn) error {
		if project == "" {
			return scan(txn, pObs, true, func(item *badger.Item) error {
				if err := ctx.Err(); err != nil {
					return err
				}
				var o memory.Observation
				if err := item.Value(func(b []byte) error { return unmarshalValue(b, &o) }); err != nil {
					return err
				}
				return fn(&o)
			})
		}
		prefix := key(pObsProject, []byte(project), []byte{0})
		return scan(txn, prefix, true, func(item *badger.Item) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			k := item.Key()
			o, err := m.store.observation(txn, binary.BigEndian.Uint64(k[len(k)-8:]))
			if err != nil {
				return err
			}
			return fn(o)
		})
	})
}

// Get returns full records, in the order asked; ids that do not exist are
// listed in Missing.
func (m *Memory) Get(ctx context.Context, p memory.IDsParams) (memory.ObservationsResult, error) {
	if err := p.Validate(); err != nil {
		return memory.ObservationsResult{}, err
	}
	res := memory.ObservationsResult{Observations: []memory.Observation{}}
	err := m.store.view(func(txn *badger.Txn) error {
		for _, id := range p.IDs {
			o, err := m.store.observation(txn, id)
			if errors.Is(err, memory.ErrNotFound) {
				res.Missing = append(res.Missing, id)
				continue
			}
			if err != nil {
				return err
			}
			res.Observations = append(res.Observations, *o)
		}
		return nil
	})
	m.withStates(res.Observations)
	return res, err
}

// Timeline returns the observations around an anchor (an id or a time),
// oldest first, within the anchor's project unless another is given.
func (m *Memory) Timeline(ctx context.Context, p memory.TimelineParams) (memory.TimelineResult, error) {
	id, at, err := p.ParseAnchor()
	if err != nil {
		return memory.TimelineResult{}, err
	}
	before, after := p.Before, p.After
	if before <= 0 && after <= 0 {
		before, after = 5, 5
	}
	before, after = min(max(before, 0), memory.MaxLimit), min(max(after, 0), memory.MaxLimit)
	project := p.Project
	res := memory.TimelineResult{Observations: []memory.Observation{}}
	err = m.store.view(func(txn *badger.Txn) error {
		if id != 0 {
			o, err := m.store.observation(txn, id)
			if err != nil {
				return err
			}
			at, res.AnchorID = o.Time, o.ID
			if project == "" {
				project = o.Project
			}
		}
		var older, newer []memory.Observation
		collect := func(reverse bool, limit int, keep func(*memory.Observation) bool, dst *[]memory.Observation) error {
			if limit == 0 {
				return nil
			}
			prefix := pObs
			if project != "" {
				prefix = key(pObsProject, []byte(project), []byte{0})
			}
			return scan(txn, prefix, reverse, func(item *badger.Item) error {
				k := item.Key()
				o, err := m.store.observation(txn, binary.BigEndian.Uint64(k[len(k)-8:]))
				if err != nil {
					return err
				}
				if keep(o) {
					*dst = append(*dst, *o)
					if len(*dst) >= limit {
						return errStop
					}
				}
				return nil
			})
		}
		isAnchor := func(o *memory.Observation) bool { return o.ID == res.AnchorID }
		if err := collect(true, before, func(o *memory.Observation) bool {
			return !isAnchor(o) && (o.Time.Before(at) || o.Time.Equal(at) && o.ID < res.AnchorID)
		}, &older); err != nil {
			return err
		}
		if err := collect(false, after, func(o *memory.Observation) bool {
			return !isAnchor(o) && (o.Time.After(at) || o.Time.Equal(at) && o.ID > res.AnchorID)
		}, &newer); err != nil {
			return err
		}
		slices.Reverse(older)
		res.Observations = append(res.Observations, older...)
		if res.AnchorID != 0 {
			o, _ := m.store.observation(txn, res.AnchorID)
			res.Observations = append(res.Observations, *o)
		}
		res.Observations = append(res.Observations, newer...)
		return nil
	})
	if errors.Is(err, memory.ErrNotFound) {
		return memory.TimelineResult{}, fmt.Errorf("timeline: no observation #%d: %w", id, memory.ErrNotFound)
	}
	m.withStates(res.Observations)
	return res, err
}

// Save stores a memory given on purpose, as an observation of its own.
func (m *Memory) Save(ctx context.Context, p memory.SaveParams) (memory.SaveResult, error) {
	if err := p.Validate(); err != nil {
		return memory.SaveResult{}, err
	}
	whole := m.clean(p.Text, len(p.Text))
	text := clipBytes(whole, memory.MaxMessageBytes)
	if strings.TrimSpace(text) == "" {
		return memory.SaveResult{}, &memory.FieldError{Field: "text", Reason: "is empty once private parts are removed"}
	}
	o := memory.Observation{
		Project: m.project(p.Project, p.Cwd), Type: memory.FirstNonEmpty(p.Type, memory.TypeNote),
		Title: m.clean(memory.FirstNonEmpty(p.Title, memory.Clip(memory.FirstLine(text), 80)), 200), Narrative: text,
		Source: memory.SourceSaved, SavedBy: p.By, Time: m.now(),
	}
	for _, f := range p.Files {
		o.FilesModified = append(o.FilesModified, memory.RelPath(p.Cwd, f))
	}
	if a := p.Anchor; a != nil {
		anchor := *a
		anchor.File = memory.RelPath(p.Cwd, a.File)
		o.Anchor = &anchor
		if !slices.Contains(o.FilesModified, anchor.File) {
			o.FilesModified = append(o.FilesModified, anchor.File)
		}
	}
	o.Concepts = memory.Dedupe(local.Concepts(o.FilesModified...), 8)
	var stored, pushed bool
	m.snapMu.RLock()
	defer m.snapMu.RUnlock()
	err := m.store.updateDurable(ctx, func(txn *badger.Txn) error {
		o.ID, o.Hash, pushed = 0, "", false
		var err error
		stored, err = m.store.putObservation(txn, &o)
		if err == nil && !stored {
			o.ID, err = getID(txn, key(pObsHash, []byte(o.Hash)))
		}
		if err == nil && stored {
			pushed, err = m.queuePush(txn, memory.OpPut, &o)
		}
		return err
	})
	if err == nil && pushed {
		m.queued(1)
	}
	if err != nil {
		return memory.SaveResult{}, fmt.Errorf("save: %w", err)
	}
	if stored {
		m.indexObservations(ctx, []memory.Observation{o})
		m.publish(observationChange(&o))
	}
	return memory.SaveResult{ID: o.ID, Truncated: text != whole}, nil
}

// Forget deletes observations and everything derived from them.
func (m *Memory) Forget(ctx context.Context, p memory.IDsParams) (memory.ForgetResult, error) {
	if err := p.Validate(); err != nil {
		return memory.ForgetResult{}, err
	}
	var (
		res    memory.ForgetResult
		pushes int
	)
	m.snapMu.RLock()
	defer m.snapMu.RUnlock()
	err := m.store.updateDurable(ctx, func(txn *badger.Txn) error {
		res, pushes = memory.ForgetResult{Deleted: []uint64{}, Missing: []uint64{}}, 0
		for _, id := range p.IDs {
			o, err := m.store.observation(txn, id)
			if errors.Is(err, memory.ErrNotFound) {
				res.Missing = append(res.Missing, id)
				continue
			}
			if err != nil {
				return err
			}
			if queued, err := m.forgetShared(txn, o); err != nil {
				return err
			} else if queued {
				pushes++
			}
			if err := m.store.deleteObservation(txn, o); err != nil {
				return err
			}
			if err := dropKnowledgeOf(txn, o); err != nil {
				return err
			}
			res.Deleted = append(res.Deleted, id)
		}
		return nil
	})
	if err != nil {
		return memory.ForgetResult{}, fmt.Errorf("forget: %w", err)
	}
	m.queued(pushes)
	m.index.Remove(res.Deleted...)
	if len(res.Deleted) > 0 {
		m.publish(memory.Change{Kind: memory.KindForget, Time: m.now(), IDs: res.Deleted})
		if err := m.dropSnapshot(); err != nil {
			return memory.ForgetResult{}, fmt.Errorf("forget: %w", err)
		}
		// Forgotten means gone from the files too, not only from the
		// indexes: compact now.
		if err := m.store.Compact(); err != nil {
			m.log.Error("compact after forget", "err", err)
		}
	}
	return res, nil
}

// lastSummary returns the project's newest summary, or nil.
func (m *Memory) lastSummary(txn *badger.Txn, project string) (*memory.Summary, error) {
	var out *memory.Summary
	err := scan(txn, key(pSumProject, []byte(project), []byte{0}), true, func(item *badger.Item) error {
		k := item.Key()
		var s memory.Summary
		if err := getJSON(txn, idKey(pSummary, binary.BigEndian.Uint64(k[len(k)-8:])), &s); err != nil {
			return err
		}
		out = &s
		return errStop
	})
	return out, err
}

// Summaries returns a session's summaries, oldest first.
func (m *Memory) Summaries(ctx context.Context, sessionID uint64) ([]memory.Summary, error) {
	var out []memory.Summary
	err := m.store.view(func(txn *badger.Txn) error {
		return scan(txn, pSummary, false, func(item *badger.Item) error {
			var s memory.Summary
			if err := item.Value(func(b []byte) error { return unmarshalValue(b, &s) }); err != nil {
				return err
			}
			if s.SessionID == sessionID {
				out = append(out, s)
			}
			return nil
		})
	})
	return out, err
}

func fmtTime(t time.Time) string { return t.Local().Format("2006-01-02 15:04") }
