package rpc_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/rpc"
)

// pipeEnd reads and writes LSP frames on one end of a net.Pipe.
type pipeEnd struct {
	t  *testing.T
	nc net.Conn
}

func (p pipeEnd) write(body string) {
	p.t.Helper()
	p.nc.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(p.nc, "Content-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"+body); err != nil {
		p.t.Fatalf("write %s: %v", body, err)
	}
}

func (p pipeEnd) read() map[string]any {
	p.t.Helper()
	p.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	b, err := rpc.ReadFrame(p.nc)
	if err != nil {
		p.t.Fatalf("read: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		p.t.Fatal(err)
	}
	return m
}

// An editor's session survives its daemon: when the daemon goes, the
// forwarder connects to the next one, says the session's initialize and
// initialized again (the replayed answer is not passed on), sends again
// the call the old daemon never answered, and the editor gets that answer
// as if nothing happened. Once the editor said shutdown and exit, a daemon
// that goes is not replaced.
func TestForwardResumingCarriesTheSessionOver(t *testing.T) {
	editor, editorFwd := net.Pipe()
	daemonFwd, daemonA := net.Pipe()
	nextFwd, daemonB := net.Pipe()
	e, a, b := pipeEnd{t, editor}, pipeEnd{t, daemonA}, pipeEnd{t, daemonB}
	connects := make(chan struct{}, 4)
	done := make(chan error, 1)
	go func() {
		done <- rpc.ForwardResuming(context.Background(), editorFwd, daemonFwd, func(context.Context) (io.ReadWriteCloser, error) {
			connects <- struct{}{}
			return nextFwd, nil
		}, nil)
	}()

	e.write(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"initializationOptions":{"contentSessionId":"s"}}}`)
	if m := a.read(); m["method"] != "initialize" {
		t.Fatalf("daemon A got %v", m)
	}
	a.write(`{"jsonrpc":"2.0","id":1,"result":{"capabilities":{}}}`)
	if m := e.read(); m["id"] != float64(1) {
		t.Fatalf("editor got %v", m)
	}
	e.write(`{"jsonrpc":"2.0","method":"initialized","params":{}}`)
	a.read()
	e.write(`{"jsonrpc":"2.0","id":2,"method":"mnemo/search","params":{"query":"x"}}`)
	if m := a.read(); m["method"] != "mnemo/search" {
		t.Fatalf("daemon A got %v", m)
	}
	daemonA.Close() // gone without answering

	if m := b.read(); m["method"] != "initialize" || m["id"] != "mnemo-resume-1" {
		t.Fatalf("daemon B got %v first", m)
	}
	b.write(`{"jsonrpc":"2.0","id":"mnemo-resume-1","result":{"capabilities":{}}}`)
	if m := b.read(); m["method"] != "initialized" {
		t.Fatalf("daemon B got %v second", m)
	}
	if m := b.read(); m["method"] != "mnemo/search" || m["id"] != float64(2) {
		t.Fatalf("daemon B got %v third", m)
	}
	b.write(`{"jsonrpc":"2.0","id":2,"result":{"hits":[]}}`)
	if m := e.read(); m["id"] != float64(2) || m["result"] == nil {
		t.Fatalf("editor got %v, want the answer to its search", m)
	}
	e.write(`{"jsonrpc":"2.0","method":"textDocument/didSave","params":{}}`)
	if m := b.read(); m["method"] != "textDocument/didSave" {
		t.Fatalf("daemon B got %v", m)
	}

	e.write(`{"jsonrpc":"2.0","id":3,"method":"shutdown"}`)
	b.read()
	b.write(`{"jsonrpc":"2.0","id":3,"result":null}`)
	e.read()
	e.write(`{"jsonrpc":"2.0","method":"exit"}`)
	b.read()
	daemonB.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ForwardResuming: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ForwardResuming did not end")
	}
	if n := len(connects); n != 1 {
		t.Errorf("%d connects, want 1", n)
	}
}
