package rpc_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/mnemo-dev/mnemo/rpc"
)

// childDaemon plays the daemon that Connect starts: the test binary run
// with RPC_TEST_CHILD=daemon and the home as its argument. It listens on
// the home's socket (exiting at once when a daemon already does), appends
// its pid to <home>/pids, serves "sum" and "pid" behind the hello, and
// exits on SIGTERM or after 30 s.
func childDaemon() int {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "daemon: no home argument")
		return 2
	}
	home := os.Args[1]
	ln, err := rpc.Listen(rpc.SocketPath(home))
	if errors.Is(err, rpc.ErrDaemonRunning) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "daemon:", err)
		return 3
	}
	f, err := os.OpenFile(filepath.Join(home, "pids"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, "daemon:", err)
		return 3
	}
	fmt.Fprintln(f, os.Getpid())
	f.Close()

	m := rpc.NewMux(nil)
	rpc.Handle(m, "sum", func(ctx context.Context, p sumParams) (int, error) { return p.A + p.B, nil })
	rpc.Handle(m, "pid", func(ctx context.Context, p struct{}) (int, error) { return os.Getpid(), nil })
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err = rpc.ServeListener(ctx, ln, func(ctx context.Context, nc net.Conn) {
		c := rpc.Serve(ctx, nc, rpc.RequireHello(m.Handler(), "child", nil))
		select {
		case <-c.Done():
		case <-ctx.Done():
		}
		c.Close()
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "daemon:", err)
		return 3
	}
	return 0
}

