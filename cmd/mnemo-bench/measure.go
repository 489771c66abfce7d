//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/client"
	"github.com/mnemo-dev/mnemo/memory/store"
	"github.com/mnemo-dev/mnemo/vector"
)

// dist is a sample of durations.
type dist []time.Duration

// pct returns the p-th percentile (nearest rank).
func (d dist) pct(p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	i := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}

func (d dist) p50() time.Duration { return d.pct(50) }
func (d dist) p99() time.Duration { return d.pct(99) }

// ms formats a duration in milliseconds with the precision it deserves.
func ms(d time.Duration) string {
	f := float64(d) / float64(time.Millisecond)
	switch {
	case f < 10:
		return fmt.Sprintf("%.2f ms", f)
	case f < 100:
		return fmt.Sprintf("%.1f ms", f)
	}
	return fmt.Sprintf("%.0f ms", f)
}

func p50p99(d dist) string { return fmt.Sprintf("p50 %s · p99 %s", ms(d.p50()), ms(d.p99())) }

func p50p90(d dist) string { return fmt.Sprintf("p50 %s · p90 %s", ms(d.p50()), ms(d.pct(90))) }

// embedResult is the embedding throughput of one embedder, and what one
// text and one query cost on one CPU.
type embedResult struct {
	id        string
	texts     int
	perSecond float64 // on all CPUs
	textCPU   dist    // one observation's text: the CPU time of its thread
	queryCPU  dist    // one search query: the CPU time of its thread
	query     dist    // one query, wall time
	cpus      int
	load      time.Duration // opening the model
}

// measureEmbedding embeds observation texts of the data set in-process:
// on all CPUs for the throughput, then each of singles and each query on
// one CPU, timing the CPU time of the thread that embeds it (and the
// query's wall time: what a search waits for). The sentence encoder is
// measured without its memory of recent texts (vector.USELite.WithoutCache):
// these texts are embedded more than once, and the rows are what encoding
// one costs.
func measureEmbedding(ctx context.Context, emb vector.Embedder, texts, singles []string, queries []query) (embedResult, error) {
	if u, ok := emb.(*vector.USELite); ok {
		emb = u.WithoutCache()
	}
	cpus := runtime.GOMAXPROCS(0)
	res := embedResult{id: emb.ID(), texts: len(texts), cpus: cpus}
	if _, err := embedAll(ctx, emb, texts[:min(len(texts), 4)], cpus, nil); err != nil { // warm up
		return res, err
	}
	start := time.Now()
	if _, err := embedAll(ctx, emb, texts, cpus, nil); err != nil {
		return res, err
	}
	res.perSecond = float64(len(texts)) / time.Since(start).Seconds()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for _, text := range singles {
		c0 := threadCPU()
		if _, err := emb.Embed(ctx, text); err != nil && !errors.Is(err, vector.ErrNoText) {
			return res, err
		}
		res.textCPU = append(res.textCPU, threadCPU()-c0)
	}
	for _, q := range queries {
		t0, c0 := time.Now(), threadCPU()
		if _, err := emb.Embed(ctx, q.Text); err != nil && !errors.Is(err, vector.ErrNoText) {
			return res, err
		}
		res.queryCPU = append(res.queryCPU, threadCPU()-c0)
		res.query = append(res.query, time.Since(t0))
	}
	return res, nil
}

// threadCPU is the CPU time of the calling thread (user and system).
func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

// processResult is the start-to-exit time of one kind of process.
type processResult struct {
	name   string
	times  dist
	failed int
	note   string
}

// hookResults are the hook processes and their references, run
// interleaved in one loop.
type hookResults struct {
	postToolUse, sessionStart, binTrue, node, floor processResult
	emptyGo                                         processResult   // an empty Go program (buildEmptyGo)
	baseline                                        processResult   // PostToolUse with -baseline-hook
	hosts                                           []processResult // a tool event of each other host, its dialect (hostEvents)
	undelivered                                     int
	contextBytes                                    int
	rss                                             rss // the daemon's, after the hooks
	// busy is the same loop again (without node, the other hosts and the
	// baseline) while a writer keeps the disk busy flushing (diskWriter);
	// nil in the busy run itself.
	busy *hookResults
	// wrote is what the writer wrote and synced during the busy loop.
	wrote struct {
		bytes int64
		syncs int
	}
}

