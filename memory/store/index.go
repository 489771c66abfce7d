package store

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/vector"
)

// The search index is derived data: it lives in memory and is loaded at
// start from its snapshot (snapshot.go) or from Badger. Each observation's
// vector is stored under v/<id> with the embedder's id under meta/embedder,
// so a restart reuses them and a change of embedder re-embeds everything,
// in the background, with progress in the log and in Status.

// DocOf is what the search index knows of an observation. The order of its
// text matters to a sentence encoder, which reads only the first 128 pieces
// of what it embeds: the observation's own words, then the prompt it
// served, then facts, concepts and files. Putting the prompt before the
// facts (it came last) gave hybrid search with USE-Lite 3.5 points of
// recall@5 on cmd/mnemo-eval's dev split (0.729 → 0.764, MRR 0.659 →
// 0.676), and nothing on the held-out test split (0.793 both, MRR 0.695 →
// 0.690); keyword search and the hashing embedder do not depend on order.
func DocOf(o *memory.Observation) vector.Doc {
	var b strings.Builder
	for _, s := range []string{o.Subtitle, o.Narrative, o.Why, o.Request} {
		if s != "" {
			b.WriteString(s)
			b.WriteByte('\n')
		}
	}
	for _, list := range [][]string{o.Facts, o.Concepts, o.FilesModified, o.FilesRead} {
		for _, s := range list {
			b.WriteString(s)
			b.WriteByte('\n')
		}
	}
	return vector.Doc{ID: o.ID, Project: o.Project, Type: o.Type, Host: o.Host, Files: o.Files(), Time: o.Time, Title: o.Title, Text: b.String(), Evidence: o.Evidence}
}

// ownWords is what a hit's snippet is cut from: the observation's own
// words (subtitle, narrative, why, facts), not the prompt of its turn,
// which the turn's other records share and which would fill their
// snippets alike; the prompt only when the record has nothing else.
func ownWords(o *memory.Observation) string {
	var b strings.Builder
	for _, s := range append([]string{o.Subtitle, o.Narrative, o.Why}, o.Facts...) {
		if s != "" {
			b.WriteString(s)
			b.WriteByte('\n')
		}
	}
	if b.Len() == 0 {
		return o.Request
	}
	return b.String()
}

// indexState is the progress of (re-)embedding at start.
type indexState struct {
	pending atomic.Int64 // observations still to embed
	total   atomic.Int64
}

