package memory

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// Search returns a compact index of observations. This version filters
// (project, types, files, time) and ranks newest first; a query keeps the
// observations whose text contains every query word.
func (m *Memory) Search(ctx context.Context, p SearchParams) (SearchResult, error) {
	if err := p.Validate(); err != nil {
		return SearchResult{}, err
	}
	limit := p.Limit
	if limit == 0 {
		limit = DefaultLimit
	}
	words := strings.Fields(strings.ToLower(p.Query))
	res := SearchResult{Hits: []Hit{}}
	err := m.eachObservation(ctx, p.Project, func(o *Observation) error {
		if !matchFilters(o, p) {
			return nil
		}
		text := ""
		if len(words) > 0 {
			text = strings.ToLower(searchText(o))
			for _, w := range words {
				if !strings.Contains(text, w) {
					return nil
				}
			}
		}
		res.Total++
		if len(res.Hits) < limit {
			h := hitOf(o)
			h.Score = 1 / float64(len(res.Hits)+1)
			if len(words) > 0 {
				h.Snippet = snippet(searchText(o), words, 160)
			}
			res.Hits = append(res.Hits, h)
		}
		return nil
	})
	return res, err
}

func hitOf(o *Observation) Hit {
	return Hit{ID: o.ID, Title: o.Title, Type: o.Type, Project: o.Project, Time: o.Time, Files: o.Files(), Snippet: clip(firstNonEmpty(o.Subtitle, o.Narrative, strings.Join(o.Facts, "; ")), 160)}
}

