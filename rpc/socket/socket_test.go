package socket_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/mnemo-dev/mnemo/rpc/socket"
)

// peer is a daemon stand-in on the socket of a fresh home: it reads the
// frames a client writes with jsonrpc2's own parser (what the daemon's
// rpc.Serve reads with) and answers each call with answer's result or
// error, in jsonrpc2's framing.
type peer struct {
	home  string
	calls chan *jsonrpc2.Call
}

func newPeer(t *testing.T, answer func(c *jsonrpc2.Call) (any, *jsonrpc2.Error)) *peer {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the stand-in listens with net on a Unix socket")
	}
	home, err := os.MkdirTemp("", "mnemo-sock-") // short: a socket path has ~100 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	p := &peer{home: home, calls: make(chan *jsonrpc2.Call, 8)}
	path := socket.Path(home)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { ln.Close(); <-done })
	go func() {
		defer close(done)
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			r := bufio.NewReader(nc)
			for {
				body, err := socket.ReadFrame(r)
				if err != nil {
					break
				}
				msg, err := jsonrpc2.DecodeMessage(body)
				c, ok := msg.(*jsonrpc2.Call)
				if err != nil || !ok {
					t.Errorf("the client wrote %q: %v", body, err)
					break
				}
				p.calls <- c
				if answer == nil {
					continue // a daemon that never answers
				}
				res, werr := answer(c)
				var raw []byte
				if werr == nil {
					raw, _ = json.Marshal(res)
				}
				out := jsonrpc2.AppendResponse(nil, c.ID(), raw, werrOrNil(werr))
				if _, err := nc.Write(append([]byte("Content-Length: "+strconv.Itoa(len(out))+"\r\n\r\n"), out...)); err != nil {
					break
				}
			}
			nc.Close()
		}
	}()
	return p
}

func werrOrNil(e *jsonrpc2.Error) error {
	if e == nil {
		return nil
	}
	return e
}

// hello answers a hello as a daemon of this protocol does.
func hello(c *jsonrpc2.Call) (any, *jsonrpc2.Error) {
	return socket.HelloResult{ProtocolVersion: socket.ProtocolVersion, ServerVersion: "stand-in", PID: os.Getpid()}, nil
}

// TestCallOnceWire: the hello and the call are JSON-RPC 2.0 calls that
// jsonrpc2 parses (the daemon's reader), ids 1 and 2, with their params;
// the call's result is decoded.
func TestCallOnceWire(t *testing.T) {
	p := newPeer(t, func(c *jsonrpc2.Call) (any, *jsonrpc2.Error) {
		if c.Method() == socket.MethodHello {
			return hello(c)
		}
		var in struct{ A, B int }
		if err := json.Unmarshal(c.Params(), &in); err != nil {
			return nil, &jsonrpc2.Error{Code: -32602, Message: err.Error()}
		}
		return map[string]int{"sum": in.A + in.B}, nil
	})
	var out struct{ Sum int }
	o := socket.Options{Home: p.home, Client: socket.ClientHook, Version: "1.2.3"}
	if err := socket.CallOnce(ctxT(t), o, "sum", map[string]int{"A": 2, "B": 3}, &out); err != nil || out.Sum != 5 {
		t.Fatalf("CallOnce: %v, %+v", err, out)
	}
	h, c := <-p.calls, <-p.calls
	if n, _ := h.ID().Number(); h.Method() != socket.MethodHello || n != 1 {
		t.Errorf("first call %s id %v, want %s id 1", h.Method(), h.ID(), socket.MethodHello)
	}
	var got socket.Hello
	if err := json.Unmarshal(h.Params(), &got); err != nil ||
		got != (socket.Hello{ProtocolVersion: socket.ProtocolVersion, Client: socket.ClientHook, PID: os.Getpid(), Version: "1.2.3"}) {
		t.Errorf("hello params %s: %+v, %v", h.Params(), got, err)
	}
	if n, _ := c.ID().Number(); c.Method() != "sum" || n != 2 || string(c.Params()) != `{"A":2,"B":3}` {
		t.Errorf("second call %s id %v params %s", c.Method(), c.ID(), c.Params())
	}
}

