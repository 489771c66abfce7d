package vector

import (
	"encoding/binary"
	"math"
	"math/bits"
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

// The keyword index is sized for a year of memories in a sidecar. At 100k
// observations of the bench's data set (with evidence) it holds about a
// million distinct terms, four in five of them in one document only (line
// numbers, request ids, hashes), and 14 million postings. So:
//
//   - a term is its 64-bit hash (termHash), not its text: 8 bytes and a slot
//     of an open-addressing table instead of a string and a map entry. Two
//     terms with one hash share their postings; among a million terms the
//     chance that any two do is about 3 in 10^8.
//   - a term in one document keeps its posting inline (ref); only terms in
//     two or more have a posting list.
//   - a posting list is bytes: per posting, the slot's difference from the
//     one before (zigzag, since freed slots are reused) and the term's
//     weighted count in half units, in one varint when both are small.
//
// A removed document's postings stay until compact drops them (callers
// skip dead slots), and so does its share of the terms' document
// frequencies: IDF counts the dead documents until then, at most one in
// eight of the index.

// termHash is the stable hash of a term: FNV-1a, 64 bits. It is stored in
// snapshots, so it must never change.
func termHash(term []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range term {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}

func termHashString(term string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(term); i++ {
		h ^= uint64(term[i])
		h *= 1099511628211
	}
	return h
}

// termDict numbers terms by hash.
type termDict struct {
	hashes []uint64 // by term number
	table  []uint32 // open addressing: term number + 1, 0 when empty
}

func (d *termDict) slot(h uint64) int {
	// The multiplicative mix spreads FNV's low bits over the table.
	return int((h * 0x9e3779b97f4a7c15) >> (64 - bits.Len(uint(len(d.table)-1))))
}

// find returns the number of the term with hash h.
func (d *termDict) find(h uint64) (uint32, bool) {
	if len(d.table) == 0 {
		return 0, false
	}
	mask := len(d.table) - 1
	for i := d.slot(h); ; i = (i + 1) & mask {
		id := d.table[i]
		if id == 0 {
			return 0, false
		}
		if d.hashes[id-1] == h {
			return id - 1, true
		}
	}
}

// add returns the number of the term with hash h, adding it.
func (d *termDict) add(h uint64) (id uint32, added bool) {
	if id, ok := d.find(h); ok {
		return id, false
	}
	if (len(d.hashes)+1)*4 > len(d.table)*3 {
		d.grow(max(1024, 2*len(d.table)))
	}
	id = uint32(len(d.hashes))
	d.hashes = append(d.hashes, h)
	d.place(id)
	return id, true
}

func (d *termDict) place(id uint32) {
	mask := len(d.table) - 1
	i := d.slot(d.hashes[id])
	for d.table[i] != 0 {
		i = (i + 1) & mask
	}
	d.table[i] = id + 1
}

// grow rebuilds the table with size slots, a power of two.
func (d *termDict) grow(size int) {
	d.table = make([]uint32, size)
	for id := range d.hashes {
		d.place(uint32(id))
	}
}

// tableSize is the table size for n terms: a power of two, at most 3/4 full.
func tableSize(n int) int {
	size := 1024
	for size*3 < n*4 {
		size *= 2
	}
	return size
}

// A ref says where a term's postings are: 0 when it has none; with
// listBit set, the low 32 bits number its posting list; otherwise it is the
// term's one posting, the slot in bits 16–47 and the weighted count in half
// units (at least 1) in bits 0–15.
const listBit = 1 << 63

func singleRef(slot uint32, tf2 uint16) uint64 { return uint64(slot)<<16 | uint64(tf2) }

// postingList is the postings of a term in two or more documents.
type postingList struct {
	data []byte
	last uint32 // the slot of the last posting
	n    int32  // postings, dead ones included until compact
}

// tfUnits is a weighted count in half units, as postings keep it (a term of
// the title counts 2, of the text or the paths 1, of the evidence ½).
func tfUnits(tf float32) uint16 {
	return uint16(min(math.MaxUint16, max(1, math.Round(float64(tf)*2))))
}

// appendPosting appends a posting after the one at slot prev.
func appendPosting(b []byte, prev, slot uint32, tf2 uint16) []byte {
	d := int64(slot) - int64(prev)
	z := uint64(d<<1) ^ uint64(d>>63) // zigzag
	if tf2 < 7 {
		return binary.AppendUvarint(b, z<<3|uint64(tf2))
	}
	b = binary.AppendUvarint(b, z<<3|7)
	return binary.AppendUvarint(b, uint64(tf2))
}

// each calls fn for every posting of the list.
func (l *postingList) each(fn func(slot uint32, tf2 uint16)) {
	b := l.data
	prev := int64(0)
	for len(b) > 0 {
		v, n := binary.Uvarint(b)
		b = b[n:]
		tf2 := uint16(v & 7)
		z := v >> 3
		prev += int64(z>>1) ^ -int64(z&1)
		if tf2 == 7 {
			t, n := binary.Uvarint(b)
			b = b[n:]
			tf2 = uint16(t)
		}
		fn(uint32(prev), tf2)
	}
}

// keywordIndex is an inverted index scored with BM25.
type keywordIndex struct {
	dict   termDict
	refs   []uint64 // by term number
	lists  []postingList
	docLen []float32 // weighted term count, by slot
	live   int
	sumLen float64
}

// docTerms is the analysed form of one document: the hashes of its
// distinct terms and their weighted counts in half units.
type docTerms struct {
	hashes []uint64
	tf2s   []uint16
	len    float32
}

// analyser turns documents into docTerms; it is not safe for concurrent
// use.
type analyser struct {
	tok   tokenizer
	tfs   map[uint64]float32
	order []uint64
}

// analyse returns the weighted terms of a document: its title, text, file
// paths and evidence.
func (a *analyser) analyse(d *Doc) docTerms {
	if a.tfs == nil {
		a.tfs = make(map[uint64]float32)
	}
	clear(a.tfs)
	a.order = a.order[:0]
	var dt docTerms
	add := func(term []byte, w float32) {
		h := termHash(term)
		tf, seen := a.tfs[h]
		if !seen {
			a.order = append(a.order, h)
		}
		a.tfs[h] = tf + w
		dt.len += w
	}
	a.tok.each(d.Title, func(term []byte, _, _ int) { add(term, titleBoost) })
	a.tok.each(d.Text, func(term []byte, _, _ int) { add(term, 1) })
	for _, f := range d.Files {
		a.tok.each(f, func(term []byte, _, _ int) { add(term, 1) })
	}
	a.tok.each(d.Evidence, func(term []byte, _, _ int) { add(term, evidenceWeight) })
	dt.hashes = slices.Clone(a.order)
	dt.tf2s = make([]uint16, len(a.order))
	for i, h := range a.order {
		dt.tf2s[i] = tfUnits(a.tfs[h])
	}
	return dt
}

// analyseAll analyses n documents on all CPUs.
func analyseAll(n int, doc func(i int) *Doc) []docTerms {
	workers := min(runtime.GOMAXPROCS(0), max(1, n/256))
	docs := make([]docTerms, n)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var a analyser
			for i := w; i < n; i += workers {
				docs[i] = a.analyse(doc(i))
			}
		}()
	}
	wg.Wait()
	return docs
}

