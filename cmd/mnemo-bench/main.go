//go:build unix

// Command mnemo-bench measures Mnemo against the budgets of its design
// (docs/architecture.md §9) and prints one table. It builds only the empty Go program
// the hook is measured against (into its temporary folder); it runs the
// mnemo and mnemo-hook binaries of -bin as a user would, in temporary
// homes, and talks to the daemon over its socket; only the embedding
// throughput is measured in-process, with the vector package.
//
//	just build   # go build -o bin/mnemo ./cmd/mnemo; CGO_ENABLED=0 go build -o bin/mnemo-hook ./cmd/mnemo-hook
//	go run ./cmd/mnemo-bench -bin bin
//
// The data sets (10k and 100k generated observations, with vectors) are
// written once under -cache and imported with `mnemo import` on every run.
//
// It is built for Unix only (process groups, SIGTERM, getrusage), and its
// memory rows read /proc/<pid>/status: the whole table needs Linux, the
// machine the budgets were set on. Mnemo itself builds for Windows too.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mnemo-dev/mnemo/memory/team/pgtest"
	"github.com/mnemo-dev/mnemo/vector"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// options are the command line of mnemo-bench.
type options struct {
	bin, cache, models string
	baselineHook       string
	sizes              []int
	hooks, node        int
	calls, coldStarts  int
	clients            int
	ingest             time.Duration
	embedSample        int
	embedder           string
	useTopics          int
	keep               bool
	verbose            bool
	parts              map[string]bool // what to measure
	editorSaves        int
	history            int // records of the history rows
	teamRecords        int // records of the team rows
	teamProbes         int // write-to-searchable samples of the team rows
	transcripts        string
}

func parseOptions(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("mnemo-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.bin, "bin", "bin", "folder with the mnemo and mnemo-hook binaries")
	fs.StringVar(&o.cache, "cache", filepath.Join(".cache", "bench"), "folder for the generated data sets (kept between runs)")
	fs.StringVar(&o.models, "models", filepath.Join(".cache", "models"), "MNEMO_MODELS: the sentence encoder's folder (`mnemo model install` fills it); without it, the hashing embedder")
	sizes := fs.String("sizes", "10000,100000", "data set sizes, comma-separated")
	fs.IntVar(&o.hooks, "hooks", 200, "runs of each hook and of /bin/true")
	fs.StringVar(&o.baselineHook, "baseline-hook", "", "another mnemo-hook binary (an older build) to run in the same loop, for a side-by-side row")
	fs.IntVar(&o.node, "node", 100, "runs of node -e ''")
	fs.IntVar(&o.calls, "calls", 100, "mnemo/sessionStart and mnemo/context calls per size")
	fs.IntVar(&o.coldStarts, "cold", 3, "daemon cold starts per size (at least 1)")
	fs.IntVar(&o.clients, "clients", 16, "concurrent socket clients for ingest")
	fs.DurationVar(&o.ingest, "ingest", 5*time.Second, "how long to ingest")
	fs.IntVar(&o.embedSample, "embed", 48, "observation texts embedded by the sentence encoder for its throughput")
	fs.StringVar(&o.embedder, "embedder", "auto", "the embedder of the data sets and their daemons: auto (the sentence encoder when installed), use-lite or hash")
	fs.IntVar(&o.useTopics, "use-topics", 1000, "topics embedded by the sentence encoder for the data sets (the others borrow their vectors)")
	parts := fs.String("parts", "embedding,recorded,hooks,ingest,sizes,editor,conversation,history,anchors,knowledge,team", "what to measure, comma-separated: embedding, recorded (the daemon's CPU back-filling the recorded Claude Code transcripts with the sentence encoder), hooks, ingest, sizes (the rows per data set size), editor (in-process, a few seconds), conversation (in-process: the turn-end read of a transcript, the records of what turns said), history (import claude-mem; backfill claude-code, codex and gemini), anchors (what checking observations' anchors adds to a context, at 10k), knowledge (deriving project knowledge on the data sets of -sizes, and SessionStart with it), team (team memory through a throw-away PostgreSQL on loopback: push, pull, write to searchable)")
	fs.StringVar(&o.transcripts, "transcripts", filepath.Join("adapters", "claudecode", "testdata", "transcripts"), "the recorded Claude Code transcripts, a folder per version (the recorded rows)")
	fs.IntVar(&o.teamRecords, "team-records", 5000, "records pushed and pulled by the team rows")
	fs.IntVar(&o.teamProbes, "team-probes", 200, "saves timed from one daemon until the other's search finds them (team rows)")
	fs.IntVar(&o.history, "history", 50000, "records of the history rows: claude-mem observations imported, tool events back-filled from each agent's transcripts")
	fs.IntVar(&o.editorSaves, "editor-saves", 1000, "saves of the editor rows")
	fs.BoolVar(&o.keep, "keep", false, "keep the temporary homes")
	fs.BoolVar(&o.verbose, "v", false, "log more")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	o.coldStarts = max(o.coldStarts, 1)
	o.parts = map[string]bool{}
	for _, p := range strings.Split(*parts, ",") {
		switch p = strings.TrimSpace(p); p {
		case "embedding", "recorded", "hooks", "ingest", "sizes", "editor", "conversation", "history", "anchors", "knowledge", "team":
			o.parts[p] = true
		default:
			return o, fmt.Errorf("-parts: %q is not embedding, recorded, hooks, ingest, sizes, editor, conversation, history, anchors, knowledge or team", p)
		}
	}
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			return o, fmt.Errorf("-sizes: %q is not a size", s)
		}
		o.sizes = append(o.sizes, n)
	}
	return o, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseOptions(args[1:], stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		return 2
	}
	level := slog.LevelInfo
	if o.verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	b := &bench{o: o, log: log, command: commandLine(args)}
	if err := b.run(ctx); err != nil {
		log.Error("benchmark failed", "err", err)
		return 1
	}
	b.print(stdout)
	return 0
}

