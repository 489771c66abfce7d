package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"syscall"
	"time"

	"github.com/blevesearch/bleve/v2"

	"github.com/mnemo-dev/mnemo/vector"
	"github.com/mnemo-dev/mnemo/vector/internal/evalset"
)

// speedConfig says how much to measure.
type speedConfig struct {
	sizes   []int
	runs    int // builds per engine and size; medians are quoted
	reps    int // passes over the queries per run and scope
	adds    int // single-document adds timed per run
	tempDir string
}

// sample is what one run of one engine measures.
type sample struct {
	build, buildCPU                  time.Duration // from empty to searchable (and durable, on disk)
	open                             time.Duration // reopening a built on-disk index
	heap                             int64         // live heap held by the index, bytes
	disk                             int64         // bytes on disk
	projP50, projP99, allP50, allP99 time.Duration
	addP50                           time.Duration // adding one memory to the built index
}

// engine is one index under test: how to build it over docs and what the
// built index can do.
type engine struct {
	name string
	// prepare, when set, changes the docs before any timing.
	prepare func(docs []vector.Doc) []vector.Doc
	build   func(ctx context.Context, docs []vector.Doc, dir string) (built, error)
}

// built is an index after its build. For an on-disk index, reopen closes
// it and opens it again, returning the time that took; searches and adds
// then use the reopened index.
type built struct {
	search func(text, project string) error
	add    func(d vector.Doc) error
	reopen func() (time.Duration, error)
	close  func() error
	index  *bleve.Index // the bleve index, nil for ours
}

// oursEngine is Mnemo's index as the daemon loads it: one Add of memories
// whose vectors Badger has stored. Add also fills the vector side (the
// chromem-go collections, without embedding), so the time and heap include
// it.
func oursEngine() engine {
	return engine{name: "ours with vectors (memory)", build: func(ctx context.Context, docs []vector.Doc, _ string) (built, error) {
		ix := vector.NewIndex(vector.NewHashEmbedder())
		if err := ix.Add(ctx, docs...); err != nil {
			return built{}, err
		}
		return built{
			search: func(text, project string) error {
				_, err := ix.Search(ctx, vector.Query{Text: text, Project: project, Limit: 10, Mode: vector.Keyword})
				return err
			},
			add:   func(d vector.Doc) error { return ix.Add(ctx, d) },
			close: func() error { return nil },
		}, nil
	}}
}

// oursKeywordOnlyEngine is Mnemo's index with no vectors at all: its
// embedder has nothing to embed, so Add builds the keyword index and the
// per-memory entries (for the filters and snippets) only. This is the part
// bleve would replace, whatever the vector side of Add costs.
func oursKeywordOnlyEngine() engine {
	return engine{
		name: "ours keyword only (memory)",
		prepare: func(docs []vector.Doc) []vector.Doc {
			docs = slices.Clone(docs)
			for i := range docs {
				docs[i].Vector = nil
			}
			return docs
		},
		build: func(ctx context.Context, docs []vector.Doc, _ string) (built, error) {
			ix := vector.NewIndex(noTextEmbedder{})
			if err := ix.Add(ctx, docs...); err != nil {
				return built{}, err
			}
			return built{
				search: func(text, project string) error {
					_, err := ix.Search(ctx, vector.Query{Text: text, Project: project, Limit: 10, Mode: vector.Keyword})
					return err
				},
				add: func(d vector.Doc) error {
					d.Vector = nil
					return ix.Add(ctx, d)
				},
				close: func() error { return nil },
			}, nil
		},
	}
}

// noTextEmbedder finds nothing to embed in any text, so that an index
// using it keeps no vectors. Its dimension is 1, to keep the index's
// per-memory vector bookkeeping as small as it goes.
type noTextEmbedder struct{}

func (noTextEmbedder) ID() string { return "none" }
func (noTextEmbedder) Dim() int   { return 1 }
func (noTextEmbedder) Embed(context.Context, string) ([]float32, error) {
	return nil, vector.ErrNoText
}

