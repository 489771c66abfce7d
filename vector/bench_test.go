package vector_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/vector"
	"github.com/mnemo-dev/mnemo/vector/internal/evalset"
)

// benchCorpus makes n realistic memories from the evaluation set
// (evalset.Corpus), with vectors from the hashing embedder: the time of a
// search does not depend on what the vectors mean.
func benchCorpus(b *testing.B, n int) []vector.Doc {
	b.Helper()
	corpusMu.Lock()
	defer corpusMu.Unlock()
	if docs, ok := corpora[n]; ok {
		return docs
	}
	docs := loadEvalSet(b, "testdata/eval").Corpus(n)
	if err := evalset.Embed(context.Background(), vector.NewHashEmbedder(), docs); err != nil {
		b.Fatal(err)
	}
	corpora[n] = docs
	return docs
}

var (
	corpusMu sync.Mutex
	corpora  = map[int][]vector.Doc{}
)

// latency records the wall time of each operation and the CPU time of the
// whole process: on a shared machine the CPU time per operation says what an
// operation costs when wall times are inflated by other work.
type latency struct {
	ds  []time.Duration
	cpu time.Duration
}

func startLatency() *latency { return &latency{cpu: -processCPU()} }

// report reports the median and 90th percentile wall time, and the CPU time
// per operation.
func (l *latency) report(b *testing.B) {
	l.cpu += processCPU()
	if len(l.ds) == 0 {
		return
	}
	slices.Sort(l.ds)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(l.ds[len(l.ds)/2]), "p50-ms")
	b.ReportMetric(ms(l.ds[len(l.ds)*9/10]), "p90-ms")
	b.ReportMetric(ms(l.cpu)/float64(len(l.ds)), "cpu-ms/op")
}

// BenchmarkSearch measures Index.Search on 10k and 100k memories, within one
// project (a tenth of the store) and across all, with the hashing embedder
// and, when MNEMO_MODELS has it, the sentence encoder embedding the query.
func BenchmarkSearch(b *testing.B) {
	ctx := context.Background()
	queries := loadEvalSet(b, "testdata/eval").Queries
	embedders := []vector.Embedder{vector.NewHashEmbedder()}
	if m := benchUSELite(b); m != nil {
		embedders = append(embedders, m)
	}
	for _, n := range []int{10_000, 100_000} {
		docs := benchCorpus(b, n)
		for _, e := range embedders {
			ix := vector.NewIndex(e)
			if err := ix.Add(ctx, docs...); err != nil {
				b.Fatal(err)
			}
			for _, scope := range []string{"project", "all"} {
				for _, mode := range []vector.Mode{vector.Hybrid, vector.Keyword, vector.Vector} {
					b.Run(fmt.Sprintf("%dk/%s/%s/%s", n/1000, e.ID(), scope, mode), func(b *testing.B) {
						lat := startLatency()
						i := 0
						for b.Loop() {
							q := vector.Query{Text: queries[i%len(queries)].Query, Mode: mode}
							if scope == "project" {
								q.Project = evalset.ProjectName(i)
							}
							i++
							start := time.Now()
							if _, err := ix.Search(ctx, q); err != nil {
								b.Fatal(err)
							}
							lat.ds = append(lat.ds, time.Since(start))
						}
						lat.report(b)
					})
				}
			}
		}
	}
}

// BenchmarkLoad measures a start-up load: Add of memories whose vectors are
// stored, in one batch.
func BenchmarkLoad(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		docs := benchCorpus(b, n)
		b.Run(fmt.Sprintf("%dk", n/1000), func(b *testing.B) {
			lat := startLatency()
			for b.Loop() {
				ix := vector.NewIndex(vector.NewHashEmbedder())
				start := time.Now()
				if err := ix.Add(context.Background(), docs...); err != nil {
					b.Fatal(err)
				}
				lat.ds = append(lat.ds, time.Since(start))
				if ix.Len() != n {
					b.Fatalf("Len %d", ix.Len())
				}
			}
			lat.report(b)
		})
	}
}

// BenchmarkEmbed measures embedding a query and a whole observation: the
// process's CPU per text (cpu-ms/op) and the median CPU of the thread
// that embeds one (cpu-p50-ms).
func BenchmarkEmbed(b *testing.B) {
	s := loadEvalSet(b, "testdata/eval")
	embedders := []vector.Embedder{vector.NewHashEmbedder()}
	if m := benchUSELite(b); m != nil {
		embedders = append(embedders, m)
	}
	texts := map[string][]string{}
	for _, q := range s.Queries {
		texts["query"] = append(texts["query"], q.Query)
	}
	for _, d := range s.Docs {
		texts["observation"] = append(texts["observation"], d.Title+"\n"+d.Text+"\n"+strings.Join(d.Files, "\n"))
	}
	for _, e := range embedders {
		for _, kind := range []string{"query", "observation"} {
			b.Run(e.ID()+"/"+kind, func(b *testing.B) {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				lat := startLatency()
				var cpu []time.Duration // of the thread, each text
				i := 0
				for b.Loop() {
					start, c0 := time.Now(), threadCPU()
					if _, err := e.Embed(context.Background(), texts[kind][i%len(texts[kind])]); err != nil {
						b.Fatal(err)
					}
					cpu = append(cpu, threadCPU()-c0)
					lat.ds = append(lat.ds, time.Since(start))
					i++
				}
				lat.report(b)
				slices.Sort(cpu)
				b.ReportMetric(float64(cpu[len(cpu)/2])/float64(time.Millisecond), "cpu-p50-ms")
			})
		}
	}
}

