package mcp_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mnemo-dev/mnemo/adapters/mcp"
	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/store"
	"github.com/mnemo-dev/mnemo/rpc"
)

// openMemory opens a real in-memory Memory, closed at the end of the test.
func openMemory(t *testing.T) *store.Memory {
	t.Helper()
	mem, err := store.Open(t.Context(), store.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mem.Close() })
	return mem
}

// memoryMux serves the daemon methods the tools call from mem, mapping
// domain errors onto the wire as the daemon does: bad input is invalid
// params, a missing record is not found.
func memoryMux(mem *store.Memory) *rpc.Mux {
	m := rpc.NewMux(slog.New(slog.DiscardHandler))
	handle(m, memory.MethodSearch, mem.Search)
	handle(m, memory.MethodTimeline, mem.Timeline)
	handle(m, memory.MethodGetObservations, mem.Get)
	handle(m, memory.MethodSave, mem.Save)
	handle(m, memory.MethodForget, mem.Forget)
	handle(m, memory.MethodCorrect, mem.Correct)
	handle(m, memory.MethodPin, mem.Pin)
	handle(m, memory.MethodUnpin, mem.Unpin)
	handle(m, memory.MethodContext, mem.Context)
	return m
}

func handle[P, R any](m *rpc.Mux, method string, fn func(context.Context, P) (R, error)) {
	rpc.Handle(m, method, func(ctx context.Context, p P) (R, error) {
		r, err := fn(ctx, p)
		switch {
		case err == nil:
		case errors.Is(err, memory.ErrInvalid):
			err = rpc.InvalidParams("%s", err.Error())
		case errors.Is(err, memory.ErrNotFound):
			err = rpc.NotFound("%s", err.Error())
		}
		return r, err
	})
}

// memoryCaller is a JSON-RPC client of mem's methods over an in-memory
// pipe: real memory, real framing, real error codes.
func memoryCaller(t *testing.T, mem *store.Memory) *rpc.Client {
	t.Helper()
	a, b := net.Pipe()
	conn := rpc.Serve(t.Context(), b, memoryMux(mem).Handler())
	cl := rpc.NewClient(a, nil)
	t.Cleanup(func() {
		cl.Close()
		conn.Close()
	})
	return cl
}

// projectDir makes a git project folder named name and returns its path.
func projectDir(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// connect serves srv over in-memory transports and returns a client
// session of the Go SDK's own client.
func connect(t *testing.T, srv *mcp.Server) *sdk.ClientSession {
	t.Helper()
	ct, st := sdk.NewInMemoryTransports()
	ss, err := srv.SDK().Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "mnemo-test", Version: "0"}, nil)
	cs, err := client.Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs
}

// newSession starts a server over a fresh in-memory memory, as if started
// in the project folder cwd, and returns a connected client session.
func newSession(t *testing.T, cwd string) (*sdk.ClientSession, *store.Memory) {
	t.Helper()
	mem := openMemory(t)
	srv := mcp.NewServer(memoryCaller(t, mem), mcp.Options{Cwd: cwd, Version: "test"})
	return connect(t, srv), mem
}

// callTool calls a tool and returns its result; a protocol error fails
// the test.
func callTool(t *testing.T, cs *sdk.ClientSession, name string, args any) *sdk.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s(%v): protocol error: %v", name, args, err)
	}
	return res
}

// mustOK calls a tool that must succeed and returns its text.
func mustOK(t *testing.T, cs *sdk.ClientSession, name string, args any) (string, *sdk.CallToolResult) {
	t.Helper()
	res := callTool(t, cs, name, args)
	if res.IsError {
		t.Fatalf("%s(%v): tool error: %s", name, args, text(res))
	}
	return text(res), res
}

// text joins a result's text contents.
func text(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}
