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
			_ = rpc.Terminate(pid)
			for deadline := time.Now().Add(5 * time.Second); rpc.ProcessAlive(pid); {
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

// A daemon that fails to start is started once: the failure is
// remembered, and said, until the store, the settings or the binary
// change; a start that succeeds forgets it.
func TestConnectRemembersAFailedStart(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	home := t.TempDir()
	starts := filepath.Join(home, "starts")
	// A daemon that fails at once, counting its starts.
	cmd := []string{"/bin/sh", "-c", "echo x >> " + starts + "; echo 'the store is damaged' >&2; exit 1"}
	connect := func() error {
		_, err := rpc.Connect(ctxT(t), rpc.ConnectOptions{Home: home, Client: rpc.ClientCLI, Command: cmd})
		return err
	}
	count := func() int {
		b, _ := os.ReadFile(starts)
		return strings.Count(string(b), "x")
	}
	if err := connect(); !errors.Is(err, rpc.ErrDaemonStart) || !strings.Contains(err.Error(), "the store is damaged") {
		t.Fatalf("first start: %v", err)
	}
	for range 3 {
		err := connect()
		if !errors.Is(err, rpc.ErrDaemonStart) || !strings.Contains(err.Error(), "the store is damaged") || !strings.Contains(err.Error(), "nothing it depends on has changed") {
			t.Fatalf("again: %v", err)
		}
	}
	if n := count(); n != 1 {
		t.Fatalf("%d starts, want 1", n)
	}
	// The store changes (mnemo recover): tried again.
	if err := os.MkdirAll(filepath.Join(home, "db"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := connect(); !errors.Is(err, rpc.ErrDaemonStart) || count() != 2 {
		t.Fatalf("after a change: %v, %d starts", err, count())
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
						return nil, &jsonrpc2.Error{Code: jsonrpc2.Code(e.Code.Wire()), Message: e.Message}
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

// TestCallOnce: the hello and the call arrive in one write and are
// answered in order; the call's result, its error answer, a daemon that
// refuses the hello (the call does not run), a connection lost during the
// hello (dialed again as Connect does) and a silent daemon (ctx ends it).
func TestCallOnce(t *testing.T) {
	t.Run("one write", func(t *testing.T) {
		home := t.TempDir()
		first := make(chan []byte, 1)
		d := newFakeDaemon()
		d.start(t, home, func(ctx context.Context, n int, nc net.Conn) {
			// The first read sees both frames, then the connection is
			// served as usual from what was read and the rest.
			buf := make([]byte, 4<<10)
			k, _ := nc.Read(buf)
			first <- buf[:k]
			d.serveHello(ctx, &prefixConn{Conn: nc, prefix: buf[:k]})
		})
		var sum int
		if err := rpc.CallOnce(ctxT(t), rpc.ConnectOptions{Home: home, Client: rpc.ClientHook}, "sum", sumParams{A: 2, B: 3}, &sum); err != nil || sum != 5 {
			t.Fatalf("sum = %d, %v", sum, err)
		}
		got := string(<-first)
		if strings.Count(got, "Content-Length:") != 2 || !strings.Contains(got, `"method":"mnemo/hello"`) || !strings.Contains(got, `"method":"sum"`) {
			t.Errorf("first read %q: want the hello and the call", got)
		}
		if h := <-d.hellos; h.Client != rpc.ClientHook || h.ProtocolVersion != rpc.ProtocolVersion {
			t.Errorf("hello %+v", h)
		}
	})
	t.Run("error answer", func(t *testing.T) {
		home := t.TempDir()
		d := newFakeDaemon()
		d.start(t, home, func(ctx context.Context, n int, nc net.Conn) { d.serveHello(ctx, nc) })
		err := rpc.CallOnce(ctxT(t), rpc.ConnectOptions{Home: home, Client: rpc.ClientHook}, "nope", nil, nil)
		if rpc.CodeOf(err) != rpc.CodeMethodNotFound {
			t.Errorf("err = %v (code %v), want method not found", err, rpc.CodeOf(err))
		}
	})
	t.Run("version mismatch", func(t *testing.T) {
		home := t.TempDir()
		var ran atomic.Bool
		m := rpc.NewMux(nil)
		rpc.Handle(m, "sum", func(ctx context.Context, p sumParams) (int, error) { ran.Store(true); return 0, nil })
		newFakeDaemon().start(t, home, func(ctx context.Context, n int, nc net.Conn) {
			c := rpc.Serve(ctx, nc, rpc.RequireHello(m.Handler(), testServerVersion, nil))
			<-c.Done()
		})
		// A newer client's hello and call, in one write as CallOnce sends
		// them: the daemon refuses both.
		o := rpc.ConnectOptions{Home: home, Client: rpc.ClientHook}
		nc, err := rpc.DialSocket(ctxT(t), rpc.SocketPath(home))
		if err != nil {
			t.Fatal(err)
		}
		p := newRawPeer(t, nc)
		frame := func(body string) string { return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body) }
		p.sendRaw(frame(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"mnemo/hello","params":{"protocolVersion":%d,"client":"hook"}}`, rpc.ProtocolVersion+1)) +
			frame(`{"jsonrpc":"2.0","id":2,"method":"sum","params":{"a":1,"b":2}}`))
		if m := p.read(); m.Error == nil || m.Error.Code != int(rpc.CodeVersionMismatch.Wire()) {
			t.Errorf("hello answer %+v, want a version mismatch", m)
		}
		if m := p.read(); m.Error == nil || m.Error.Code != int(rpc.CodeNotInitialized.Wire()) {
			t.Errorf("call answer %+v, want handshake required", m)
		}
		nc.Close()
		if ran.Load() {
			t.Error("the call ran after a refused hello")
		}
		// And CallOnce's own hello is accepted by the same daemon.
		var sum int
		if err := rpc.CallOnce(ctxT(t), o, "sum", sumParams{A: 1, B: 2}, &sum); err != nil || !ran.Load() {
			t.Errorf("CallOnce: %v, ran %v", err, ran.Load())
		}
	})
	t.Run("daemon of another version", func(t *testing.T) {
		// A daemon that answers the hello with another version.
		home := t.TempDir()
		newFakeDaemon().start(t, home, func(ctx context.Context, n int, nc net.Conn) {
			c := rpc.Serve(ctx, nc, func(ctx context.Context, req *jsonrpc2.Request) (any, error) {
				if req.Method() == rpc.MethodHello {
					return rpc.HelloResult{ProtocolVersion: rpc.ProtocolVersion + 1, ServerVersion: "9.9.9", PID: 4242}, nil
				}
				return nil, &jsonrpc2.Error{Code: jsonrpc2.Code(rpc.CodeNotInitialized.Wire()), Message: "no"}
			})
			<-c.Done()
		})
		err := rpc.CallOnce(ctxT(t), rpc.ConnectOptions{Home: home, Client: rpc.ClientHook}, "sum", sumParams{}, nil)
		if !errors.Is(err, rpc.ErrVersionMismatch) {
			t.Errorf("err = %v, want a version mismatch", err)
		}
	})
	t.Run("lost during the hello", func(t *testing.T) {
		for _, tt := range []struct {
			attempts, wantDial int
			wantOK             bool
		}{{attempts: 0, wantDial: 2, wantOK: true}, {attempts: 1, wantDial: 1}} {
			home := t.TempDir()
			d := newFakeDaemon()
			d.start(t, home, func(ctx context.Context, n int, nc net.Conn) {
				if n == 1 {
					reset(nc)
					return
				}
				d.serveHello(ctx, nc)
			})
			var sum int
			err := rpc.CallOnce(ctxT(t), rpc.ConnectOptions{Home: home, Client: rpc.ClientHook, Attempts: tt.attempts}, "sum", sumParams{A: 2, B: 3}, &sum)
			if (err == nil) != tt.wantOK || (tt.wantOK && sum != 5) {
				t.Errorf("attempts %d: sum %d, err %v; want ok %v", tt.attempts, sum, err, tt.wantOK)
			}
			if n := int(d.conns.Load()); n != tt.wantDial {
				t.Errorf("attempts %d: %d dials, want %d", tt.attempts, n, tt.wantDial)
			}
		}
	})
	t.Run("silent daemon", func(t *testing.T) {
		home := t.TempDir()
		newFakeDaemon().start(t, home, func(ctx context.Context, n int, nc net.Conn) {
			nc.Read(make([]byte, 1<<10))
			<-ctx.Done()
		})
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		start := time.Now()
		err := rpc.CallOnce(ctx, rpc.ConnectOptions{Home: home, Client: rpc.ClientHook}, "sum", sumParams{}, nil)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v, want the deadline", err)
		}
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("took %v with a 200ms deadline", took)
		}
	})
	t.Run("hanging call", func(t *testing.T) {
		home := t.TempDir()
		d := newFakeDaemon()
		d.start(t, home, func(ctx context.Context, n int, nc net.Conn) { d.serveHello(ctx, nc) })
		o := rpc.ConnectOptions{Home: home, Client: rpc.ClientHook, Deadline: time.Now().Add(200 * time.Millisecond)}
		err := rpc.CallOnce(context.Background(), o, "hang", nil, nil)
		if err == nil || !strings.Contains(err.Error(), "call hang") {
			t.Errorf("err = %v, want the call's I/O deadline", err)
		}
	})
}

// prefixConn reads prefix before the connection.
type prefixConn struct {
	net.Conn
	prefix []byte
}

func (c *prefixConn) Read(p []byte) (int, error) {
	if len(c.prefix) > 0 {
		n := copy(p, c.prefix)
		c.prefix = c.prefix[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}

// TestStartDetached: with no daemon, StartDetached starts one and returns
// at once; DaemonRunning sees it once it listens; clients that come while it
// is on its way, or running, start no other.
func TestStartDetached(t *testing.T) {
	home := t.TempDir()
	o := childDaemonOptions(t, home)
	sock := rpc.SocketPath(home)
	if rpc.DaemonRunning(sock) {
		t.Fatal("DaemonRunning with no daemon")
	}
	so := rpc.StartFor(home, o.Command, 0)
	start := time.Now()
	started, err := rpc.StartDetached(so)
	if err != nil || !started {
		t.Fatalf("StartDetached = %v, %v", started, err)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("StartDetached took %v: it must not wait for the daemon", took)
	}
	// Racing clients while it starts: none starts another.
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if again, err := rpc.StartDetached(so); err != nil || again {
				t.Errorf("a second StartDetached = %v, %v", again, err)
			}
		})
	}
	wg.Wait()
	for deadline := time.Now().Add(10 * time.Second); !rpc.DaemonRunning(sock); {
		if time.Now().After(deadline) {
			t.Fatal("the daemon did not come up")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// The daemon holds its lock a moment before its socket listens.
	var c *rpc.Client
	for deadline := time.Now().Add(10 * time.Second); ; {
		var err error
		if c, err = rpc.Connect(ctxT(t), rpc.ConnectOptions{Home: home, Client: rpc.ClientCLI}); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	mustSum(t, c)
	c.Close()
	if again, err := rpc.StartDetached(so); err != nil || again {
		t.Errorf("StartDetached with a daemon running = %v, %v", again, err)
	}
	if n := len(childPIDs(t, home)); n != 1 {
		t.Errorf("%d daemons listened, want 1", n)
	}
}

// TestDaemonRunningDoesNotStopAStart: a client checking for a daemon at the
// very moment one takes its lock does not make it think another runs.
func TestDaemonRunningDoesNotStopAStart(t *testing.T) {
	home := t.TempDir()
	sock := rpc.SocketPath(home)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
					rpc.DaemonRunning(sock)
				}
			}
		})
	}
	defer func() { close(stop); wg.Wait() }()
	for range 20 {
		ln, err := rpc.Listen(sock)
		if err != nil {
			t.Fatalf("Listen while clients check: %v", err)
		}
		if !rpc.DaemonRunning(sock) {
			t.Error("DaemonRunning = false with a daemon listening")
		}
		ln.Close()
	}
}
