package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mnemo-dev/mnemo/adapters/hosts/hook"
	"github.com/mnemo-dev/mnemo/rpc"
)

// DefaultIdleTimeout is how long the daemon waits with no client and no
// queued work before it exits.
const DefaultIdleTimeout = 30 * time.Minute

// Daemon owns the data directory and serves every client on the socket.
type Daemon struct {
	Main
	// IdleTimeout is how long the daemon runs on with no client, nothing
	// queued and no team push waiting; 0: for ever.
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
	running := func() error {
		// An error, whose words say which daemon: a person who ran
		// `mnemo daemon` learns it did not start; a client that started
		// this one in a race dials the one that runs.
		pid := runningPID(ctx, sock)
		log.Info("a daemon is already running", "socket", sock, "running", pid)
		if pid > 0 {
			return fmt.Errorf("a daemon already runs for %s (pid %d); `mnemo daemon stop` stops it", d.Home, pid)
		}
		return fmt.Errorf("a daemon already runs for %s; `mnemo daemon stop` stops it", d.Home)
	}
	if runningPID(ctx, sock) > 0 {
		return running()
	}
	// The store first, then the socket: a store that cannot be opened (a
	// damaged one) ends this process before any client connects, so the
	// client that started it reads why in its log (socket.DialOrStart), and
	// remembers it, instead of a connection reset it would retry.
	if err := d.Open(ctx); err != nil {
		return err
	}
	defer d.Close()
	os.Remove(rpc.StartFailPath(d.Home)) // what a failed start left is moot
	ln, err := rpc.Listen(sock)
	if errors.Is(err, rpc.ErrDaemonRunning) {
		return running()
	}
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
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
	journal, err := openJournal(&d.Main, func() { d.last.Store(time.Now().UnixNano()) })
	if err != nil {
		// The hooks' events wait in it for a daemon that can read it.
		log.Error("the hooks' journal cannot be read; its events wait in it", "err", err)
	} else {
		d.journal = journal
		wg.Go(func() { journal.run(ctx) })
	}
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
		if journal != nil {
			c.mux.Use(journal.barrier)
		}
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
	if journal != nil {
		// What hooks wrote until now is stored before the store closes.
		if err := journal.catchUp(drain); err != nil {
			log.Warn("stopping with journal records left; they are taken at the next start", "err", err)
		}
		journal.release()
	}
	if err := d.Memory.WaitIdle(drain); err != nil {
		log.Warn("stopping with queued work left; it is processed at the next start", "err", err)
	}
	log.Info("daemon stopped")
	return err
}

// runningPID asks the daemon listening at sock for its process id; 0 when
// it does not say within a second.
func runningPID(ctx context.Context, sock string) int {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	nc, err := rpc.DialSocket(ctx, sock)
	if err != nil {
		return 0
	}
	defer nc.Close()
	hr, err := rpc.Handshake(ctx, nc, rpc.ClientCLI)
	if err != nil {
		return 0
	}
	return hr.PID
}

// ingestSpool replays the hook events that could not reach a daemon, in
// order, through the same methods a live hook calls. Their event keys make
// a replay of an event that did arrive a no-op.
func (d *Daemon) ingestSpool(ctx context.Context) error {
	conn := d.Connect(ctx)
	defer conn.Close()
	n, err := hook.IngestSpool(ctx, hook.SpoolPath(d.Home), func(ctx context.Context, method string, params json.RawMessage) error {
		return conn.Client.Call(ctx, method, params, nil)
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
		if d.journal != nil && d.journal.unread() {
			continue // hooks wrote records it has not taken yet
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
