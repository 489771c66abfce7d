package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/privacy"
	"github.com/mnemo-dev/mnemo/memory/store"
	"github.com/mnemo-dev/mnemo/rpc"
	"github.com/mnemo-dev/mnemo/vector"
)

// Version is set at build time with -ldflags "-X main.Version=…"; a
// build of `go install …@v0.2.0` goes by its module's version
// (rpc.ReleaseVersion). A development build never hands a daemon over nor
// is refused by one (rpc.CompareVersions).
var Version = "0.1.0-dev"

func init() { Version = rpc.ReleaseVersion(Version) }

// Run runs the mnemo command line with args and returns the exit status.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	app := newApp(stdin, stdout, stderr)
	err := app.RunContext(ctx, flagsFirst(app, args))
	var code exitCode
	switch {
	case err == nil:
		return 0
	case errors.As(err, &code):
		return int(code)
	default:
		fmt.Fprintf(stderr, "mnemo: %v\n", err)
		return 1
	}
}

func newApp(stdin io.Reader, stdout, stderr io.Writer) *cli.App {
	return &cli.App{
		Name:      "mnemo",
		Usage:     "persistent memory for coding agents and editors",
		Version:   Version,
		Reader:    stdin,
		Writer:    stdout,
		ErrWriter: stderr,
		// Errors are printed once, by Run; cli must not call os.Exit.
		ExitErrHandler: func(*cli.Context, error) {},
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "home", Usage: "the Mnemo home (default: $MNEMO_HOME, else ${XDG_DATA_HOME:-~/.local/share}/mnemo; Windows: %LocalAppData%\\mnemo)"},
			&cli.StringFlag{Name: "log-level", Value: "info", Usage: "debug, info, warn or error", EnvVars: []string{"MNEMO_LOG_LEVEL"}},
		},
		Commands: []*cli.Command{
			serveCommand(),
			daemonCommand(),
			mcpCommand(),
			setupCommand(),
			installCommand(),
			uninstallCommand(),
			modelCommand(),
			reindexCommand(),
			exportCommand(),
			importCommand(),
			backfillCommand(),
			uiCommand(),
			searchCommand(),
			timelineCommand(),
			getCommand(),
			rememberCommand(),
			correctCommand(),
			pinCommand(true),
			pinCommand(false),
			wrongCommand(),
			forgetCommand(),
			pauseCommand(true),
			pauseCommand(false),
			teamCommand(),
			contextCommand(),
			sessionsCommand(),
			statusCommand(),
			doctorCommand(),
			demoCommand(),
		},
	}
}

// homeDir is --home, else rpc.Home(): $MNEMO_HOME, else
// ${XDG_DATA_HOME:-~/.local/share}/mnemo (on Windows %LocalAppData%\mnemo).
func homeDir(c *cli.Context) (string, error) {
	if h := c.String("home"); h != "" {
		return filepath.Abs(h)
	}
	return rpc.Home()
}

// newLogger logs to w at the level named by --log-level. Logs never go to
// stdout: stdout carries protocol frames.
func newLogger(c *cli.Context, w io.Writer) *slog.Logger {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.String("log-level"))); err != nil {
		level = slog.LevelInfo
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}

// openLogFile opens (appending) a log file, creating its folder.
func openLogFile(path string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	return os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
}

// Main is an opened Mnemo: its home, logger and memory. The daemon, the
// in-process server and tests drive it with Open and Close.
type Main struct {
	Home   string
	Logger *slog.Logger
	// Agent overrides the memory agent (tests); the local agent when nil.
	Agent memory.Agent

	// LockWait is how long Open waits for a store another process still
	// holds (ErrLocked): the daemon waits for the one it replaces.
	LockWait time.Duration

	Memory *store.Memory
	// Config is the configuration Open loaded.
	Config Config

	// rules refreshes projects' rules files after their sessions end.
	rules *rulesRefresher
	// viewer serves the memory viewer once asked (ui.go).
	viewer *viewerHost
	// team runs team memory's push and pull (team.go).
	team *teamHost
}