// diskWriter writes 1 MB to a file in dir and fsyncs it, then pauses 20
// ms, in a loop, until stop is closed: the disk is always flushing, as it
// is when a build or another program writes, while the writer takes little
// of the two CPUs (writing back as fast as it can took a fifth of them,
// and the empty Go program ran 70 % slower beside it). It returns what it
// wrote and synced.
func diskWriter(dir string, stop <-chan struct{}) (done func() (int64, int), err error) {
	f, err := os.CreateTemp(dir, "busy-disk-*")
	if err != nil {
		return nil, err
	}
	var bytes int64
	var syncs int
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		buf := make([]byte, 1<<20)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			buf[0] = byte(i)
			if _, err := f.WriteAt(buf, int64(i%8)*int64(len(buf))); err != nil {
				return
			}
			if err := f.Sync(); err != nil {
				return
			}
			bytes += int64(len(buf))
			syncs++
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	return func() (int64, int) {
		<-finished
		f.Close()
		os.Remove(f.Name())
		return bytes, syncs
	}, nil
}

// measureHooks runs mnemo-hook for PostToolUse and SessionStart against the
// running daemon of e, n times each, interleaved with /bin/true, an empty
// Go program (buildEmptyGo) and node with an empty script (nodeN times), in
// a shuffled order per round. A baseline hook binary, when given, runs
// PostToolUse in the same rounds.
func measureHooks(ctx context.Context, log *slog.Logger, e *env, projectDir string, n, nodeN int, baseline string) (hookResults, error) {
	return measureHookLoop(ctx, log, e, projectDir, n, nodeN, baseline, false)
}

