package store

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/vector"
)

// Export and import move memory as JSON lines, one record a line:
//
//	{"kind":"session","session":{…}}
//	{"kind":"prompt","prompt":{…}}
//	{"kind":"observation","observation":{…},"embedder":"…","vector":[…]}
//	{"kind":"summary","summary":{…}}
//
// Sessions come before what refers to them. The vector is included when
// asked for, with the id of the embedder that made it.

// Export writes every session, prompt, observation and summary to w.
func (m *Memory) Export(ctx context.Context, w io.Writer, vectors bool) (int, error) {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	n := 0
	embedder, dim := m.index.EmbedderID(), m.index.Embedder().Dim()
	err := m.store.view(func(txn *badger.Txn) error {
		each := func(prefix []byte, fn func(raw []byte, key []byte) (memory.Record, error)) error {
			return scan(txn, prefix, false, func(item *badger.Item) error {
				if err := ctx.Err(); err != nil {
					return err
				}
				return item.Value(func(b []byte) error {
					rec, err := fn(b, item.Key())
					if err != nil {
						return err
					}
					n++
					return enc.Encode(rec)
				})
			})
		}
		if err := each(pSession, func(b, _ []byte) (memory.Record, error) {
			var s memory.Session
			return memory.Record{Kind: "session", Session: &s}, unmarshalValue(b, &s)
		}); err != nil {
			return err
		}
		if err := each(pPrompt, func(b, _ []byte) (memory.Record, error) {
			var p memory.Prompt
			return memory.Record{Kind: "prompt", Prompt: &p}, unmarshalValue(b, &p)
		}); err != nil {
			return err
		}
		if err := each(pObs, func(b, _ []byte) (memory.Record, error) {
			var o memory.Observation
			if err := unmarshalValue(b, &o); err != nil {
				return memory.Record{}, err
			}
			rec := memory.Record{Kind: "observation", Observation: &o}
			if vectors {
				if item, err := txn.Get(idKey(pVector, o.ID)); err == nil {
					b, _ := item.ValueCopy(nil)
					if v, err := decodeVector(b, dim); err == nil {
						rec.Vector, rec.Embedder = v, embedder
					}
				}
			}
			return rec, nil
		}); err != nil {
			return err
		}
		return each(pSummary, func(b, _ []byte) (memory.Record, error) {
			var s memory.Summary
			return memory.Record{Kind: "summary", Summary: &s}, unmarshalValue(b, &s)
		})
	})
	if err != nil {
		return n, fmt.Errorf("export: %w", err)
	}
	return n, bw.Flush()
}

