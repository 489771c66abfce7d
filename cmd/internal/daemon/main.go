package daemon

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

	"go.lsp.dev/jsonrpc2"

	"github.com/mnemo-dev/mnemo/adapters/vscode"
	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/privacy"
	"github.com/mnemo-dev/mnemo/memory/store"
	"github.com/mnemo-dev/mnemo/rpc"
	"github.com/mnemo-dev/mnemo/vector"
)

// Main is an opened Mnemo: its home, logger and memory. The daemon, the
// in-process server and tests drive it with Open and Close.
type Main struct {
	// Home is the Mnemo home (rpc.Home) whose memory Open opens.
	Home string
	// Logger gets the runtime's log; nil discards it.
	Logger *slog.Logger
	// Agent overrides the memory agent (tests); the local agent when nil.
	Agent memory.Agent

	// LockWait is how long Open waits for a store another process still
	// holds (ErrLocked): the daemon waits for the one it replaces.
	LockWait time.Duration

	// Memory is the memory Open opened.
	Memory *store.Memory
	// Config is the configuration Open loaded.
	Config Config

	// rules derives projects' knowledge again and refreshes their rules
	// files after their sessions end.
	rules *rulesRefresher
	// viewer serves the memory viewer once asked (viewer.go).
	viewer *viewerHost
	// team runs team memory's push and pull (team.go).
	team *teamHost
	// journal takes the hooks' journal in (journal.go); the daemon's
	// only, nil elsewhere.
	journal *journalHost
}

// Open opens the memory under Home.
func (m *Main) Open(ctx context.Context) error {
	if m.Logger == nil {
		m.Logger = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(m.Home, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", m.Home, err)
	}
	cfg, _, err := LoadConfig(m.Home)
	if err != nil {
		return err
	}
	m.Config = cfg
	emb, notice, err := openEmbedder(ctx, cfg.Embedder, ModelsDir(m.Home))
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
		ReviewAfter:    cfg.reviewAfter(),
		SkipTools:      append(slices.Clone(privacy.DefaultSkipTools), cfg.SkipTools...),
		Paused:         cfg.Paused,
		SavePaused:     func(p map[string]string) error { return savePaused(m.Home, p) },
		Version:        Version,
		Logger:         m.Logger,
	}
	mem, err := openStore(ctx, opts)
	for wait := time.Now().Add(m.LockWait); errors.Is(err, store.ErrLocked) && time.Now().Before(wait); {
		// The daemon this one takes over from (an upgrade's hand-over)
		// is still closing the store.
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		mem, err = openStore(ctx, opts)
	}
	if errors.Is(err, store.ErrLocked) {
		return fmt.Errorf("%w\nAnother Mnemo process (the daemon, or `mnemo serve --remote=none`) owns %s; stop it with `mnemo daemon stop`, or use a different MNEMO_HOME", err, m.Home)
	}
	if err != nil && !errors.Is(err, memory.ErrSchema) {
		// A store Badger refuses, or panics on: say which file is
		// damaged, and what to do, once (rpc remembers a failed start).
		if verr := store.Verify(opts.Dir); errors.Is(verr, store.ErrDamaged) {
			m.Logger.Error("the store is damaged", "err", verr, "open", err)
			return fmt.Errorf("%w\n`mnemo recover` rescues what can be read into a fresh store and keeps the damaged one aside; `mnemo doctor` says what is damaged", verr)
		}
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

// openStore is store.Open, with a panic of Badger's while it reads a
// damaged store turned into an error.
func openStore(ctx context.Context, o store.Options) (mem *store.Memory, err error) {
	defer func() {
		if r := recover(); r != nil {
			mem, err = nil, fmt.Errorf("open store %s: reading it panicked: %v", o.Dir, r)
		}
	}()
	return store.Open(ctx, o)
}

// Close stops the memory's worker and closes the store.
func (m *Main) Close() error {
	if m.Memory == nil {
		return nil
	}
	if m.journal != nil {
		m.journal.Close()
		m.journal = nil
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

// SplitList splits a comma-separated list, dropping blanks and the
// space around each item: a setting's list in the environment, a command's
// list flag.
func SplitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// A Conn is a client connected to an opened Main's method table inside
// this process, over an in-memory pipe: the same methods a socket client
// gets, without a socket. Close it before the Main.
type Conn struct {
	// Client is the client's end.
	Client *rpc.Client
	c      *connection
	server jsonrpc2.Conn
}

// Connect connects a client to m's method table in this process (the demo,
// the viewer, the replay of the hook spool, benchmarks).
func (m *Main) Connect(ctx context.Context) *Conn {
	a, b := net.Pipe()
	c := newConnection(m, m.Logger)
	server := c.serve(ctx, b, c.Handler())
	return &Conn{Client: rpc.NewClient(a, nil), c: c, server: server}
}

// Editor is the connection's editor session (adapters/vscode), which an
// LSP client's documents reach: for measuring what it keeps.
func (c *Conn) Editor() *vscode.Editor { return c.c.editor }

// Close closes both ends and ends what the connection owns.
func (c *Conn) Close() {
	c.Client.Close()
	c.server.Close()
	c.c.Close()
}

// ServeConn serves one client, an editor's LSP session or any other, on
// rwc with m's method table until the client exits (the LSP exit
// notification), the stream closes or ctx ends; then it closes the
// connection. It reports whether the client shut down first, as LSP asks
// (shutdown, then exit): `mnemo serve --remote=none` exits 0 then, else 1.
func (m *Main) ServeConn(ctx context.Context, rwc io.ReadWriteCloser) (shutDown bool) {
	log := m.Logger
	c := newConnection(m, log)
	defer c.Close()
	conn := c.serve(ctx, rwc, c.Handler())
	select {
	case <-c.exit:
	case <-conn.Done():
	case <-ctx.Done():
	}
	conn.Close()
	select {
	case <-conn.Done():
	case <-time.After(2 * time.Second):
		log.Warn("connection did not close in time")
	}
	return c.editor.ShutDown()
}