// loadIndex fills the index from the store: observations with a vector of
// the current embedder go in at once; the others are embedded by a
// background goroutine that stores their vectors as it goes.
func (m *Memory) loadIndex(ctx context.Context) error {
	start := time.Now()
	embedderID := m.index.EmbedderID()
	var (
		ready, missing []vector.Doc
		reuse          bool
	)
	snapshot := false
	err := m.store.view(func(txn *badger.Txn) error {
		if item, err := txn.Get(keyEmbed); err == nil {
			v, _ := item.ValueCopy(nil)
			reuse = string(v) == embedderID
		} else if !errors.Is(err, badger.ErrKeyNotFound) {
			return err
		}
		dim := m.index.Embedder().Dim()
		var hosts map[uint64]string // by session, for records older than Observation.Host
		add := func(o *memory.Observation, vector []byte) {
			if o.Host == "" {
				if hosts == nil {
					hosts = sessionPlatforms(txn)
				}
				o.Host = hosts[o.SessionID]
			}
			d := DocOf(o)
			if reuse && vector != nil {
				// A vector that does not decode is embedded again.
				if v, err := decodeVector(vector, dim); err == nil {
					d.Vector = v
				}
			}
			if d.Vector != nil {
				ready = append(ready, d)
			} else {
				missing = append(missing, d)
			}
		}
		if reuse {
			var since map[uint64]bool
			if snapshot, since = m.loadSnapshot(txn); snapshot {
				// Only what changed since the snapshot, from Badger.
				for id := range since {
					var o memory.Observation
					if err := getJSON(txn, idKey(pObs, id), &o); errors.Is(err, memory.ErrNotFound) {
						continue
					} else if err != nil {
						return err
					}
					item, err := txn.Get(idKey(pVector, id))
					var v []byte
					if err == nil {
						v, err = item.ValueCopy(nil)
					}
					if err != nil && !errors.Is(err, badger.ErrKeyNotFound) {
						return err
					}
					add(&o, v)
				}
				return nil
			}
		}
		// Everything. The vectors are walked beside the observations: both
		// are keyed by the observation's id.
		vit := txn.NewIterator(badger.IteratorOptions{Prefix: pVector})
		defer vit.Close()
		vit.Seek(pVector)
		return scan(txn, pObs, false, func(item *badger.Item) error {
			var o memory.Observation
			if err := item.Value(func(b []byte) error { return unmarshalValue(b, &o) }); err != nil {
				return err
			}
			var v []byte
			if reuse {
				vk := idKey(pVector, o.ID)
				for vit.ValidForPrefix(pVector) && bytes.Compare(vit.Item().Key(), vk) < 0 {
					vit.Next()
				}
				if vit.ValidForPrefix(pVector) && bytes.Equal(vit.Item().Key(), vk) {
					var err error
					if v, err = vit.Item().ValueCopy(nil); err != nil {
						return err
					}
				}
			}
			add(&o, v)
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("load index: %w", err)
	}
	if err := m.index.Add(ctx, ready...); err != nil {
		return fmt.Errorf("load index: %w", err)
	}
	if err := m.store.update(ctx, func(txn *badger.Txn) error { return txn.Set(keyEmbed, []byte(embedderID)) }); err != nil {
		return err
	}
	m.log.Info("search index loaded", "observations", m.index.Len(), "fromStore", len(ready), "toEmbed", len(missing), "snapshot", snapshot, "embedder", embedderID, "took", time.Since(start).Round(time.Millisecond))
	if len(missing) > 0 {
		m.indexing.total.Store(int64(len(missing)))
		m.indexing.pending.Store(int64(len(missing)))
		m.bg.Go(func() { m.embedMissing(m.bgCtx, missing) })
	}
	return nil
}

// embedMissing embeds docs in batches, indexing them and storing their
// vectors, until done or ctx ends (the next start goes on from there).
func (m *Memory) embedMissing(ctx context.Context, docs []vector.Doc) {
	const batch = 64
	for i := 0; i < len(docs); i += batch {
		part := docs[i:min(i+batch, len(docs))]
		m.snapMu.RLock()
		err := m.indexDocs(ctx, part)
		m.snapMu.RUnlock()
		if err != nil {
			if ctx.Err() == nil {
				m.log.Error("embed observations", "err", err)
			}
			return
		}
		left := m.indexing.pending.Add(-int64(len(part)))
		if done := len(docs) - int(left); done%(batch*16) < batch || left == 0 {
			m.log.Info("embedding observations", "done", done, "of", len(docs))
		}
	}
}

// indexDocs adds docs to the index and stores the vectors it computed.
// A failure leaves the index short of what Badger has: no snapshot is
// written from it (a snapshot must hold everything up to its asOf).
// Callers hold snapMu for reading, with the commit of the docs'
// observations if they just made it.
func (m *Memory) indexDocs(ctx context.Context, docs []vector.Doc) (err error) {
	defer func() {
		if err != nil {
			m.indexGap.Store(true)
		}
	}()
	if err := m.embedDocs(ctx, docs); err != nil {
		return err
	}
	if err := m.index.Add(ctx, docs...); err != nil {
		return err
	}
	wb := m.store.db.NewWriteBatch()
	defer wb.Cancel()
	for _, d := range docs {
		if d.Vector == nil {
			continue
		}
		if err := wb.Set(idKey(pVector, d.ID), encodeVector(d.Vector)); err != nil {
			return err
		}
	}
	return wb.Flush()
}

// embedDocs gives each doc the vector the store keeps for it: the
// embedder's (computed here when the doc has none), through int8 and back
// (vectorcodec.go), so that the index holds now what it loads after a
// restart. A doc with nothing to embed keeps a nil vector. It embeds on
// all CPUs.
func (m *Memory) embedDocs(ctx context.Context, docs []vector.Doc) error {
	emb := m.index.Embedder()
	dim := emb.Dim()
	workers := min(runtime.GOMAXPROCS(0), max(1, len(docs)/16))
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(docs) && ctx.Err() == nil; i += workers {
				d := &docs[i]
				if len(d.Vector) != dim {
					v, err := emb.Embed(ctx, d.EmbedText())
					if errors.Is(err, vector.ErrNoText) {
						d.Vector = nil
						continue
					}
					if err != nil {
						errs[w] = fmt.Errorf("embed doc %d: %w", d.ID, err)
						return
					}
					d.Vector = v
				}
				d.Vector = roundVector(d.Vector)
			}
		})
	}
	wg.Wait()
	return cmp.Or(errors.Join(errs...), ctx.Err())
}