// bleveMemoryEngine builds an in-memory scorch index in one batch, as a
// daemon would rebuild it from Badger at each start.
func bleveMemoryEngine(b bleveSetup) engine {
	return engine{name: b.name + " (memory)", build: func(_ context.Context, docs []vector.Doc, _ string) (built, error) {
		idx, err := b.openMemory()
		if err != nil {
			return built{}, err
		}
		if err := b.indexDocs(idx, docs, 0); err != nil {
			idx.Close()
			return built{}, err
		}
		return bleveBuilt(b, &idx, ""), nil
	}}
}

// bleveDiskEngine builds an on-disk scorch index in dir in one batch, which
// returns once the segment is persisted, and closes it.
func bleveDiskEngine(b bleveSetup) engine {
	return engine{name: b.name + " (disk)", build: func(_ context.Context, docs []vector.Doc, dir string) (built, error) {
		idx, err := b.create(dir)
		if err != nil {
			return built{}, err
		}
		if err := b.indexDocs(idx, docs, 0); err != nil {
			idx.Close()
			return built{}, err
		}
		return bleveBuilt(b, &idx, dir), nil
	}}
}

func bleveBuilt(b bleveSetup, idx *bleve.Index, dir string) built {
	out := built{
		index: idx,
		search: func(text, project string) error {
			_, err := b.search(*idx, text, project, 10)
			return err
		},
		add: func(d vector.Doc) error { return b.indexDocs(*idx, []vector.Doc{d}, 1) },
		close: func() error {
			if *idx == nil {
				return nil
			}
			return (*idx).Close()
		},
	}
	if dir != "" {
		out.reopen = func() (time.Duration, error) {
			if err := (*idx).Close(); err != nil {
				*idx = nil
				return 0, err
			}
			*idx = nil
			start := time.Now()
			reopened, err := bleve.Open(dir)
			if err != nil {
				return 0, fmt.Errorf("bleve reopen: %w", err)
			}
			// A first search pages in what a search needs.
			if _, err := b.search(reopened, "warm", "", 1); err != nil {
				return 0, err
			}
			*idx = reopened
			return time.Since(start), nil
		}
	}
	return out
}

// measureSpeed builds every engine at every size cfg.runs times and writes
// a table of medians per size.
func measureSpeed(ctx context.Context, w io.Writer, s *evalset.Set, engines []engine, cfg speedConfig) error {
	for _, n := range cfg.sizes {
		docs, err := corpus(ctx, s, n)
		if err != nil {
			return err
		}
		// The single adds index copies of the first memories under new ids.
		extra := slices.Clone(docs[:cfg.adds])
		for i := range extra {
			extra[i].ID = uint64(n + i + 1)
		}
		engineDocs := make([][]vector.Doc, len(engines))
		for e, eng := range engines {
			engineDocs[e] = docs
			if eng.prepare != nil {
				engineDocs[e] = eng.prepare(docs)
			}
		}
		samples := make([][]sample, len(engines))
		// Runs interleave the engines, so that a slow spell of the shared
		// machine does not fall on one engine only.
		for run := range cfg.runs {
			for e, eng := range engines {
				smp, err := measureOnce(ctx, eng, s, engineDocs[e], extra, cfg, run)
				if err != nil {
					return fmt.Errorf("%s at %d: %w", eng.name, n, err)
				}
				slog.Info("measured", "engine", eng.name, "docs", n, "run", run,
					"build", smp.build.Round(time.Millisecond), "heapMiB", smp.heap>>20,
					"projP50", smp.projP50, "allP50", smp.allP50)
				samples[e] = append(samples[e], smp)
			}
		}
		writeSpeedTable(w, n, engines, samples, cfg)
		runtime.KeepAlive(engineDocs)
	}
	return nil
}