// add records the terms of the document in slot.
func (k *keywordIndex) add(slot uint32, d docTerms) {
	for i, h := range d.hashes {
		id, added := k.dict.add(h)
		if added {
			k.refs = append(k.refs, 0)
		}
		k.post(id, slot, d.tf2s[i])
	}
	for int(slot) >= len(k.docLen) {
		k.docLen = append(k.docLen, 0)
	}
	k.docLen[slot] = d.len
	k.live++
	k.sumLen += float64(d.len)
}

// post adds a posting to term id.
func (k *keywordIndex) post(id, slot uint32, tf2 uint16) {
	ref := k.refs[id]
	switch {
	case ref == 0:
		k.refs[id] = singleRef(slot, tf2)
	case ref&listBit == 0:
		first, ftf := uint32(ref>>16), uint16(ref)
		l := postingList{data: appendPosting(nil, 0, first, ftf), last: first, n: 1}
		l.data = appendPosting(l.data, first, slot, tf2)
		l.last, l.n = slot, 2
		k.refs[id] = listBit | uint64(len(k.lists))
		k.lists = append(k.lists, l)
	default:
		l := &k.lists[uint32(ref)]
		l.data = appendPosting(l.data, l.last, slot, tf2)
		l.last = slot
		l.n++
	}
}

