package rpc_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/mnemo-dev/mnemo/rpc"
)

// The seed corpora are in testdata/fuzz/<target>; run a target with
//
//	go test -run '^$' -fuzz '^FuzzStream$' -fuzztime 30s ./rpc

// fuzzRW is a connection whose peer sent in and reads nothing: what the
// stream writes (its answers to bad frames) is kept for inspection.
type fuzzRW struct {
	in  *bytes.Reader
	out bytes.Buffer
}

func (f *fuzzRW) Read(p []byte) (int, error)  { return f.in.Read(p) }
func (f *fuzzRW) Write(p []byte) (int, error) { return f.out.Write(p) }
func (f *fuzzRW) Close() error                { return nil }

// FuzzStream feeds arbitrary bytes to the LSP-framed stream as what a peer
// sent. Reading must end (every read consumes input or fails), never
// panic, hand over only messages jsonrpc2 decodes, and answer what it
// skips with well-framed JSON-RPC error responses whose id is null.
func FuzzStream(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		rw := &fuzzRW{in: bytes.NewReader(data)}
		s := rpc.NewStream(rw)
		done := make(chan struct{})
		var reads int
		go func() {
			defer close(done)
			for reads = 0; reads <= len(data)+1; reads++ {
				msg, n, err := s.Read(context.Background())
				if err != nil {
					return
				}
				if msg == nil || n <= 0 {
					t.Errorf("read %d: message %v of %d bytes without an error", reads, msg, n)
					return
				}
			}
			t.Errorf("%d reads of %d bytes of input: the stream does not advance", reads, len(data))
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("reading %d bytes did not end", len(data))
		}
		// Every answer the stream wrote is one frame with an error response.
		out := bufio.NewReader(&rw.out)
		for out.Buffered() > 0 || rw.out.Len() > 0 {
			body, err := readFrame(out)
			if err != nil {
				t.Fatalf("the stream wrote a malformed frame: %v (output %q)", err, rw.out.String())
			}
			var resp struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Error   *struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal(body, &resp); err != nil || resp.JSONRPC != "2.0" || resp.Error == nil || string(resp.ID) != "null" {
				t.Fatalf("the stream answered with %s, want an error response with a null id", body)
			}
		}
	})
}

// FuzzMux sends one well-framed message of arbitrary (non-empty) content
// to a served method table, then a call of its own. Whatever the message,
// the connection must go on serving (the call is answered) and nothing may
// panic out of a handler; every frame the server writes must be a JSON-RPC
// response.
func FuzzMux(f *testing.F) {
	const pingID = "fuzz-ping-5f3a9c"
	f.Fuzz(func(t *testing.T, body []byte) {
		if len(body) == 0 {
			t.Skip("Content-Length: 0 is an invalid header (jsonrpc2): the connection ends by design")
		}
		if bytes.Contains(body, []byte(pingID)) {
			t.Skip("the message could pass for the answer to our own call")
		}
		m := rpc.NewMux(slog.New(slog.DiscardHandler))
		rpc.Handle(m, "sum", func(ctx context.Context, p sumParams) (int, error) { return p.A + p.B, nil })
		rpc.Handle(m, "search", func(ctx context.Context, p searchParams) (searchParams, error) { return p, nil })
		rpc.Handle(m, "panic", func(ctx context.Context, p struct{}) (int, error) { panic("boom") })
		rpc.Handle(m, "fail", func(ctx context.Context, p struct{}) (int, error) { return 0, errors.New("broken") })
		rpc.Handle(m, "async", func(ctx context.Context, p sumParams) (int, error) { return p.A, nil }, rpc.Concurrent())
		rpc.HandleNotify(m, "note", func(ctx context.Context, p noteParams) error { return nil })
		rpc.HandleNotify(m, "notePanic", func(ctx context.Context, p noteParams) error { panic("note boom") })
		rpc.Handle(m, "fuzz/ping", func(ctx context.Context, p struct{}) (string, error) { return "pong", nil })

		a, b := net.Pipe()
		srv := rpc.Serve(context.Background(), b, m.Handler())
		defer func() {
			a.Close()
			srv.Close()
		}()

		// Read every frame the server writes; the answer to our call ends
		// the test.
		answered := make(chan error, 1)
		go func() {
			in := bufio.NewReader(a)
			for {
				frame, err := readFrame(in)
				if err != nil {
					answered <- fmt.Errorf("read: %w", err)
					return
				}
				msg, err := jsonrpc2.DecodeMessage(frame)
				if err != nil {
					// A batch answer is an array of responses.
					var batch []json.RawMessage
					if json.Unmarshal(frame, &batch) == nil {
						continue
					}
					answered <- fmt.Errorf("the server wrote %q: %w", frame, err)
					return
				}
				if r, ok := msg.(*jsonrpc2.Response); ok {
					if id, _ := r.ID().StringValue(); id == pingID {
						if string(r.Result()) != `"pong"` {
							answered <- fmt.Errorf("fuzz/ping answered %s, %v", r.Result(), r.Err())
							return
						}
						answered <- nil
						return
					}
				}
			}
		}()

		a.SetWriteDeadline(time.Now().Add(10 * time.Second))
		if _, err := fmt.Fprintf(a, "Content-Length: %d\r\n\r\n%s", len(body), body); err != nil {
			t.Fatalf("send the message: %v", err)
		}
		ping := `{"jsonrpc":"2.0","id":"` + pingID + `","method":"fuzz/ping"}`
		if _, err := fmt.Fprintf(a, "Content-Length: %d\r\n\r\n%s", len(ping), ping); err != nil {
			t.Fatalf("after %q the server stopped reading: %v", body, err)
		}
		select {
		case err := <-answered:
			if err != nil {
				t.Fatalf("after %q: %v", body, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("after %q the connection stopped serving", body)
		}
	})
}

// readFrame reads one Content-Length frame.
func readFrame(r *bufio.Reader) ([]byte, error) {
	length := -1
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		line = string(bytes.TrimRight([]byte(line), "\r\n"))
		if line == "" {
			break
		}
		if _, err := fmt.Sscanf(line, "Content-Length: %d", &length); err != nil {
			return nil, fmt.Errorf("header %q: %w", line, err)
		}
	}
	if length < 0 {
		return nil, errors.New("no Content-Length")
	}
	body := make([]byte, length)
	_, err := io.ReadFull(r, body)
	return body, err
}