// TestCallOnceErrors: the daemon's error answer is an *Error with its
// code; a refused hello refuses the call; a daemon that does not answer
// is bounded by ctx.
func TestCallOnceErrors(t *testing.T) {
	t.Run("call", func(t *testing.T) {
		p := newPeer(t, func(c *jsonrpc2.Call) (any, *jsonrpc2.Error) {
			if c.Method() == socket.MethodHello {
				return hello(c)
			}
			return nil, &jsonrpc2.Error{Code: -32601, Message: `method not found: "nope"`}
		})
		err := socket.CallOnce(ctxT(t), socket.Options{Home: p.home, Client: socket.ClientHook}, "nope", nil, nil)
		if e, ok := errors.AsType[*socket.Error](err); !ok || e.Code != socket.CodeMethodNotFound || e.Message != `method not found: "nope"` {
			t.Errorf("err = %v, want CodeMethodNotFound", err)
		}
	})
	t.Run("hello", func(t *testing.T) {
		refusal := socket.ProtocolMismatch(socket.ProtocolVersion, socket.ProtocolVersion+1, "9.9.9", 4242)
		p := newPeer(t, func(c *jsonrpc2.Call) (any, *jsonrpc2.Error) {
			if c.Method() == socket.MethodHello {
				return nil, &jsonrpc2.Error{Code: jsonrpc2.Code(refusal.Code.Wire()), Message: refusal.Message}
			}
			return nil, &jsonrpc2.Error{Code: jsonrpc2.Code(socket.CodeNotInitialized.Wire()), Message: "handshake required"}
		})
		err := socket.CallOnce(ctxT(t), socket.Options{Home: p.home, Client: socket.ClientHook}, "sum", nil, nil)
		if e, ok := errors.AsType[*socket.Error](err); !ok || e.Code != socket.CodeVersionMismatch || e.Message != refusal.Message {
			t.Errorf("err = %v, want the refusal", err)
		}
	})
	t.Run("silent", func(t *testing.T) {
		p := newPeer(t, nil)
		ctx, cancel := context.WithTimeout(ctxT(t), 100*time.Millisecond)
		defer cancel()
		start := time.Now()
		err := socket.CallOnce(ctx, socket.Options{Home: p.home, Client: socket.ClientHook}, "sum", nil, nil)
		if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 5*time.Second {
			t.Errorf("err = %v after %s, want ctx's deadline", err, time.Since(start))
		}
	})
}

// TestDialNoDaemon: no socket file, and a socket file nobody listens on,
// are ErrNoDaemon; the error names the path.
func TestDialNoDaemon(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the stale socket is made with net on Unix")
	}
	dir, err := os.MkdirTemp("", "mnemo-sock-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	missing := filepath.Join(dir, "none.sock")
	if _, err := socket.Dial(ctxT(t), missing); !errors.Is(err, socket.ErrNoDaemon) || err.Error() != "no daemon listening at "+missing {
		t.Errorf("missing socket: %v", err)
	}
	stale := filepath.Join(dir, "stale.sock")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: stale, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close()
	if _, err := socket.Dial(ctxT(t), stale); !errors.Is(err, socket.ErrNoDaemon) {
		t.Errorf("stale socket: %v", err)
	}
}

// TestOlderProtocol reads a refusal's words back: a daemon of an older
// protocol is named with its version and pid; a newer one, or other
// words, are not a refusal to hand over on.
func TestOlderProtocol(t *testing.T) {
	old := socket.ProtocolMismatch(socket.ProtocolVersion, socket.ProtocolVersion-1, "0.1.0+abc", 4242)
	if hr, ok := socket.OlderProtocol(old); !ok || hr != (socket.HelloResult{ProtocolVersion: socket.ProtocolVersion - 1, ServerVersion: "0.1.0+abc", PID: 4242}) {
		t.Errorf("older: %+v, %v", hr, ok)
	}
	for _, err := range []error{
		socket.ProtocolMismatch(socket.ProtocolVersion, socket.ProtocolVersion+1, "9.9.9", 4242),
		socket.OlderClient("0.1.0", "0.2.0", 4242),
		&socket.Error{Code: socket.CodeVersionMismatch, Message: "the running daemon (mnemo 0.1.0, pid x) speaks version 0"},
		&socket.Error{Code: socket.CodeInternal, Message: old.Message},
		errors.New(old.Message),
	} {
		if hr, ok := socket.OlderProtocol(err); ok {
			t.Errorf("%v: read as %+v", err, hr)
		}
	}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}
