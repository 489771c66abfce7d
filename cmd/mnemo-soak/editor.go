//go:build unix

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/rpc"
)

// editor plays an editor: sessions of 20 to 40 s, each with its own
// content session id, opening and saving files through `mnemo serve
// --stdio`. When the server ends (its daemon was killed) it starts a new
// one for the same session, as a language client restarts its server.
func (s *soak) editor(ctx context.Context, r *rand.Rand) {
	for gen := 0; ctx.Err() == nil; gen++ {
		csid := fmt.Sprintf("soak-%s-editor-%d", s.runID, gen)
		s.mu.Lock()
		s.sessions[csid] = true
		s.mu.Unlock()
		end := time.Now().Add(time.Duration(20+r.IntN(20)) * time.Second)
		for i := 0; time.Now().Before(end) && ctx.Err() == nil; {
			n, err := s.editorServer(ctx, csid, gen, i, end, r)
			i = n
			if err != nil {
				s.log.Debug("editor server ended", "session", csid, "err", err)
				sleep(ctx, 100*time.Millisecond)
			}
		}
	}
}

// editorServer runs one `mnemo serve --stdio` for session csid until end
// (then it shuts the session down) or until the server fails. It returns
// the next event number.
func (s *soak) editorServer(ctx context.Context, csid string, gen, i int, end time.Time, r *rand.Rand) (int, error) {
	c, err := startLSP(filepath.Join(s.o.bin, "mnemo"), s.environ(), s.project)
	if err != nil {
		return i, err
	}
	defer c.close()
	s.mu.Lock()
	s.serves++
	s.mu.Unlock()
	// Every save on its own (saveWindowSeconds -1): saves gathered in a
	// window live in the daemon until the window ends, and a kill -9 loses
	// them as LSP allows (a save is a notification); the soak checks that
	// an acknowledged event is never lost.
	initOpts := map[string]any{"clientKind": "soak-editor", "protocolVersion": rpc.ProtocolVersion, "contentSessionId": csid, "cwd": s.project, "idleMinutes": -1, "saveWindowSeconds": -1}
	if _, err := c.call("initialize", map[string]any{
		"processId": nil, "rootUri": "file://" + s.project, "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "mnemo-soak"}, "initializationOptions": initOpts,
	}, 10*time.Second); err != nil {
		return i, fmt.Errorf("initialize: %w", err)
	}
	if err := c.notify("initialized", map[string]any{}); err != nil {
		return i, err
	}
	// The daemon that answered the last call.
	var pid int
	if res, err := c.call(memory.MethodStatus, nil, 10*time.Second); err == nil {
		var st memory.Status
		_ = json.Unmarshal(res, &st)
		pid = st.PID
	}
	for ; time.Now().Before(end) && ctx.Err() == nil; i++ {
		open := fmt.Sprintf("%s-o%d", csid, i)
		save := fmt.Sprintf("%s-w%d", csid, i)
		events := []int{s.editorEvent("open", open, csid), s.editorEvent("save", save, csid)}
		uri := func(m string) string { return "file://" + filepath.Join(s.project, "soak", m+".go") }
		if err := c.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{
			"uri": uri(open), "languageId": "go", "version": 1, "text": "package soak\n"}}); err != nil {
			return i + 1, err
		}
		if err := c.notify("textDocument/didSave", map[string]any{"textDocument": map[string]any{"uri": uri(save)}}); err != nil {
			return i + 1, err
		}
		// Messages of a connection are handled in order: an answer to a
		// later call acknowledges both notifications, when the same daemon
		// answers it. When the daemon died in between, mnemo serve sent
		// the call again to the next one (rpc.ForwardResuming), and the
		// notifications may have died with the old one unread: they are
		// not acknowledged.
		res, err := c.call(memory.MethodStatus, nil, 10*time.Second)
		if err != nil {
			return i + 1, fmt.Errorf("barrier: %w", err)
		}
		var st memory.Status
		_ = json.Unmarshal(res, &st)
		same := st.PID != 0 && st.PID == pid
		pid = st.PID
		s.mu.Lock()
		for _, e := range events {
			s.edits[e].acked = same
		}
		s.mu.Unlock()
		sleep(ctx, time.Duration(100+r.IntN(300))*time.Millisecond)
	}
	if _, err := c.call("shutdown", nil, 10*time.Second); err != nil {
		return i, fmt.Errorf("shutdown: %w", err)
	}
	_ = c.notify("exit", nil)
	return i, c.wait(5 * time.Second)
}

