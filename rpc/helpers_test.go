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
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/mnemo-dev/mnemo/rpc"
)

// TestMain lets the test binary play a child process (see child).
func TestMain(m *testing.M) {
	if mode := os.Getenv("RPC_TEST_CHILD"); mode != "" {
		os.Exit(child(mode))
	}
	os.Exit(m.Run())
}

// logBuffer collects a logger's output for assertions.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func newLogger() (*slog.Logger, *logBuffer) {
	buf := new(logBuffer)
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug})), buf
}

// Params and results of the test methods.
type sumParams struct {
	A int `json:"a"`
	B int `json:"b"`
}

type searchParams struct {
	Query  string `json:"query"`
	Limit  int    `json:"limit"`
	Filter struct {
		Since time.Time `json:"since"`
		Files []string  `json:"files"`
	} `json:"filter"`
}

func (p *searchParams) Validate() error {
	if p.Limit < 0 || p.Limit > 1000 {
		return fmt.Errorf("limit must be between 0 and 1000, got %d", p.Limit)
	}
	return nil
}

type noteParams struct {
	N int `json:"n"`
}

// testService is the state behind the test methods.
type testService struct {
	mu      sync.Mutex
	notes   []int
	started chan struct{} // a "slow" call began
	stopped chan error    // a "slow" call saw its context end
	peer    func() jsonrpc2.Conn
}

// newTestMux registers the test methods on a fresh Mux.
func newTestMux(t testing.TB) (*rpc.Mux, *testService, *logBuffer) {
	t.Helper()
	log, buf := newLogger()
	m := rpc.NewMux(log)
	s := &testService{started: make(chan struct{}, 16), stopped: make(chan error, 16)}

	rpc.Handle(m, "sum", func(ctx context.Context, p sumParams) (int, error) { return p.A + p.B, nil })
	rpc.Handle(m, "search", func(ctx context.Context, p searchParams) (searchParams, error) { return p, nil })
	rpc.Handle(m, "panic", func(ctx context.Context, p struct{}) (int, error) { panic("boom: secret-panic-value") })
	rpc.Handle(m, "fail", func(ctx context.Context, p struct{}) (int, error) {
		return 0, errors.New("disk on fire at /secret/path")
	})
	rpc.Handle(m, "missing", func(ctx context.Context, p struct{}) (int, error) {
		return 0, rpc.NotFound("observation %d", 42)
	})
	rpc.Handle(m, "wrapped", func(ctx context.Context, p struct{}) (int, error) {
		return 0, fmt.Errorf("store lookup: %w", rpc.NotFound("session %q", "abc"))
	})
	rpc.Handle(m, "slow", func(ctx context.Context, p struct{}) (int, error) {
		s.started <- struct{}{}
		select {
		case <-ctx.Done():
			s.stopped <- ctx.Err()
			return 0, ctx.Err()
		case <-time.After(10 * time.Second):
			return 1, nil
		}
	}, rpc.Concurrent())
	rpc.Handle(m, "askPeer", func(ctx context.Context, p struct{}) (string, error) {
		var name string
		_, err := s.peer().Call(ctx, "client/name", nil, &name)
		return "peer is " + name, err
	}, rpc.Concurrent())
	rpc.HandleNotify(m, "note", func(ctx context.Context, p noteParams) error {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.notes = append(s.notes, p.N)
		return nil
	})
	rpc.HandleNotify(m, "noteFail", func(ctx context.Context, p noteParams) error {
		return errors.New("note store broken")
	})
	rpc.HandleNotify(m, "notePanic", func(ctx context.Context, p noteParams) error {
		panic("note panic value")
	})
	rpc.Handle(m, "notes", func(ctx context.Context, p struct{}) ([]int, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		return slices.Clone(s.notes), nil
	})
	return m, s, buf
}

// serveTest serves h on one end of a net.Pipe and returns the other end
// and the server's Conn; both are closed at cleanup.
func serveTest(t testing.TB, h jsonrpc2.Handler) (net.Conn, jsonrpc2.Conn) {
	t.Helper()
	a, b := net.Pipe()
	srv := rpc.Serve(context.Background(), b, h)
	t.Cleanup(func() {
		a.Close()
		srv.Close()
	})
	return a, srv
}

// rawPeer speaks LSP frames by hand, to send what a real client would not.
type rawPeer struct {
	t    testing.TB
	conn net.Conn
	in   *bufio.Reader
}

func newRawPeer(t testing.TB, conn net.Conn) *rawPeer {
	return &rawPeer{t: t, conn: conn, in: bufio.NewReader(conn)}
}

// send writes body as one well-framed message.
func (p *rawPeer) send(body string) {
	p.t.Helper()
	p.sendRaw(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body))
}

// sendRaw writes bytes as they are.
func (p *rawPeer) sendRaw(b string) {
	p.t.Helper()
	if err := p.conn.SetWriteDeadline(time.Now().Add(5 * time.Second)); err != nil {
		p.t.Fatal(err)
	}
	if _, err := io.WriteString(p.conn, b); err != nil {
		p.t.Fatalf("write: %v", err)
	}
}

// wireMsg is any JSON-RPC message as it appears on the wire.
type wireMsg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	raw string
}

// read reads one frame (within 5 s) and decodes it.
func (p *rawPeer) read() wireMsg {
	p.t.Helper()
	msg, err := p.tryRead(5 * time.Second)
	if err != nil {
		p.t.Fatalf("read: %v", err)
	}
	return msg
}

func (p *rawPeer) tryRead(timeout time.Duration) (wireMsg, error) {
	if err := p.conn.SetReadDeadline(time.Now().Add(timeout)); err != nil {
		return wireMsg{}, err
	}
	length := -1
	for {
		line, err := p.in.ReadString('\n')
		if err != nil {
			return wireMsg{}, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
			length, err = strconv.Atoi(v)
			if err != nil {
				return wireMsg{}, err
			}
		}
	}
	if length < 0 {
		return wireMsg{}, errors.New("no Content-Length")
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(p.in, body); err != nil {
		return wireMsg{}, err
	}
	var msg wireMsg
	if err := json.Unmarshal(body, &msg); err != nil {
		return wireMsg{}, fmt.Errorf("decode %q: %w", body, err)
	}
	msg.raw = string(body)
	return msg, nil
}

// expectSum sends sum(id, 2+3) and checks the very next message answers it:
// the connection still serves, and nothing stray was written before.
func (p *rawPeer) expectSum(id int) {
	p.t.Helper()
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"sum","params":{"a":2,"b":3}}`, id))
	msg := p.read()
	if string(msg.ID) != strconv.Itoa(id) || string(msg.Result) != "5" || msg.Error != nil {
		p.t.Fatalf("want sum result 5 for id %d, got %s", id, msg.raw)
	}
}

// newPipeClient returns a Client talking to h over a net.Pipe.
func newPipeClient(t testing.TB, h jsonrpc2.Handler, clientHandler jsonrpc2.Handler) (*rpc.Client, jsonrpc2.Conn) {
	t.Helper()
	a, srv := serveTest(t, h)
	c := rpc.NewClient(a, clientHandler)
	t.Cleanup(func() { c.Close() })
	return c, srv
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// netPipe returns both ends of a net.Pipe, closed at cleanup.
func netPipe(t testing.TB) (net.Conn, net.Conn) {
	a, b := net.Pipe()
	t.Cleanup(func() {
		a.Close()
		b.Close()
	})
	return a, b
}

// mustExecutable is the test binary's path, to run it as a child.
func mustExecutable(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}
