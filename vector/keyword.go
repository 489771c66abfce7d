package vector

import (
	"hash/maphash"
	"math"
	"runtime"
	"slices"
	"sync"
)

// BM25 parameters, the usual ones.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
	// titleBoost is how many times a title term counts; titles are short and
	// say what a memory is about.
	titleBoost = 2
	// evidenceWeight is how much a term of a document's evidence counts,
	// towards its frequency and the document's length alike (BM25F): the
	// raw event's excerpt finds what the note does not say, without letting
	// its bulk outweigh what the note does say.
	evidenceWeight = 0.5
)

// posting says that a document (by slot) holds a term with a weighted count.
type posting struct {
	slot uint32
	tf   float32
}

// keywordIndex is an inverted index scored with BM25. Removed documents stay
// in the postings until compact drops them; callers skip dead slots.
type keywordIndex struct {
	terms  map[string]uint32 // term → term number
	post   [][]posting       // by term number
	df     []int32           // live documents holding the term
	docLen []float32         // weighted term count, by slot
	live   int
	sumLen float64
}

func newKeywordIndex() keywordIndex {
	return keywordIndex{terms: make(map[string]uint32)}
}

// docTerms is the analysed form of one document: its distinct terms (as
// numbers local to a termTable) and their weighted counts.
type docTerms struct {
	terms    []uint32
	tfs      []float32
	len      float32
	evidence []uint32 // the distinct terms of the evidence, a subset of terms
}

// termTable numbers the terms met while analysing a batch of documents
// outside the index lock.
type termTable struct {
	seed  maphash.Seed
	ids   map[uint64]uint32 // by hash of the term, which is cheaper to look up
	clash map[string]uint32 // terms whose hash another term took first
	names []string
	last  []int32 // the document that last used a term, to merge repeats
	pos   []int32 // where in that document's list the term sits
	tok   tokenizer
}

func newTermTable() *termTable {
	return &termTable{seed: maphash.MakeSeed(), ids: make(map[uint64]uint32)}
}

// number returns the term's number in the table, adding the term.
func (tt *termTable) number(term []byte) uint32 {
	h := maphash.Bytes(tt.seed, term)
	id, ok := tt.ids[h]
	if ok && tt.names[id] == string(term) {
		return id
	}
	if ok { // two terms with one hash: rare enough for a slow path
		if id, ok := tt.clash[string(term)]; ok {
			return id
		}
	}
	id = uint32(len(tt.names))
	name := string(term)
	if !ok {
		tt.ids[h] = id
	} else {
		if tt.clash == nil {
			tt.clash = make(map[string]uint32)
		}
		tt.clash[name] = id
	}
	tt.names = append(tt.names, name)
	tt.last = append(tt.last, -1)
	tt.pos = append(tt.pos, 0)
	return id
}

// analyse returns the weighted terms of a document: its title, text, file
// paths and evidence. doc numbers the documents of one batch, from 0 up.
func (tt *termTable) analyse(doc int32, d *Doc) docTerms {
	var dt docTerms
	add := func(term []byte, w float32) uint32 {
		id := tt.number(term)
		if tt.last[id] == doc {
			dt.tfs[tt.pos[id]] += w
		} else {
			tt.last[id], tt.pos[id] = doc, int32(len(dt.terms))
			dt.terms = append(dt.terms, id)
			dt.tfs = append(dt.tfs, w)
		}
		dt.len += w
		return id
	}
	tt.tok.each(d.Title, func(term []byte, _, _ int) { add(term, titleBoost) })
	tt.tok.each(d.Text, func(term []byte, _, _ int) { add(term, 1) })
	for _, f := range d.Files {
		tt.tok.each(f, func(term []byte, _, _ int) { add(term, 1) })
	}
	tt.tok.each(d.Evidence, func(term []byte, _, _ int) {
		dt.evidence = append(dt.evidence, add(term, evidenceWeight))
	})
	if len(dt.evidence) > 0 {
		slices.Sort(dt.evidence)
		dt.evidence = slices.Compact(dt.evidence)
	}
	return dt
}

