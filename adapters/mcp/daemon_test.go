package mcp_test

import (
	"context"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mnemo-dev/mnemo/adapters/mcp"
	"github.com/mnemo-dev/mnemo/memory/store"
	"github.com/mnemo-dev/mnemo/rpc"
)

// socketServer serves mem's methods on the socket of home until stopped,
// as the daemon does (the hello first; one connection per client; stopping
// closes them all).
type socketServer struct {
	t    *testing.T
	mem  *store.Memory
	home string
	stop func()
}

func newSocketServer(t *testing.T, mem *store.Memory) *socketServer {
	// A short folder: socket paths are limited to ~100 bytes.
	dir, err := os.MkdirTemp("", "mnemo-mcp-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	s := &socketServer{t: t, mem: mem, home: dir}
	t.Cleanup(func() {
		if s.stop != nil {
			s.stop()
		}
	})
	return s
}

func (s *socketServer) start() {
	s.t.Helper()
	ln, err := rpc.Listen(rpc.SocketPath(s.home))
	if err != nil {
		s.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		rpc.ServeListener(ctx, ln, func(ctx context.Context, nc net.Conn) {
			c := rpc.Serve(ctx, nc, rpc.RequireHello(memoryMux(s.mem).Handler(), "test", nil))
			select {
			case <-c.Done():
			case <-ctx.Done():
			}
			c.Close()
		})
	}()
	s.stop = func() {
		cancel()
		<-done
		s.stop = nil
	}
}

// TestDaemonClientReconnects drives the tools through a DaemonClient on a
// real socket whose server goes away and comes back (a daemon stopped and
// started again): the next call reconnects; while none listens, the call
// is a tool error that says the daemon is unreachable.
func TestDaemonClientReconnects(t *testing.T) {
	mem := openMemory(t)
	srvSock := newSocketServer(t, mem)
	srvSock.start()
	var dials atomic.Int32
	dc := mcp.NewDaemonClient(func(ctx context.Context) (*rpc.Client, error) {
		dials.Add(1)
		return rpc.Connect(ctx, rpc.ConnectOptions{Home: srvSock.home, Client: rpc.ClientMCP})
	}, nil)
	t.Cleanup(func() { dc.Close() })
	cs := connect(t, mcp.NewServer(dc, mcp.Options{Cwd: projectDir(t, "billing-api")}))

	mustOK(t, cs, mcp.ToolSaveMemory, map[string]any{"text": "The daemon may restart under a session."})
	mustOK(t, cs, mcp.ToolSearch, nil)
	if n := dials.Load(); n != 1 {
		t.Fatalf("%d dials for two calls on a live connection, want 1", n)
	}

	for round := range 3 {
		srvSock.stop() // the daemon stops: every connection is closed
		srvSock.start()
		txt, _ := mustOK(t, cs, mcp.ToolSearch, map[string]any{"query": "daemon restart"})
		if !strings.Contains(txt, "The daemon may restart under a session.") {
			t.Errorf("round %d: after a restart, search says:\n%s", round, txt)
		}
		if n := dials.Load(); n != int32(round)+2 {
			t.Errorf("round %d: %d dials, want %d (one new connection per restart)", round, n, round+2)
		}
	}

	srvSock.stop()
	res := callTool(t, cs, mcp.ToolSearch, nil)
	if !res.IsError || !strings.Contains(text(res), "the Mnemo daemon is unreachable") {
		t.Errorf("with no daemon: isError %v, %s", res.IsError, text(res))
	}
	srvSock.start()
	mustOK(t, cs, mcp.ToolSearch, nil)
}