// Open opens the memory under Home.
func (m *Main) Open(ctx context.Context) error {
	if m.Logger == nil {
		m.Logger = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(m.Home, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", m.Home, err)
	}
	cfg, _, err := loadConfig(m.Home)
	if err != nil {
		return err
	}
	m.Config = cfg
	emb, notice, err := openEmbedder(ctx, cfg.Embedder, modelsDir(m.Home))
	if err != nil {
		return err
	}
	if notice != "" {
		m.Logger.Warn(notice)
	}
	if u, ok := emb.(*vector.USELite); ok {
		// Where the weights came from, and why their file was rebuilt.
		m.Logger.Info("sentence encoder loaded", "weights", u.LoadInfo())
	}
	agent := m.Agent
	if agent == nil {
		if agent, err = newAgent(cfg, m.Home, m.Logger); err != nil {
			return fmt.Errorf("memory agent %s: %w", cfg.Agent, err)
		}
	}
	opts := store.Options{
		Dir:            filepath.Join(m.Home, "db"),
		AgentsDir:      filepath.Join(m.Home, "agents"),
		Agent:          agent,
		Embedder:       emb,
		EmbedderNotice: notice,
		ContextBytes:   cfg.ContextBytes,
		NoPromptRecall: !cfg.PromptRecall,
		SkipTools:      append(slices.Clone(privacy.DefaultSkipTools), cfg.SkipTools...),
		Paused:         cfg.Paused,
		SavePaused:     func(p map[string]string) error { return savePaused(m.Home, p) },
		Version:        Version,
		Logger:         m.Logger,
	}
	mem, err := store.Open(ctx, opts)
	for wait := time.Now().Add(m.LockWait); errors.Is(err, store.ErrLocked) && time.Now().Before(wait); {
		// The daemon this one takes over from (an upgrade's hand-over)
		// is still closing the store.
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		mem, err = store.Open(ctx, opts)
	}
	if errors.Is(err, store.ErrLocked) {
		return fmt.Errorf("%w\nAnother Mnemo process (the daemon, or `mnemo serve --remote=none`) owns %s; stop it with `mnemo daemon stop`, or use a different MNEMO_HOME", err, m.Home)
	}
	if err != nil {
		return err
	}
	m.Memory = mem
	m.rules = newRulesRefresher(mem, m.Logger)
	m.viewer = &viewerHost{m: m}
	m.team = &teamHost{m: m}
	if err := m.team.start(cfg); err != nil {
		// The memory serves without it; mnemo team status and doctor say why.
		m.Logger.Error("team memory is off", "err", err)
	}
	return nil
}

// Close stops the memory's worker and closes the store.
func (m *Main) Close() error {
	if m.Memory == nil {
		return nil
	}
	m.viewer.Close()
	m.team.Close()
	m.rules.Close()
	err := m.Memory.Close()
	m.Memory = nil
	return err
}

// openEmbedder makes the embedder a setting names: "default" (the sentence
// encoder when its weights are installed, else hashing with a notice),
// "hash", "ollama:<model>@<url>" or "openai:<model>@<url>" (the key from
// OPENAI_API_KEY).
func openEmbedder(ctx context.Context, spec, models string) (vector.Embedder, string, error) {
	kind, rest, _ := strings.Cut(spec, ":")
	model, url, _ := strings.Cut(rest, "@")
	switch kind {
	case "", "default":
		emb, notice := vector.DefaultEmbedder(models)
		return emb, notice, nil
	case "hash":
		return vector.NewHashEmbedder(), "", nil
	case "ollama":
		emb, err := vector.OpenOllama(ctx, cmp.Or(url, "http://127.0.0.1:11434"), model)
		return emb, "", err
	case "openai":
		emb, err := vector.OpenOpenAICompat(ctx, url, os.Getenv("OPENAI_API_KEY"), model)
		return emb, "", err
	}
	return nil, "", fmt.Errorf("embedder %q: want default, hash, ollama:<model>@<url> or openai:<model>@<url>", spec)
}

func mustGetwd() string {
	wd, err := os.Getwd()
	if err != nil {
		return "."
	}
	return wd
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// inProcessClient is a client of m's own methods over an in-memory pipe:
// the same method table a socket client gets, without a socket. stop
// closes both ends.
func (m *Main) inProcessClient(ctx context.Context) (*rpc.Client, func()) {
	a, b := net.Pipe()
	c := newConnection(m, m.Logger)
	conn := c.serve(ctx, b, c.Handler())
	cl := rpc.NewClient(a, nil)
	return cl, func() {
		cl.Close()
		conn.Close()
		c.Close()
	}
}
