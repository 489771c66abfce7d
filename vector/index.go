package vector

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	chromem "github.com/philippgille/chromem-go"
)

// Mode chooses which rankings a search uses.
type Mode int

const (
	// Hybrid fuses the keyword and the vector ranking (the default).
	Hybrid Mode = iota
	// Keyword ranks by BM25 over code-aware terms only.
	Keyword
	// Vector ranks by cosine similarity of embeddings only.
	Vector
)

// String returns the mode's name.
func (m Mode) String() string {
	switch m {
	case Hybrid:
		return "hybrid"
	case Keyword:
		return "keyword"
	case Vector:
		return "vector"
	}
	return "Mode(" + strconv.Itoa(int(m)) + ")"
}

// ParseMode reads a mode name; the empty string is Hybrid.
func ParseMode(s string) (Mode, error) {
	switch strings.ToLower(s) {
	case "", "hybrid":
		return Hybrid, nil
	case "keyword":
		return Keyword, nil
	case "vector", "semantic":
		return Vector, nil
	}
	return 0, fmt.Errorf("%w: mode %q (want hybrid, keyword or vector)", ErrBadQuery, s)
}

// Doc is a document to index: one memory.
type Doc struct {
	ID      uint64
	Project string
	Type    string
	// Host is the coding agent the document came from ("claude-code",
	// "codex", …), "" when unknown.
	Host  string
	Files []string
	Time  time.Time
	// Title is what the document is about; its terms count double.
	Title string
	// Text is the rest of the searchable text; it may repeat the title.
	Text string
	// Evidence is an excerpt of the raw event the document was made from.
	// Its terms are found by keyword search at evidenceWeight; it is not
	// embedded, not shown in snippets, and the index keeps only its term
	// numbers.
	Evidence string
	// Vector is the document's embedding by the index's embedder, when the
	// caller has it stored. Add fills it in when it is missing or does not
	// fit the embedder (wrong length, zero, not finite), so that the caller
	// can store it. The index keeps this slice: do not change it afterwards.
	// A vector from another embedder of the same length cannot be told apart:
	// compare the stored EmbedderID before passing vectors in.
	Vector []float32
}

// Query is a search.
type Query struct {
	// Text is what to look for. Empty text lists the matching documents,
	// newest first.
	Text string
	// Project, when set, keeps the documents of that project only.
	Project string
	// Types, when set, keeps the documents of these types only.
	Types []string
	// Host, when set, keeps the documents of that host only.
	Host string
	// Keep, when set, keeps the documents whose id it accepts. It is
	// called with the index locked: it must not call the index.
	Keep func(id uint64) bool
	// Files, when set, keeps the documents with a file path that contains
	// one of these fragments (ignoring case).
	Files []string
	// Since and Until, when set, keep documents with Since <= Time < Until.
	Since, Until time.Time
	// Limit is the number of hits wanted: DefaultLimit when 0, at most
	// MaxLimit.
	Limit int
	// Mode chooses the rankings; the zero value is Hybrid.
	Mode Mode
}

// Hit is one search result.
type Hit struct {
	ID uint64
	// Score orders the hits: the fused score (0 to 1, see fuse) in Hybrid
	// mode, BM25 in Keyword mode, cosine similarity in Vector mode, 0 for
	// a listing without text.
	Score float64
	// KeywordRank and VectorRank are the 1-based ranks of the hit in each
	// ranking, 0 when it is not in that ranking.
	KeywordRank, VectorRank int
	// Coverage is the share of the query's terms, weighted by IDF, that
	// the hit holds: 1 when it holds them all (Keyword and Hybrid mode).
	Coverage float64
}

const (
	// DefaultLimit is the number of hits of a query without a Limit: the
	// search contract's, memory.DefaultLimit (vector cannot import it;
	// memory/store's tests check that they agree, and MaxLimit too).
	DefaultLimit = 20
	// MaxLimit is the largest Limit a query may ask for.
	MaxLimit = 1000
	// fusionDepth is how many hits of each ranking enter the fusion.
	fusionDepth = 100
	// embedTimeout bounds the embedding of one query.
	embedTimeout = 30 * time.Second
)

// fusionWeights weigh the two rankings in Hybrid mode: the keyword
// ranking's share of the fused score goes from keywordMin to keywordMax
// with the square of its coverage, the share of the query's terms (by IDF)
// that its best hit holds, and the vector ranking has the rest. An
// identifier, a path or an error message is found whole and trusted; a
// question asked in other words than the memory's matches a word or two
// and leaves more of the order to the embeddings.
type fusionWeights struct {
	keywordMin, keywordMax float64
}