// benchUSELite returns the sentence encoder when MNEMO_MODELS has it,
// without its memory of recent texts: the benchmarks go over their texts
// again and again, and measure encoding them.
func benchUSELite(b *testing.B) vector.Embedder {
	useLiteOnce.Do(loadUSELite)
	if useLiteErr != nil {
		return nil
	}
	return useLite.WithoutCache()
}

// BenchmarkPrefilterRecall compares the two vector search paths on 10k and
// 100k memories: chromem-go's exhaustive scan and the sign-code prefilter
// with its exact second stage. It reports the latency of each and the
// recall of the prefilter: the share of the exhaustive top 100 (the fusion
// depth of a hybrid search) that it finds, and its clear misses: the share
// that it lacks although they are more similar, by over 0.02, than the last
// hit it returns. Vectors come from the hashing
// embedder, and, when MNEMO_MODELS has the sentence encoder, from it for a
// store of perturbed copies of the evaluation set's encodings.
func BenchmarkPrefilterRecall(b *testing.B) {
	ctx := context.Background()
	queries := loadEvalSet(b, "testdata/eval").Queries
	type store struct {
		name string
		ix   *vector.Index
	}
	var stores []store
	for _, n := range []int{10_000, 100_000} {
		ix := vector.NewIndex(vector.NewHashEmbedder())
		if err := ix.Add(ctx, benchCorpus(b, n)...); err != nil {
			b.Fatal(err)
		}
		stores = append(stores, store{fmt.Sprintf("%dk/hash", n/1000), ix})
	}
	if m := benchUSELite(b); m != nil {
		stores = append(stores, store{"100k/use-lite", useLiteStore(b, m, 100_000)})
	}
	for _, st := range stores {
		for _, scope := range []string{"project", "all"} {
			b.Run(st.name+"/"+scope, func(b *testing.B) {
				exact, pre := startLatency(), startLatency()
				var found, wanted, clearMiss int
				i := 0
				for b.Loop() {
					q := vector.Query{Text: queries[i%len(queries)].Query, Mode: vector.Vector, Limit: 100}
					if scope == "project" {
						q.Project = evalset.ProjectName(i)
					}
					i++
					st.ix.SetPrefilterMin(math.MaxInt)
					start := time.Now()
					want, err := st.ix.Search(ctx, q)
					if err != nil {
						b.Fatal(err)
					}
					exact.ds = append(exact.ds, time.Since(start))
					st.ix.SetPrefilterMin(0)
					start = time.Now()
					got, err := st.ix.Search(ctx, q)
					if err != nil {
						b.Fatal(err)
					}
					pre.ds = append(pre.ds, time.Since(start))
					in := make(map[uint64]bool, len(got))
					for _, h := range got {
						in[h.ID] = true
					}
					floor := 0.0
					if len(got) > 0 {
						floor = got[len(got)-1].Score
					}
					for _, h := range want {
						if in[h.ID] {
							found++
						} else if h.Score > floor+0.02 {
							clearMiss++
						}
					}
					wanted += len(want)
				}
				slices.Sort(exact.ds)
				slices.Sort(pre.ds)
				b.ReportMetric(float64(exact.ds[len(exact.ds)/2].Microseconds())/1000, "exhaustive-p50-ms")
				b.ReportMetric(float64(pre.ds[len(pre.ds)/2].Microseconds())/1000, "prefilter-p50-ms")
				b.ReportMetric(float64(found)/float64(max(1, wanted)), "recall@100")
				b.ReportMetric(float64(clearMiss)/float64(max(1, wanted)), "clear-misses")
			})
		}
	}
}

// useLiteStore makes n memories whose vectors are the sentence encoder's
// encodings of the evaluation set, each perturbed by noise of a random
// strength, so that the store holds clusters of related vectors as a real
// one does, in 10 projects.
func useLiteStore(b *testing.B, m vector.Embedder, n int) *vector.Index {
	b.Helper()
	s := loadEvalSet(b, "testdata/eval")
	base := make([][]float32, len(s.Docs))
	for i, d := range s.Docs {
		v, err := m.Embed(context.Background(), d.Title+"\n"+d.Text)
		if err != nil {
			b.Fatal(err)
		}
		base[i] = v
	}
	rng := rand.New(rand.NewPCG(uint64(n), 11))
	docs := make([]vector.Doc, n)
	for i := range docs {
		v := slices.Clone(base[i%len(base)])
		noise := 0.02 + 0.08*rng.Float64()
		for j := range v {
			v[j] += float32(rng.NormFloat64() * noise)
		}
		docs[i] = vector.Doc{ID: uint64(i + 1), Project: evalset.ProjectName(i), Title: s.Docs[i%len(s.Docs)].Title, Vector: v}
	}
	ix := vector.NewIndex(m)
	if err := ix.Add(context.Background(), docs...); err != nil {
		b.Fatal(err)
	}
	return ix
}
