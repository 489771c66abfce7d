package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mnemo-dev/mnemo/adapters/hosts/hook"
	"github.com/mnemo-dev/mnemo/memory/client"
	"github.com/mnemo-dev/mnemo/rpc"
)

// DefaultIdleTimeout is how long the daemon waits with no client and no
// queued work before it exits.
const DefaultIdleTimeout = 30 * time.Minute

func daemonCommand() *cli.Command {
	return &cli.Command{
		Name:  "daemon",
		Usage: "run the daemon that owns the memory (clients start it when needed)",
		Flags: []cli.Flag{
			&cli.DurationFlag{Name: "idle-timeout", Value: DefaultIdleTimeout, Usage: "exit after this long with no client and no queued work (0: never)", EnvVars: []string{"MNEMO_IDLE_TIMEOUT"}},
			&cli.StringFlag{Name: "log-file", Usage: "log here (default: stderr)"},
			&cli.DurationFlag{Name: "binary-check", Value: time.Minute, Usage: "how often to check whether the mnemo binary was replaced (an upgrade): then the daemon exits once no client is connected, and the next client starts the new one (0: never)", EnvVars: []string{"MNEMO_BINARY_CHECK"}},
			&cli.DurationFlag{Name: "spool-interval", Value: 10 * time.Second, Usage: "how often to ingest hook events spooled while the daemon runs", EnvVars: []string{"MNEMO_SPOOL_INTERVAL"}},
		},
		Action: func(c *cli.Context) error {
			home, err := homeDir(c)
			if err != nil {
				return err
			}
			logw := c.App.ErrWriter
			if p := c.String("log-file"); p != "" {
				f, err := openLogFile(p)
				if err != nil {
					return err
				}
				defer f.Close()
				logw = f
			}
			log := newLogger(c, logw).With("pid", os.Getpid())
			d := &Daemon{Main: Main{Home: home, Logger: log, LockWait: 10 * time.Second}, IdleTimeout: c.Duration("idle-timeout"), SpoolInterval: c.Duration("spool-interval"), BinaryCheck: c.Duration("binary-check")}
			return d.Run(c.Context)
		},
		Subcommands: []*cli.Command{
			{
				Name:  "status",
				Usage: "say whether the daemon runs, and its state",
				Action: func(c *cli.Context) error {
					return withDaemon(c, false, func(ctx context.Context, cl *client.Client) error {
						st, err := cl.Status(ctx)
						if err != nil {
							return err
						}
						return printStatus(c.App.Writer, &st)
					})
				},
			},
			{
				Name:  "stop",
				Usage: "stop the daemon (it finishes queued work it can, then closes the store)",
				Action: func(c *cli.Context) error {
					home, err := homeDir(c)
					if err != nil {
						return err
					}
					return stopDaemon(c.Context, home, c.App.Writer)
				},
			},
		},
	}
}

// Daemon owns the data directory and serves every client on the socket.
type Daemon struct {
	Main
	IdleTimeout time.Duration
	// SpoolInterval is how often hook events spooled while the daemon runs
	// are ingested (they are always ingested at start).
	SpoolInterval time.Duration
	// BinaryCheck is how often the daemon checks whether its binary was
	// replaced (watchBinary); 0: never.
	BinaryCheck time.Duration

	clients atomic.Int64
	last    atomic.Int64 // unix nanos of the last client disconnect
}

// Run serves until ctx ends (SIGTERM, SIGINT), or the daemon has been idle
// for IdleTimeout. Then it stops accepting, lets queued work finish for a
// bounded time, and closes the store.
func (d *Daemon) Run(ctx context.Context) error {
	log := d.Logger
	setGCPercent() // and tuneMemory below: gc.go
	sock := rpc.SocketPath(d.Home)
	ln, err := rpc.Listen(sock)
	if errors.Is(err, rpc.ErrDaemonRunning) {
		log.Info("a daemon is already running", "socket", sock)
		return nil
	}
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	if err := d.Open(ctx); err != nil {
		ln.Close()
		return err
	}
	defer d.Close()
	// An open viewer page is a client: the daemon does not exit idle
	// under it.
	d.viewer.hold = func() func() {
		d.clients.Add(1)
		return func() {
			d.clients.Add(-1)
			d.last.Store(time.Now().UnixNano())
		}
	}
	log.Info("daemon serving", "socket", sock, "home", d.Home, "version", Version)
	if err := d.ingestSpool(ctx); err != nil {
		log.Error("ingest the hook spool", "err", err)
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	d.last.Store(time.Now().UnixNano())
	var wg sync.WaitGroup
	if d.IdleTimeout > 0 {
		wg.Go(func() { d.watchIdle(ctx, cancel) })
	}
	wg.Go(func() { d.watchSpool(ctx) })
	wg.Go(func() { d.watchBinary(ctx, cancel) })
	wg.Go(func() { d.tuneMemory(ctx) })
	err = rpc.ServeListener(ctx, ln, func(ctx context.Context, nc net.Conn) {
		d.clients.Add(1)
		defer func() {
			d.clients.Add(-1)
			d.last.Store(time.Now().UnixNano())
		}()
		c := newConnection(&d.Main, log)
		defer c.Close()
		conn := c.serve(ctx, nc, rpc.RequireHello(c.Handler(), Version, nil))
		select {
		case <-c.exit:
		case <-conn.Done():
		case <-ctx.Done():
		}
		conn.Close()
	})
	cancel()
	wg.Wait()
	drain, stop := context.WithTimeout(context.Background(), 3*time.Second)
	defer stop()
	if err := d.Memory.WaitIdle(drain); err != nil {
		log.Warn("stopping with queued work left; it is processed at the next start", "err", err)
	}
	log.Info("daemon stopped")
	return err
}

// ingestSpool replays the hook events that could not reach a daemon, in
// order, through the same methods a live hook calls. Their event keys make
// a replay of an event that did arrive a no-op.
func (d *Daemon) ingestSpool(ctx context.Context) error {
	cl, stop := d.inProcessClient(ctx)
	defer stop()
	n, err := hook.IngestSpool(ctx, hook.SpoolPath(d.Home), func(ctx context.Context, method string, params json.RawMessage) error {
		return cl.Call(ctx, method, params, nil)
	})
	if n > 0 {
		d.Logger.Info("ingested the hook spool", "events", n)
	}
	return err
}

// watchSpool ingests events that hooks spooled because this daemon
// answered too slowly.
func (d *Daemon) watchSpool(ctx context.Context) {
	if d.SpoolInterval <= 0 {
		return
	}
	t := time.NewTicker(d.SpoolInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := d.ingestSpool(ctx); err != nil && ctx.Err() == nil {
			d.Logger.Error("ingest the hook spool", "err", err)
		}
	}
}

func (d *Daemon) watchIdle(ctx context.Context, stop context.CancelFunc) {
	tick := time.NewTicker(min(d.IdleTimeout/4, time.Minute))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if d.clients.Load() > 0 || time.Since(time.Unix(0, d.last.Load())) < d.IdleTimeout {
			continue
		}
		if c, err := d.Memory.Counts(ctx); err != nil || c.Queued > 0 {
			continue
		}
		if d.Memory.OutboxLen() > 0 {
			continue // team memory has pushes to make
		}
		d.Logger.Info("idle; exiting", "idle", d.IdleTimeout)
		stop()
		return
	}
}

