package vector

import (
	"math"
	"math/bits"
	"runtime"
	"slices"
	"sync"
)

// A large vector search runs in two stages. chromem-go scans every vector of
// a collection, at about 1.3 µs each here (a dot product of 512 floats, a
// lock per document and a walk of its document map): 13 ms for 10k vectors
// and over 100 ms across 100k. So a scan of more than prefilterMin vectors
// first compares codes of two bits per component (its sign, or zero), 128
// bytes a vector where the quantized vector is 512 bytes; the codes of 100k
// vectors compare in about a millisecond per core. The candidates whose
// signs agree best with the query's are then ranked by their cosine
// similarity with the quantized vector (quant.go), the score chromem-go
// gives for a small project's. What the first stage can lose is a vector whose signs
// differ though its angle is close: BenchmarkPrefilterRecall measures the
// share of the exhaustive top 100 it keeps (about 0.997 with the sentence
// encoder at 100k, 0.77–0.95 with the hashing embedder, whose vectors weigh
// less in a hybrid search).
const (
	// prefilterMin is the number of vectors in scope from which a search
	// uses the codes instead of chromem-go's exhaustive scan.
	prefilterMin = 4096
	// prefilterPerHit and prefilterFloor set how many candidates the codes
	// pass to the exact ranking: prefilterPerHit per hit wanted, at least
	// prefilterFloor.
	prefilterPerHit = 50
	prefilterFloor  = 5000
)

// codeWords is the number of 64-bit words of the code of a dim-vector.
func codeWords(dim int) int { return (dim + 31) / 32 }

// signCode writes the code of v into code: two bits per component, one set
// when it is positive, one when it is negative. A dense vector (a sentence
// encoder's) sets one of the two for every component; a sparse one (the
// hashing embedder's) sets neither for its zeros, so that two sparse vectors
// differ by the components that one has and the other has not.
func signCode(v []float32, code []uint64) {
	clear(code)
	for i, x := range v {
		// Without branches: the signs of embeddings are unpredictable.
		b := math.Float32bits(x)
		nonzero := uint64((b&0x7fffffff + 0x7fffffff) >> 31) // 1 unless ±0
		neg := uint64(b >> 31)
		code[i/32] |= nonzero << (2*(i%32) + int(neg))
	}
}

// distance compares a document's code with the query's on the components
// where the query is not zero: it is the number of components less the
// number of those where the signs agree plus the number where they differ,
// from 0 (every sign agrees) to twice the number of components. Components
// the query lacks do not count, as they do not in a dot product: a short
// query's vector under the hashing embedder has few.
func distance(q, d []uint64, components int) int {
	d = d[:len(q)]
	agree, differ := 0, 0
	for i, x := range q {
		y := d[i]
		swapped := (y&evenBits)<<1 | (y>>1)&evenBits
		agree += bits.OnesCount64(x & y)
		differ += bits.OnesCount64(x & swapped)
	}
	return components - agree + differ
}

// evenBits selects the positive-sign bit of every component in a code word.
const evenBits = 0x5555555555555555

// dotUnrolled returns the dot product of two slices of the same length with
// eight independent sums, which a CPU runs in parallel.
func dotUnrolled(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= len(a); i += 8 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
		s4 += a[i+4] * b[i+4]
		s5 += a[i+5] * b[i+5]
		s6 += a[i+6] * b[i+6]
		s7 += a[i+7] * b[i+7]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3) + (s4 + s5) + (s6 + s7)
}

// quantRanking returns the depth documents most similar to the unit
// vector qv among those f keeps, by their quantized vectors: when prefilter
// is set, in two stages, the candidates nearest by sign code, then their
// similarity; else every kept vector's similarity. Callers hold the read
// lock.
func (ix *Index) quantRanking(qv []float32, f *filter, depth int, prefilter bool) []ranked {
	w := ix.words
	n := len(ix.slots)
	workers := min(runtime.GOMAXPROCS(0), max(1, n/16384))
	var wg sync.WaitGroup

	limit := math.MaxInt
	var dist []uint16
	if prefilter {
		qcode := make([]uint64, w)
		signCode(qv, qcode)
		// First stage: the distance of every kept vector's code, by slot,
		// on all CPUs; 0xFFFF marks a slot out of scope.
		dist = make([]uint16, n)
		hists := make([][]int, workers)
		for wk := range workers {
			lo, hi := n*wk/workers, n*(wk+1)/workers
			hist := make([]int, w*64+1)
			hists[wk] = hist
			wg.Add(1)
			go func() {
				defer wg.Done()
				for slot := lo; slot < hi; slot++ {
					if ix.inv[slot] == 0 || !f.keep(&ix.slots[slot]) {
						dist[slot] = 0xFFFF
						continue
					}
					d := distance(qcode, ix.codes[slot*w:slot*w+w], w*32)
					dist[slot] = uint16(d)
					hist[d]++
				}
			}()
		}
		wg.Wait()

		// The distance under which the wanted number of candidates lies: a
		// counting pass instead of a sort.
		want := max(prefilterFloor, prefilterPerHit*depth)
		total := 0
		for d := range w*64 + 1 {
			for _, h := range hists {
				total += h[d]
			}
			limit = d
			if total >= want {
				break
			}
		}
		if total == 0 {
			return nil
		}
	}

	// Second stage: the similarity of the candidates, on all CPUs too:
	// reading their vectors is most of the time of a search.
	parts := make([][]ranked, workers)
	for wk := range workers {
		lo, hi := n*wk/workers, n*(wk+1)/workers
		wg.Add(1)
		go func() {
			defer wg.Done()
			var rs []ranked
			for slot := lo; slot < hi; slot++ {
				if prefilter {
					if int(dist[slot]) > limit {
						continue
					}
				} else if ix.inv[slot] == 0 || !f.keep(&ix.slots[slot]) {
					continue
				}
				rs = append(rs, ranked{uint32(slot), ix.similarity(qv, uint32(slot))})
			}
			parts[wk] = rs
		}()
	}
	wg.Wait()
	return ix.top(slices.Concat(parts...), depth)
}
