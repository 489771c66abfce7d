package rpc_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/mnemo-dev/mnemo/rpc"
)

// child runs the test binary as a child process in the given mode; its
// result is the exit code. Diagnostics go to stderr.
func child(mode string) int {
	switch mode {
	case "dial-expect-closed":
		return childDialExpectClosed()
	case "stdio-close":
		return childStdioClose()
	case "stdio-serve":
		return childStdioServe()
	case "daemon":
		return childDaemon()
	}
	fmt.Fprintln(os.Stderr, "unknown child mode", mode)
	return 2
}

// childStdioClose blocks a Read on Stdio, then closes it: the Read must
// return at once although the parent keeps the pipe open.
func childStdioClose() int {
	rwc := rpc.Stdio()
	done := make(chan error, 1)
	go func() {
		_, err := rwc.Read(make([]byte, 64))
		done <- err
	}()
	time.Sleep(100 * time.Millisecond) // let the Read block
	if err := rwc.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "close:", err)
	}
	select {
	case <-done:
		return 0
	case <-time.After(2 * time.Second):
		fmt.Fprintln(os.Stderr, "read still blocked 2s after Close")
		return 3
	}
}

// childStdioServe is a stdio server whose "exit" notification closes the
// connection: the process must end although its stdin stays open.
func childStdioServe() int {
	m := rpc.NewMux(nil)
	conns := make(chan jsonrpc2.Conn, 1)
	rpc.Handle(m, "sum", func(ctx context.Context, p sumParams) (int, error) { return p.A + p.B, nil })
	rpc.HandleNotify(m, "exit", func(ctx context.Context, p struct{}) error {
		c := <-conns
		go c.Close()
		return nil
	})
	c := rpc.Serve(context.Background(), rpc.Stdio(), m.Handler())
	conns <- c
	select {
	case <-c.Done():
		return 0
	case <-time.After(20 * time.Second):
		return 3
	}
}