// watchBinary ends the daemon, as an idle exit does, once its binary was
// replaced (an upgrade: `go install`, an archive unpacked over it, `just
// install`) and no client is connected and nothing is queued: the next
// client then starts the new binary. Clients of the new version hand over
// by themselves (rpc.ConnectOptions.Version); this covers a daemon no new
// client has met yet, and development builds, which never hand over.
func (d *Daemon) watchBinary(ctx context.Context, stop context.CancelFunc) {
	if d.BinaryCheck <= 0 {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		return
	}
	was, err := os.Stat(exe)
	if err != nil {
		return
	}
	tick := time.NewTicker(d.BinaryCheck)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		now, err := os.Stat(exe)
		if err != nil || os.SameFile(was, now) && now.ModTime().Equal(was.ModTime()) && now.Size() == was.Size() {
			continue // the same binary, or one being written
		}
		if d.clients.Load() > 0 {
			continue
		}
		if c, err := d.Memory.Counts(ctx); err != nil || c.Queued > 0 {
			continue
		}
		d.Logger.Info("the mnemo binary was replaced; exiting for the new one", "binary", exe)
		stop()
		return
	}
}

// connectOptions say how this program reaches the daemon of home as a
// client of the given kind (rpc.ClientCLI…), starting it with this mnemo
// binary when start is true.
func connectOptions(home string, log *slog.Logger, kind string, start bool) (rpc.ConnectOptions, error) {
	o := rpc.ConnectOptions{Home: home, Client: kind, Logger: log, Version: Version}
	if start {
		exe, err := os.Executable()
		if err != nil {
			return o, fmt.Errorf("find the mnemo binary: %w", err)
		}
		o.Command = rpc.DaemonCommand(exe, home)
	}
	return o, nil
}

// connectDaemon connects to the daemon of home (rpc.Connect), starting it
// when start is true.
func connectDaemon(ctx context.Context, home string, log *slog.Logger, kind string, start bool) (*rpc.Client, error) {
	o, err := connectOptions(home, log, kind, start)
	if err != nil {
		return nil, err
	}
	return rpc.Connect(ctx, o)
}

// withDaemon runs fn with a client of the daemon.
func withDaemon(c *cli.Context, start bool, fn func(context.Context, *client.Client) error) error {
	home, err := homeDir(c)
	if err != nil {
		return err
	}
	cl, err := connectDaemon(c.Context, home, newLogger(c, c.App.ErrWriter), rpc.ClientCLI, start)
	if errors.Is(err, rpc.ErrNoDaemon) {
		return fmt.Errorf("%w\nNo Mnemo daemon runs for %s; any mnemo command that needs one starts it (e.g. `mnemo status`)", err, home)
	}
	if err != nil {
		return err
	}
	defer cl.Close()
	return fn(c.Context, client.New(cl))
}

// stopDaemon stops the daemon (rpc.Terminate: SIGTERM on Unix, which it
// answers with an orderly shutdown; killed on Windows) and waits up to 10s
// for its process to be gone.
func stopDaemon(ctx context.Context, home string, out interface{ Write([]byte) (int, error) }) error {
	// No version in the hello: an older mnemo stops a newer daemon (what
	// the refusal of a downgrade tells people to do).
	o, err := connectOptions(home, slog.New(slog.DiscardHandler), rpc.ClientCLI, false)
	if err != nil {
		return err
	}
	o.Version = ""
	cl, err := rpc.Connect(ctx, o)
	if errors.Is(err, rpc.ErrNoDaemon) {
		fmt.Fprintln(out, "no daemon running")
		return nil
	}
	if err != nil {
		return err
	}
	st, err := client.New(cl).Status(ctx)
	cl.Close()
	if err != nil {
		return err
	}
	if err := rpc.Terminate(st.PID); err != nil {
		return fmt.Errorf("signal daemon %d: %w", st.PID, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if !rpc.ProcessAlive(st.PID) {
			fmt.Fprintf(out, "daemon %d stopped\n", st.PID)
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return fmt.Errorf("daemon %d is still running after 10s", st.PID)
}
