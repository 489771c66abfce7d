package rpc_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/rpc"
)

// startForward runs Forward(ctx, editor, daemon) and returns its result
// channel.
func startForward(ctx context.Context, editor, daemon io.ReadWriteCloser) chan error {
	errc := make(chan error, 1)
	go func() { errc <- rpc.Forward(ctx, editor, daemon) }()
	return errc
}

// TestForward is `mnemo serve` against a real daemon socket: the editor's
// calls reach the daemon, the daemon's callback and its notifications
// (mnemo/changed) reach the editor, and the editor closing ends both sides.
func TestForward(t *testing.T) {
	d := startDaemon(t)
	nc, err := rpc.DialSocket(ctxT(t), d.path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rpc.Handshake(ctxT(t), nc, rpc.ClientServe); err != nil {
		t.Fatal(err)
	}
	<-d.hellos
	editorApp, editorSide := net.Pipe()
	errc := startForward(context.Background(), editorSide, nc)

	editorMux := rpc.NewMux(nil)
	rpc.Handle(editorMux, "client/name", func(ctx context.Context, p struct{}) (string, error) { return "neovim", nil })
	told := make(chan int, 1)
	rpc.HandleNotify(editorMux, "changed", func(ctx context.Context, p noteParams) error {
		told <- p.N
		return nil
	})
	c := rpc.NewClient(editorApp, editorMux.Handler())
	ctx := ctxT(t)
	var sum int
	if err := c.Call(ctx, "sum", sumParams{A: 3, B: 4}, &sum); err != nil || sum != 7 {
		t.Fatalf("sum through the forwarder = %d, %v", sum, err)
	}
	var name string
	if err := c.Call(ctx, "askPeer", nil, &name); err != nil || name != "peer is neovim" {
		t.Fatalf("daemon→editor callback = %q, %v", name, err)
	}
	if err := d.svc.peer().Notify(ctx, "changed", noteParams{N: 7}); err != nil {
		t.Fatal(err)
	}
	if n := waitFor(t, told, "the daemon's notification"); n != 7 {
		t.Fatalf("daemon→editor notification = %d", n)
	}
	// Bad input passes through and is answered by the daemon.
	err = c.Call(ctx, "search", rawJSON(`{"limit":"x"}`), nil)
	if rpc.CodeOf(err) != rpc.CodeInvalidParams {
		t.Fatalf("bad params through the forwarder = %v", err)
	}

	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := waitFor(t, errc, "Forward to return"); err != nil {
		t.Fatalf("Forward = %v", err)
	}
	waitFor(t, d.ended, "the daemon's connection to end")
	mustBeClosed(t, "daemon side", nc)
	mustBeClosed(t, "editor side", editorSide)
}

// TestForwardDaemonCloses: the daemon going away ends the editor's
// connection too.
func TestForwardDaemonCloses(t *testing.T) {
	mux, _, _ := newTestMux(t)
	daemonEnd, daemonSide := netPipe(t)
	srv := rpc.Serve(context.Background(), daemonEnd, mux.Handler())
	editorApp, editorSide := netPipe(t)
	errc := startForward(context.Background(), editorSide, daemonSide)
	c := rpc.NewClient(editorApp, nil)
	defer c.Close()
	var sum int
	if err := c.Call(ctxT(t), "sum", sumParams{A: 1, B: 1}, &sum); err != nil || sum != 2 {
		t.Fatalf("sum = %d, %v", sum, err)
	}
	srv.Close()
	if err := waitFor(t, errc, "Forward to return"); err != nil {
		t.Fatalf("Forward = %v", err)
	}
	select {
	case <-c.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the editor's connection outlived the daemon's")
	}
}

// TestForwardWholeFrames: a frame that arrives in pieces leaves in one
// write, in both directions.
func TestForwardWholeFrames(t *testing.T) {
	editorApp, editorSide := netPipe(t)
	daemonSide, daemonEnd := netPipe(t)
	errc := startForward(context.Background(), editorSide, daemonSide)

	for _, dir := range []struct {
		name     string
		from, to net.Conn
	}{
		{"editor→daemon", editorApp, daemonEnd},
		{"daemon→editor", daemonEnd, editorApp},
	} {
		t.Run(dir.name, func(t *testing.T) {
			body := `{"jsonrpc":"2.0","method":"note","params":{"text":"` + strings.Repeat("x", 3000) + `"}}`
			frame := fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body)
			pieces := []string{frame[:10], frame[10:40], frame[40:2000], frame[2000:]}
			go func() {
				for _, p := range pieces {
					_, _ = io.WriteString(dir.from, p)
					time.Sleep(5 * time.Millisecond)
				}
			}()
			_ = dir.to.SetReadDeadline(time.Now().Add(5 * time.Second))
			buf := make([]byte, 64<<10)
			n, err := dir.to.Read(buf) // net.Pipe: one Read returns one Write
			if err != nil {
				t.Fatal(err)
			}
			if got := string(buf[:n]); got != frame {
				t.Fatalf("first read carried %d of %d bytes", n, len(frame))
			}
		})
	}
	editorApp.Close()
	if err := waitFor(t, errc, "Forward to return"); err != nil {
		t.Fatalf("Forward = %v", err)
	}
}

func TestForwardEnds(t *testing.T) {
	tests := []struct {
		name    string
		act     func(cancel context.CancelFunc, editorApp net.Conn)
		wantErr func(error) bool
		text    string
	}{
		{name: "bad header from the editor",
			act:     func(_ context.CancelFunc, editorApp net.Conn) { _, _ = io.WriteString(editorApp, "hello\r\n\r\n") },
			wantErr: func(err error) bool { return errors.Is(err, rpc.ErrBadHeader) },
			text:    "forward editor→daemon: read: rpc: malformed frame header"},
		{name: "frame cut short",
			act: func(_ context.CancelFunc, editorApp net.Conn) {
				_, _ = io.WriteString(editorApp, "Content-Length: 100\r\n\r\n{\"jsonrpc\"")
				editorApp.Close()
			},
			wantErr: func(err error) bool { return errors.Is(err, io.ErrUnexpectedEOF) }},
		{name: "context canceled",
			act:     func(cancel context.CancelFunc, _ net.Conn) { cancel() },
			wantErr: func(err error) bool { return errors.Is(err, context.Canceled) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			editorApp, editorSide := netPipe(t)
			daemonSide, daemonEnd := netPipe(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			errc := startForward(ctx, editorSide, daemonSide)
			tt.act(cancel, editorApp)
			err := waitFor(t, errc, "Forward to return")
			if !tt.wantErr(err) || !strings.Contains(fmt.Sprint(err), tt.text) {
				t.Fatalf("Forward = %v", err)
			}
			mustBeClosed(t, "daemon side", daemonEnd)
		})
	}
}

// mustBeClosed checks that the peer of c (or c itself) is closed: a read
// ends at once with an error.
func mustBeClosed(t *testing.T, what string, c net.Conn) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err := c.Read(make([]byte, 1))
	if err == nil || errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
		t.Fatalf("%s is still open (read: %v)", what, err)
	}
}

func isTimeout(err error) bool {
	ne, ok := errors.AsType[net.Error](err)
	return ok && ne.Timeout()
}
