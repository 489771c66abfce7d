package daemon

import (
	"context"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
	"time"
)

// The daemon's collector. Mnemo's daemon runs all day beside the editor,
// so it trades a little CPU for a resident set close to what it holds:
//
//   - GOGC 50 (DaemonGCPercent): the heap grows by half its live size
//     between collections, not by all of it.
//   - A soft memory limit that follows the live heap (memoryLimitFor):
//     live + max(live/4, 24 MiB), set once the search index is loaded and
//     looked at again every gcRefresh. At 10k the 24 MiB floor binds; in
//     both sizes the runtime hands freed pages back to the OS at once
//     instead of keeping them for the next burst. A fixed limit was tried and dropped: at 100k
//     the live heap passes any fixed limit and the collector then runs
//     without pause; this one never falls under the live heap.
//   - No limit during an import (bulkWork): the live heap grows faster than
//     the limit follows, and a 100k import went from 28 s to 116 s.
//   - debug.FreeOSMemory once the index is loaded and after an import: the
//     records decoded to build the index, or imported, are garbage by then.
//   - Badger's mapped tables: their resident pages are dropped from the
//     daemon's mappings (not from the page cache) once the index is loaded
//     and every gcRefresh after (pages_linux.go).
//
// GOGC and GOMEMLIMIT, when set, win.
//
// Measured with `mnemo-bench -parts sizes` (sentence encoder loaded, its
// weights memory-mapped; daemon VmRSS after 200 searches and 100
// SessionStarts, anonymous in brackets; search p50 · p99), one run each on
// a shared 2-core machine (docs/benchmarks.md has the table):
//
//	10k (live heap 55 MB)
//	GOGC 100                              190 MB  (113)  14.2 · 53 ms
//	GOGC 50 (before)                      162 MB   (85)  15.5 · 98 ms
//	GOGC 25                               147 MB   (70)  19.0 · 44 ms
//	GOMEMLIMIT 64 MiB                     134 MB   (57)  37.2 · 132 ms
//	GOMEMLIMIT 80 MiB                     139 MB   (63)  14.8 · 31 ms
//	live + max(live/4, 24 MiB)            139 MB   (62)  17.7 · 85 ms
//	live + max(live/2, 24 MiB)            144 MB   (66)  14.6 · 37 ms
//	100k (live heap 390 MB)
//	GOGC 50, weights in the heap (before) 1049 MB (702)  22.1 · 72 ms, import 37.5 s
//	live + max(live/4, 24 MiB)             833 MB (460)  45.6 · 313 ms, import 116 s
//	live + max(live/2, 24 MiB)             917 MB (545)  23.3 · 60 ms, import 27.5 s
//
// Then the index became flat arrays with few pointers (vector/keyword.go,
// quant.go), a third of the live heap and cheap to mark, and the tighter
// limit no longer slows search (quiet machine, one run each):
//
//	100k (live heap 151 MB)
//	live + max(live/2, 24 MiB)             329 MB (203)  14.0 · 31 ms
//	live + max(live/4, 24 MiB) (this)      291 MB (166)  13.6 · 27 ms
//	10k (live heap ~30 MB): 99 MB (46) and 99 MB (45), search 8.3 and 9.1 ms
const (
	// DaemonGCPercent is the daemon's GOGC (the GOGC variable overrides it).
	DaemonGCPercent = 50
	// gcRefresh is how often the daemon looks at its heap and drops its
	// resident pages of Badger's tables. A compaction or a burst of reads
	// maps tens of MB of tables within seconds (at 100k, 126 MB were
	// resident at the end of the bench's searches and prompts with a minute
	// or 10 s between drops, 66 MB with 2 s); a drop costs a read of
	// /proc/self/maps and a madvise per table, and a dropped page read again
	// a minor fault.
	gcRefresh = 2 * time.Second
)

// memoryLimitFor is the soft memory limit for a live heap of live bytes.
func memoryLimitFor(live uint64) int64 {
	return int64(live + max(live/4, 24<<20))
}

// setGCPercent applies DaemonGCPercent unless GOGC is set.
func setGCPercent() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(DaemonGCPercent)
	}
}

// tuneMemory waits for the search index to load, returns the load's
// garbage to the OS, then keeps the soft memory limit on the live heap
// until ctx ends.
func (d *Daemon) tuneMemory(ctx context.Context) {
	select {
	case <-d.Memory.IndexLoaded():
	case <-ctx.Done():
		return
	}
	releaseMemory()
	dropPages := func() {
		if n, err := dropTablePages(filepath.Join(d.Home, "db")); err != nil {
			d.Logger.Warn("drop the resident pages of Badger's tables", "err", err)
		} else {
			d.Logger.Debug("dropped the resident pages of Badger's tables", "mappedMB", n>>20)
		}
	}
	userLimit := os.Getenv("GOMEMLIMIT") != ""
	var last int64
	for {
		dropPages()
		live := liveHeap()
		switch {
		case userLimit:
		case bulk.Load() > 0:
			last = 0 // set again once the bulk work is done
		default:
			if limit := memoryLimitFor(live); math.Abs(float64(limit-last)) > 0.05*float64(last) {
				debug.SetMemoryLimit(limit)
				level := slog.LevelDebug
				if last == 0 {
					level = slog.LevelInfo
				}
				d.Logger.Log(ctx, level, "memory limit", "liveHeapMB", live>>20, "limitMB", limit>>20)
				last = limit
			}
		}
		if !sleep(ctx, gcRefresh) {
			return
		}
	}
}

// bulk counts the imports under way: the live heap grows faster than the
// limit follows, so the limit is lifted until they end.
var bulk atomic.Int32

// bulkWork lifts the memory limit for a bulk load (an import) and returns
// the function that ends it: it returns the garbage to the OS, and the
// limit comes back at tuneMemory's next look. GOMEMLIMIT, when set, stays.
func bulkWork() (done func()) {
	bulk.Add(1)
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(math.MaxInt64)
	}
	return func() {
		bulk.Add(-1)
		releaseMemory()
	}
}

// releaseMemory collects and returns the free pages to the OS, after a
// burst of garbage (the index load, an import).
func releaseMemory() { debug.FreeOSMemory() }

// liveHeap is the heap marked live by the last collection.
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// sleep waits d or until ctx ends; it reports whether it waited d.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
