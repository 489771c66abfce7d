package rpc_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
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

// childDialExpectClosed connects to RPC_TEST_SOCKET and expects the server
// to close the connection without a word.
func childDialExpectClosed() int {
	path := os.Getenv("RPC_TEST_SOCKET")
	nc, err := net.Dial("unix", path)
	if err != nil {
		fmt.Println("dial:", err)
		return 3
	}
	defer nc.Close()
	body := `{"jsonrpc":"2.0","id":1,"method":"sum","params":{"a":1,"b":2}}`
	_, _ = fmt.Fprintf(nc, "Content-Length: %d\r\n\r\n%s", len(body), body)
	_ = nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 512)
	n, err := nc.Read(buf)
	if n > 0 {
		fmt.Printf("served: %q\n", buf[:n])
		return 4
	}
	if errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) {
		return 0
	}
	fmt.Println("read:", err)
	return 5
}