// The weights were chosen on cmd/mnemo-eval's dev splits and on the public
// LoCoMo and DevBench, and checked once on the held-out splits
// (docs/decisions.md, "Search: the scores fused, not the ranks").
var (
	// semanticFusion is for sentence encoders, whose first places are
	// good at meaning and poor at names: the keyword ranking keeps at
	// least 0.6 of the score.
	semanticFusion = fusionWeights{keywordMin: 0.6, keywordMax: 0.9}
	// lexicalFusion is for the hashing embedder, whose vectors see only
	// shared words and character n-grams: BM25 leads, the vectors order
	// what it holds nearly equal, and a query whose best keyword hit holds
	// it whole (an identifier, a path) is ranked by its words alone.
	lexicalFusion = fusionWeights{keywordMin: 0.9, keywordMax: 1}
)

// lexicalEmbedder is implemented by embedders that capture shared words only.
type lexicalEmbedder interface{ lexical() }

// ErrBadQuery means a query asks for something the index cannot do.
var ErrBadQuery = errors.New("bad query")

// entry is what the index keeps of a document: no text (the caller has it;
// see Snippet), only what filters and orders hits.
type entry struct {
	id      uint64
	time    int64  // Unix nanoseconds, 0 when unknown
	files   string // the lowercased paths, one per line
	project uint32 // in Index.projects
	typ     uint32 // in Index.types
	host    uint32 // in Index.hosts
	live    bool
}

// Index ranks documents by keywords and by embeddings. Every vector is kept
// quantized (quant.go), with its sign code (codes.go); the vectors of a
// small project are also in a chromem-go collection of their own, which
// answers the searches of that project, and of a memory made only of small
// projects, by its exhaustive scan. A larger scope is ranked in two stages
// over the quantized vectors. The keyword index is our own BM25
// (keyword.go). An Index is safe for concurrent use.
type Index struct {
	emb       Embedder
	fusion    fusionWeights
	embedFunc chromem.EmbeddingFunc
	db        *chromem.DB
	dim       int

	mu    sync.RWMutex
	cols  map[uint32]*chromem.Collection // by project, the small ones
	byID  map[uint64]uint32              // document id → slot
	slots []entry
	dead  []uint32 // removed slots whose postings remain
	gone  []bool   // by slot: listed in dead
	free  []uint32 // slots ready for reuse
	kw    keywordIndex
	quant []int8    // by slot, dim each
	inv   []float32 // by slot: 1/|q|, 0 when the document has no vector
	words int       // 64-bit words of a vector's sign code, 32 components each
	codes []uint64  // sign codes by slot, words each
	nvec  int       // documents with a vector
	gen   uint64    // counts the documents added and removed

	projects names
	vecCount []int // by project: documents with a vector
	types    names
	hosts    names

	// prefilterMin is the scope from which a vector search uses the sign
	// codes (a variable for the tests).
	prefilterMin int

	scratch sync.Pool // *scratch
}

// smallProject is the most vectors a project's chromem-go collection
// holds. chromem-go scans a collection in about 1.3 µs a vector here, so a
// search of a small project takes at most about 1.5 ms; a project that
// grows past it leaves chromem-go for the quantized vectors, and its
// float vectors (2 KB each) are freed. A project has a collection only
// while every vector it has is in it: one that shrinks back under the
// bound stays with the quantized vectors until the index is loaded again.
const smallProject = 1024

// NewIndex returns an empty index that embeds with e.
func NewIndex(e Embedder) *Index {
	ix := &Index{
		emb: e,
		// chromem-go falls back to OpenAI when given a nil function; ours is
		// always set, and only used if chromem ever embeds on its own.
		embedFunc:    func(ctx context.Context, text string) ([]float32, error) { return e.Embed(ctx, text) },
		db:           chromem.NewDB(),
		dim:          e.Dim(),
		cols:         make(map[uint32]*chromem.Collection),
		byID:         make(map[uint64]uint32),
		fusion:       semanticFusion,
		words:        codeWords(e.Dim()),
		prefilterMin: prefilterMin,
	}
	if _, ok := e.(lexicalEmbedder); ok {
		ix.fusion = lexicalFusion
	}
	return ix
}

// EmbedderID returns the ID of the index's embedder, to store with vectors.
func (ix *Index) EmbedderID() string { return ix.emb.ID() }

// Embedder returns the index's embedder.
func (ix *Index) Embedder() Embedder { return ix.emb }

// Generation counts the changes to the index's documents: two calls that
// return the same number saw the same documents. A snapshot written at one
// generation need not be written again while it holds.
func (ix *Index) Generation() uint64 {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.gen
}

// Len returns the number of documents in the index.
func (ix *Index) Len() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return len(ix.byID)
}

