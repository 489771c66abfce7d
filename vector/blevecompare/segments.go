package main

import (
	"context"
	"fmt"
	"github.com/mnemo-dev/mnemo/vector/internal/evalset"
	"io"
	"path/filepath"
	"time"

	"github.com/blevesearch/bleve/v2"
)

// measureAdds builds each engine over n memories in one go, then adds
// adds more one at a time, as a daemon records observations, and writes the
// search latency across all projects before and after. bleve makes a
// segment per batch; only an index with a path merges them in the
// background (scorch starts its merger and persister only then), so an
// in-memory scorch index keeps every one.
func measureAdds(ctx context.Context, w io.Writer, s *evalset.Set, b bleveSetup, n, adds int, tempDir string) error {
	docs, err := corpus(ctx, s, n+adds)
	if err != nil {
		return err
	}
	base, more := docs[:n], docs[n:]
	engines := []engine{oursKeywordOnlyEngine(), bleveMemoryEngine(b), bleveDiskEngine(b)}
	fmt.Fprintf(w, "### %d single adds after a build of %dk memories\n\n", adds, n/1000)
	fmt.Fprintln(w, "| engine | all p50 ms before | all p50 ms after | all p99 ms after | add one p50 ms | segments after |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|")
	for i, eng := range engines {
		d, m := base, more
		if eng.prepare != nil {
			d, m = eng.prepare(base), eng.prepare(more)
		}
		dir := filepath.Join(tempDir, fmt.Sprintf("adds-%d", i))
		ix, err := eng.build(ctx, d, dir)
		if err != nil {
			return fmt.Errorf("%s: %w", eng.name, err)
		}
		if ix.reopen != nil {
			if _, err := ix.reopen(); err != nil {
				return fmt.Errorf("%s: %w", eng.name, err)
			}
		}
		before, err := allLatencies(ix, s)
		if err != nil {
			return fmt.Errorf("%s: %w", eng.name, err)
		}
		addTimes := make([]time.Duration, 0, len(m))
		for _, doc := range m {
			start := time.Now()
			if err := ix.add(doc); err != nil {
				return fmt.Errorf("%s: %w", eng.name, err)
			}
			addTimes = append(addTimes, time.Since(start))
		}
		after, err := allLatencies(ix, s)
		if err != nil {
			return fmt.Errorf("%s: %w", eng.name, err)
		}
		segments := "–"
		if ix.index != nil {
			segments = fmt.Sprint(rootSegments(*ix.index))
		}
		ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
		fmt.Fprintf(w, "| %s | %.2f | %.2f | %.2f | %.3f | %s |\n", eng.name,
			ms(percentile(before, 50)), ms(percentile(after, 50)), ms(percentile(after, 99)),
			ms(percentile(addTimes, 50)), segments)
		if err := ix.close(); err != nil {
			return fmt.Errorf("%s: %w", eng.name, err)
		}
	}
	fmt.Fprintln(w)
	return nil
}

// allLatencies times three passes of the queries across all projects.
func allLatencies(ix built, s *evalset.Set) ([]time.Duration, error) {
	var ds []time.Duration
	for range 3 {
		for _, q := range s.Queries {
			start := time.Now()
			if err := ix.search(q.Query, ""); err != nil {
				return nil, err
			}
			ds = append(ds, time.Since(start))
		}
	}
	return ds, nil
}

// rootSegments returns the number of segments of a scorch index's current
// snapshot, in memory and in files, or -1 when the stats do not say.
func rootSegments(idx bleve.Index) int {
	stats, ok := idx.StatsMap()["index"].(map[string]any)
	if !ok {
		return -1
	}
	total := 0
	for _, k := range []string{"TotMemorySegmentsAtRoot", "TotFileSegmentsAtRoot"} {
		v, ok := stats[k].(uint64)
		if !ok {
			return -1
		}
		total += int(v)
	}
	return total
}