// measureHookLoop is measureHooks; with busy, only the hooks and their
// references (no node, no other host, no baseline), for the busy-disk run.
func measureHookLoop(ctx context.Context, log *slog.Logger, e *env, projectDir string, n, nodeN int, baseline string, busy bool) (hookResults, error) {
	res := hookResults{
		postToolUse:  processResult{name: "hook PostToolUse"},
		sessionStart: processResult{name: "hook SessionStart"},
		binTrue:      processResult{name: "/bin/true"},
		node:         processResult{name: "node -e ''"},
		floor:        processResult{name: "mnemo-hook, unhandled event"},
		emptyGo:      processResult{name: "empty Go program"},
	}
	emptyGo, err := buildEmptyGo(ctx, filepath.Dir(e.userHome))
	if err != nil {
		res.emptyGo.note = err.Error()
	}
	nodePath, nodeErr := exec.LookPath("node")
	if nodeErr != nil {
		res.node.note = "node not on PATH"
	}
	before, err := e.status(ctx)
	if err != nil {
		return res, err
	}
	hook := filepath.Join(e.bin, "mnemo-hook")
	original := sourceFile(4 << 10)
	ptu := func(i int) []byte {
		file := fmt.Sprintf("%s/internal/bench/hook_%05d.go", projectDir, i)
		return mustJSON(map[string]any{
			"session_id": "bench-hooks-ptu", "transcript_path": filepath.Join(e.userHome, "t.jsonl"), "cwd": projectDir,
			"permission_mode": "default", "hook_event_name": "PostToolUse", "tool_name": "Edit",
			"tool_input": map[string]any{"file_path": file, "old_string": "total - discount", "new_string": "total * (1 - rate)", "replace_all": false},
			"tool_response": map[string]any{"filePath": file, "oldString": "total - discount", "newString": "total * (1 - rate)", "originalFile": original,
				"structuredPatch": []any{map[string]any{"oldStart": 12, "oldLines": 1, "newStart": 12, "newLines": 1, "lines": []string{"-\treturn total - discount", "+\treturn total * (1 - rate)"}}},
				"userModified":    false, "replaceAll": false},
			"tool_use_id": fmt.Sprintf("toolu_bench_%05d", i), "duration_ms": 12,
		})
	}
	ss := func(i int) []byte {
		return mustJSON(map[string]any{
			"session_id": fmt.Sprintf("bench-hooks-ss-%05d", i), "transcript_path": filepath.Join(e.userHome, "t.jsonl"),
			"cwd": projectDir, "hook_event_name": "SessionStart", "source": "startup",
		})
	}
	run := func(pr *processResult, argv []string, stdin []byte, check func(out []byte) bool, record bool) {
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Env = e.environ()
		cmd.Dir = projectDir
		cmd.Stdin = bytes.NewReader(stdin)
		var out bytes.Buffer
		cmd.Stdout = &out
		start := time.Now()
		err := cmd.Run()
		took := time.Since(start)
		if !record {
			return
		}
		if err != nil || (check != nil && !check(out.Bytes())) {
			pr.failed++
			return
		}
		pr.times = append(pr.times, took)
	}
	events := hostEvents(projectDir)
	if busy {
		events, nodeN, baseline = nil, 0, ""
	}
	res.hosts = make([]processResult, len(events))
	for i, he := range events {
		res.hosts[i].name = he.host
		res.hosts[i].note = he.what
	}
	var ctxBytes []int
	checkSS := func(out []byte) bool {
		var o struct {
			HookSpecificOutput struct {
				AdditionalContext string `json:"additionalContext"`
			} `json:"hookSpecificOutput"`
		}
		if json.Unmarshal(out, &o) != nil || !strings.Contains(o.HookSpecificOutput.AdditionalContext, "<mnemo-context") {
			return false
		}
		ctxBytes = append(ctxBytes, len(o.HookSpecificOutput.AdditionalContext))
		return true
	}
	checkPTU := func(out []byte) bool { return strings.TrimSpace(string(out)) == "{}" }
	payload := ss(0)
	notification := mustJSON(map[string]any{"session_id": "bench-hooks-ss-00000", "cwd": projectDir, "hook_event_name": "Notification", "message": "Claude needs your permission"})
	const warm = 10
	r := rand.New(rand.NewPCG(1, 2))
	ptuRuns := 0
	for round := range warm + n {
		record := round >= warm
		steps := []int{0, 1, 2, 3, 4}
		if baseline != "" {
			steps = append(steps, 5)
		}
		if emptyGo != "" {
			steps = append(steps, 6)
		}
		for i := range events {
			steps = append(steps, 100+i)
		}
		r.Shuffle(len(steps), func(a, b int) { steps[a], steps[b] = steps[b], steps[a] })
		for _, s := range steps {
			switch s {
			case 0:
				run(&res.binTrue, []string{"/bin/true"}, payload, nil, record)
			case 1:
				run(&res.postToolUse, []string{hook, "PostToolUse"}, ptu(round), checkPTU, record)
				ptuRuns++
			case 2:
				run(&res.sessionStart, []string{hook, "SessionStart"}, ss(round), checkSS, record)
			case 3:
				if nodeErr == nil && round < warm+nodeN {
					run(&res.node, []string{nodePath, "-e", ""}, payload, nil, record)
				}
			case 4:
				// The same binary on an event Mnemo does not hook: process
				// start, payload read and exit, no socket.
				run(&res.floor, []string{hook, "Notification"}, notification, func(out []byte) bool { return len(out) == 0 }, record)
			case 5:
				run(&res.baseline, []string{baseline, "PostToolUse"}, ptu(n+warm+round), checkPTU, record)
				ptuRuns++
			case 6:
				run(&res.emptyGo, []string{emptyGo}, payload, nil, record)
			default:
				he := events[s-100]
				run(&res.hosts[s-100], []string{hook, "--host", he.host, he.event}, he.payload(round), func(out []byte) bool { return string(out) == he.answer }, record)
				ptuRuns++
			}
		}
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		if round%50 == 0 {
			log.Debug("hook rounds", "done", round)
		}
	}
	if len(ctxBytes) > 0 {
		slices.Sort(ctxBytes)
		res.contextBytes = ctxBytes[len(ctxBytes)/2]
	}
	// Every PostToolUse must have reached the daemon, not the spool: the
	// queue and the observations grew by one event each.
	deadline := time.Now().Add(time.Minute)
	for {
		after, err := e.status(ctx)
		if err != nil {
			return res, err
		}
		got := after.Counts.Observations + after.Counts.Queued - before.Counts.Observations - before.Counts.Queued
		res.undelivered = ptuRuns - got
		if res.undelivered <= 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	return res, nil
}

// buildEmptyGo builds `package main; func main() {}` with the go command
// that runs the benchmark (CGO_ENABLED=0, as `just build` builds the hook)
// into dir and returns the binary: the floor of any Go program's start to
// exit, which docs/architecture.md §9 measures the hook against.
func buildEmptyGo(ctx context.Context, dir string) (string, error) {
	src := filepath.Join(dir, "emptygo", "main.go")
	if err := os.MkdirAll(filepath.Dir(src), 0o700); err != nil {
		return "", err
	}
	if err := os.WriteFile(src, []byte("package main\n\nfunc main() {}\n"), 0o600); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "emptygo", "emptygo")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "main.go")
	cmd.Dir = filepath.Dir(src)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GO111MODULE=on", "GOFLAGS=-buildvcs=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build the empty Go program: %w: %s", err, strings.TrimSpace(string(out)))
	}
	return bin, nil
}