// Add indexes docs, replacing documents with the same ID. It embeds the
// docs whose Vector is missing or unusable, on all CPUs, and stores the new
// vectors back into docs. A doc with nothing to embed is indexed by keywords
// only and keeps a nil Vector. On an embedding error (or when ctx ends)
// nothing is added.
func (ix *Index) Add(ctx context.Context, docs ...Doc) error {
	if len(docs) == 0 {
		return nil
	}
	if err := ix.embedMissing(ctx, docs); err != nil {
		return fmt.Errorf("index add: %w", err)
	}
	terms := analyseAll(len(docs), func(i int) *Doc { return &docs[i] })

	ix.mu.Lock()
	defer ix.mu.Unlock()
	if grow := len(docs) - len(ix.free); grow > 0 {
		// One allocation for a load of many documents, not one per growth.
		ix.slots = slices.Grow(ix.slots, grow)
		ix.gone = slices.Grow(ix.gone, grow)
		ix.codes = slices.Grow(ix.codes, grow*ix.words)
		ix.quant = slices.Grow(ix.quant, grow*ix.dim)
		ix.inv = slices.Grow(ix.inv, grow)
	}
	// The projects this batch makes big never get a collection.
	willHave := map[uint32]int{}
	for i := range docs {
		if docs[i].Vector != nil {
			willHave[ix.projectNumber(docs[i].Project)]++
		}
	}
	var errs []error
	for i := range docs {
		d := &docs[i]
		if slot, ok := ix.byID[d.ID]; ok {
			ix.removeSlot(slot)
		}
		slot := ix.newSlot()
		p := ix.projectNumber(d.Project)
		h, _ := ix.hosts.number(d.Host)
		e := entry{id: d.ID, project: p, typ: ix.typeNumber(d.Type), host: h, live: true}
		if len(d.Files) > 0 {
			e.files = strings.ToLower(strings.Join(d.Files, "\n"))
		}
		if !d.Time.IsZero() {
			e.time = d.Time.UnixNano()
		}
		ix.slots[slot] = e
		ix.byID[d.ID] = slot
		ix.gen++
		ix.kw.add(slot, terms[i])
		if d.Vector == nil {
			continue
		}
		if err := ix.setVector(ctx, slot, p, d.Vector, ix.vecCount[p]+willHave[p] <= smallProject); err != nil {
			errs = append(errs, fmt.Errorf("doc %d: %w", d.ID, err))
		}
		willHave[p]--
	}
	ix.maybeCompact()
	if len(errs) > 0 {
		return fmt.Errorf("index add: %w", errors.Join(errs...))
	}
	return nil
}

// setVector keeps v as slot's vector, and in its project's collection when
// the project stays small. Callers hold the write lock.
func (ix *Index) setVector(ctx context.Context, slot, p uint32, v []float32, small bool) error {
	q := ix.quant[int(slot)*ix.dim : int(slot+1)*ix.dim]
	inv := quantize(v, q)
	if inv == 0 {
		return nil
	}
	ix.inv[slot] = inv
	signCodeQ(q, ix.codes[int(slot)*ix.words:int(slot+1)*ix.words])
	ix.nvec++
	ix.vecCount[p]++
	switch n := ix.vecCount[p]; {
	case n == smallProject+1:
		if ix.cols[p] != nil {
			// Freed: the project's searches use the quantized vectors now.
			if err := ix.db.DeleteCollection(collectionName(ix.projects.list[p])); err != nil {
				return err
			}
			delete(ix.cols, p)
		}
	case n <= smallProject && small && (n == 1 || ix.cols[p] != nil):
		col, err := ix.collection(p)
		if err != nil {
			return err
		}
		// The collection holds the vector the index ranks by elsewhere: the
		// quantized one, as a unit vector.
		return col.AddDocument(ctx, chromem.Document{ID: docKey(ix.slots[slot].id), Embedding: dequantizeUnit(q, inv)})
	}
	return nil
}

// names numbers the distinct strings of a field (projects, types), so
// that an entry keeps a number, not a string.
type names struct {
	list []string
	of   map[string]uint32
}

// number returns the number of s, adding it.
func (n *names) number(s string) (id uint32, added bool) {
	if id, ok := n.of[s]; ok {
		return id, false
	}
	if n.of == nil {
		n.of = make(map[string]uint32)
	}
	id = uint32(len(n.list))
	n.list = append(n.list, s)
	n.of[s] = id
	return id, true
}

// find returns the number of s, if it has one.
func (n *names) find(s string) (uint32, bool) {
	id, ok := n.of[s]
	return id, ok
}

// set makes list the numbered strings, in its order.
func (n *names) set(list []string) {
	n.list, n.of = list, make(map[string]uint32, len(list))
	for i, s := range list {
		n.of[s] = uint32(i)
	}
}

// projectNumber numbers a project name. Callers hold the write lock.
func (ix *Index) projectNumber(name string) uint32 {
	p, added := ix.projects.number(name)
	if added {
		ix.vecCount = append(ix.vecCount, 0)
	}
	return p
}

// typeNumber numbers a type name. Callers hold the write lock.
func (ix *Index) typeNumber(name string) uint32 {
	t, _ := ix.types.number(name)
	return t
}

