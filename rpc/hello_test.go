package rpc_test

import (
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/mnemo-dev/mnemo/rpc"
)

const testServerVersion = "0.9.0-test"

// testDaemon is the test Mux served on a real Unix socket behind
// RequireHello.
type testDaemon struct {
	path   string
	svc    *testService
	logs   *logBuffer
	hellos chan rpc.Hello
	ended  chan struct{} // one value per connection that ended
}

func startDaemon(t *testing.T) *testDaemon {
	t.Helper()
	mux, svc, logs := newTestMux(t)
	d := &testDaemon{
		path:   rpc.SocketPath(t.TempDir()),
		svc:    svc,
		logs:   logs,
		hellos: make(chan rpc.Hello, 8),
		ended:  make(chan struct{}, 8),
	}
	var last atomic.Value // jsonrpc2.Conn: the newest connection
	svc.peer = func() jsonrpc2.Conn { return last.Load().(jsonrpc2.Conn) }

	ln, err := rpc.Listen(d.path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		errc <- rpc.ServeListener(ctx, ln, func(ctx context.Context, nc net.Conn) {
			h := rpc.RequireHello(mux.Handler(), testServerVersion, func(h rpc.Hello) { d.hellos <- h })
			c := rpc.Serve(ctx, nc, h)
			last.Store(c)
			<-c.Done()
			d.ended <- struct{}{}
		})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-errc; err != nil {
			t.Errorf("ServeListener: %v", err)
		}
		if _, err := os.Lstat(d.path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("socket left behind: %v", err)
		}
	})
	return d
}

