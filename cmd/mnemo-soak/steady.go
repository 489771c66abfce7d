//go:build unix

package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/client"
	"github.com/mnemo-dev/mnemo/rpc"
)

// The steady mode (-steady FILE) asks whether a daemon holding a large
// store keeps its memory flat under time: it imports FILE (the benchmark's
// 100k export), restarts the daemon so that it loads the store as after a
// reboot, then runs -events hook events and -searches searches against it,
// with no faults, while it samples the daemon's VmRSS every -sample. The
// load's samples are cut into five windows of equal time; the second
// window's median is where the daemon settled (the first holds the index
// load and the first embeddings), and every later window's median, and
// the median once the queue has drained, must stay within -steady-tolerance
// of it. Then the usual checks run: every event stored exactly once.

// rssSample is the daemon's resident memory at one moment.
type rssSample struct {
	at    time.Duration // since the sampling began
	mb    float64
	phase string
}

// steadyResult is what the steady mode measured.
type steadyResult struct {
	file           string
	imported       time.Duration
	firstSearch    time.Duration // restart to the first search answered
	load           time.Duration // the events and searches
	drain          time.Duration
	events         int
	searches       int
	searchFailures int
	searchP50      time.Duration
	windows        []rssWindow
	settled        float64
	samples        int
}

// rssWindow summarizes the samples of one stretch of time.
type rssWindow struct {
	name              string
	n                 int
	min, median, max  float64
	ratio             float64 // median over the settled level
	checked, exceeded bool
}

// runSteady is the steady mode's run.
func (s *soak) runSteady(ctx context.Context) (*report, error) {
	res := &steadyResult{file: s.o.steady}
	s.log.Info("steady: importing", "file", s.o.steady)
	if _, err := s.mnemo(ctx, "status"); err != nil {
		return nil, err
	}
	start := time.Now()
	if _, err := s.mnemo(ctx, "import", s.o.steady); err != nil {
		return nil, err
	}
	if err := s.waitQuiet(ctx, 30*time.Minute); err != nil {
		return nil, err
	}
	res.imported = time.Since(start)
	s.log.Info("steady: imported; restarting the daemon", "took", res.imported.Round(time.Millisecond))
	if _, err := s.mnemo(ctx, "daemon", "stop"); err != nil {
		return nil, err
	}
	start = time.Now()
	if _, err := s.mnemo(ctx, "status"); err != nil {
		return nil, err
	}
	pid, err := s.daemonPID(ctx)
	if err != nil {
		return nil, err
	}

	// The sampler reads /proc/<pid>/status until stopped.
	var (
		phase   atomic.Value
		mu      sync.Mutex
		samples []rssSample
		died    error
	)
	phase.Store("start")
	sampleCtx, stopSampling := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		t0 := time.Now()
		for {
			mb, err := vmRSS(pid)
			mu.Lock()
			if err != nil {
				died = fmt.Errorf("daemon %d: %w", pid, err)
				mu.Unlock()
				return
			}
			samples = append(samples, rssSample{time.Since(t0), mb, phase.Load().(string)})
			mu.Unlock()
			if !sleep(sampleCtx, s.o.sample) {
				return
			}
		}
	})
	defer func() { stopSampling(); wg.Wait() }()

	cl, err := rpc.Connect(ctx, rpc.ConnectOptions{Home: s.home, Client: rpc.ClientCLI})
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	mc := client.New(cl)
	if _, err := mc.Search(ctx, memory.SearchParams{Query: "invoice totals", Limit: 5}); err != nil {
		return nil, fmt.Errorf("first search: %w", err)
	}
	res.firstSearch = time.Since(start)

	phase.Store("load")
	s.eventTarget = s.o.events
	loadStart := time.Now()
	load, stop := context.WithTimeout(ctx, s.o.duration)
	defer stop()
	var took []time.Duration
	var actors sync.WaitGroup
	for a := range s.o.agents {
		r := rand.New(rand.NewPCG(s.o.seed, uint64(a)))
		actors.Go(func() { s.agent(load, a, r) })
	}
	actors.Go(func() {
		r := rand.New(rand.NewPCG(s.o.seed, 101))
		// Spread the searches over the time the events take.
		for i := 0; i < s.o.searches && load.Err() == nil; i++ {
			q := steadyQueries[r.IntN(len(steadyQueries))]
			p := memory.SearchParams{Query: q, Limit: 20}
			if r.IntN(2) == 0 {
				p.Project = "billing-api"
			}
			t0 := time.Now()
			_, err := mc.Search(load, p)
			took = append(took, time.Since(t0))
			if err != nil {
				res.searchFailures++
			}
			if s.eventsDone() {
				continue // the events are in: the rest of the searches at once
			}
			sleep(load, time.Duration(r.IntN(int(2*s.o.searchPace)+1)))
		}
	})
	actors.Wait()
	res.load = time.Since(loadStart)
	res.events, res.searches = s.hookCount(), len(took)
	if len(took) > 0 {
		slices.Sort(took)
		res.searchP50 = took[len(took)/2]
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	phase.Store("drain")
	start = time.Now()
	drainErr := s.waitQuiet(ctx, s.o.drain)
	res.drain = time.Since(start)
	if drainErr == nil {
		phase.Store("idle")
		s.log.Info("steady: load done and drained; sampling the idle daemon", "events", res.events, "searches", res.searches, "for", s.o.idle)
		sleep(ctx, s.o.idle)
	}
	stopSampling()
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()

	// The fault mode's checks need a drained queue; without one, the RSS
	// is still reported.
	rep := &report{o: s.o, runID: s.runID, hooks: map[string]*stageCount{}}
	if drainErr == nil {
		if rep, err = s.verify(ctx); err != nil {
			return nil, err
		}
	} else {
		rep.violate("steady: the queue did not drain: %v", drainErr)
	}
	rep.steady = res
	rep.searches.ok, rep.searches.failed = res.searches-res.searchFailures, res.searchFailures
	if died != nil {
		rep.violate("the daemon went away during the steady run: %v", died)
	}
	if res.events < s.o.events || res.searches < s.o.searches {
		rep.violate("the load stopped at -duration %s with %d of %d events and %d of %d searches", s.o.duration, res.events, s.o.events, res.searches, s.o.searches)
	}
	if res.searchFailures > 0 {
		rep.violate("%d searches failed", res.searchFailures)
	}
	res.summarize(samples, s.o.tolerance)
	for _, w := range res.windows {
		if w.exceeded {
			rep.violate("daemon RSS in %s: median %.0f MB, %.0f%% of the settled %.0f MB (tolerance %.0f%%)", w.name, w.median, 100*w.ratio, res.settled, 100*s.o.tolerance)
		}
	}
	return rep, nil
}