// ingestResult is the acknowledged ingest over the socket.
type ingestResult struct {
	clients        int
	acked          int
	elapsed        time.Duration
	latency        dist
	storedAtOnce   int // observations + queued right after
	storedRestart  int // the same after a SIGTERM and a restart
	errors         int
	embedder       string
	observationsAt int // observations made during the window
}

func (r ingestResult) perSecond() float64 { return float64(r.acked) / r.elapsed.Seconds() }

// measureIngest has clients connections call mnemo/postToolUse as fast as
// the daemon acknowledges, for dur; then it checks that every
// acknowledged event is stored (queued or an observation), at once and
// after a restart of the daemon.
func measureIngest(ctx context.Context, e *env, clients int, dur time.Duration) (ingestResult, error) {
	res := ingestResult{clients: clients}
	d, err := e.startDaemon()
	if err != nil {
		return res, err
	}
	defer func() { d.stop() }()
	if err := e.waitServing(ctx, d, time.Minute); err != nil {
		return res, err
	}
	conns := make([]interface {
		Call(context.Context, string, any, any) error
		Close() error
	}, clients)
	for c := range conns {
		cl, err := e.dial(ctx)
		if err != nil {
			return res, err
		}
		defer cl.Close()
		conns[c] = cl
	}
	original := sourceFile(2 << 10)
	var (
		acked, failed atomic.Int64
		mu            sync.Mutex
		wg            sync.WaitGroup
		stop          = time.Now().Add(dur)
	)
	start := time.Now()
	for c, cl := range conns {
		wg.Go(func() {
			var lat dist
			for i := 0; time.Now().Before(stop) && ctx.Err() == nil; i++ {
				file := fmt.Sprintf("/home/dev/src/billing-api/internal/ingest/c%02d/file_%06d.go", c, i)
				p := map[string]any{
					"contentSessionId": fmt.Sprintf("bench-ingest-%02d", c), "cwd": "/home/dev/src/billing-api", "platform": "claude-code",
					"toolName": "Edit", "toolUseId": fmt.Sprintf("toolu_ingest_%02d_%06d", c, i),
					"toolInput": map[string]any{"file_path": file, "old_string": "total - discount", "new_string": "total * (1 - rate)"},
					"toolResponse": map[string]any{"filePath": file, "originalFile": original,
						"structuredPatch": []any{map[string]any{"oldStart": 12, "oldLines": 1, "newStart": 12, "newLines": 1, "lines": []string{"-\treturn total - discount", "+\treturn total * (1 - rate)"}}}},
				}
				var qr memory.QueueResult
				t0 := time.Now()
				err := cl.Call(ctx, memory.MethodPostToolUse, p, &qr)
				lat = append(lat, time.Since(t0))
				if err != nil || !qr.Queued {
					failed.Add(1)
					continue
				}
				acked.Add(1)
			}
			mu.Lock()
			res.latency = append(res.latency, lat...)
			mu.Unlock()
		})
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	res.acked, res.errors = int(acked.Load()), int(failed.Load())
	st, err := e.status(ctx)
	if err != nil {
		return res, err
	}
	res.embedder = st.Embedder
	res.storedAtOnce = st.Counts.Observations + st.Counts.Queued
	res.observationsAt = st.Counts.Observations
	for _, cl := range conns {
		cl.Close()
	}
	if err := d.stop(); err != nil {
		return res, err
	}
	d, err = e.startDaemon()
	if err != nil {
		return res, err
	}
	if err := e.waitServing(ctx, d, time.Minute); err != nil {
		return res, err
	}
	st, err = e.status(ctx)
	if err != nil {
		return res, err
	}
	res.storedRestart = st.Counts.Observations + st.Counts.Queued
	return res, nil
}

// sizeResult is what one data set size measured.
type sizeResult struct {
	n             int
	embedder      string
	exact         bool
	topics        int    // topics embedded for the stored vectors
	indexLoad     string // the daemon's own time to load the search index, from its log
	heapNote      string // what the same index holds in this process
	importTook    time.Duration
	importNote    string
	coldStarts    dist // exec to mnemo/status answered
	firstSearch   dist // exec to the first mnemo/search answered
	rssStart      rss  // once the index is loaded
	rssAfter      rss
	search        dist
	searchEmpty   int
	prompt        dist // mnemo/userPromptSubmit with its recall
	promptRecall  int  // prompts that got a recall
	promptLines   int  // the median recall's lines
	promptBytes   int  // and bytes
	sessionStart  dist
	context       dist
	contextBytes  int
	observations  int
	backgroundEmb string
	disk          diskResult
	// The viewer's API over loopback HTTP: the newest records' first
	// page, a search, the sessions' first page (viewer.go).
	viewerPage, viewerSearch, viewerSessions dist
}

// sizeOptions say what to measure on a data set.
type sizeOptions struct {
	coldStarts int
	calls      int // sessionStart and context calls
}

// load starts a daemon in e's fresh home and imports ds into it, waiting
// until every observation is indexed.
func load(ctx context.Context, log *slog.Logger, e *env, ds *dataSet) (*daemon, time.Duration, string, error) {
	d, err := e.startDaemon()
	if err != nil {
		return nil, 0, "", err
	}
	if err := e.waitServing(ctx, d, time.Minute); err != nil {
		return d, 0, "", err
	}
	log.Info("importing", "observations", ds.n, "file", ds.path)
	start := time.Now()
	out, err := e.mnemo(ctx, "import", ds.path)
	if err != nil {
		return d, 0, "", err
	}
	took := time.Since(start)
	st, err := e.waitIndexed(ctx, 30*time.Minute)
	if err != nil {
		return d, took, "", err
	}
	if st.Counts.Observations != ds.n {
		return d, took, "", fmt.Errorf("imported %d observations, want %d: %s", st.Counts.Observations, ds.n, out)
	}
	return d, took, strings.TrimSpace(out), nil
}

// measureHookHome loads ds into e's home and runs the hooks against its
// daemon.
func measureHookHome(ctx context.Context, log *slog.Logger, e *env, ds *dataSet, projectDir string, n, nodeN int, baseline string) (hookResults, error) {
	d, _, _, err := load(ctx, log, e, ds)
	defer func() { d.stop() }()
	if err != nil {
		return hookResults{}, err
	}
	// A daemon that has not done the import itself, as after a restart.
	if err := d.stop(); err != nil {
		return hookResults{}, err
	}
	if d, err = e.startDaemon(); err != nil {
		return hookResults{}, err
	}
	if err := e.waitServing(ctx, d, 5*time.Minute); err != nil {
		return hookResults{}, err
	}
	hr, err := measureHooks(ctx, log, e, projectDir, n, nodeN, baseline)
	if err != nil {
		return hr, err
	}
	if hr.rss, err = d.rssMB(); err != nil {
		return hr, err
	}
	// The same loop with the disk busy flushing: a hook must not wait for
	// the disk, whatever it does.
	log.Info("measuring the hooks with the disk busy", "runs", n)
	stop := make(chan struct{})
	done, err := diskWriter(filepath.Dir(e.home), stop)
	if err != nil {
		return hr, err
	}
	busy, err := measureHookLoop(ctx, log, e, projectDir, n, 0, "", true)
	close(stop)
	hr.wrote.bytes, hr.wrote.syncs = done()
	if err != nil {
		return hr, err
	}
	hr.busy = &busy
	return hr, nil
}

// measureSize imports a data set into a fresh home, then measures cold
// starts, memory, search and SessionStart on it.
func measureSize(ctx context.Context, log *slog.Logger, e *env, ds *dataSet, o sizeOptions) (sizeResult, error) {
	res := sizeResult{n: ds.n, embedder: ds.embedder}
	d, took, note, err := load(ctx, log, e, ds)
	defer func() { d.stop() }()
	if err != nil {
		return res, err
	}
	res.importTook, res.importNote, res.observations = took, note, ds.n
	if err := d.stop(); err != nil {
		return res, err
	}
	if res.disk, err = measureDisk(ctx, e, filepath.Dir(e.home)); err != nil {
		return res, err
	}

	for i := range o.coldStarts {
		start := time.Now()
		if d, err = e.startDaemon(); err != nil {
			return res, err
		}
		if err := e.waitServing(ctx, d, 5*time.Minute); err != nil {
			return res, err
		}
		res.coldStarts = append(res.coldStarts, time.Since(start))
		// The daemon may serve before its search index is loaded; a search
		// waits for the load.
		q := ds.queries[i%len(ds.queries)]
		if err := e.search(ctx, q); err != nil {
			return res, err
		}
		res.firstSearch = append(res.firstSearch, time.Since(start))
		if i < o.coldStarts-1 {
			if err := d.stop(); err != nil {
				return res, err
			}
		}
	}
	if res.rssStart, err = d.rssMB(); err != nil {
		return res, err
	}
	res.indexLoad = e.lastIndexLoad()
	st, err := e.status(ctx)
	if err != nil {
		return res, err
	}
	if strings.Contains(st.Embedder, "embedding:") {
		res.backgroundEmb = st.Embedder
	}
	if st.Embedder != ds.embedder {
		res.embedder = st.Embedder
	}

	rc, err := e.dial(ctx)
	if err != nil {
		return res, err
	}
	defer rc.Close()
	cl := client.New(rc)
	for i, q := range append(ds.queries[:10:10], ds.queries...) {
		t0 := time.Now()
		sr, err := cl.Search(ctx, memory.SearchParams{Query: q.Text, Project: q.Project, Limit: 20})
		took := time.Since(t0)
		if err != nil {
			return res, fmt.Errorf("search %q: %w", q.Text, err)
		}
		if i >= 10 {
			res.search = append(res.search, took)
			if len(sr.Hits) == 0 {
				res.searchEmpty++
			}
		}
	}
	var bytesSeen []int
	for i := range 10 + o.calls {
		p := projects[i%len(projects)]
		t0 := time.Now()
		cr, err := cl.SessionStart(ctx, memory.SessionStartParams{
			ContentSessionID: fmt.Sprintf("bench-start-%d-%05d", ds.n, i), Cwd: "/home/dev/src/" + p.name, Source: "startup", Platform: "claude-code",
		})
		took := time.Since(t0)
		if err != nil {
			return res, fmt.Errorf("sessionStart: %w", err)
		}
		if i >= 10 {
			res.sessionStart = append(res.sessionStart, took)
			bytesSeen = append(bytesSeen, cr.Bytes)
		}
		t0 = time.Now()
		_, err = cl.Context(ctx, memory.ContextParams{Project: p.name})
		took = time.Since(t0)
		if err != nil {
			return res, fmt.Errorf("context: %w", err)
		}
		if i >= 10 {
			res.context = append(res.context, took)
		}
	}
	slices.Sort(bytesSeen)
	res.contextBytes = bytesSeen[len(bytesSeen)/2]
	if err := measurePrompts(ctx, cl, ds, &res); err != nil {
		return res, err
	}
	if err := measureViewer(ctx, rc, ds, &res); err != nil {
		return res, fmt.Errorf("viewer: %w", err)
	}
	if res.rssAfter, err = d.rssMB(); err != nil {
		return res, err
	}
	return res, nil
}

// measurePrompts times mnemo/userPromptSubmit with its recall: the
// benchmark's queries as prompts, five to a session, each session opened
// with mnemo/sessionStart (whose context the recall then leaves out), after
// ten warm-up prompts.
func measurePrompts(ctx context.Context, cl *client.Client, ds *dataSet, res *sizeResult) error {
	var lines, sizes []int
	for i, q := range append(ds.queries[:10:10], ds.queries...) {
		project := q.Project
		if project == "" {
			project = projects[i%len(projects)].name
		}
		csid := fmt.Sprintf("bench-prompt-%d-%05d", ds.n, i/5)
		cwd := "/home/dev/src/" + project
		if i%5 == 0 {
			if _, err := cl.SessionStart(ctx, memory.SessionStartParams{ContentSessionID: csid, Cwd: cwd, Source: "startup", Platform: "claude-code"}); err != nil {
				return fmt.Errorf("sessionStart: %w", err)
			}
		}
		t0 := time.Now()
		pr, err := cl.UserPromptSubmit(ctx, memory.UserPromptParams{ContentSessionID: csid, Cwd: cwd, Prompt: q.Text, Platform: "claude-code"})
		took := time.Since(t0)
		if err != nil {
			return fmt.Errorf("userPromptSubmit %q: %w", q.Text, err)
		}
		if i < 10 {
			continue
		}
		res.prompt = append(res.prompt, took)
		if pr.Context != "" {
			res.promptRecall++
			lines = append(lines, len(pr.ObservationIDs))
			sizes = append(sizes, len(pr.Context))
		}
	}
	if len(lines) > 0 {
		slices.Sort(lines)
		slices.Sort(sizes)
		res.promptLines, res.promptBytes = lines[len(lines)/2], sizes[len(sizes)/2]
	}
	return nil
}

// sourceFile is a Go source file of about n bytes: what Claude Code puts
// in an Edit's originalFile.
func sourceFile(n int) string {
	var b strings.Builder
	b.WriteString("package billing\n\nimport (\n\t\"errors\"\n\t\"math\"\n)\n\n")
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "// total%d returns the invoice total of lines after discount %d.\nfunc total%d(lines []Line, rate float64) (int64, error) {\n"+
			"\tif len(lines) == 0 {\n\t\treturn 0, errors.New(\"no lines\")\n\t}\n\tvar total float64\n\tfor _, l := range lines {\n"+
			"\t\ttotal += l.Amount * (1 - rate)\n\t}\n\treturn int64(math.RoundToEven(total * 100)), nil\n}\n\n", i, i, i)
	}
	return b.String()
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// mkProject makes a folder that is a git work tree named name.
func mkProject(root, name string) (string, error) {
	dir := filepath.Join(root, "src", name)
	if err := os.MkdirAll(filepath.Join(dir, ".git"), 0o755); err != nil {
		return "", err
	}
	return dir, nil
}