// Import reads an export. Sessions are matched by contentSessionId (an
// existing one is kept), records get new ids, and what is already stored is
// skipped and counted as a duplicate: an observation whose content is
// stored for its session, a prompt of a number its session has, a summary
// of the same session, prompt, time and request. Importing the same file
// twice changes nothing. Bad lines stop the import with an error
// naming the line; what was stored before it stays.
func (m *Memory) Import(ctx context.Context, r io.Reader, progress func(done int)) (memory.ImportResult, error) {
	var res memory.ImportResult
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	sessions := map[uint64]*memory.Session{} // old id → session in this store
	obsIDs := map[uint64]uint64{}            // old id → observation in this store
	// A transaction may hold 15% of a memtable: batches stay well below.
	const batchRecords, batchBytes = 512, 256 << 10
	var (
		pending []memory.Record
		size    int
		line    int
	)
	flush := func() error {
		if len(pending) == 0 {
			return nil
		}
		var (
			docs   []vector.Doc
			pushes int
		)
		m.snapMu.RLock()
		defer m.snapMu.RUnlock()
		err := m.store.update(ctx, func(txn *badger.Txn) error {
			docs, pushes = docs[:0], 0
			for _, rec := range pending {
				if err := m.importRecord(txn, rec, sessions, obsIDs, &res, &docs, &pushes); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		m.queued(pushes)
		pending, size = pending[:0], 0
		if err := m.indexDocs(ctx, docs); err != nil {
			return err
		}
		if progress != nil {
			progress(line)
		}
		return nil
	}
	for sc.Scan() {
		line++
		var rec memory.Record
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return res, fmt.Errorf("import line %d: %w", line, err)
		}
		if err := rec.Validate(); err != nil {
			return res, fmt.Errorf("import line %d: %w", line, err)
		}
		pending = append(pending, rec)
		size += len(sc.Bytes())
		if len(pending) >= batchRecords || size >= batchBytes {
			if err := flush(); err != nil {
				return res, fmt.Errorf("import up to line %d: %w", line, err)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return res, fmt.Errorf("import line %d: %w", line+1, err)
	}
	if err := flush(); err != nil {
		return res, fmt.Errorf("import: %w", err)
	}
	return res, nil
}

func (m *Memory) importRecord(txn *badger.Txn, rec memory.Record, sessions map[uint64]*memory.Session, obsIDs map[uint64]uint64, res *memory.ImportResult, docs *[]vector.Doc, pushes *int) error {
	session := func(old uint64) (*memory.Session, error) {
		s, ok := sessions[old]
		if !ok && old != 0 {
			return nil, fmt.Errorf("a %s refers to session %d, which comes later or not at all", rec.Kind, old)
		}
		return s, nil
	}
	switch rec.Kind {
	case "session":
		in := *rec.Session
		existing, err := m.store.sessionByContentID(txn, in.ContentSessionID)
		switch {
		case err == nil:
			sessions[in.ID] = existing
			res.Duplicates++
			return nil
		case !errors.Is(err, memory.ErrNotFound):
			return err
		}
		id, err := m.store.next("session")
		if err != nil {
			return err
		}
		old := in.ID
		in.ID = id
		in.Project, in.Cwd = m.clean(in.Project, 4096), m.clean(in.Cwd, 4096)
		if err := txn.Set(key(pContentIdx, []byte(in.ContentSessionID)), be64(id)); err != nil {
			return err
		}
		for _, ms := range in.MemorySessions {
			if owner, err := getID(txn, key(pMemoryIdx, []byte(ms))); err == nil && owner != id {
				return fmt.Errorf("memory session %s of %s belongs to another session here", ms, in.ContentSessionID)
			}
			if err := txn.Set(key(pMemoryIdx, []byte(ms)), be64(id)); err != nil {
				return err
			}
		}
		sessions[old] = &in
		res.Sessions++
		return m.store.putSession(txn, &in)
	case "prompt":
		s, err := session(rec.Prompt.SessionID)
		if err != nil {
			return err
		}
		p := *rec.Prompt
		p.SessionID = s.ID
		if _, err := m.store.prompt(txn, s.ID, p.Number); err == nil {
			res.Duplicates++ // the session's prompt of that number is kept
			return nil
		} else if !errors.Is(err, memory.ErrNotFound) {
			return err
		}
		p.Text = m.clean(p.Text, memory.MaxPromptBytes)
		res.Prompts++
		return m.store.putPrompt(txn, &p)
	case "observation":
		o := *rec.Observation
		if o.SessionID != 0 {
			s, err := session(o.SessionID)
			if err != nil {
				return err
			}
			o.SessionID, o.ContentSessionID = s.ID, s.ContentSessionID
		}
		if o.Time.IsZero() {
			o.Time = time.Now()
		}
		m.scrubObservation(&o)
		oldID := o.ID
		o.ID, o.Hash = 0, ""
		o.Hash = o.ContentHash()
		// What is stored already is a duplicate (an export imported
		// again); the same fact seen in another session is folded.
		if dup, err := m.store.hashed(txn, append([]string{o.Hash}, o.PastHashes()...)); err != nil || dup != 0 {
			obsIDs[oldID] = dup
			res.Duplicates += min(int(dup), 1)
			return err
		}
		fk := factKeyOf(&o)
		if folded, err := m.store.fold(txn, &o, fk); err != nil || folded != nil {
			if folded != nil {
				obsIDs[oldID] = folded.ID
				res.Folded++
			}
			return err
		}
		if err := m.importLinks(txn, &o, obsIDs); err != nil {
			return err
		}
		stored, err := m.store.putFact(txn, &o, fk)
		if err != nil {
			return err
		}
		if !stored {
			res.Duplicates++
			return nil
		}
		obsIDs[oldID] = o.ID
		res.Observations++
		// A record of a shared project made by this person is pushed; one
		// that came from a team server keeps its origin and is not pushed
		// again.
		if o.Origin != nil {
			if err := m.keepOrigin(txn, &o); err != nil {
				return err
			}
		} else if queued, err := m.queuePush(txn, memory.OpPut, &o); err != nil {
			return err
		} else if queued {
			*pushes++
		}
		d := DocOf(&o)
		if rec.Embedder == m.index.EmbedderID() && len(rec.Vector) == m.index.Embedder().Dim() {
			d.Vector = rec.Vector
		}
		*docs = append(*docs, d)
		return nil
	case "summary":
		sum := *rec.Summary
		if sum.SessionID != 0 {
			s, err := session(sum.SessionID)
			if err != nil {
				return err
			}
			sum.SessionID, sum.ContentSessionID = s.ID, s.ContentSessionID
		}
		sum.ID = 0
		m.scrubSummary(&sum)
		if dup, err := m.store.summaryStored(txn, &sum); err != nil {
			return err
		} else if dup {
			res.Duplicates++
			return nil
		}
		res.Summaries++
		return m.store.putSummary(txn, &sum)
	}
	return nil
}

// importLinks gives an imported observation's links (Reverted,
// SupersededBy, Supersedes) the ids their records got here. A link to a
// record that comes later in the export is made when that record comes
// (it links back); one to a record not imported is dropped.
func (m *Memory) importLinks(txn *badger.Txn, o *memory.Observation, obsIDs map[uint64]uint64) error {
	o.SupersededBy = 0
	var back []uint64
	for _, old := range o.Supersedes {
		if id := obsIDs[old]; id != 0 && old != 0 {
			back = append(back, id)
		}
	}
	o.Supersedes = back
	var reverted uint64
	if o.Reverted != 0 {
		reverted = obsIDs[o.Reverted]
	}
	o.Reverted = 0
	if len(back) == 0 && reverted == 0 {
		return nil
	}
	if o.ID == 0 {
		id, err := m.store.next("obs")
		if err != nil {
			return err
		}
		o.ID = id
	}
	link := func(id uint64, set func(*memory.Observation) bool) error {
		p, err := m.store.observation(txn, id)
		if errors.Is(err, memory.ErrNotFound) {
			return nil
		}
		if err != nil || !set(p) {
			return err
		}
		return setJSON(txn, idKey(pObs, p.ID), p)
	}
	for _, id := range back {
		if err := link(id, func(p *memory.Observation) bool { p.SupersededBy = o.ID; return true }); err != nil {
			return err
		}
	}
	if reverted != 0 {
		o.Reverted = reverted
		return link(reverted, func(p *memory.Observation) bool { p.Reverted = o.ID; return true })
	}
	return nil
}
