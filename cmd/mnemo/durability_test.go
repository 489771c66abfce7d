package main_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/mnemo-dev/mnemo/memory"
	"io"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"
)

// stdioClient speaks LSP-framed JSON-RPC to a mnemo subprocess.
type stdioClient struct {
	t      testing.TB
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stderr *lockedBuffer
	nextID int
	// notes are the server's notifications read while waiting for an
	// answer, in order (see nextNotification).
	notes [][]byte
}

// lockedBuffer collects a subprocess's stderr while the test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func startServe(t testing.TB, env *testEnv, args ...string) *stdioClient {
	t.Helper()
	cmd := exec.Command(mnemoBin, append([]string{"serve", "--stdio"}, args...)...)
	cmd.Env = env.environ()
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return &stdioClient{t: t, cmd: cmd, in: in, out: bufio.NewReader(out), stderr: stderr}
}

// notify sends a notification.
func (c *stdioClient) notify(method string, params any) {
	c.t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
	if _, err := fmt.Fprintf(c.in, "Content-Length: %d\r\n\r\n%s", len(body), body); err != nil {
		c.t.Fatalf("send %s: %v", method, err)
	}
}

// call sends a request and returns its result, failing the test on an
// error response.
func (c *stdioClient) call(method string, params any) json.RawMessage {
	c.t.Helper()
	c.nextID++
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.nextID, "method": method, "params": params})
	if _, err := fmt.Fprintf(c.in, "Content-Length: %d\r\n\r\n%s", len(body), body); err != nil {
		c.t.Fatalf("send %s: %v", method, err)
	}
	for {
		frame, err := readFrame(c.out)
		if err != nil {
			c.t.Fatalf("read the answer to %s: %v; the server's stderr:\n%s", method, err, c.stderr)
		}
		var msg struct {
			ID     int             `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(frame, &msg); err != nil || msg.ID != c.nextID {
			if err == nil && msg.Method != "" && msg.ID == 0 {
				c.notes = append(c.notes, frame)
			}
			continue // a notification or another answer
		}
		if msg.Error != nil {
			c.t.Fatalf("%s: error %d %s", method, msg.Error.Code, msg.Error.Message)
		}
		return msg.Result
	}
}

// An acknowledged mnemo/postToolUse survives kill -9 of the server that
// acknowledged it: after a restart the event is still queued or already an
// observation, and it becomes exactly one observation.
func TestKill9AfterAcknowledgedEventLosesNothing(t *testing.T) {
	env := newTestEnv(t)
	for round := range 3 {
		c := startServe(t, env, "--remote=none")
		csid := fmt.Sprintf("cc-kill-%d", round)
		c.call(memory.MethodUserPromptSubmit, map[string]any{"contentSessionId": csid, "cwd": env.project, "prompt": "survive a crash"})
		var ack struct {
			Queued bool `json:"queued"`
		}
		res := c.call(memory.MethodPostToolUse, map[string]any{
			"contentSessionId": csid, "cwd": env.project, "toolName": "Edit",
			"toolInput": map[string]any{"file_path": fmt.Sprintf("%s/crash/file%d.go", env.project, round), "old_string": "a", "new_string": "b"},
		})
		json.Unmarshal(res, &ack)
		if !ack.Queued {
			t.Fatalf("event not queued: %s", res)
		}
		c.cmd.Process.Signal(syscall.SIGKILL)
		c.cmd.Wait()
	}

	c := startServe(t, env, "--remote=none")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		var found struct {
			Hits []struct {
				Files []string `json:"files"`
			} `json:"hits"`
		}
		json.Unmarshal(c.call(memory.MethodSearch, map[string]any{"files": []string{"crash/"}}), &found)
		if len(found.Hits) == 3 {
			return
		}
		if len(found.Hits) > 3 {
			t.Fatalf("an event was stored twice: %+v", found.Hits)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("after restarts, %d of 3 acknowledged events became observations", len(found.Hits))
		case <-time.After(10 * time.Millisecond):
		}
	}
}