func (d *testDaemon) dial(t *testing.T) *rpc.Client {
	t.Helper()
	c, err := rpc.Dial(ctxT(t), d.path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestHandshake(t *testing.T) {
	d := startDaemon(t)
	tests := []struct {
		name     string
		hello    any // nil: no hello
		wantCode rpc.Code
		wantMsg  []string // substrings of the hello error
	}{
		{name: "no hello", hello: nil},
		{name: "newer client", hello: rpc.Hello{ProtocolVersion: rpc.ProtocolVersion + 1, Client: rpc.ClientCLI, PID: 1},
			wantCode: rpc.CodeVersionMismatch,
			wantMsg:  []string{"protocol version mismatch", "this client speaks version 2", "mnemo " + testServerVersion, "speaks version 1", `"mnemo daemon stop"`, "retry"}},
		{name: "no version", hello: rawJSON(`{"client":"hook","pid":1}`),
			wantCode: rpc.CodeVersionMismatch, wantMsg: []string{"speaks version 0", `"mnemo daemon stop"`}},
		{name: "version of another type", hello: rawJSON(`{"protocolVersion":"1"}`),
			wantCode: rpc.CodeInvalidParams, wantMsg: []string{`field "protocolVersion": expected number, got string`}},
		{name: "no client kind", hello: rawJSON(`{"protocolVersion":1}`),
			wantCode: rpc.CodeInvalidParams, wantMsg: []string{`invalid params: field "client" is required`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := d.dial(t)
			ctx := ctxT(t)
			if tt.hello != nil {
				err := c.Call(ctx, rpc.MethodHello, tt.hello, nil)
				if rpc.CodeOf(err) != tt.wantCode {
					t.Fatalf("hello = %v (code %v), want %v", err, rpc.CodeOf(err), tt.wantCode)
				}
				for _, w := range tt.wantMsg {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("hello error %q lacks %q", err, w)
					}
				}
			}
			// Notifications are dropped and calls refused until a good hello.
			if err := c.Notify(ctx, "note", noteParams{N: 1}); err != nil {
				t.Fatal(err)
			}
			err := c.Call(ctx, "sum", sumParams{A: 1, B: 1}, nil)
			if !errors.Is(err, rpc.ErrNotInitialized) || rpc.CodeOf(err).Wire() != -32002 ||
				err.Error() != "handshake required: the first call on this connection must be mnemo/hello" {
				t.Fatalf("call before hello = %v", err)
			}
			var notes []int
			if _, err := c.Hello(ctx, rpc.ClientCLI); err != nil {
				t.Fatal(err)
			}
			<-d.hellos
			if err := c.Call(ctx, "notes", nil, &notes); err != nil || len(notes) != 0 {
				t.Fatalf("notes = %v, %v; want none (dropped before hello)", notes, err)
			}
		})
	}
}

func TestHelloThenCalls(t *testing.T) {
	d := startDaemon(t)
	c := d.dial(t)
	ctx := ctxT(t)
	res, err := c.Hello(ctx, rpc.ClientHook)
	if err != nil {
		t.Fatal(err)
	}
	want := rpc.HelloResult{ProtocolVersion: rpc.ProtocolVersion, ServerVersion: testServerVersion, PID: os.Getpid()}
	if res != want {
		t.Fatalf("Hello = %+v, want %+v", res, want)
	}
	if h := waitFor(t, d.hellos, "onHello"); h != (rpc.Hello{ProtocolVersion: rpc.ProtocolVersion, Client: rpc.ClientHook, PID: os.Getpid()}) {
		t.Fatalf("onHello got %+v", h)
	}
	var sum int
	if err := c.Call(ctx, "sum", sumParams{A: 2, B: 40}, &sum); err != nil || sum != 42 {
		t.Fatalf("sum = %d, %v", sum, err)
	}
	// A second hello is answered again.
	if _, err := c.Hello(ctx, rpc.ClientHook); err != nil {
		t.Fatal(err)
	}
}

// TestHandshakeRaw: Handshake on a bare socket reads only its answer, so a
// Client (or Forward) can take the connection over afterwards.
func TestHandshakeRaw(t *testing.T) {
	d := startDaemon(t)
	nc, err := rpc.DialSocket(ctxT(t), d.path)
	if err != nil {
		t.Fatal(err)
	}
	res, err := rpc.Handshake(ctxT(t), nc, rpc.ClientServe)
	if err != nil {
		t.Fatal(err)
	}
	if res.ServerVersion != testServerVersion || res.ProtocolVersion != rpc.ProtocolVersion {
		t.Fatalf("Handshake = %+v", res)
	}
	c := rpc.NewClient(nc, nil)
	defer c.Close()
	var sum int
	if err := c.Call(ctxT(t), "sum", sumParams{A: 1, B: 2}, &sum); err != nil || sum != 3 {
		t.Fatalf("sum after Handshake = %d, %v", sum, err)
	}
}

// TestHelloClientSideCheck: a daemon that accepts the hello but reports
// another version is refused by the client too, with the same hint.
func TestHelloClientSideCheck(t *testing.T) {
	m := rpc.NewMux(nil)
	rpc.Handle(m, rpc.MethodHello, func(ctx context.Context, h rpc.Hello) (rpc.HelloResult, error) {
		return rpc.HelloResult{ProtocolVersion: 99, ServerVersion: "9.9", PID: 7}, nil
	})
	c, _ := newPipeClient(t, m.Handler(), nil)
	_, err := c.Hello(ctxT(t), rpc.ClientMCP)
	if !errors.Is(err, rpc.ErrVersionMismatch) || !strings.Contains(err.Error(), "mnemo daemon stop") {
		t.Fatalf("Client.Hello = %v", err)
	}

	a, _ := serveTest(t, m.Handler())
	_, err = rpc.Handshake(ctxT(t), a, rpc.ClientServe)
	if !errors.Is(err, rpc.ErrVersionMismatch) {
		t.Fatalf("Handshake = %v", err)
	}
}

// TestHandshakeTimeout: a peer that never answers cannot hold Handshake
// past its context.
func TestHandshakeTimeout(t *testing.T) {
	a, b := netPipe(t)
	go func() { _, _ = b.Read(make([]byte, 4096)) }() // takes the hello, says nothing
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := rpc.Handshake(ctx, a, rpc.ClientServe)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Handshake = %v, want a deadline error", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("Handshake took %v", d)
	}
}