// commandLine is how this run was invoked, for the table's header.
func commandLine(args []string) string {
	cmd := "go run ./cmd/mnemo-bench"
	if !strings.Contains(args[0], "go-build") {
		cmd = args[0]
	}
	for _, a := range args[1:] {
		cmd += " " + a
	}
	return cmd
}

// bench is one run: its options and what it measured.
type bench struct {
	o       options
	log     *slog.Logger
	command string
	started time.Time
	took    time.Duration

	embedders []embedResult
	embedErr  string
	hooks     *hookResults
	hookStore int
	modelMB   float64 // the sentence encoder's live heap
	ingest    ingestResult
	sizes     []sizeResult
	editor    *editorResult
	talk      *conversationResult
	history   []historyResult
	anchors   *anchorsResult
	knowledge []knowledgeResult
	team      *teamResult
	teamErr   string

	recorded    *recordedResult
	recordedErr string // why the recorded rows were not measured
}

func (b *bench) run(ctx context.Context) error {
	b.started = time.Now()
	defer func() { b.took = time.Since(b.started) }()
	if b.o.parts["editor"] {
		// In-process: it needs no binary.
		if err := b.runEditor(ctx); err != nil {
			return err
		}
	}
	if b.o.parts["conversation"] {
		// In-process too.
		if err := b.runConversation(ctx); err != nil {
			return err
		}
	}
	if !slices.ContainsFunc(slices.Collect(maps.Keys(b.o.parts)), func(p string) bool { return p != "editor" && p != "conversation" }) {
		return nil
	}
	for _, f := range []string{"mnemo", "mnemo-hook"} {
		if _, err := os.Stat(filepath.Join(b.o.bin, f)); err != nil {
			return fmt.Errorf("%w (build with `go build -o %s/%s ./cmd/%s`)", err, b.o.bin, f, f)
		}
	}
	var err error
	if b.o.bin, err = filepath.Abs(b.o.bin); err != nil {
		return err
	}
	if b.o.models, err = filepath.Abs(b.o.models); err != nil {
		return err
	}
	root, err := os.MkdirTemp("", "mnemo-bench-")
	if err != nil {
		return err
	}
	if b.o.keep {
		b.log.Info("keeping the temporary homes", "root", root)
	} else {
		defer os.RemoveAll(root)
	}
	// The size benchmarks run on the embedder people get (the sentence
	// encoder when it is installed); the hooks and the ingest on the
	// hashing embedder, so that the daemon's background embedding of the
	// new observations does not take the CPU from what is measured.
	hash := vector.Embedder(vector.NewHashEmbedder())
	noModels := filepath.Join(root, "no-models")
	use, notice := vector.DefaultEmbedder(b.o.models)
	if notice != "" {
		use = nil
		b.embedErr = "USE-Lite not installed in " + b.o.models + " (`MNEMO_MODELS=" + b.o.models + " mnemo model install`)"
	}
	sizeEmb, sizeModels, k := hash, noModels, topics
	switch b.o.embedder {
	case "auto":
		if use != nil {
			sizeEmb, sizeModels, k = use, b.o.models, b.o.useTopics
		}
	case "use-lite":
		if use == nil {
			return errors.New("-embedder use-lite: " + b.embedErr)
		}
		sizeEmb, sizeModels, k = use, b.o.models, b.o.useTopics
	case "hash":
	default:
		return fmt.Errorf("-embedder %q: want auto, use-lite or hash", b.o.embedder)
	}
	newEnv := func(name, models string) (*env, error) {
		e := &env{bin: b.o.bin, home: filepath.Join(root, name, "mnemo"), userHome: filepath.Join(root, name, "home"), models: models}
		return e, os.MkdirAll(e.userHome, 0o700)
	}

	if b.o.parts["embedding"] {
		b.log.Info("measuring embedding throughput")
		texts := sampleTexts(2048)
		queries := genQueries(200)
		if use != nil {
			r, err := measureEmbedding(ctx, use, texts[:b.o.embedSample], texts[:b.o.embedSample], queries)
			if err != nil {
				return fmt.Errorf("embedding: %w", err)
			}
			start := time.Now()
			if _, err := vector.OpenUSELite(b.o.models); err != nil {
				return fmt.Errorf("load the model: %w", err)
			}
			r.load = time.Since(start)
			b.embedders = append(b.embedders, r)
			if b.modelMB, err = modelHeap(b.o.models); err != nil {
				return fmt.Errorf("load the model: %w", err)
			}
		}
		r, err := measureEmbedding(ctx, hash, texts, texts[:256], queries)
		if err != nil {
			return fmt.Errorf("embedding: %w", err)
		}
		b.embedders = append(b.embedders, r)
	}
	if b.o.parts["recorded"] {
		if use == nil {
			b.recordedErr = b.embedErr
		} else {
			b.log.Info("back-filling the recorded transcripts", "from", b.o.transcripts)
			re, err := newEnv("recorded", b.o.models)
			if err != nil {
				return err
			}
			r, err := measureRecorded(ctx, re, b.o.transcripts)
			if err != nil {
				return fmt.Errorf("recorded transcripts: %w", err)
			}
			b.recorded = &r
		}
	}
	if b.o.parts["hooks"] {
		b.log.Info("measuring the hooks", "runs", b.o.hooks)
		hds, err := buildDataSet(ctx, b.log, b.o.cache, topics, hash, topics)
		if err != nil {
			return fmt.Errorf("hook data set: %w", err)
		}
		he, err := newEnv("hooks", noModels)
		if err != nil {
			return err
		}
		projectDir, err := mkProject(filepath.Join(root, "projects"), "billing-api")
		if err != nil {
			return err
		}
		hr, err := measureHookHome(ctx, b.log, he, hds, projectDir, b.o.hooks, b.o.node, b.o.baselineHook)
		if err != nil {
			return fmt.Errorf("hooks: %w", err)
		}
		b.hooks, b.hookStore = &hr, hds.n
	}
	if b.o.parts["ingest"] {
		b.log.Info("measuring ingest over the socket", "clients", b.o.clients, "for", b.o.ingest)
		ie, err := newEnv("ingest", noModels)
		if err != nil {
			return err
		}
		if b.ingest, err = measureIngest(ctx, ie, b.o.clients, b.o.ingest); err != nil {
			return fmt.Errorf("ingest: %w", err)
		}
	}
	if b.o.parts["history"] {
		b.log.Info("measuring history brought in", "records", b.o.history)
		hr, err := measureHistory(ctx, func(name string) (*env, error) { return newEnv(name, noModels) }, b.o.history)
		if err != nil {
			return fmt.Errorf("history: %w", err)
		}
		b.history = hr
	}
	if b.o.parts["anchors"] {
		b.log.Info("measuring anchors", "observations", 10_000)
		ar, err := measureAnchors(ctx, func(name string) (*env, error) { return newEnv(name, noModels) }, 10_000)
		if err != nil {
			return fmt.Errorf("anchors: %w", err)
		}
		b.anchors = &ar
	}
	if b.o.parts["team"] {
		b.log.Info("measuring team memory", "records", b.o.teamRecords, "probes", b.o.teamProbes)
		if _, err := pgtest.Bin(); err != nil {
			b.teamErr = err.Error()
		} else {
			tr, err := measureTeam(ctx, func(name string) (*env, error) { return newEnv(name, noModels) }, b.o.teamRecords, b.o.teamProbes)
			if err != nil {
				return fmt.Errorf("team: %w", err)
			}
			b.team = &tr
		}
	}
	if b.o.parts["knowledge"] {
		for _, n := range b.o.sizes {
			ds, err := buildDataSet(ctx, b.log, b.o.cache, n, sizeEmb, k)
			if err != nil {
				return fmt.Errorf("data set %d: %w", n, err)
			}
			e, err := newEnv(fmt.Sprintf("knowledge-%d", n), sizeModels)
			if err != nil {
				return err
			}
			b.log.Info("measuring project knowledge", "observations", n)
			kr, err := measureKnowledge(ctx, b.log, e, ds)
			if err != nil {
				return fmt.Errorf("knowledge, %d observations: %w", n, err)
			}
			b.knowledge = append(b.knowledge, kr)
		}
	}
	if !b.o.parts["sizes"] {
		return nil
	}
	for _, n := range b.o.sizes {
		ds, err := buildDataSet(ctx, b.log, b.o.cache, n, sizeEmb, k)
		if err != nil {
			return fmt.Errorf("data set %d: %w", n, err)
		}
		e, err := newEnv(fmt.Sprintf("size-%d", n), sizeModels)
		if err != nil {
			return err
		}
		b.log.Info("measuring a data set", "observations", n, "embedder", ds.embedder)
		sr, err := measureSize(ctx, b.log, e, ds, sizeOptions{coldStarts: b.o.coldStarts, calls: b.o.calls})
		if err != nil {
			return fmt.Errorf("%d observations: %w", n, err)
		}
		sr.exact, sr.topics = ds.exact, ds.topics
		vecs, err := topicVectors(ctx, b.log, b.o.cache, sizeEmb, k)
		if err != nil {
			return err
		}
		h, err := indexHeap(ctx, n, sizeEmb, vecs)
		if err != nil {
			return fmt.Errorf("index heap: %w", err)
		}
		sr.heapNote = fmt.Sprintf("in-process, the same search index holds %.0f MB of live heap (its vectors alone %.0f MB)", h.index, h.vectors)
		if b.modelMB > 0 && sizeEmb.ID() != vector.HashEmbedderID {
			sr.heapNote += fmt.Sprintf(" and the sentence encoder %.0f MB", b.modelMB)
		}
		b.sizes = append(b.sizes, sr)
	}
	return nil
}