// remove forgets the length of the document in slot; its postings stay
// until compact.
func (k *keywordIndex) remove(slot uint32) {
	k.live--
	k.sumLen -= float64(k.docLen[slot])
	k.docLen[slot] = 0
}

// compact drops the postings of dead slots.
func (k *keywordIndex) compact(dead func(slot uint32) bool) {
	for id, ref := range k.refs {
		switch {
		case ref == 0:
		case ref&listBit == 0:
			if dead(uint32(ref >> 16)) {
				k.refs[id] = 0
			}
		default:
			l := &k.lists[uint32(ref)]
			var kept postingList
			l.each(func(slot uint32, tf2 uint16) {
				if !dead(slot) {
					kept.data = appendPosting(kept.data, kept.last, slot, tf2)
					kept.last = slot
					kept.n++
				}
			})
			if kept.n < l.n {
				kept.data = slices.Clip(kept.data)
				*l = kept
			}
		}
	}
}

// df returns the number of documents holding term id, dead ones included
// until compact.
func (k *keywordIndex) df(id uint32) int {
	ref := k.refs[id]
	switch {
	case ref == 0:
		return 0
	case ref&listBit == 0:
		return 1
	}
	return int(k.lists[uint32(ref)].n)
}

// each calls fn for every posting of term id.
func (k *keywordIndex) each(id uint32, fn func(slot uint32, tf2 uint16)) {
	ref := k.refs[id]
	switch {
	case ref == 0:
	case ref&listBit == 0:
		fn(uint32(ref>>16), uint16(ref))
	default:
		k.lists[uint32(ref)].each(fn)
	}
}

// queryTerm is a term of a query with its inverse document frequency; bit
// is its place in the masks of matched terms (queryBits terms at most).
type queryTerm struct {
	id  uint32
	idf float64
	bit uint
}

// queryBits is the number of a query's distinct terms whose matches a
// search tracks per document.
const queryBits = 64

// lookup returns the distinct known terms of a query with their BM25 IDF.
func (k *keywordIndex) lookup(terms []string) []queryTerm {
	var out []queryTerm
	seen := make(map[uint32]bool)
	for _, t := range terms {
		id, ok := k.dict.find(termHashString(t))
		if !ok || seen[id] || k.df(id) == 0 {
			continue
		}
		seen[id] = true
		out = append(out, queryTerm{id: id, idf: k.idf(id), bit: uint(len(out))})
	}
	return out
}

func (k *keywordIndex) idf(id uint32) float64 {
	live := float64(k.live)
	df := min(float64(k.df(id)), live)
	return math.Log(1 + (live-df+0.5)/(df+0.5))
}

// score adds the BM25 score of every live document holding a query term to
// s.scores, marks the terms it holds in s.masks, and lists each slot it
// touches once in s.touched.
func (k *keywordIndex) score(q []queryTerm, s *scratch, alive func(uint32) bool) {
	if k.live == 0 {
		return
	}
	avg := k.sumLen / float64(k.live)
	for _, t := range q {
		bit := uint64(0)
		if t.bit < queryBits {
			bit = 1 << t.bit
		}
		k.each(t.id, func(slot uint32, tf2 uint16) {
			if !alive(slot) {
				return
			}
			tf := float64(tf2) / 2
			norm := bm25K1 * (1 - bm25B + bm25B*float64(k.docLen[slot])/avg)
			if s.scores[slot] == 0 && s.masks[slot] == 0 {
				s.touched = append(s.touched, slot)
			}
			s.scores[slot] += float32(t.idf * tf * (bm25K1 + 1) / (tf + norm))
			s.masks[slot] |= bit
		})
	}
}

// scratch is a search's per-slot buffers.
type scratch struct {
	scores  []float32
	masks   []uint64 // the query terms (by bit) each slot holds
	touched []uint32
}

// reset zeroes what the last search touched.
func (s *scratch) reset() {
	for _, slot := range s.touched {
		s.scores[slot], s.masks[slot] = 0, 0
	}
	s.touched = s.touched[:0]
}