// steadyQueries are what the searcher asks: words of the soak's events and
// of the benchmark's data set.
var steadyQueries = []string{
	"invoice totals", "rounded once", "Vet the package", "retry", "total",
	"why does the login fail after the token refresh", "database migration failed",
	"ECONNREFUSED", "flaky test in CI", "where is the rate limiter configured",
	"panic: runtime error: index out of range", "cache invalidation",
}

// summarize cuts the samples into windows and checks them against the
// settled level.
func (r *steadyResult) summarize(samples []rssSample, tolerance float64) {
	r.samples = len(samples)
	var load []rssSample
	by := map[string][]float64{}
	for _, s := range samples {
		if s.phase == "load" {
			load = append(load, s)
		}
		by[s.phase] = append(by[s.phase], s.mb)
	}
	add := func(name string, v []float64) *rssWindow {
		if len(v) == 0 {
			return nil
		}
		v = slices.Clone(v)
		slices.Sort(v)
		r.windows = append(r.windows, rssWindow{name: name, n: len(v), min: v[0], median: v[len(v)/2], max: v[len(v)-1]})
		return &r.windows[len(r.windows)-1]
	}
	add("start (index load)", by["start"])
	const parts = 5
	var windows [parts][]float64
	if len(load) > 0 {
		t0, t1 := load[0].at, load[len(load)-1].at
		span := t1 - t0 + 1
		for _, s := range load {
			k := int(int64(s.at-t0) * parts / int64(span))
			windows[k] = append(windows[k], s.mb)
		}
	}
	first := len(r.windows)
	for k := range parts {
		add(fmt.Sprintf("load %d/%d", k+1, parts), windows[k])
	}
	add("drain", by["drain"])
	add("idle", by["idle"])
	// The settled level: the second fifth of the load.
	for i := first; i < len(r.windows); i++ {
		if r.windows[i].name == fmt.Sprintf("load 2/%d", parts) {
			r.settled = r.windows[i].median
		}
	}
	if r.settled == 0 {
		return
	}
	for i := range r.windows {
		w := &r.windows[i]
		w.ratio = w.median / r.settled
		if i > first+1 || strings.HasPrefix(w.name, "drain") || w.name == "idle" {
			w.checked = true
			w.exceeded = w.ratio > 1+tolerance
		}
	}
}

// print writes the steady mode's part of the report.
func (r *steadyResult) print(w io.Writer, tolerance float64) {
	fmt.Fprintf(w, "steady      imported %s in %s; first search %s after the restart; %d events and %d searches (%d failed, p50 %s) in %s; drained in %s\n",
		r.file, r.imported.Round(time.Second), r.firstSearch.Round(time.Millisecond), r.events, r.searches, r.searchFailures,
		r.searchP50.Round(100*time.Microsecond), r.load.Round(time.Second), r.drain.Round(time.Second))
	fmt.Fprintf(w, "daemon RSS  %d samples; settled at %.0f MB (median of load 2/5); later medians must stay within %.0f%%\n", r.samples, r.settled, 100*tolerance)
	fmt.Fprintf(w, "  %-20s %7s %8s %8s %8s %8s\n", "window", "samples", "min MB", "median", "max MB", "÷settled")
	for _, x := range r.windows {
		mark := ""
		if x.checked {
			mark = " ok"
			if x.exceeded {
				mark = " OVER"
			}
		}
		fmt.Fprintf(w, "  %-20s %7d %8.0f %8.0f %8.0f %7.2f%s\n", x.name, x.n, x.min, x.median, x.max, x.ratio, mark)
	}
}

// waitQuiet waits until the daemon has nothing queued and is neither
// loading its index nor embedding.
func (s *soak) waitQuiet(ctx context.Context, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		st, err := call(ctx, s, 10*time.Second, (*client.Client).Status)
		if err == nil && st.Counts.Queued == 0 && !strings.Contains(st.Embedder, "embedding:") && !strings.Contains(st.Embedder, "loading") {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("after %s the daemon still works: %s, %d queued (%v)", within, st.Embedder, st.Counts.Queued, err)
		}
		if !sleep(ctx, 250*time.Millisecond) {
			return ctx.Err()
		}
	}
}

// vmRSS reads a process's resident set in MB from /proc/<pid>/status.
func vmRSS(pid int) (float64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, err := strconv.ParseFloat(f[1], 64)
			return kb / 1024, err
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}

// hookCount is how many hooks ran.
func (s *soak) hookCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.hooks)
}

// eventsDone says whether the steady mode's hook events have all run.
func (s *soak) eventsDone() bool { return s.eventTarget > 0 && s.hookCount() >= s.eventTarget }