// analyseAll analyses n documents on all CPUs. Each worker numbers terms in
// its own table; a document's terms are numbered in tables[owner[i]].
func analyseAll(n int, doc func(i int) *Doc) (docs []docTerms, owner []uint8, tables []*termTable) {
	workers := min(runtime.GOMAXPROCS(0), max(1, n/256), 255)
	docs, owner = make([]docTerms, n), make([]uint8, n)
	tables = make([]*termTable, workers)
	var wg sync.WaitGroup
	for w := range workers {
		tables[w] = newTermTable()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += workers {
				docs[i] = tables[w].analyse(int32(i), doc(i))
				owner[i] = uint8(w)
			}
		}()
	}
	wg.Wait()
	return docs, owner, tables
}

// termNumbers maps a table's local term numbers to the index's, adding new
// terms.
func (k *keywordIndex) termNumbers(tt *termTable) []uint32 {
	global := make([]uint32, len(tt.names))
	for local, name := range tt.names {
		id, ok := k.terms[name]
		if !ok {
			id = uint32(len(k.post))
			k.terms[name] = id
			k.post = append(k.post, nil)
			k.df = append(k.df, 0)
		}
		global[local] = id
	}
	return global
}

// add records the terms of the document in slot; global maps its term
// numbers to the index's.
func (k *keywordIndex) add(slot uint32, d docTerms, global []uint32) {
	for i, local := range d.terms {
		id := global[local]
		k.post[id] = append(k.post[id], posting{slot, d.tfs[i]})
		k.df[id]++
	}
	for int(slot) >= len(k.docLen) {
		k.docLen = append(k.docLen, 0)
	}
	k.docLen[slot] = d.len
	k.live++
	k.sumLen += float64(d.len)
}

// remove forgets the statistics of the document in slot, whose terms are
// given, by name and (for its evidence) by number; its postings stay until
// compact.
func (k *keywordIndex) remove(slot uint32, terms []string, ids []uint32) {
	seen := make(map[uint32]bool, len(terms)+len(ids))
	for _, t := range terms {
		if id, ok := k.terms[t]; ok && !seen[id] {
			seen[id] = true
			k.df[id]--
		}
	}
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			k.df[id]--
		}
	}
	k.live--
	k.sumLen -= float64(k.docLen[slot])
	k.docLen[slot] = 0
}

// compact drops the postings of dead slots.
func (k *keywordIndex) compact(dead func(slot uint32) bool) {
	for id, ps := range k.post {
		kept := ps[:0]
		for _, p := range ps {
			if !dead(p.slot) {
				kept = append(kept, p)
			}
		}
		clear(ps[len(kept):])
		if len(kept) == 0 {
			kept = nil
		}
		k.post[id] = kept
	}
}

// queryTerm is a term of a query with its inverse document frequency.
type queryTerm struct {
	id  uint32
	idf float64
}

// lookup returns the distinct known terms of a query with their BM25 IDF.
func (k *keywordIndex) lookup(terms []string) []queryTerm {
	var out []queryTerm
	seen := make(map[uint32]bool)
	for _, t := range terms {
		id, ok := k.terms[t]
		if !ok || seen[id] || k.df[id] <= 0 {
			continue
		}
		seen[id] = true
		out = append(out, queryTerm{id, k.idf(id)})
	}
	return out
}

func (k *keywordIndex) idf(id uint32) float64 {
	df := float64(k.df[id])
	return math.Log(1 + (float64(k.live)-df+0.5)/(df+0.5))
}

// score adds the BM25 score of every document holding a query term to
// scores (by slot), and lists each slot it touches once in touched. alive
// tells the slots that are still in the index.
func (k *keywordIndex) score(q []queryTerm, scores []float32, touched []uint32, alive func(uint32) bool) []uint32 {
	if k.live == 0 {
		return touched
	}
	avg := k.sumLen / float64(k.live)
	for _, t := range q {
		for _, p := range k.post[t.id] {
			if !alive(p.slot) {
				continue
			}
			tf := float64(p.tf)
			norm := bm25K1 * (1 - bm25B + bm25B*float64(k.docLen[p.slot])/avg)
			s := float32(t.idf * tf * (bm25K1 + 1) / (tf + norm))
			if scores[p.slot] == 0 {
				touched = append(touched, p.slot)
			}
			scores[p.slot] += s
		}
	}
	return touched
}
