package rpc_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/mnemo-dev/mnemo/rpc"
)

// TestBadInputKeepsServing sends each kind of bad message and checks the
// answer, then that the same connection still serves the next call.
func TestBadInputKeepsServing(t *testing.T) {
	tests := []struct {
		name     string
		body     string
		wantCode int    // 0: no response expected
		wantMsg  string // exact message, or "" to skip
		wantID   string // the response id as JSON
	}{
		{name: "malformed JSON", body: `{"jsonrpc":"2.0","id":1,"method":`, wantCode: -32700,
			wantMsg: "parse error: the message body is not valid JSON", wantID: "null"},
		{name: "not JSON at all", body: `hello there`, wantCode: -32700, wantID: "null"},
		{name: "malformed batch", body: `[{"jsonrpc":"2.0","id":1,"method":"sum"},`, wantCode: -32700, wantID: "null"},
		{name: "number", body: `42`, wantCode: -32600,
			wantMsg: "invalid request: the message is not a JSON-RPC 2.0 request, response or batch", wantID: "null"},
		{name: "string", body: `"sum"`, wantCode: -32600, wantID: "null"},
		{name: "null", body: `null`, wantCode: -32600, wantID: "null"},
		{name: "object without method", body: `{"foo":1}`, wantCode: -32600, wantID: "null"},
		{name: "wrong version", body: `{"jsonrpc":"1.0","id":1,"method":"sum"}`, wantCode: -32600, wantID: "null"},
		{name: "object id", body: `{"jsonrpc":"2.0","id":{},"method":"sum"}`, wantCode: -32600, wantID: "null"},
		{name: "method not a string", body: `{"jsonrpc":"2.0","id":1,"method":7}`, wantCode: -32600, wantID: "null"},
		{name: "method and result", body: `{"jsonrpc":"2.0","id":1,"method":"sum","result":1}`, wantCode: -32600, wantID: "null"},
		{name: "empty batch", body: `[]`, wantCode: -32600, wantID: "null"},
		{name: "unknown method", body: `{"jsonrpc":"2.0","id":9,"method":"nope"}`, wantCode: -32601,
			wantMsg: `method not found: "nope"`, wantID: "9"},
		{name: "unknown method, string id", body: `{"jsonrpc":"2.0","id":"x-1","method":"nope"}`, wantCode: -32601, wantID: `"x-1"`},
		{name: "unknown notification", body: `{"jsonrpc":"2.0","method":"nope"}`},
		{name: "cancelRequest as a call", body: `{"jsonrpc":"2.0","id":3,"method":"$/cancelRequest","params":{"id":1}}`,
			wantCode: -32600, wantID: "3"},
		{name: "stray response", body: `{"jsonrpc":"2.0","id":77,"result":true}`},
		{name: "bad params", body: `{"jsonrpc":"2.0","id":4,"method":"sum","params":{"a":"one"}}`, wantCode: -32602,
			wantMsg: `invalid params: field "a": expected number, got string`, wantID: "4"},
		{name: "handler panics", body: `{"jsonrpc":"2.0","id":5,"method":"panic"}`, wantCode: -32603,
			wantMsg: "internal error", wantID: "5"},
		{name: "handler fails", body: `{"jsonrpc":"2.0","id":6,"method":"fail"}`, wantCode: -32603,
			wantMsg: "internal error", wantID: "6"},
		{name: "not found", body: `{"jsonrpc":"2.0","id":7,"method":"missing"}`, wantCode: -32011,
			wantMsg: "not found: observation 42", wantID: "7"},
		{name: "notification fails", body: `{"jsonrpc":"2.0","method":"noteFail","params":{"n":1}}`},
		{name: "notification panics", body: `{"jsonrpc":"2.0","method":"notePanic","params":{"n":1}}`},
		{name: "notification with bad params", body: `{"jsonrpc":"2.0","method":"note","params":{"n":"x"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mux, _, _ := newTestMux(t)
			conn, srv := serveTest(t, mux.Handler())
			p := newRawPeer(t, conn)

			p.send(tt.body)
			if tt.wantCode != 0 {
				msg := p.read()
				if msg.Error == nil || msg.Error.Code != tt.wantCode {
					t.Fatalf("want error %d, got %s", tt.wantCode, msg.raw)
				}
				if tt.wantMsg != "" && msg.Error.Message != tt.wantMsg {
					t.Errorf("message = %q, want %q", msg.Error.Message, tt.wantMsg)
				}
				if string(msg.ID) != tt.wantID {
					t.Errorf("id = %s, want %s", msg.ID, tt.wantID)
				}
				if msg.JSONRPC != "2.0" {
					t.Errorf("jsonrpc = %q", msg.JSONRPC)
				}
			}
			p.expectSum(100)
			p.expectSum(101)
			select {
			case <-srv.Done():
				t.Fatalf("connection ended: %v", srv.Err())
			default:
			}
		})
	}
}

// TestPanicAndInternalErrorStayInTheLog checks that what a handler panics
// with, or fails with, reaches the log with the method, and never the client.
func TestPanicAndInternalErrorStayInTheLog(t *testing.T) {
	tests := []struct {
		method  string
		secret  string
		logWant []string
	}{
		{method: "panic", secret: "secret-panic-value", logWant: []string{"handler panicked", "method=panic", "secret-panic-value", "goroutine"}},
		{method: "fail", secret: "/secret/path", logWant: []string{"handler failed", "method=fail", "disk on fire at /secret/path"}},
	}
	for _, tt := range tests {
		t.Run(tt.method, func(t *testing.T) {
			mux, _, logs := newTestMux(t)
			conn, _ := serveTest(t, mux.Handler())
			p := newRawPeer(t, conn)
			p.send(`{"jsonrpc":"2.0","id":1,"method":"` + tt.method + `"}`)
			msg := p.read()
			if strings.Contains(msg.raw, tt.secret) {
				t.Errorf("response leaks %q: %s", tt.secret, msg.raw)
			}
			for _, w := range tt.logWant {
				if !strings.Contains(logs.String(), w) {
					t.Errorf("log lacks %q:\n%s", w, logs.String())
				}
			}
			p.expectSum(2)
		})
	}
}

// TestBadHeaderEndsConnection: a broken header cannot be skipped; the peer
// is told, and the connection ends with ErrBadHeader.
func TestBadHeaderEndsConnection(t *testing.T) {
	tests := []struct {
		name  string
		frame string
	}{
		{name: "no colon", frame: "garbage\r\n\r\n{}"},
		{name: "non-numeric length", frame: "Content-Length: ten\r\n\r\n{}"},
		{name: "no length", frame: "Content-Type: application/json\r\n\r\n{}"},
		{name: "zero length", frame: "Content-Length: 0\r\n\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mux, _, _ := newTestMux(t)
			conn, srv := serveTest(t, mux.Handler())
			p := newRawPeer(t, conn)
			p.sendRaw(tt.frame)
			msg := p.read()
			if msg.Error == nil || msg.Error.Code != -32700 || !strings.Contains(msg.Error.Message, "malformed frame header") {
				t.Fatalf("want a -32700 header error, got %s", msg.raw)
			}
			select {
			case <-srv.Done():
			case <-time.After(5 * time.Second):
				t.Fatal("connection still open after a bad header")
			}
			if err := srv.Err(); !errors.Is(err, rpc.ErrBadHeader) || !errors.Is(err, jsonrpc2.ErrInvalidHeader) {
				t.Errorf("Err() = %v, want ErrBadHeader", err)
			}
		})
	}
}

// TestValidBatch: a batch still reaches the Conn's batch path through the
// stream's frame methods, which answers a bad member (here 42) with a null-id
// error and the good ones normally.
func TestValidBatch(t *testing.T) {
	mux, _, _ := newTestMux(t)
	conn, _ := serveTest(t, mux.Handler())
	p := newRawPeer(t, conn)
	p.send(`[{"jsonrpc":"2.0","id":1,"method":"sum","params":{"a":1,"b":1}},{"jsonrpc":"2.0","method":"note","params":{"n":1}},42]`)
	if err := conn.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	// A batch answer is one array frame.
	line, err := p.in.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "Content-Length: ") {
		t.Fatalf("header %q: %v", line, err)
	}
	if _, err := p.in.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	n, err := p.in.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	body := string(buf[:n])
	if !strings.HasPrefix(body, "[") || !strings.Contains(body, `"result":2`) || !strings.Contains(body, `"id":null,"error"`) {
		t.Fatalf("batch answer = %s", body)
	}
	p.expectSum(3)
}

// TestStreamRead: the message-level Read of the stream skips and answers
// bad frames too (and batches, which a Message cannot hold).
func TestStreamRead(t *testing.T) {
	a, b := netPipe(t)
	s := rpc.NewStream(b)
	p := newRawPeer(t, a)
	go func() {
		for _, body := range []string{`{"jsonrpc":`, `[{"jsonrpc":"2.0","method":"note"}]`, `{"jsonrpc":"2.0","id":5,"method":"sum","params":{"a":1}}`} {
			if _, err := fmt.Fprintf(a, "Content-Length: %d\r\n\r\n%s", len(body), body); err != nil {
				return // the test fails on the missing message
			}
		}
	}()
	type answer struct {
		msgs []wireMsg
		err  error
	}
	answers := make(chan answer, 1)
	go func() {
		var ans answer
		for range 2 {
			msg, err := p.tryRead(5 * time.Second)
			if err != nil {
				ans.err = err
				break
			}
			ans.msgs = append(ans.msgs, msg)
		}
		answers <- ans
	}()
	msg, _, err := s.Read(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	call, ok := msg.(*jsonrpc2.Call)
	if !ok || call.Method() != "sum" || string(call.Params()) != `{"a":1}` {
		t.Fatalf("Read = %#v", msg)
	}
	ans := waitFor(t, answers, "the error answers")
	if ans.err != nil {
		t.Fatal(ans.err)
	}
	got := ans.msgs
	if got[0].Error == nil || got[0].Error.Code != -32700 || got[1].Error == nil || got[1].Error.Code != -32600 {
		t.Fatalf("answers: %s / %s", got[0].raw, got[1].raw)
	}
}