// embedMissing embeds, on all CPUs, the docs without a usable vector.
func (ix *Index) embedMissing(ctx context.Context, docs []Doc) error {
	dim := ix.emb.Dim()
	workers := min(runtime.GOMAXPROCS(0), max(1, len(docs)/64))
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(docs); i += workers {
				d := &docs[i]
				if usableVector(d.Vector, dim) {
					continue
				}
				if ctx.Err() != nil {
					return
				}
				v, err := ix.emb.Embed(ctx, d.EmbedText())
				switch {
				case errors.Is(err, ErrNoText):
					d.Vector = nil
				case err != nil:
					cancel(fmt.Errorf("embed doc %d: %w", d.ID, err))
					return
				case len(v) != dim:
					cancel(fmt.Errorf("embed doc %d: embedder %s gave %d dimensions, want %d", d.ID, ix.emb.ID(), len(v), dim))
					return
				default:
					d.Vector = v
				}
			}
		}()
	}
	wg.Wait()
	return context.Cause(ctx)
}

// EmbedText is the text embedded for a document: its title, its text and its
// file paths.
func (d *Doc) EmbedText() string {
	var b strings.Builder
	b.WriteString(d.Title)
	if d.Text != "" {
		b.WriteString("\n")
		b.WriteString(d.Text)
	}
	for _, f := range d.Files {
		b.WriteString("\n")
		b.WriteString(f)
	}
	return b.String()
}

// usableVector reports whether v has the right length, finite values and a
// length to normalize.
func usableVector(v []float32, dim int) bool {
	if len(v) != dim {
		return false
	}
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	return ss > 0 && !math.IsInf(ss, 0) && !math.IsNaN(ss)
}

// Remove drops the documents with these IDs; unknown IDs are ignored.
func (ix *Index) Remove(ids ...uint64) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	for _, id := range ids {
		if slot, ok := ix.byID[id]; ok {
			ix.removeSlot(slot)
		}
	}
	ix.maybeCompact()
}

// removeSlot drops the document in slot. Callers hold the write lock.
func (ix *Index) removeSlot(slot uint32) {
	e := &ix.slots[slot]
	if ix.inv[slot] != 0 {
		ix.nvec--
		ix.vecCount[e.project]--
		if col := ix.cols[e.project]; col != nil {
			// An id-only delete of an in-memory collection cannot fail.
			_ = col.Delete(context.Background(), nil, nil, docKey(e.id))
		}
		ix.inv[slot] = 0
	}
	ix.kw.remove(slot)
	delete(ix.byID, e.id)
	ix.gen++
	*e = entry{}
	ix.gone[slot] = true
	ix.dead = append(ix.dead, slot)
}

// newSlot returns a free slot. Callers hold the write lock.
func (ix *Index) newSlot() uint32 {
	if n := len(ix.free); n > 0 {
		slot := ix.free[n-1]
		ix.free = ix.free[:n-1]
		return slot
	}
	ix.slots = append(ix.slots, entry{})
	ix.gone = append(ix.gone, false)
	ix.codes = append(ix.codes, make([]uint64, ix.words)...)
	ix.quant = append(ix.quant, make([]int8, ix.dim)...)
	ix.inv = append(ix.inv, 0)
	return uint32(len(ix.slots) - 1)
}

// maybeCompact purges dead postings once they are a fair share of the index,
// and frees their slots. Callers hold the write lock.
func (ix *Index) maybeCompact() {
	if len(ix.dead) < 64 || len(ix.dead) < len(ix.byID)/8 {
		return
	}
	ix.compact()
}

// compact purges dead postings and frees their slots. Callers hold the
// write lock.
func (ix *Index) compact() {
	if len(ix.dead) == 0 {
		return
	}
	ix.kw.compact(func(slot uint32) bool { return ix.gone[slot] })
	for _, slot := range ix.dead {
		ix.gone[slot] = false
	}
	ix.free = append(ix.free, ix.dead...)
	ix.dead = ix.dead[:0]
}

// collection returns the project's collection, creating it. Callers hold the
// write lock.
func (ix *Index) collection(p uint32) (*chromem.Collection, error) {
	if col := ix.cols[p]; col != nil {
		return col, nil
	}
	col, err := ix.db.CreateCollection(collectionName(ix.projects.list[p]), map[string]string{"embedder": ix.emb.ID()}, ix.embedFunc)
	if err != nil {
		return nil, err
	}
	ix.cols[p] = col
	return col, nil
}

func collectionName(project string) string { return "project:" + project }

func docKey(id uint64) string { return strconv.FormatUint(id, 10) }