// measureOnce builds one engine over docs and measures it.
func measureOnce(ctx context.Context, eng engine, s *evalset.Set, docs, extra []vector.Doc, cfg speedConfig, run int) (sample, error) {
	var smp sample
	dir := filepath.Join(cfg.tempDir, fmt.Sprintf("idx-%d-%d", len(docs), run))
	defer os.RemoveAll(dir)
	base := liveHeap()
	cpu := processCPU()
	start := time.Now()
	ix, err := eng.build(ctx, docs, dir)
	if err != nil {
		return smp, err
	}
	defer ix.close()
	if ix.reopen != nil {
		// The build of an on-disk index ends when it is closed.
		d, err := ix.reopen()
		if err != nil {
			return smp, err
		}
		smp.open = d
	}
	smp.build = time.Since(start) - smp.open
	smp.buildCPU = processCPU() - cpu
	smp.heap = liveHeap() - base
	if ix.reopen != nil {
		if smp.disk, err = dirSize(dir); err != nil {
			return smp, err
		}
	}

	proj, all := make([]time.Duration, 0, cfg.reps*len(s.Queries)), make([]time.Duration, 0, cfg.reps*len(s.Queries))
	for range cfg.reps {
		for i, q := range s.Queries {
			for _, project := range []string{evalset.ProjectName(i), ""} {
				start := time.Now()
				if err := ix.search(q.Query, project); err != nil {
					return smp, err
				}
				if project != "" {
					proj = append(proj, time.Since(start))
				} else {
					all = append(all, time.Since(start))
				}
			}
		}
	}
	smp.projP50, smp.projP99 = percentile(proj, 50), percentile(proj, 99)
	smp.allP50, smp.allP99 = percentile(all, 50), percentile(all, 99)

	adds := make([]time.Duration, 0, len(extra))
	for _, d := range extra {
		start := time.Now()
		if err := ix.add(d); err != nil {
			return smp, err
		}
		adds = append(adds, time.Since(start))
	}
	smp.addP50 = percentile(adds, 50)
	return smp, nil
}

func writeSpeedTable(w io.Writer, n int, engines []engine, samples [][]sample, cfg speedConfig) {
	fmt.Fprintf(w, "### %dk memories (medians of %d runs; latencies over %d passes of the %s)\n\n",
		n/1000, cfg.runs, cfg.reps, "72 queries per run")
	fmt.Fprintln(w, "| engine | build s | build CPU s | reopen s | heap MiB | disk MiB | project p50 ms | project p99 ms | all p50 ms | all p99 ms | add one p50 ms |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for e, eng := range engines {
		med := func(f func(sample) float64) float64 {
			vs := make([]float64, len(samples[e]))
			for i, s := range samples[e] {
				vs[i] = f(s)
			}
			slices.Sort(vs)
			return vs[len(vs)/2]
		}
		sec := func(d time.Duration) float64 { return d.Seconds() }
		ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
		reopen, disk := "–", "–"
		if samples[e][0].disk > 0 {
			reopen = fmt.Sprintf("%.3f", med(func(s sample) float64 { return sec(s.open) }))
			disk = fmt.Sprintf("%.1f", med(func(s sample) float64 { return float64(s.disk) / (1 << 20) }))
		}
		fmt.Fprintf(w, "| %s | %.2f | %.2f | %s | %.1f | %s | %.2f | %.2f | %.2f | %.2f | %.3f |\n", eng.name,
			med(func(s sample) float64 { return sec(s.build) }),
			med(func(s sample) float64 { return sec(s.buildCPU) }),
			reopen,
			med(func(s sample) float64 { return float64(s.heap) / (1 << 20) }),
			disk,
			med(func(s sample) float64 { return ms(s.projP50) }),
			med(func(s sample) float64 { return ms(s.projP99) }),
			med(func(s sample) float64 { return ms(s.allP50) }),
			med(func(s sample) float64 { return ms(s.allP99) }),
			med(func(s sample) float64 { return ms(s.addP50) }))
	}
	fmt.Fprintln(w)
}

// liveHeap returns the bytes of live heap objects after a full collection.
func liveHeap() int64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// processCPU returns the user and system CPU time of the process so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// percentile returns the p-th percentile of ds (nearest rank), sorting ds.
func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	i := (len(ds)*p + 99) / 100
	return ds[max(0, min(len(ds)-1, i-1))]
}

// dirSize returns the bytes of the regular files under dir.
func dirSize(dir string) (int64, error) {
	var total int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		total += info.Size()
		return nil
	})
	return total, err
}
