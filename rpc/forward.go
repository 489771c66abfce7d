package rpc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"

	"go.lsp.dev/jsonrpc2"

	"github.com/mnemo-dev/mnemo/rpc/socket"
)

// Forward relays LSP frames between an editor and the daemon, both ways (the
// gopls -remote model), until either side closes or fails or ctx is done;
// then it closes both and returns. It copies whole frames (a header is
// parsed, the body read in full, and the frame written with one Write), so a
// half frame is never written; bodies are relayed unchanged, and the daemon
// answers bad ones.
//
// It returns nil when a side closed cleanly, ctx.Err() when ctx ended it, and
// otherwise the first failure (an error wrapping ErrBadHeader when a side
// broke the framing), naming the direction. Do the handshake on daemon first
// (Handshake). For the editor's stdio, pass Stdio(), whose Close unblocks its
// read.
func Forward(ctx context.Context, editor, daemon io.ReadWriteCloser) error {
	var once sync.Once
	closeBoth := func() {
		once.Do(func() {
			editor.Close()
			daemon.Close()
		})
	}
	stop := context.AfterFunc(ctx, closeBoth)
	defer stop()

	errc := make(chan error, 2)
	go func() { errc <- relay(ctx, "editor→daemon", editor, daemon) }()
	go func() { errc <- relay(ctx, "daemon→editor", daemon, editor) }()

	first := <-errc
	closeBoth()
	<-errc // the other side fails on the closed ends; that is not news

	if ctx.Err() != nil {
		return ctx.Err()
	}
	return first
}

// relay copies frames from src to dst until one fails. A clean end of src
// (EOF at a frame boundary, or our own close) is nil.
func relay(ctx context.Context, dir string, src, dst io.ReadWriteCloser) error {
	in := jsonrpc2.NewHeaderStream(src).(frameStream)
	out := jsonrpc2.NewHeaderStream(dst).(frameStream)
	for {
		frame, _, err := in.ReadFrame(ctx)
		if err != nil {
			if isClosed(err) {
				return nil
			}
			if errors.Is(err, jsonrpc2.ErrInvalidHeader) {
				err = fmt.Errorf("%w (%w)", ErrBadHeader, err)
			}
			return fmt.Errorf("forward %s: read: %w", dir, err)
		}
		if _, err := out.WriteFrame(ctx, frame); err != nil {
			if isClosed(err) {
				return nil
			}
			return fmt.Errorf("forward %s: write: %w", dir, err)
		}
	}
}

// isClosed reports an error that means the other end, or we, closed the
// connection at a clean point.
func isClosed(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) ||
		errors.Is(err, net.ErrClosed) || errors.Is(err, os.ErrClosed) ||
		socket.PeerGone(err) ||
		errors.Is(err, context.Canceled)
}