// Search returns the best hits for q, best first. Filters apply before the
// rankings are cut, so a filtered search finds as many hits as an unfiltered
// one when there are enough matching documents. Hits carry no snippet: the
// caller has the text (see Snippets).
func (ix *Index) Search(ctx context.Context, q Query) ([]Hit, error) {
	limit := q.Limit
	switch {
	case limit == 0:
		limit = DefaultLimit
	case limit < 0 || limit > MaxLimit:
		return nil, fmt.Errorf("%w: limit %d (want 1..%d)", ErrBadQuery, limit, MaxLimit)
	}
	if q.Mode < Hybrid || q.Mode > Vector {
		return nil, fmt.Errorf("%w: %v", ErrBadQuery, q.Mode)
	}
	depth := limit
	if q.Mode == Hybrid {
		depth = max(limit, fusionDepth)
	}

	// Embed the query before taking the lock: it may be slow.
	var qv []float32
	if strings.TrimSpace(q.Text) != "" && q.Mode != Keyword {
		ectx, cancel := context.WithTimeout(ctx, embedTimeout)
		v, err := ix.emb.Embed(ectx, q.Text)
		cancel()
		switch {
		case errors.Is(err, ErrNoText):
		case err != nil:
			return nil, fmt.Errorf("search: embed query: %w", err)
		case len(v) != ix.emb.Dim():
			return nil, fmt.Errorf("search: embedder %s gave %d dimensions for the query, want %d", ix.emb.ID(), len(v), ix.emb.Dim())
		default:
			qv = unitVector(v)
		}
	}
	var tok tokenizer
	qterms := tok.terms(q.Text)

	ix.mu.RLock()
	defer ix.mu.RUnlock()
	f := ix.newFilter(q)
	if strings.TrimSpace(q.Text) == "" {
		return ix.list(f, limit), nil
	}

	s := ix.getScratch()
	defer ix.putScratch(s)
	known := ix.kw.lookup(qterms)
	var kw, vec []ranked
	if q.Mode != Vector {
		kw = ix.keywordRanking(known, f, depth, s)
	}
	if q.Mode != Keyword && qv != nil {
		var err error
		if vec, err = ix.vectorRanking(ctx, qv, f, depth); err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
	}

	cov := ix.coverageOf(qterms, known, s)
	var hits []Hit
	switch q.Mode {
	case Keyword:
		hits = ix.single(kw, len(kw), func(h *Hit, rank int) { h.KeywordRank = rank })
	case Vector:
		hits = ix.single(vec, len(vec), func(h *Hit, rank int) { h.VectorRank = rank })
	default:
		c := 0.0
		if len(kw) > 0 {
			c = cov(kw[0].slot)
		}
		w := ix.fusion
		hits = ix.fuse(kw, vec, qv, w.keywordMin+(w.keywordMax-w.keywordMin)*c*c, len(kw)+len(vec))
	}
	return ix.aboveFloor(hits, q.Mode, cov, qv, limit), nil
}

// Snippets returns the function that cuts a short window of a document's
// text around the terms of query that weigh most in the index, or gives its
// beginning (of title when text is empty) when none matches. The query is
// analysed once, for all the hits of a search.
func (ix *Index) Snippets(query string) func(title, text string) string {
	var tok tokenizer
	qterms := tok.terms(query)
	ix.mu.RLock()
	known := ix.kw.lookup(qterms)
	idf := make(map[uint64]float64, len(known))
	for _, t := range known {
		idf[ix.kw.dict.hashes[t.id]] = t.idf
	}
	ix.mu.RUnlock()
	weight := func(term string) float64 {
		if w, ok := idf[termHashString(term)]; ok {
			return w
		}
		return 1
	}
	return func(title, text string) string { return snippet(text, title, qterms, weight) }
}

func (ix *Index) getScratch() *scratch {
	s, _ := ix.scratch.Get().(*scratch)
	if s == nil {
		s = new(scratch)
	}
	if len(s.scores) < len(ix.slots) {
		n := len(ix.slots) + len(ix.slots)/4
		s.scores, s.masks = make([]float32, n), make([]uint64, n)
	}
	return s
}

func (ix *Index) putScratch(s *scratch) {
	s.reset()
	ix.scratch.Put(s)
}

// ranked is a document in a ranking.
type ranked struct {
	slot  uint32
	score float32
}

// better orders ranked documents: higher score first, then newer, then
// higher id, so that equal scores give a stable order.
func (ix *Index) better(a, b ranked) int {
	if c := cmp.Compare(b.score, a.score); c != 0 {
		return c
	}
	ea, eb := &ix.slots[a.slot], &ix.slots[b.slot]
	if c := cmp.Compare(eb.time, ea.time); c != 0 {
		return c
	}
	return cmp.Compare(eb.id, ea.id)
}

// top sorts rs best first and cuts it to n.
func (ix *Index) top(rs []ranked, n int) []ranked {
	if len(rs) > 4*n && n < 256 {
		rs = ix.selectTop(rs, n)
	}
	slices.SortFunc(rs, ix.better)
	return rs[:min(n, len(rs))]
}

