//go:build unix

// Command mnemo-soak runs Mnemo under load and faults for a bounded time,
// then checks that nothing was lost or stored twice. Against one Mnemo
// home, in parallel:
//
//   - hook agents run mnemo-hook processes through whole Claude Code
//     sessions (SessionStart, UserPromptSubmit, PostToolUse, Stop,
//     SessionEnd), each event carrying a unique marker;
//   - an editor speaks LSP to `mnemo serve --stdio` (didOpen, didSave),
//     restarting it when its daemon goes away, as an editor does;
//   - a searcher runs `mnemo search`;
//   - a killer sends SIGKILL to the daemon at random moments, and half of
//     the time starts a new one at once (otherwise the next client does);
//     now and then it freezes the daemon (SIGSTOP, then SIGCONT) instead,
//     so that hooks miss their deadlines and spool calls the daemon may
//     still carry out.
//
// At the end the daemon is restarted (so the hook spool is ingested), the
// queue drains, and the memory is exported and counted: every hook event
// and every acknowledged editor event stored exactly once, unacknowledged
// editor events at most once, no content session stored twice, every
// ended session completed, every hook answered in time, and `mnemo doctor`
// clean. It prints the counts and exits 1 on any violation.
//
//	go run ./cmd/mnemo-soak -bin bin -duration 3m
//
// With -steady FILE it runs instead a long, fault-free load against a
// daemon started on a large store and checks that its memory stays flat
// (steady.go).
//
// Everything runs on this machine: the socket is a Unix socket, nothing
// listens on a network.
//
// It is built for Unix only: its faults are signals (SIGKILL, SIGSTOP and
// SIGCONT), and -steady samples the daemon's memory from /proc/<pid>/status,
// which needs Linux. Mnemo itself builds for Windows too.
package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// options are the command line of mnemo-soak.
type options struct {
	bin, models   string
	duration      time.Duration
	agents        int
	pace          time.Duration
	killMin       time.Duration
	killMax       time.Duration
	killHooks     float64
	slack         time.Duration
	drain         time.Duration
	seed          uint64
	keep, verbose bool

	// The steady mode (steady.go).
	steady     string // the export file to start from; empty: the fault mode
	events     int
	searches   int
	searchPace time.Duration
	sample     time.Duration
	idle       time.Duration
	tolerance  float64
}

func parseOptions(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("mnemo-soak", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.bin, "bin", "bin", "folder with the mnemo and mnemo-hook binaries")
	fs.StringVar(&o.models, "models", "", "MNEMO_MODELS for the daemon; empty: none, so the hashing embedder (the sentence encoder's ~0.1-0.5 s of CPU per observation would leave the worker minutes behind the load)")
	fs.DurationVar(&o.duration, "duration", 3*time.Minute, "how long the load and the faults run")
	fs.IntVar(&o.agents, "agents", 4, "concurrent Claude Code sessions (hook agents)")
	fs.DurationVar(&o.pace, "pace", 300*time.Millisecond, "the most an agent waits between two hooks (uniform from a sixth of it)")
	fs.DurationVar(&o.killMin, "kill-min", 4*time.Second, "shortest time between two kills of the daemon")
	fs.DurationVar(&o.killMax, "kill-max", 20*time.Second, "longest time between two kills of the daemon")
	fs.Float64Var(&o.killHooks, "kill-hooks", 0.03, "the share of hook processes killed (SIGKILL) at a random moment of their run, 0 to 40 ms after their start: their events were never acknowledged, so each may be stored once or not at all, never twice, and the events after them keep their order")
	fs.DurationVar(&o.slack, "slack", time.Second, "allowed on top of a hook's own budget for process start and exit on a loaded machine (never past Claude Code's timeout for the hook)")
	fs.DurationVar(&o.drain, "drain", 10*time.Minute, "how long the final restart may take to process the queue")
	fs.Uint64Var(&o.seed, "seed", uint64(time.Now().UnixNano()), "random seed (printed; reuse it to repeat a run's choices)")
	fs.BoolVar(&o.keep, "keep", false, "keep the temporary home")
	fs.BoolVar(&o.verbose, "v", false, "log more")
	fs.StringVar(&o.steady, "steady", "", "steady mode: import this export file (e.g. the benchmark's 100k data set), restart the daemon, run -events hook events and -searches searches with no faults while sampling its RSS, and check the RSS stays within -steady-tolerance of where it settled")
	fs.IntVar(&o.events, "events", 10000, "steady mode: hook events to run")
	fs.IntVar(&o.searches, "searches", 2000, "steady mode: searches to run (over one socket connection)")
	fs.DurationVar(&o.searchPace, "search-pace", 50*time.Millisecond, "steady mode: the mean wait between two searches while the events run")
	fs.DurationVar(&o.sample, "sample", time.Second, "steady mode: how often to sample the daemon's RSS")
	fs.DurationVar(&o.idle, "idle", 30*time.Second, "steady mode: how long to sample the daemon once the load is done and the queue drained")
	fs.Float64Var(&o.tolerance, "steady-tolerance", 0.10, "steady mode: how far above its settled level the RSS's later medians may go")
	err := fs.Parse(args)
	if err == nil && o.steady != "" {
		// -duration caps the steady load, which ends when its counts are
		// reached; its fault-mode default would cut it short.
		set := false
		fs.Visit(func(f *flag.Flag) { set = set || f.Name == "duration" })
		if !set {
			o.duration = time.Hour
		}
	}
	return o, err
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseOptions(args, stderr)
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
	s, err := newSoak(o, log)
	if err != nil {
		log.Error("soak setup", "err", err)
		return 1
	}
	defer s.cleanup()
	run := s.run
	if o.steady != "" {
		run = s.runSteady
	}
	rep, err := run(ctx)
	if err != nil {
		log.Error("soak failed to run", "err", err)
		return 1
	}
	rep.print(stdout)
	if len(rep.violations) > 0 {
		return 1
	}
	return 0
}