// heapResult is the live heap of a search index built in this process.
type heapResult struct {
	index, vectors float64 // MiB: the index's live heap, the vectors' share
}

// indexHeap builds the daemon's search index of the n-observation data set
// in this process (the same documents and vectors) and measures the live
// heap it holds after a GC: what the daemon must keep whatever its GC does.
func indexHeap(ctx context.Context, n int, emb vector.Embedder, vecs [][]float32) (heapResult, error) {
	const mib = 1 << 20
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	ix := vector.NewIndex(emb)
	noise := rand.New(rand.NewPCG(uint64(n), 0x6e6f6973))
	k := len(vecs)
	var batch []vector.Doc
	id := uint64(0)
	flush := func() error {
		err := ix.Add(ctx, batch...)
		batch = batch[:0]
		return err
	}
	for _, pr := range planDataSet(n) {
		o := pr.rec.Observation
		if o == nil {
			continue
		}
		id++
		d := store.DocOf(o)
		d.ID = id
		d.Vector = jitter(vecs[pr.topic%k], pr.topic < k && pr.variant == 0, noise)
		batch = append(batch, d)
		if len(batch) == 512 {
			if err := flush(); err != nil {
				return heapResult{}, err
			}
		}
	}
	if err := flush(); err != nil {
		return heapResult{}, err
	}
	batch = nil
	runtime.GC()
	runtime.ReadMemStats(&after)
	res := heapResult{
		index:   float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / mib,
		vectors: float64(n*emb.Dim()) / mib, // int8, one byte a component
	}
	runtime.KeepAlive(ix)
	return res, nil
}