// selectTop returns the n best of rs, unordered, with a bounded heap.
func (ix *Index) selectTop(rs []ranked, n int) []ranked {
	h := make([]ranked, 0, n)
	worse := func(i, j int) bool { return ix.better(h[i], h[j]) > 0 } // min-heap on quality
	down := func(i int) {
		for {
			l, s := 2*i+1, i
			if l < len(h) && worse(l, s) {
				s = l
			}
			if r := l + 1; r < len(h) && worse(r, s) {
				s = r
			}
			if s == i {
				return
			}
			h[i], h[s] = h[s], h[i]
			i = s
		}
	}
	for _, r := range rs {
		if len(h) < n {
			h = append(h, r)
			for i := len(h) - 1; i > 0; {
				p := (i - 1) / 2
				if !worse(i, p) {
					break
				}
				h[i], h[p] = h[p], h[i]
				i = p
			}
			continue
		}
		if ix.better(r, h[0]) < 0 {
			h[0] = r
			down(0)
		}
	}
	return h
}

// keywordRanking returns the depth best documents by BM25 among those f
// keeps; s keeps every document's score and matched terms.
func (ix *Index) keywordRanking(q []queryTerm, f *filter, depth int, s *scratch) []ranked {
	if len(q) == 0 {
		return nil
	}
	ix.kw.score(q, s, func(slot uint32) bool { return ix.slots[slot].live })
	rs := make([]ranked, 0, len(s.touched))
	for _, slot := range s.touched {
		if f.keep(&ix.slots[slot]) {
			rs = append(rs, ranked{slot, s.scores[slot]})
		}
	}
	return ix.top(rs, depth)
}

// vectorRanking returns the depth documents most similar to the unit
// vector qv among those f keeps: from chromem-go when the scope is all in
// collections, else from the quantized vectors.
func (ix *Index) vectorRanking(ctx context.Context, qv []float32, f *filter, depth int) ([]ranked, error) {
	var cols map[uint32]*chromem.Collection
	scope := ix.nvec
	switch {
	case f.project == noProject:
		return nil, nil
	case f.project >= 0:
		p := uint32(f.project)
		scope = ix.vecCount[p]
		if col := ix.cols[p]; col != nil {
			cols = map[uint32]*chromem.Collection{p: col}
		}
	case ix.nvec < ix.prefilterMin && ix.allCollected():
		cols = ix.cols
	}
	if cols == nil {
		return ix.quantRanking(qv, f, depth, scope >= ix.prefilterMin), nil
	}
	// For the filters chromem-go cannot express, count what they keep in
	// each collection, and fetch enough to still have depth hits after
	// filtering.
	var kept map[uint32]int
	if f.residual {
		kept = make(map[uint32]int)
		for slot := range ix.slots {
			e := &ix.slots[slot]
			if ix.inv[slot] != 0 && cols[e.project] != nil && f.keep(e) {
				kept[e.project]++
			}
		}
	}
	var rs []ranked
	for p, col := range cols {
		count := col.Count()
		if count == 0 {
			continue // chromem-go errors on an empty collection
		}
		allowed := count
		if f.residual {
			if allowed = kept[p]; allowed == 0 {
				continue
			}
		}
		want := min(depth, allowed)
		n := want
		if allowed < count {
			n = want*count/allowed*3/2 + want
		}
		// chromem-go refuses n > Count, and n < 1.
		n = max(1, min(n, count))
		for {
			res, err := col.QueryEmbedding(ctx, qv, n, nil, nil)
			if err != nil {
				return nil, fmt.Errorf("vector query: %w", err)
			}
			found := 0
			start := len(rs)
			for _, r := range res {
				id, err := strconv.ParseUint(r.ID, 10, 64)
				if err != nil {
					continue
				}
				slot, ok := ix.byID[id]
				if !ok || !f.keep(&ix.slots[slot]) {
					continue
				}
				rs = append(rs, ranked{slot, r.Similarity})
				found++
			}
			if found >= want || n >= count {
				break
			}
			rs = rs[:start]
			n = count
		}
	}
	return ix.top(rs, depth), nil
}

// single turns one ranking into hits.
func (ix *Index) single(rs []ranked, limit int, setRank func(*Hit, int)) []Hit {
	hits := make([]Hit, 0, min(limit, len(rs)))
	for i, r := range rs[:min(limit, len(rs))] {
		h := Hit{ID: ix.slots[r.slot].id, Score: float64(r.score)}
		setRank(&h, i+1)
		hits = append(hits, h)
	}
	return hits
}

// allCollected reports whether every vector is in a collection. Callers
// hold a lock.
func (ix *Index) allCollected() bool {
	for p, n := range ix.vecCount {
		if n > 0 && ix.cols[uint32(p)] == nil {
			return false
		}
	}
	return true
}