// indexObservations adds freshly stored observations to the index. A
// failure is logged: the observation is stored, and the next start indexes
// it. Callers hold snapMu for reading since the commit.
func (m *Memory) indexObservations(ctx context.Context, obs []memory.Observation) {
	if len(obs) == 0 {
		return
	}
	docs := make([]vector.Doc, len(obs))
	for i := range obs {
		docs[i] = DocOf(&obs[i])
	}
	if err := m.indexDocs(ctx, docs); err != nil {
		m.log.Error("index observations", "err", err)
	}
}

// Search ranks observations by keywords and meaning together (or lists
// them newest first when there is no query), after the filters.
func (m *Memory) Search(ctx context.Context, p memory.SearchParams) (memory.SearchResult, error) {
	if err := p.Validate(); err != nil {
		return memory.SearchResult{}, err
	}
	select {
	case <-m.loaded:
	case <-ctx.Done():
		return memory.SearchResult{}, fmt.Errorf("search: the index is still loading: %w", ctx.Err())
	}
	limit := p.Limit
	if limit == 0 {
		limit = memory.DefaultLimit
	}
	mode, err := vector.ParseMode(p.Mode)
	if err != nil {
		return memory.SearchResult{}, &memory.FieldError{Field: "mode", Reason: err.Error()}
	}
	// One hit more than the limit says whether there are more.
	q := vector.Query{Text: p.Query, Project: p.Project, Types: p.Types, Host: p.Host, Files: p.Files, Since: p.Since, Limit: min(limit+1, vector.MaxLimit), Mode: mode, Keep: m.authorFilter(p.Author)}
	if !p.Until.IsZero() {
		q.Until = p.Until.Add(time.Nanosecond) // our until is inclusive
	}
	hits, err := m.index.Search(ctx, q)
	if err != nil {
		return memory.SearchResult{}, fmt.Errorf("search: %w", err)
	}
	res := memory.SearchResult{More: len(hits) > limit}
	hits = hits[:min(len(hits), limit)]
	res.Hits = make([]memory.Hit, 0, len(hits))
	res.Closest = p.Query != "" && mode != vector.Vector && len(hits) > 0 &&
		!slices.ContainsFunc(hits, func(h vector.Hit) bool { return h.KeywordRank > 0 })
	var snippet func(title, text string) string
	if p.Query != "" {
		snippet = m.index.Snippets(p.Query)
	}
	err = m.store.view(func(txn *badger.Txn) error {
		for _, h := range hits {
			o, err := m.store.observation(txn, h.ID)
			if errors.Is(err, memory.ErrNotFound) {
				continue // forgotten since the search
			}
			if err != nil {
				return err
			}
			hit := hitOf(o)
			hit.Score, hit.State = h.Score, m.anchors.state(o)
			if snippet != nil {
				hit.Snippet = snippet(o.Title, ownWords(o))
			}
			res.Hits = append(res.Hits, hit)
		}
		return nil
	})
	res.Total = len(res.Hits)
	return res, err
}

// Reindex embeds every observation again with the current embedder, in
// the background (Status shows the progress), and rebuilds the keyword
// index. It returns how many observations it will embed.
func (m *Memory) Reindex(ctx context.Context) (int, error) {
	if m.indexing.pending.Load() > 0 {
		return 0, fmt.Errorf("reindex: %d observations are still being embedded; try again when Status shows none left", m.indexing.pending.Load())
	}
	var docs []vector.Doc
	err := m.store.view(func(txn *badger.Txn) error {
		return scan(txn, pObs, false, func(item *badger.Item) error {
			var o memory.Observation
			if err := item.Value(func(b []byte) error { return unmarshalValue(b, &o) }); err != nil {
				return err
			}
			docs = append(docs, DocOf(&o))
			return nil
		})
	})
	if err != nil {
		return 0, fmt.Errorf("reindex: %w", err)
	}
	m.indexing.total.Store(int64(len(docs)))
	m.indexing.pending.Store(int64(len(docs)))
	m.bg.Go(func() { m.embedMissing(m.bgCtx, docs) })
	return len(docs), nil
}

// sessionPlatforms maps every session to its platform, for observations
// stored before they carried their host. A session that does not decode
// is left out.
func sessionPlatforms(txn *badger.Txn) map[uint64]string {
	out := map[uint64]string{}
	_ = scan(txn, pSession, false, func(item *badger.Item) error {
		var s memory.Session
		if item.Value(func(b []byte) error { return unmarshalValue(b, &s) }) == nil {
			out[s.ID] = s.Platform
		}
		return nil
	})
	return out
}