// editorEvent records an editor event about to be sent and returns its
// index.
func (s *soak) editorEvent(kind, marker, session string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.edits = append(s.edits, editorEvent{kind: kind, marker: marker, session: session})
	return len(s.edits) - 1
}

// lspClient speaks LSP-framed JSON-RPC to a `mnemo serve --stdio` process.
type lspClient struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	frames chan []byte // read from the server's stdout; closed at EOF
	done   chan struct{}
	quit   chan struct{} // closed by close: the reader stops
	nextID int
	mu     sync.Mutex
}

func startLSP(mnemo string, env []string, dir string) (*lspClient, error) {
	cmd := exec.Command(mnemo, "serve", "--stdio")
	cmd.Env, cmd.Dir = env, dir
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &lspClient{cmd: cmd, in: in, frames: make(chan []byte, 16), done: make(chan struct{}), quit: make(chan struct{})}
	go func() {
		defer close(c.frames)
		br := bufio.NewReader(out)
		for {
			f, err := rpc.ReadFrame(br)
			if err != nil {
				return
			}
			select {
			case c.frames <- f:
			case <-c.quit:
				return
			}
		}
	}()
	go func() {
		_ = cmd.Wait()
		close(c.done)
	}()
	return c, nil
}

func (c *lspClient) send(msg map[string]any) error {
	msg["jsonrpc"] = "2.0"
	body, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	_, err = fmt.Fprintf(c.in, "Content-Length: %d\r\n\r\n%s", len(body), body)
	return err
}

func (c *lspClient) notify(method string, params any) error {
	m := map[string]any{"method": method}
	if params != nil {
		m["params"] = params
	}
	return c.send(m)
}

// call sends a request and waits up to within for its answer.
func (c *lspClient) call(method string, params any, within time.Duration) (json.RawMessage, error) {
	c.nextID++
	id := c.nextID
	m := map[string]any{"id": id, "method": method}
	if params != nil {
		m["params"] = params
	}
	if err := c.send(m); err != nil {
		return nil, err
	}
	timeout := time.After(within)
	for {
		select {
		case f, ok := <-c.frames:
			if !ok {
				return nil, io.EOF
			}
			var msg struct {
				ID     *int            `json:"id"`
				Method string          `json:"method"`
				Result json.RawMessage `json:"result"`
				Error  *struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if json.Unmarshal(f, &msg) != nil || msg.Method != "" || msg.ID == nil || *msg.ID != id {
				continue // a notification or request from the server
			}
			if msg.Error != nil {
				return nil, fmt.Errorf("%s: error %d: %s", method, msg.Error.Code, msg.Error.Message)
			}
			return msg.Result, nil
		case <-timeout:
			return nil, fmt.Errorf("%s: no answer within %s", method, within)
		}
	}
}

// wait waits for the server to exit, killing it after within.
func (c *lspClient) wait(within time.Duration) error {
	select {
	case <-c.done:
		return nil
	case <-time.After(within):
		_ = c.cmd.Process.Kill()
		<-c.done
		return errors.New("the server did not exit after exit; killed")
	}
}

// close ends the server: stdin closed, then killed if it lingers.
func (c *lspClient) close() {
	close(c.quit)
	c.in.Close()
	select {
	case <-c.done:
	case <-time.After(3 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.done
	}
}