// coverageOf returns the function that gives the share of the query terms,
// weighted by IDF, that the document in a slot holds, from the terms the
// keyword ranking matched (s). Terms the index does not know weigh as much
// as the rarest.
func (ix *Index) coverageOf(qterms []string, known []queryTerm, s *scratch) func(slot uint32) float64 {
	rarest := math.Log(1 + (float64(ix.kw.live)+0.5)/0.5)
	idf := make(map[uint64]float64, len(known))
	for _, t := range known {
		idf[ix.kw.dict.hashes[t.id]] = t.idf
	}
	all := 0.0
	seen := make(map[uint64]bool, len(qterms))
	for _, t := range qterms {
		h := termHashString(t)
		if seen[h] {
			continue
		}
		seen[h] = true
		if w, ok := idf[h]; ok {
			all += w
		} else {
			all += rarest
		}
	}
	return func(slot uint32) float64 {
		if all == 0 || int(slot) >= len(s.masks) {
			return 0
		}
		m := s.masks[slot]
		found := 0.0
		for _, t := range known {
			if t.bit < queryBits && m&(1<<t.bit) != 0 {
				found += t.idf
			}
		}
		return found / all
	}
}

// The relevance floor of keyword and hybrid search: a hit is kept when it
// holds at least floorCoverage of the query's terms (weighted by IDF,
// evidence included), or when its embedding is at least
// floorSimilarity[lexical] close to the query's. A query that nothing
// answers then returns fewer hits, instead of every document that shares
// one common word with it. Vector search, asked for explicitly, has no
// floor.
//
// Chosen on cmd/mnemo-eval's dev split with the hashing embedder, over
// 0.10–0.60 (`just eval` reruns the split): at 0.10, 19 % of the
// questions that have no answer return nothing and recall@5 of the others
// is unchanged (0.722); at 0.15, 25 % (recall@5 0.729); at 0.20, 38 % for
// 1.4 points; at 0.30, 75 % for 7 points. On the older, observation-written
// set (testdata/eval, no unanswerable questions) the floor can only cost:
// 2.7 points of recall@5 at 0.10, 6 at 0.15. Paraphrased questions match as
// few words of their answer as unanswerable ones match of anything, and
// USE-Lite's similarities do not tell them apart either (0.33–0.72 against
// 0.32–0.67), so the floor stays low.
const floorCoverage = 0.10

// A hit below floorCoverage is rescued by its embedding. With a lexical
// embedder (hashing), when it is at least floorLexicalSimilarity close to
// the query: above the 0.26 that the dev split's unanswerable questions
// reach. With a sentence encoder, when it is among the first
// floorSemanticRescue of the vector ranking: USE-Lite's similarities are
// no threshold (the demo's "people paid slightly more than they should"
// finds its answer at 0.34, unanswerable questions reach 0.67), but its
// first few places are what it is for; so a question nothing answers gets
// a few guesses, not a page of noise.
const (
	floorLexicalSimilarity = 0.5
	floorSemanticRescue    = 3
)

// aboveFloor keeps the first limit hits that clear the relevance floor.
func (ix *Index) aboveFloor(hits []Hit, mode Mode, coverage func(slot uint32) float64, qv []float32, limit int) []Hit {
	if mode == Vector {
		return hits[:min(len(hits), limit)]
	}
	lexical := ix.lexical()
	kept := hits[:0]
	for _, h := range hits {
		if len(kept) == limit {
			break
		}
		slot := ix.byID[h.ID]
		h.Coverage = coverage(slot)
		switch {
		case h.Coverage >= floorCoverage:
		case !lexical && h.VectorRank > 0 && h.VectorRank <= floorSemanticRescue:
		case lexical && qv != nil && ix.inv[slot] != 0 && float64(ix.similarity(qv, slot)) >= floorLexicalSimilarity:
		default:
			continue
		}
		kept = append(kept, h)
	}
	return kept
}

// similarity is the cosine similarity of the unit vector qv with the
// vector in slot.
func (ix *Index) similarity(qv []float32, slot uint32) float32 {
	return dotQ(qv, ix.quant[int(slot)*ix.dim:int(slot+1)*ix.dim]) * ix.inv[slot]
}

func (ix *Index) lexical() bool {
	_, ok := ix.emb.(lexicalEmbedder)
	return ok
}

