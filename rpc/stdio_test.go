package rpc_test

import (
	"context"
	"io"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/rpc"
)

// childCmd runs this test binary in a child mode with pipes for stdin and
// stdout; the parent never closes stdin until the test ends.
func childCmd(t *testing.T, mode string) (*exec.Cmd, io.WriteCloser, io.ReadCloser) {
	t.Helper()
	cmd := exec.Command(mustExecutable(t))
	// GORACE: a race-enabled child would otherwise sleep 1 s at exit.
	cmd.Env = append(os.Environ(), "RPC_TEST_CHILD="+mode, "GORACE=atexit_sleep_ms=0")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd, stdin, stdout
}

// waitExit waits for cmd to exit within d and returns its exit code.
func waitExit(t *testing.T, cmd *exec.Cmd, d time.Duration) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
		return cmd.ProcessState.ExitCode()
	case <-time.After(d):
		t.Fatalf("child still running after %v", d)
		return -1
	}
}

// TestStdioCloseUnblocksRead: Close ends a Read blocked on stdin, whose
// writer is still open (libs-and-hooks A.4-4).
func TestStdioCloseUnblocksRead(t *testing.T) {
	cmd, _, _ := childCmd(t, "stdio-close")
	if code := waitExit(t, cmd, 10*time.Second); code != 0 {
		t.Fatalf("child exit code %d", code)
	}
}

// TestStdioServerExits: a stdio server that closes its connection on
// "exit" ends at once, though the client keeps its stdin open.
func TestStdioServerExits(t *testing.T) {
	cmd, stdin, stdout := childCmd(t, "stdio-serve")
	c := rpc.NewClient(readWriteCloser{stdout, stdin}, nil)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var sum int
	if err := c.Call(ctx, "sum", sumParams{A: 20, B: 22}, &sum); err != nil || sum != 42 {
		t.Fatalf("sum = %d, %v", sum, err)
	}
	start := time.Now()
	if err := c.Notify(ctx, "exit", nil); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, cmd, 5*time.Second); code != 0 {
		t.Fatalf("child exit code %d", code)
	}
	t.Logf("child exited %v after exit", time.Since(start))
}

type readWriteCloser struct {
	io.ReadCloser
	io.WriteCloser
}

func (rw readWriteCloser) Close() error {
	rw.WriteCloser.Close()
	return rw.ReadCloser.Close()
}