// childDaemonOptions are ConnectOptions for home whose Command starts a
// childDaemon. The daemons started are stopped at the end of the test.
func childDaemonOptions(t *testing.T, home string) rpc.ConnectOptions {
	t.Helper()
	t.Setenv("RPC_TEST_CHILD", "daemon") // the started daemon inherits it
	// A race-built daemon would linger a second at exit.
	t.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	t.Cleanup(func() {
		for _, pid := range childPIDs(t, home) {
			_ = syscall.Kill(pid, syscall.SIGTERM)
			for deadline := time.Now().Add(5 * time.Second); syscall.Kill(pid, 0) == nil; {
				if time.Now().After(deadline) {
					t.Errorf("daemon %d did not exit", pid)
					break
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
	})
	return rpc.ConnectOptions{Home: home, Client: rpc.ClientCLI, Command: []string{mustExecutable(t), home}}
}

// childPIDs reads the pids the child daemons of home wrote.
func childPIDs(t *testing.T, home string) []int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(home, "pids"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("pids file: %v", err)
		}
		pids = append(pids, pid)
	}
	return pids
}

// mustSum calls "sum" on c.
func mustSum(t *testing.T, c *rpc.Client) {
	t.Helper()
	var n int
	if err := c.Call(ctxT(t), "sum", sumParams{A: 2, B: 3}, &n); err != nil || n != 5 {
		t.Fatalf("sum = %d, %v", n, err)
	}
}

// TestConnectStartsDaemon: with no daemon, Connect starts one with the
// command (the test binary playing it) and says hello; racing clients
// start exactly one, under the start lock; a client that may not start one
// finds the running one.
func TestConnectStartsDaemon(t *testing.T) {
	home := t.TempDir()
	o := childDaemonOptions(t, home)

	const racers = 4
	var wg sync.WaitGroup
	clients := make([]*rpc.Client, racers)
	errs := make([]error, racers)
	for i := range racers {
		wg.Go(func() { clients[i], errs[i] = rpc.Connect(ctxT(t), o) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("client %d: %v", i, err)
		}
		defer clients[i].Close()
		mustSum(t, clients[i])
	}
	pids := childPIDs(t, home)
	if len(pids) != 1 {
		t.Fatalf("%d daemons started (pids %v), want 1", len(pids), pids)
	}

	c, err := rpc.Connect(ctxT(t), rpc.ConnectOptions{Home: home, Client: rpc.ClientHook})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var pid int
	if err := c.Call(ctxT(t), "pid", nil, &pid); err != nil || pid != pids[0] {
		t.Errorf("pid = %d, %v; want the started daemon's %d", pid, err, pids[0])
	}
}

// TestConnectNoDaemon: a missing socket and a stale one (a file nobody
// listens on) are ErrNoDaemon when Connect may not start a daemon; when it
// may, it starts one over the stale socket.
func TestConnectNoDaemon(t *testing.T) {
	for _, stale := range []bool{false, true} {
		t.Run(fmt.Sprintf("stale=%t", stale), func(t *testing.T) {
			home := t.TempDir()
			path := rpc.SocketPath(home)
			if stale {
				if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
					t.Fatal(err)
				}
				ul, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
				if err != nil {
					t.Fatal(err)
				}
				ul.SetUnlinkOnClose(false)
				ul.Close()
			}
			c, err := rpc.Connect(ctxT(t), rpc.ConnectOptions{Home: home, Client: rpc.ClientCLI})
			if err == nil {
				c.Close()
				t.Fatal("Connect succeeded with no daemon")
			}
			if _, ok := errors.AsType[*rpc.DialError](err); !ok || !errors.Is(err, rpc.ErrNoDaemon) {
				t.Errorf("err = %v (%T), want a *DialError matching ErrNoDaemon", err, err)
			}
			if want := "no daemon listening at " + path; err.Error() != want {
				t.Errorf("err = %q, want %q", err, want)
			}

			c, err = rpc.Connect(ctxT(t), childDaemonOptions(t, home))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			mustSum(t, c)
		})
	}
}

// TestConnectDaemonDoesNotStart: a daemon command that cannot run is
// ErrDaemonStart.
func TestConnectDaemonDoesNotStart(t *testing.T) {
	home := t.TempDir()
	_, err := rpc.Connect(ctxT(t), rpc.ConnectOptions{Home: home, Client: rpc.ClientCLI,
		Command: []string{filepath.Join(home, "no-such-mnemo"), "daemon"}})
	if !errors.Is(err, rpc.ErrDaemonStart) {
		t.Fatalf("err = %v, want ErrDaemonStart", err)
	}
}

// fakeDaemon is a daemon of the test's making on a real socket.
type fakeDaemon struct {
	conns  atomic.Int32   // connections accepted
	hellos chan rpc.Hello // the hellos of serveHello
}

func newFakeDaemon() *fakeDaemon { return &fakeDaemon{hellos: make(chan rpc.Hello, 8)} }

// start listens on home's socket and hands each connection to serve, which
// owns it until ctx ends: serve gets the connection's number, from 1.
func (d *fakeDaemon) start(t *testing.T, home string, serve func(ctx context.Context, n int, nc net.Conn)) *fakeDaemon {
	t.Helper()
	ln, err := rpc.Listen(rpc.SocketPath(home))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = rpc.ServeListener(ctx, ln, func(ctx context.Context, nc net.Conn) {
			serve(ctx, int(d.conns.Add(1)), nc)
		})
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return d
}

// serveHello serves "sum" and "hang" behind the hello on nc until it or
// ctx ends.
func (d *fakeDaemon) serveHello(ctx context.Context, nc net.Conn) {
	m := rpc.NewMux(nil)
	rpc.Handle(m, "sum", func(ctx context.Context, p sumParams) (int, error) { return p.A + p.B, nil })
	rpc.Handle(m, "hang", func(ctx context.Context, p struct{}) (int, error) {
		<-ctx.Done()
		return 0, ctx.Err()
	}, rpc.Concurrent())
	c := rpc.Serve(ctx, nc, rpc.RequireHello(m.Handler(), testServerVersion, func(h rpc.Hello) { d.hellos <- h }))
	select {
	case <-c.Done():
	case <-ctx.Done():
	}
	c.Close()
}

// reset ends nc as a daemon killed mid-hello does: it reads one byte of
// the hello and closes; a Unix socket closed with unread data resets its
// peer.
func reset(nc net.Conn) {
	nc.Read(make([]byte, 1))
	nc.Close()
}

// TestConnectRetriesLostConnection: a daemon that resets the connection
// during the hello (killed, or exiting at idle) makes Connect dial again,
// 3 dials in all unless Attempts says otherwise.
func TestConnectRetriesLostConnection(t *testing.T) {
	tests := []struct {
		name     string
		resets   int // connections reset before the daemon answers
		attempts int
		wantOK   bool
		wantDial int
	}{
		{name: "one reset", resets: 1, wantOK: true, wantDial: 2},
		{name: "two resets", resets: 2, wantOK: true, wantDial: 3},
		{name: "three resets", resets: 3, wantOK: false, wantDial: 3},
		{name: "one attempt", resets: 1, attempts: 1, wantOK: false, wantDial: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			d := newFakeDaemon()
			d.start(t, home, func(ctx context.Context, n int, nc net.Conn) {
				if n <= tt.resets {
					reset(nc)
					return
				}
				d.serveHello(ctx, nc)
			})
			log, logs := newLogger()
			c, err := rpc.Connect(ctxT(t), rpc.ConnectOptions{Home: home, Client: rpc.ClientHook, Attempts: tt.attempts, Logger: log})
			if n := int(d.conns.Load()); n != tt.wantDial {
				t.Errorf("%d dials, want %d", n, tt.wantDial)
			}
			if retries := strings.Count(logs.String(), "dialing again"); retries != tt.wantDial-1 {
				t.Errorf("%d retries logged, want %d:\n%s", retries, tt.wantDial-1, logs)
			}
			if !tt.wantOK {
				if err == nil {
					c.Close()
					t.Fatal("Connect succeeded")
				}
				if !errors.Is(err, syscall.ECONNRESET) && !errors.Is(err, syscall.EPIPE) && !strings.Contains(err.Error(), "EOF") {
					t.Errorf("err = %v, want a lost connection", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			mustSum(t, c)
			if h := <-d.hellos; h.Client != rpc.ClientHook || h.ProtocolVersion != rpc.ProtocolVersion || h.PID != os.Getpid() {
				t.Errorf("hello = %+v", h)
			}
		})
	}
}

// TestConnectOutlivesDyingDaemon: a daemon that dies as a client connects
// (it resets the connection and its socket goes) is replaced: Connect
// dials again and starts a new one.
func TestConnectOutlivesDyingDaemon(t *testing.T) {
	home := t.TempDir()
	o := childDaemonOptions(t, home)
	path := rpc.SocketPath(home)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	died := make(chan error, 1)
	go func() {
		nc, err := ln.Accept()
		if err == nil {
			reset(nc)
		}
		ln.Close() // removes the socket file
		died <- err
	}()
	log, logs := newLogger()
	o.Logger = log
	c, err := rpc.Connect(ctxT(t), o)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := <-died; err != nil {
		t.Fatalf("the dying daemon: %v", err)
	}
	mustSum(t, c)
	if pids := childPIDs(t, home); len(pids) != 1 {
		t.Errorf("%d daemons started, want 1", len(pids))
	}
	if !strings.Contains(logs.String(), "daemon connection lost during the handshake; dialing again") {
		t.Errorf("log:\n%s", logs)
	}
}

// TestConnectVersionMismatch: a daemon of another protocol version, which
// refuses the hello or answers it with its own version, is an *Error of
// CodeVersionMismatch that says what to do; it is not dialed again.
func TestConnectVersionMismatch(t *testing.T) {
	tests := []struct {
		name    string
		hello   func() (any, error)
		wantMsg string
	}{
		{name: "daemon refuses", hello: func() (any, error) {
			return nil, rpc.Errorf(rpc.CodeVersionMismatch, `protocol version mismatch: ...; stop it with "mnemo daemon stop" and retry`)
		}, wantMsg: `protocol version mismatch: ...; stop it with "mnemo daemon stop" and retry`},
		{name: "daemon answers another version", hello: func() (any, error) {
			return rpc.HelloResult{ProtocolVersion: rpc.ProtocolVersion + 1, ServerVersion: "9.9.9", PID: 4242}, nil
		}, wantMsg: fmt.Sprintf(`protocol version mismatch: this client speaks version %d, the running daemon (mnemo 9.9.9, pid 4242) speaks version %d; `+
			`stop it with "mnemo daemon stop" and retry (a new daemon starts by itself)`, rpc.ProtocolVersion, rpc.ProtocolVersion+1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			d := newFakeDaemon().start(t, home, func(ctx context.Context, n int, nc net.Conn) {
				c := rpc.Serve(ctx, nc, func(ctx context.Context, req *jsonrpc2.Request) (any, error) {
					res, err := tt.hello()
					if e, ok := errors.AsType[*rpc.Error](err); ok {
						return nil, &jsonrpc2.Error{Code: e.Code.Wire(), Message: e.Message}
					}
					return res, err
				})
				<-c.Done()
			})
			c, err := rpc.Connect(ctxT(t), rpc.ConnectOptions{Home: home, Client: rpc.ClientCLI})
			if err == nil {
				c.Close()
				t.Fatal("Connect succeeded")
			}
			if !errors.Is(err, rpc.ErrVersionMismatch) || err.Error() != tt.wantMsg {
				t.Errorf("err = %q (code %v), want %q", err, rpc.CodeOf(err), tt.wantMsg)
			}
			if n := d.conns.Load(); n != 1 {
				t.Errorf("%d dials, want 1", n)
			}
		})
	}
}

// TestConnectBounds: ctx bounds the hello with a daemon that never
// answers; Deadline bounds the connection's calls after it.
func TestConnectBounds(t *testing.T) {
	t.Run("silent daemon", func(t *testing.T) {
		home := t.TempDir()
		d := newFakeDaemon().start(t, home, func(ctx context.Context, n int, nc net.Conn) {
			nc.Read(make([]byte, 1<<10))
			<-ctx.Done()
		})
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := rpc.Connect(ctx, rpc.ConnectOptions{Home: home, Client: rpc.ClientHook})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v, want the deadline", err)
		}
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("took %v with a 200ms deadline", took)
		}
		if n := d.conns.Load(); n != 1 {
			t.Errorf("%d dials, want 1", n)
		}
	})
	t.Run("deadline", func(t *testing.T) {
		home := t.TempDir()
		d := newFakeDaemon()
		d.start(t, home, func(ctx context.Context, n int, nc net.Conn) { d.serveHello(ctx, nc) })
		c, err := rpc.Connect(ctxT(t), rpc.ConnectOptions{Home: home, Client: rpc.ClientHook, Deadline: time.Now().Add(300 * time.Millisecond)})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		mustSum(t, c)
		start := time.Now()
		done := make(chan error, 1)
		go func() { done <- c.Call(context.Background(), "hang", nil, nil) }()
		select {
		case err := <-done:
			if err == nil {
				t.Error("a hanging call returned no error")
			}
			t.Logf("after %v: %v", time.Since(start), err)
		case <-time.After(5 * time.Second):
			t.Fatal("the deadline did not end a hanging call")
		}
	})
}