// fuse merges the keyword and vector rankings by a convex combination of
// their scores: kwShare of a hit's BM25 over the best keyword hit's, plus
// the rest of its cosine similarity scaled over the vector ranking's range
// (its first hit 1, its last 0). A keyword hit the vector ranking did not
// reach is scored by its own vector; one without a vector, and a vector
// hit without the query's words, score 0 in the other ranking.
//
// Reciprocal-rank fusion, used before, scores ranks and not how far apart
// the hits are: with a sentence encoder a hit that both rankings put
// fourth beat the keyword ranking's clear first, and hybrid search ranked
// below keyword search alone on LoCoMo and on every conversation split.
func (ix *Index) fuse(kw, vec []ranked, qv []float32, kwShare float64, limit int) []Hit {
	type fusedHit struct {
		slot         uint32
		bm25, cosine float64
		score        float64
		kr, vr       int
	}
	at := make(map[uint32]int, len(kw)+len(vec))
	all := make([]fusedHit, 0, len(kw)+len(vec))
	for i, r := range kw {
		at[r.slot] = len(all)
		all = append(all, fusedHit{slot: r.slot, bm25: float64(r.score), cosine: math.NaN(), kr: i + 1})
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, r := range vec {
		j, ok := at[r.slot]
		if !ok {
			j = len(all)
			all = append(all, fusedHit{slot: r.slot})
		}
		all[j].cosine, all[j].vr = float64(r.score), i+1
		lo, hi = min(lo, float64(r.score)), max(hi, float64(r.score))
	}
	best := 0.0
	if len(kw) > 0 {
		best = float64(kw[0].score)
	}
	for i := range all {
		h := &all[i]
		if math.IsNaN(h.cosine) {
			h.cosine = lo
			if qv != nil && ix.inv[h.slot] != 0 {
				h.cosine = float64(ix.similarity(qv, h.slot))
			}
		}
		if best > 0 {
			h.score = kwShare * h.bm25 / best
		}
		if hi > lo {
			h.score += (1 - kwShare) * max(0, min(1, (h.cosine-lo)/(hi-lo)))
		}
	}
	slices.SortFunc(all, func(a, b fusedHit) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return ix.better(ranked{slot: a.slot}, ranked{slot: b.slot})
	})
	hits := make([]Hit, 0, min(limit, len(all)))
	for _, h := range all[:min(limit, len(all))] {
		hits = append(hits, Hit{ID: ix.slots[h.slot].id, Score: h.score, KeywordRank: h.kr, VectorRank: h.vr})
	}
	return hits
}

// list returns the documents f keeps, newest first.
func (ix *Index) list(f *filter, limit int) []Hit {
	var rs []ranked
	for slot := range ix.slots {
		if f.keep(&ix.slots[slot]) {
			rs = append(rs, ranked{slot: uint32(slot)})
		}
	}
	rs = ix.top(rs, limit)
	hits := make([]Hit, 0, len(rs))
	for _, r := range rs {
		hits = append(hits, Hit{ID: ix.slots[r.slot].id})
	}
	return hits
}

// noProject is a filter's project when the query names one the index has
// never seen: nothing matches.
const noProject = -2

// filter holds a query's filters in the form checked per document.
type filter struct {
	project      int // -1 for any, noProject for none
	types        []uint32
	noType       bool     // the query asks only for types the index has never seen
	host         int      // -1 for any, noProject for one the index has never seen
	files        []string // lowercased fragments
	keepID       func(uint64) bool
	since, until int64
	hasSince     bool
	hasUntil     bool
	// residual is true when a filter other than the project is set: one that
	// the per-project collections do not already apply.
	residual bool
}

// newFilter resolves q's filters against the index. Callers hold a lock.
func (ix *Index) newFilter(q Query) *filter {
	f := &filter{project: -1, host: -1}
	if q.Project != "" {
		f.project = noProject
		if p, ok := ix.projects.find(q.Project); ok {
			f.project = int(p)
		}
	}
	for _, t := range q.Types {
		if n, ok := ix.types.find(t); ok {
			f.types = append(f.types, n)
		}
	}
	f.noType = len(q.Types) > 0 && len(f.types) == 0
	if q.Host != "" {
		f.host = noProject
		if h, ok := ix.hosts.find(q.Host); ok {
			f.host = int(h)
		}
	}
	for _, frag := range q.Files {
		if frag = strings.ToLower(strings.TrimSpace(frag)); frag != "" {
			f.files = append(f.files, frag)
		}
	}
	if !q.Since.IsZero() {
		f.since, f.hasSince = q.Since.UnixNano(), true
	}
	if !q.Until.IsZero() {
		f.until, f.hasUntil = q.Until.UnixNano(), true
	}
	f.keepID = q.Keep
	f.residual = len(f.types) > 0 || f.noType || f.host != -1 || len(f.files) > 0 || f.hasSince || f.hasUntil || f.keepID != nil
	return f
}

// keep reports whether e passes the filters.
func (f *filter) keep(e *entry) bool {
	if !e.live || f.noType || f.project == noProject || f.host == noProject {
		return false
	}
	if f.host >= 0 && e.host != uint32(f.host) {
		return false
	}
	if f.project >= 0 && e.project != uint32(f.project) {
		return false
	}
	if len(f.types) > 0 && !slices.Contains(f.types, e.typ) {
		return false
	}
	if f.hasSince && e.time < f.since {
		return false
	}
	if f.hasUntil && e.time >= f.until {
		return false
	}
	if f.keepID != nil && !f.keepID(e.id) {
		return false
	}
	if len(f.files) > 0 {
		found := false
		for _, frag := range f.files {
			if strings.Contains(e.files, frag) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}
