// Command blevecompare measures bleve against Mnemo's own keyword index
// (package vector's BM25 over code-aware terms), to choose one for keyword
// search:
//
//   - quality on the hand-labelled evaluation set in vector/testdata/eval:
//     recall@1/5/10 and MRR, overall and per query kind, for Mnemo's index,
//     a grep baseline and several bleve setups (analyzers, scoring models);
//   - speed and size on 10k and 100k synthetic memories shaped like
//     vector/bench_test.go's: build time, reopen time, live heap, disk size,
//     search latency within a project and across all, the time to add one
//     memory, for Mnemo's index (in memory) and bleve in memory and on disk;
//   - search latency after many single adds, which leave an in-memory bleve
//     index with a segment each;
//   - dependency weight: the modules bleve adds and the size of binaries
//     linking it.
//
// It is a module of its own, so that bleve never enters the main module's
// go.mod. Run it from its folder:
//
//	cd vector/blevecompare && go run .
//
// It writes Markdown tables to stdout and progress to stderr. REPORT.md has
// the figures of a run and the choice made from them.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"github.com/mnemo-dev/mnemo/vector/internal/evalset"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, nil)))
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		slog.Error("blevecompare", "err", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, w io.Writer) error {
	fl := flag.NewFlagSet("blevecompare", flag.ContinueOnError)
	evalDir := fl.String("eval", "../testdata/eval", "folder of the evaluation set")
	sizes := fl.String("sizes", "10000,100000", "corpus sizes for speed and size, comma-separated")
	runs := fl.Int("runs", 3, "builds per engine and size (medians are reported)")
	reps := fl.Int("reps", 3, "passes over the queries per run and scope")
	adds := fl.Int("adds", 20, "single-memory adds timed per run")
	parts := fl.String("parts", "quality,speed,adds,deps", "what to measure, comma-separated")
	misses := fl.Bool("misses", false, "list the queries each ranking answers below rank 5")
	setups := fl.String("setups", "bleve mnemo-tok one field,bleve code", "bleve setups to time, comma-separated")
	if err := fl.Parse(args); err != nil {
		return err
	}
	cfg := speedConfig{runs: *runs, reps: *reps, adds: *adds}
	for _, f := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < *adds {
			return fmt.Errorf("bad size %q", f)
		}
		cfg.sizes = append(cfg.sizes, n)
	}
	var engines []engine
	engines = append(engines, oursKeywordOnlyEngine(), oursEngine())
	for _, name := range strings.Split(*setups, ",") {
		b, ok := findSetup(strings.TrimSpace(name))
		if !ok {
			return fmt.Errorf("unknown setup %q", name)
		}
		engines = append(engines, bleveMemoryEngine(b), bleveDiskEngine(b))
	}

	tempDir, err := os.MkdirTemp("", "blevecompare")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tempDir)
	cfg.tempDir = tempDir
	if err := isolateHome(ctx, tempDir); err != nil {
		return err
	}

	s, err := evalset.Load(*evalDir)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "## blevecompare, %s\n\n", time.Now().Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(w, "%s %s/%s, GOMAXPROCS %d, CPU %s, bleve %s\n\n",
		runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0), cpuModel(), moduleVersion("github.com/blevesearch/bleve/v2"))
	start := time.Now()
	for _, part := range strings.Split(*parts, ",") {
		switch strings.TrimSpace(part) {
		case "quality":
			err = measureQuality(ctx, w, s, *misses)
		case "speed":
			err = measureSpeed(ctx, w, s, engines, cfg)
		case "adds":
			err = measureAdds(ctx, w, s, setupMnemoOneField, 10_000, 2000, tempDir)
		case "deps":
			err = measureDeps(ctx, w, tempDir)
		default:
			err = fmt.Errorf("unknown part %q", part)
		}
		if err != nil {
			return err
		}
		slog.Info("done", "part", part, "elapsed", time.Since(start).Round(time.Second))
	}
	return nil
}

func findSetup(name string) (bleveSetup, bool) {
	for _, b := range qualitySetups {
		if b.name == name {
			return b, true
		}
	}
	return bleveSetup{}, false
}

// isolateHome points HOME and MNEMO_HOME at folders under tempDir, keeping
// the go command's own folders where they are for measureDeps.
func isolateHome(ctx context.Context, tempDir string) error {
	for _, v := range []string{"GOPATH", "GOMODCACHE", "GOCACHE"} {
		out, err := goCmd(ctx, ".", "env", v)
		if err != nil {
			return err
		}
		if err := os.Setenv(v, out); err != nil {
			return err
		}
	}
	for _, v := range []string{"HOME", "MNEMO_HOME"} {
		dir := tempDir + "/" + strings.ToLower(v)
		if err := os.Mkdir(dir, 0o700); err != nil {
			return err
		}
		if err := os.Setenv(v, dir); err != nil {
			return err
		}
	}
	return nil
}

// cpuModel returns the model name of the first CPU, when Linux tells it.
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// moduleVersion returns the version of a module linked into the program.
func moduleVersion(path string) string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, m := range info.Deps {
			if m.Path == path {
				return m.Version
			}
		}
	}
	return "unknown"
}