// searchText is everything about an observation a search may match.
func searchText(o *Observation) string {
	var b strings.Builder
	for _, s := range []string{o.Title, o.Subtitle, o.Narrative, o.Request} {
		b.WriteString(s)
		b.WriteByte('\n')
	}
	for _, list := range [][]string{o.Facts, o.Concepts, o.FilesRead, o.FilesModified} {
		for _, s := range list {
			b.WriteString(s)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

func snippet(text string, words []string, n int) string {
	lower := strings.ToLower(text)
	at := -1
	for _, w := range words {
		if i := strings.Index(lower, w); i >= 0 && (at < 0 || i < at) {
			at = i
		}
	}
	if at < 0 {
		return clip(strings.ReplaceAll(text, "\n", " "), n)
	}
	start := max(0, at-n/3)
	for start > 0 && (text[start]&0xC0) == 0x80 {
		start--
	}
	s := strings.ReplaceAll(text[start:], "\n", " ")
	if start > 0 {
		s = "…" + s
	}
	return clip(s, n)
}

func matchFilters(o *Observation, p SearchParams) bool {
	if p.Project != "" && o.Project != p.Project {
		return false
	}
	if len(p.Types) > 0 && !slices.Contains(p.Types, o.Type) {
		return false
	}
	if !p.Since.IsZero() && o.Time.Before(p.Since) {
		return false
	}
	if !p.Until.IsZero() && o.Time.After(p.Until) {
		return false
	}
	if len(p.Files) > 0 {
		found := false
		for _, f := range o.Files() {
			for _, want := range p.Files {
				if want != "" && strings.Contains(f, want) {
					found = true
				}
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// eachObservation calls fn for the observations of a project (all
// projects when project is ""), newest first, until fn returns errStop.
func (m *Memory) eachObservation(ctx context.Context, project string, fn func(*Observation) error) error {
	return m.store.view(func(txn *badger.Txn) error {
		if project == "" {
			return scan(txn, pObs, true, func(item *badger.Item) error {
				if err := ctx.Err(); err != nil {
					return err
				}
				var o Observation
				if err := item.Value(func(b []byte) error { return json.Unmarshal(b, &o) }); err != nil {
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
func (m *Memory) Get(ctx context.Context, p IDsParams) (ObservationsResult, error) {
	if err := p.Validate(); err != nil {
		return ObservationsResult{}, err
	}
	res := ObservationsResult{Observations: []Observation{}}
	err := m.store.view(func(txn *badger.Txn) error {
		for _, id := range p.IDs {
			o, err := m.store.observation(txn, id)
			if errors.Is(err, ErrNotFound) {
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
	return res, err
}

// Timeline returns the observations around an anchor (an id or a time),
// oldest first, within the anchor's project unless another is given.
func (m *Memory) Timeline(ctx context.Context, p TimelineParams) (TimelineResult, error) {
	id, at, err := p.anchor()
	if err != nil {
		return TimelineResult{}, err
	}
	before, after := p.Before, p.After
	if before <= 0 && after <= 0 {
		before, after = 5, 5
	}
	before, after = min(max(before, 0), MaxLimit), min(max(after, 0), MaxLimit)
	project := p.Project
	res := TimelineResult{Observations: []Observation{}}
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
		var older, newer []Observation
		collect := func(reverse bool, limit int, keep func(*Observation) bool, dst *[]Observation) error {
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
		isAnchor := func(o *Observation) bool { return o.ID == res.AnchorID }
		if err := collect(true, before, func(o *Observation) bool {
			return !isAnchor(o) && (o.Time.Before(at) || o.Time.Equal(at) && o.ID < res.AnchorID)
		}, &older); err != nil {
			return err
		}
		if err := collect(false, after, func(o *Observation) bool {
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
	if errors.Is(err, ErrNotFound) {
		return TimelineResult{}, fmt.Errorf("timeline anchor %d: %w", id, ErrNotFound)
	}
	return res, err
}

// Save stores a memory given on purpose, as an observation of its own.
func (m *Memory) Save(ctx context.Context, p SaveParams) (SaveResult, error) {
	if err := p.Validate(); err != nil {
		return SaveResult{}, err
	}
	text := m.clean(p.Text, MaxMessageBytes)
	if strings.TrimSpace(text) == "" {
		return SaveResult{}, &FieldError{"text", "is empty once private parts are removed"}
	}
	o := Observation{
		Project: m.project(p.Project, p.Cwd), Type: firstNonEmpty(p.Type, TypeNote),
		Title: m.clean(firstNonEmpty(p.Title, clip(firstLine(text), 80)), 200), Narrative: text,
		Source: SourceSaved, Time: m.now(),
	}
	for _, f := range p.Files {
		o.FilesModified = append(o.FilesModified, relPath(p.Cwd, f))
	}
	o.Concepts = dedupe(conceptsOf(o.FilesModified...), 8)
	var stored bool
	err := m.store.updateDurable(ctx, func(txn *badger.Txn) error {
		o.ID, o.Hash = 0, ""
		var err error
		stored, err = m.store.putObservation(txn, &o)
		if err == nil && !stored {
			o.ID, err = getID(txn, key(pObsHash, []byte(o.Hash)))
		}
		return err
	})
	if err != nil {
		return SaveResult{}, fmt.Errorf("save: %w", err)
	}
	return SaveResult{ID: o.ID}, nil
}

// Forget deletes observations and everything derived from them.
func (m *Memory) Forget(ctx context.Context, p IDsParams) (ForgetResult, error) {
	if err := p.Validate(); err != nil {
		return ForgetResult{}, err
	}
	var res ForgetResult
	err := m.store.updateDurable(ctx, func(txn *badger.Txn) error {
		res = ForgetResult{Deleted: []uint64{}, Missing: []uint64{}}
		for _, id := range p.IDs {
			o, err := m.store.observation(txn, id)
			if errors.Is(err, ErrNotFound) {
				res.Missing = append(res.Missing, id)
				continue
			}
			if err != nil {
				return err
			}
			if err := m.store.deleteObservation(txn, o); err != nil {
				return err
			}
			res.Deleted = append(res.Deleted, id)
		}
		return nil
	})
	if err != nil {
		return ForgetResult{}, fmt.Errorf("forget: %w", err)
	}
	if len(res.Deleted) > 0 {
		// Forgotten means gone from the files too, not only from the
		// indexes: compact now.
		if err := m.store.Compact(); err != nil {
			m.log.Error("compact after forget", "err", err)
		}
	}
	return res, nil
}

// lastSummary returns the project's newest summary, or nil.
func (m *Memory) lastSummary(txn *badger.Txn, project string) (*Summary, error) {
	var out *Summary
	err := scan(txn, key(pSumProject, []byte(project), []byte{0}), true, func(item *badger.Item) error {
		k := item.Key()
		var s Summary
		if err := getJSON(txn, idKey(pSummary, binary.BigEndian.Uint64(k[len(k)-8:])), &s); err != nil {
			return err
		}
		out = &s
		return errStop
	})
	return out, err
}

// Summaries returns a session's summaries, oldest first.
func (m *Memory) Summaries(ctx context.Context, sessionID uint64) ([]Summary, error) {
	var out []Summary
	err := m.store.view(func(txn *badger.Txn) error {
		return scan(txn, pSummary, false, func(item *badger.Item) error {
			var s Summary
			if err := item.Value(func(b []byte) error { return json.Unmarshal(b, &s) }); err != nil {
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