// runEditor measures the editor rows in a temporary folder.
func (b *bench) runEditor(ctx context.Context) error {
	root, err := os.MkdirTemp("", "mnemo-bench-editor-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	b.log.Info("measuring the editor's saves", "documents", editorDocs, "saves", b.o.editorSaves)
	r, err := measureEditor(ctx, b.log, root, b.o.editorSaves)
	if err != nil {
		return fmt.Errorf("editor: %w", err)
	}
	b.editor = &r
	return nil
}

// runConversation measures the conversation rows in a temporary folder.
func (b *bench) runConversation(ctx context.Context) error {
	root, err := os.MkdirTemp("", "mnemo-bench-conversation-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	b.log.Info("measuring the turn-end read of a transcript and the conversation records", "turns", convTurns)
	r, err := measureConversation(ctx, root)
	if err != nil {
		return fmt.Errorf("conversation: %w", err)
	}
	b.talk = &r
	return nil
}

// sampleTexts are the embedding texts of the first n observations of the
// 10k set.
func sampleTexts(n int) []string {
	var out []string
	for _, pr := range planDataSet(topics) {
		if pr.rec.Observation != nil {
			out = append(out, embedTextOf(*pr.rec.Observation))
			if len(out) == n {
				break
			}
		}
	}
	return out
}

// row is one line of the table.
type row struct {
	what, measured, budget, verdict, notes string
}

func verdict(ok bool) string {
	if ok {
		return "ok"
	}
	return "**over**"
}

func (b *bench) rows() []row {
	var rows []row
	if h := b.hooks; h != nil {
		trueP50 := h.binTrue.times.p50()
		ratio := func(d time.Duration) string {
			if trueP50 == 0 {
				return ""
			}
			return fmt.Sprintf("%.1f× /bin/true", float64(d)/float64(trueP50))
		}
		nodeNote := h.node.note
		if len(h.node.times) > 0 {
			nodeNote = fmt.Sprintf("%d runs; %s; %.0f× the PostToolUse hook", len(h.node.times), ratio(h.node.times.p50()), float64(h.node.times.p50())/float64(h.postToolUse.times.p50()))
		}
		fails := func(p processResult) string {
			if p.failed == 0 {
				return ""
			}
			return fmt.Sprintf("; **%d failed or answered empty**", p.failed)
		}
		store := fmt.Sprintf("%s store, hashing embedder", sizeName(b.hookStore))
		undelivered := ""
		if h.undelivered > 0 {
			undelivered = fmt.Sprintf("; **%d events did not reach the daemon**", h.undelivered)
		}
		rows = append(rows,
			row{"hook PostToolUse, start to exit, daemon warm", p50p99(h.postToolUse.times), "p50 ≤ 5 ms, p99 ≤ 20 ms",
				verdict(h.postToolUse.times.p50() <= 5*time.Millisecond && h.postToolUse.times.p99() <= 20*time.Millisecond),
				fmt.Sprintf("%d runs (Edit, 4 KB originalFile), %s; %s%s%s", len(h.postToolUse.times), store, ratio(h.postToolUse.times.p50()), fails(h.postToolUse), undelivered)},
			row{"hook SessionStart, start to exit, daemon warm", p50p99(h.sessionStart.times), "p50 ≤ 5 ms, p99 ≤ 20 ms",
				verdict(h.sessionStart.times.p50() <= 5*time.Millisecond && h.sessionStart.times.p99() <= 20*time.Millisecond),
				fmt.Sprintf("%d runs, new session each, context %d B, %s; %s%s", len(h.sessionStart.times), h.contextBytes, store, ratio(h.sessionStart.times.p50()), fails(h.sessionStart))},
			row{"mnemo-hook on an event it does not handle (reference)", p50p99(h.floor.times), "", "",
				fmt.Sprintf("%d runs, same loop: process start, payload read, exit, no socket; %s%s", len(h.floor.times), ratio(h.floor.times.p50()), fails(h.floor))},
			row{"/bin/true, start to exit (reference)", p50p99(h.binTrue.times), "", "", fmt.Sprintf("%d runs, same loop", len(h.binTrue.times))},
		)
		if goP50 := h.emptyGo.times.p50(); goP50 > 0 {
			over := float64(h.postToolUse.times.p50()) / float64(goP50)
			over99 := float64(h.postToolUse.times.p99()) / float64(h.emptyGo.times.p99())
			rows = append(rows,
				row{"empty Go program, start to exit (reference)", p50p99(h.emptyGo.times), "", "",
					fmt.Sprintf("%d runs, same loop: `package main; func main() {}` built by the benchmark into its temporary folder (CGO_ENABLED=0); %s", len(h.emptyGo.times), ratio(goP50))},
				row{"hook PostToolUse beyond process start", fmt.Sprintf("p50 %.2f× · p99 %.2f× an empty Go program", over, over99), "p50 ≤ 1.5×, p99 ≤ 3× an empty Go program", verdict(over <= 1.5 && over99 <= 3),
					fmt.Sprintf("the PostToolUse row's p50 and p99 over the empty Go program's, same loop; the unhandled event's p50 is %.2f×", float64(h.floor.times.p50())/float64(goP50))})
			if b := h.busy; b != nil && len(b.postToolUse.times) > 0 && len(b.emptyGo.times) > 0 {
				q50, q99 := h.postToolUse.times.p50(), h.postToolUse.times.p99()
				b50, b99 := b.postToolUse.times.p50(), b.postToolUse.times.p99()
				rows = append(rows,
					row{"hook PostToolUse, the disk busy flushing", p50p99(b.postToolUse.times), "p50 and p99 within 20 % of the quiet run", verdict(float64(b50) <= 1.2*float64(q50) && float64(b99) <= 1.2*float64(q99)),
						fmt.Sprintf("%d runs, the same loop again while a writer wrote %d MB in 1 MB writes, each fsynced, 20 ms apart (%d syncs); %+.0f %% at p50, %+.0f %% at p99 against the quiet run; the empty Go program %s there, PostToolUse %.2f× it at p50%s",
							len(b.postToolUse.times), h.wrote.bytes>>20, h.wrote.syncs, 100*(float64(b50)/float64(q50)-1), 100*(float64(b99)/float64(q99)-1), p50p99(b.emptyGo.times), float64(b50)/float64(b.emptyGo.times.p50()), fails(b.postToolUse))},
					row{"hook SessionStart, the disk busy flushing (reference)", p50p99(b.sessionStart.times), "", "",
						fmt.Sprintf("%d runs, same busy loop; %+.0f %% at p50, %+.0f %% at p99 against the quiet run%s", len(b.sessionStart.times),
							100*(float64(b.sessionStart.times.p50())/float64(h.sessionStart.times.p50())-1), 100*(float64(b.sessionStart.times.p99())/float64(h.sessionStart.times.p99())-1), fails(b.sessionStart))})
			}
		} else {
			rows = append(rows, row{"empty Go program, start to exit (reference)", "—", "", "", h.emptyGo.note})
		}
		for _, hr := range h.hosts {
			over := ""
			if goP50 := h.emptyGo.times.p50(); goP50 > 0 && len(hr.times) > 0 {
				over = fmt.Sprintf("; %.2f× the empty Go program, %.2f× Claude Code's PostToolUse", float64(hr.times.p50())/float64(goP50), float64(hr.times.p50())/float64(h.postToolUse.times.p50()))
			}
			rows = append(rows, row{fmt.Sprintf("hook, %s's tool event (mnemo-hook --host %s)", hr.name, hr.name), p50p99(hr.times), "p50 ≤ 5 ms, p99 ≤ 20 ms",
				verdict(len(hr.times) > 0 && hr.times.p50() <= 5*time.Millisecond && hr.times.p99() <= 20*time.Millisecond),
				fmt.Sprintf("%d runs, same loop and daemon, %s in its dialect%s%s", len(hr.times), hr.note, over, fails(hr))})
		}
		if len(h.baseline.times) > 0 {
			rows = append(rows, row{"hook PostToolUse, -baseline-hook build (reference)", p50p99(h.baseline.times), "", "",
				fmt.Sprintf("%d runs, same loop and daemon; this build's p50 is %.2f× it%s", len(h.baseline.times), float64(h.postToolUse.times.p50())/float64(h.baseline.times.p50()), fails(h.baseline))})
		}
		rows = append(rows,
			row{"node -e '', start to exit (reference)", p50p99(h.node.times), "", "", nodeNote},
			row{fmt.Sprintf("daemon memory, %s observations, hashing embedder", sizeName(b.hookStore)), fmt.Sprintf("%.0f MB RSS", h.rss.total), "≤ 100 MB", verdict(h.rss.total <= 100),
				fmt.Sprintf("VmRSS of the daemon the hooks ran against (started after the import), after them: %s; no sentence encoder loaded", h.rss)},
		)
	}
	if b.o.parts["ingest"] {
		in := b.ingest
		lost := in.acked - in.storedRestart
		lostNote := "none lost"
		if lost != 0 || in.storedAtOnce != in.acked {
			lostNote = fmt.Sprintf("**acked %d, stored %d at once and %d after a restart**", in.acked, in.storedAtOnce, in.storedRestart)
		}
		rows = append(rows, row{
			fmt.Sprintf("durable ingest over the socket (%d clients, mnemo/postToolUse)", in.clients),
			fmt.Sprintf("%.0f events/s", in.perSecond()), "≥ 2,000 events/s, none lost",
			verdict(in.perSecond() >= 2000 && lostNote == "none lost"),
			fmt.Sprintf("%d acked in %.1f s, call p50 %s · p99 %s; %s (counted at once and after SIGTERM + restart); %d errors; the worker made %d observations meanwhile (%s)",
				in.acked, in.elapsed.Seconds(), ms(in.latency.p50()), ms(in.latency.p99()), lostNote, in.errors, in.observationsAt, in.embedder),
		})
	}
	for _, s := range b.sizes {
		k := sizeName(s.n)
		at100k := s.n >= 100_000
		emb := "embedder " + s.embedder
		if !s.exact {
			emb += fmt.Sprintf(" (queries embedded by it; stored vectors: %d topics' reused with noise)", s.topics)
		}
		if s.backgroundEmb != "" {
			emb += "; **vectors not reused: " + s.backgroundEmb + "**"
		}
		budget := func(text string, ok bool) (string, string) {
			if !at100k {
				return "(" + text + " at 100k)", ""
			}
			return text, verdict(ok)
		}
		bSS, vSS := budget("≤ 15 ms", s.sessionStart.p50() <= 15*time.Millisecond)
		bSearch, vSearch := budget("p50 ≤ 20 ms", s.search.p50() <= 20*time.Millisecond)
		bCold, vCold := budget("≤ 1 s", s.coldStarts.p50() <= time.Second)
		var colds []string
		for _, c := range s.coldStarts {
			colds = append(colds, ms(c))
		}
		var firsts []string
		for _, c := range s.firstSearch {
			firsts = append(firsts, ms(c))
		}
		bPrompt, vPrompt := "(p50 ≤ 15 ms at 10k)", ""
		if s.n == 10_000 {
			bPrompt, vPrompt = "p50 ≤ 15 ms", verdict(s.prompt.p50() <= 15*time.Millisecond)
		}
		// docs/architecture.md §9: ≤ 100 MB at 10k, ≤ 300 MB at 100k.
		bRSS, vRSS := "(≤ 100 MB at 10k, ≤ 300 MB at 100k)", ""
		switch s.n {
		case 10_000:
			bRSS, vRSS = "≤ 100 MB", verdict(s.rssAfter.total <= 100)
		case 100_000:
			bRSS, vRSS = "≤ 300 MB", verdict(s.rssAfter.total <= 300)
		}
		bFirst, vFirst := budget("≤ 1 s", s.firstSearch.p50() <= time.Second)
		rows = append(rows,
			row{fmt.Sprintf("SessionStart context, %s observations (mnemo/sessionStart round trip)", k), p50p99(s.sessionStart), bSS, vSS,
				fmt.Sprintf("%d calls, new session each, context %d B; context build alone (mnemo/context) %s", len(s.sessionStart), s.contextBytes, p50p99(s.context))},
			row{fmt.Sprintf("search, %s observations (mnemo/search round trip)", k), p50p99(s.search), bSearch, vSearch,
				fmt.Sprintf("%d queries (identifiers, paths, error text, questions; half within a project), limit 20, %d without hits; %s", len(s.search), s.searchEmpty, emb)},
			row{fmt.Sprintf("UserPromptSubmit with recall, %s observations (mnemo/userPromptSubmit round trip)", k), p50p99(s.prompt), bPrompt, vPrompt,
				fmt.Sprintf("%d prompts (the search queries), 5 to a session opened by mnemo/sessionStart; %d got a recall (median %d lines, %d B); the prompt's write and its search run together; %s",
					len(s.prompt), s.promptRecall, s.promptLines, s.promptBytes, emb)},
			row{fmt.Sprintf("daemon cold start to serving, %s observations", k), "median " + ms(s.coldStarts.p50()), bCold, vCold,
				fmt.Sprintf("exec to the first mnemo/status answer; runs: %s (page cache warm)", strings.Join(colds, ", "))},
			row{fmt.Sprintf("daemon cold start to the first search answered, %s observations", k), "median " + ms(s.firstSearch.p50()), bFirst, vFirst,
				fmt.Sprintf("a search waits until the index is loaded; runs: %s; the daemon's log: search index loaded in %s", strings.Join(firsts, ", "), s.indexLoad)},
			row{fmt.Sprintf("daemon memory, %s observations", k), fmt.Sprintf("%.0f MB RSS", s.rssAfter.total), bRSS, vRSS,
				fmt.Sprintf("VmRSS after the searches and SessionStarts: %s; once the index was loaded: %s; %s", s.rssAfter, s.rssStart, s.heapNote)},
			row{fmt.Sprintf("import, %s observations with vectors (mnemo import)", k), fmt.Sprintf("%.1f s", s.importTook.Seconds()), "", "",
				fmt.Sprintf("%.0f observations/s; %s", float64(s.n)/s.importTook.Seconds(), s.importNote)},
			s.disk.row(s.n),
		)
		bPage, vPage := budget("p50 < 300 ms", s.viewerPage.p50() < 300*time.Millisecond)
		bVSearch, vVSearch := budget("p50 < 100 ms", s.viewerSearch.p50() < 100*time.Millisecond)
		rows = append(rows,
			row{fmt.Sprintf("viewer, first page of records, %s observations (GET /api/records)", k), p50p99(s.viewerPage), bPage, vPage,
				fmt.Sprintf("%d calls over loopback HTTP with the cookie, 50 newest records; the sessions' first page %s", len(s.viewerPage), p50p99(s.viewerSessions))},
			row{fmt.Sprintf("viewer, search, %s observations (GET /api/records?q=)", k), p50p99(s.viewerSearch), bVSearch, vVSearch,
				fmt.Sprintf("%d calls (the search queries), limit 50, over loopback HTTP: the viewer's in-process client of the daemon's own methods; %s", len(s.viewerSearch), emb)},
		)
	}
	for _, e := range b.embedders {
		load := ""
		if e.load > 0 {
			load = fmt.Sprintf("; loading the model %s, %.0f MB of heap", ms(e.load), b.modelMB)
		}
		textBudget, textVerdict, queryBudget, queryVerdict, kernel := "", "", "", "", ""
		if e.id != vector.HashEmbedderID {
			textBudget, textVerdict = "p50 ≤ 25 ms", verdict(e.textCPU.p50() <= 25*time.Millisecond)
			queryBudget, queryVerdict = "p50 ≤ 2 ms", verdict(e.queryCPU.p50() <= 2*time.Millisecond)
			kernel = " (matrix kernel " + vector.KernelName() + ")"
		}
		rows = append(rows,
			row{"embedding throughput, " + e.id, fmt.Sprintf("%.1f observations/s", e.perSecond), "", "",
				fmt.Sprintf("%d observation texts on %d CPUs, in-process%s", e.texts, e.cpus, load)},
			row{"embedding an observation's text, one CPU, " + e.id, "CPU " + p50p90(e.textCPU), textBudget, textVerdict,
				fmt.Sprintf("%d texts one by one, the CPU time of the thread that embeds each%s", len(e.textCPU), kernel)},
			row{"embedding a search query, one CPU, " + e.id, "CPU " + p50p90(e.queryCPU), queryBudget, queryVerdict,
				fmt.Sprintf("%d queries one by one, as the text above; wall time %s", len(e.queryCPU), p50p99(e.query))},
		)
	}
	if b.embedErr != "" {
		rows = append(rows, row{"embedding throughput, USE-Lite", "not measured", "", "", b.embedErr})
	}
	if b.recorded != nil {
		rows = append(rows, b.recorded.rows()...)
	}
	if b.recordedErr != "" {
		rows = append(rows, row{"daemon CPU per tool event, back-filling the recorded Claude Code transcripts", "not measured", "", "", b.recordedErr})
	}
	if b.editor != nil {
		rows = append(rows, b.editor.rows()...)
	}
	if b.talk != nil {
		rows = append(rows, b.talk.rows()...)
	}
	if a := b.anchors; a != nil {
		added := a.anchored.p50() - a.plain.p50()
		bA, vA := "≤ 3 ms added", verdict(added <= 3*time.Millisecond)
		rows = append(rows, row{fmt.Sprintf("anchors checked in a context, %s observations (mnemo/context)", sizeName(a.n)),
			fmt.Sprintf("+%s (p50 %s vs %s)", ms(added), ms(a.anchored.p50()), ms(a.plain.p50())), bA, vA,
			fmt.Sprintf("the same %d edits of %d files in two homes, anchored (live) and not (dated an hour back, as a back-fill); %d calls each; after a tenth of the files changed and a twentieth lost what was written: %s (the newest 200: %v)",
				a.n, a.files, len(a.plain), p50p99(a.afterChanges), a.states)})
	}
	for i := range b.knowledge {
		rows = append(rows, b.knowledge[i].rows()...)
	}
	if b.team != nil {
		rows = append(rows, b.team.rows()...)
	}
	if b.teamErr != "" {
		rows = append(rows, row{"team memory", "not measured", "", "", b.teamErr})
	}
	for _, h := range b.history {
		c := h.counts
		note := fmt.Sprintf("%s records into a fresh home, hashing embedder: the command took %.1f s (its peak RSS %.0f MB), the store caught up %.1f s after its start (%d sessions, %d prompts, %d observations, %d summaries); the daemon's peak RSS %.0f MB",
			sizeName(h.records), h.command.Seconds(), h.commandPeakMB, h.caughtUp.Seconds(), c.Sessions, c.Prompts, c.Observations, c.Summaries, h.daemonPeakMB)
		if h.note != "" {
			note += "; **" + h.note + "**"
		}
		rows = append(rows, row{h.what + ", " + sizeName(h.records) + " records", fmt.Sprintf("%.0f records/s", float64(h.records)/h.caughtUp.Seconds()), "", "", note})
	}
	return rows
}

func sizeName(n int) string {
	if n%1000 == 0 {
		return fmt.Sprintf("%dk", n/1000)
	}
	return strconv.Itoa(n)
}

// print writes the table in Markdown, with the command and the machine.
func (b *bench) print(w io.Writer) {
	fmt.Fprintf(w, "Command: `%s`  \n", b.command)
	fmt.Fprintf(w, "Machine: %s, %d CPUs, %s; %s; run of %s, took %s  \n\n", cpuModel(), runtime.NumCPU(), runtime.GOOS+"/"+runtime.GOARCH,
		runtime.Version(), b.started.UTC().Format("2006-01-02 15:04 MST"), b.took.Round(time.Second))
	fmt.Fprintln(w, "| what | measured | budget | | notes |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, r := range b.rows() {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", r.what, r.measured, r.budget, r.verdict, strings.ReplaceAll(r.notes, "|", "\\|"))
	}
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "model name"); ok {
			return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
		}
	}
	return runtime.GOARCH
}