// modelHeap is the live heap of the sentence encoder, loaded in this
// process.
func modelHeap(models string) (float64, error) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	m, err := vector.OpenUSELite(models)
	if err != nil {
		return 0, err
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(m)
	return float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / (1 << 20), nil
}

// A hostEvent is one tool event in another host's dialect, for the hook
// rows per host: what mnemo-hook --host HOST EVENT is given, and the
// answer it must print.
type hostEvent struct {
	host, event, what, answer string
	payload                   func(round int) []byte
}

// hostEvents are a shell command or a file edit in each host's own
// payload, as their documentation (and, for Codex and Gemini CLI, their
// recorded hooks) show them, each round a new tool run.
func hostEvents(dir string) []hostEvent {
	// Each round its own file and command: the daemon stores an
	// observation once per session, and the benchmark counts them.
	file := func(i int) string { return fmt.Sprintf("%s/internal/bench/rate_%05d.go", dir, i) }
	pkg := func(i int) string { return fmt.Sprintf("./internal/bench/p%05d/", i) }
	id := func(host string, round int) string { return fmt.Sprintf("bench-%s-%05d", host, round) }
	return []hostEvent{
		{host: "codex", event: "PostToolUse", what: "shell command", answer: "{}\n", payload: func(i int) []byte {
			return mustJSON(map[string]any{"session_id": "bench-codex", "turn_id": "t1", "cwd": dir, "hook_event_name": "PostToolUse", "model": "gpt-5",
				"tool_name": "shell", "tool_use_id": id("codex", i), "tool_input": map[string]any{"command": []string{"bash", "-lc", "go test " + pkg(i)}},
				"tool_response": "FAIL\tinternal/bench [build failed]\nrate.go:12: undefined: discount"})
		}},
		{host: "gemini", event: "AfterTool", what: "replace", answer: "{}\n", payload: func(i int) []byte {
			return mustJSON(map[string]any{"session_id": "bench-gemini", "cwd": dir, "hook_event_name": "AfterTool", "timestamp": id("gemini", i),
				"tool_name": "replace", "tool_input": map[string]any{"file_path": file(i), "old_string": "total - discount", "new_string": "total * (1 - rate)"},
				"tool_response": map[string]any{"llmContent": "Successfully modified file: " + file(i) + " (1 replacements).", "returnDisplay": "rate.go"}})
		}},
		{host: "cursor", event: "postToolUse", what: "Shell", answer: "{}\n", payload: func(i int) []byte {
			return mustJSON(map[string]any{"conversation_id": "bench-cursor", "generation_id": id("cursor", i), "hook_event_name": "postToolUse",
				"workspace_roots": []string{dir}, "cursor_version": "2.4.0", "tool_name": "Shell", "tool_use_id": id("cursor", i),
				"tool_input": map[string]any{"command": "go vet " + pkg(i)}, "tool_output": "internal/bench/rate.go:12:2: unreachable code"})
		}},
		{host: "vscode", event: "PostToolUse", what: "runTerminalCommand", answer: "{}\n", payload: func(i int) []byte {
			return mustJSON(map[string]any{"timestamp": "2026-11-25T10:30:00.000Z", "cwd": dir, "sessionId": "bench-vscode", "hookEventName": "PostToolUse",
				"tool_name": "runTerminalCommand", "tool_use_id": id("vscode", i), "tool_input": map[string]any{"command": fmt.Sprintf("npm test -- rate_%05d", i)},
				"tool_response": "1 failing: rate rounds half-even"})
		}},
		{host: "copilot", event: "postToolUse", what: "edit, camelCase", answer: "{}\n", payload: func(i int) []byte {
			return mustJSON(map[string]any{"sessionId": "bench-copilot", "timestamp": 1764066600000 + i, "cwd": dir, "toolName": "edit",
				"toolArgs":   map[string]any{"path": file(i), "old_str": "total - discount", "new_str": "total * (1 - rate)"},
				"toolResult": map[string]any{"resultType": "success", "textResultForLlm": "File edited."}})
		}},
		{host: "opencode", event: "PostToolUse", what: "bash, through the plugin", answer: "{}\n", payload: func(i int) []byte {
			return mustJSON(map[string]any{"session_id": "bench-opencode", "cwd": dir, "hook_event_name": "PostToolUse", "tool_name": "bash", "tool_use_id": id("opencode", i),
				"tool_input":    map[string]any{"command": "cat " + file(i), "description": "show the rate"},
				"tool_response": map[string]any{"title": "cat", "output": "package bench\n\nfunc rate() float64 { return 0.2 }\n", "metadata": map[string]any{"exit": 0}}})
		}},
		{host: "windsurf", event: "post_write_code", what: "post_write_code", answer: "", payload: func(i int) []byte {
			return mustJSON(map[string]any{"agent_action_name": "post_write_code", "trajectory_id": "bench-windsurf", "execution_id": id("windsurf", i), "timestamp": "2026-11-25T10:30:00Z",
				"tool_info": map[string]any{"file_path": file(i), "edits": []any{map[string]any{"old_string": "total - discount", "new_string": "total * (1 - rate)"}}}})
		}},
	}
}
