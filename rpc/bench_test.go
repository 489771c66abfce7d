package rpc_test

import (
	"context"
	"net"
	"testing"

	"go.lsp.dev/jsonrpc2"

	"github.com/mnemo-dev/mnemo/rpc"
)

// BenchmarkRoundTrip times one Client.Call of a small method through the
// Mux: over net.Pipe with rpc's stream; the same with jsonrpc2's plain
// stream, to show what the robust stream costs; and over a real Unix socket
// after the handshake, as a hook would.
func BenchmarkRoundTrip(b *testing.B) {
	mux := rpc.NewMux(nil)
	rpc.Handle(mux, "sum", func(ctx context.Context, p sumParams) (int, error) { return p.A + p.B, nil })

	run := func(b *testing.B, c *rpc.Client) {
		ctx := context.Background()
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; b.Loop(); i++ {
			var sum int
			if err := c.Call(ctx, "sum", sumParams{A: i, B: 1}, &sum); err != nil || sum != i+1 {
				b.Fatalf("sum = %d, %v", sum, err)
			}
		}
	}

	b.Run("pipe", func(b *testing.B) {
		a, s := net.Pipe()
		srv := rpc.Serve(context.Background(), s, mux.Handler())
		c := rpc.NewClient(a, nil)
		defer func() { c.Close(); srv.Close() }()
		run(b, c)
	})
	b.Run("pipe-plain-stream", func(b *testing.B) {
		a, s := net.Pipe()
		srv := jsonrpc2.NewConn(jsonrpc2.NewStream(s))
		srv.Go(context.Background(), mux.Handler())
		c := rpc.NewClient(a, nil)
		defer func() { c.Close(); srv.Close() }()
		run(b, c)
	})
	b.Run("socket", func(b *testing.B) {
		path := rpc.SocketPath(b.TempDir())
		ln, err := rpc.Listen(path)
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			done <- rpc.ServeListener(ctx, ln, func(ctx context.Context, nc net.Conn) {
				c := rpc.Serve(ctx, nc, rpc.RequireHello(mux.Handler(), "bench", nil))
				<-c.Done()
			})
		}()
		defer func() { cancel(); <-done }()
		c, err := rpc.Dial(ctx, path)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Hello(ctx, rpc.ClientCLI); err != nil {
			b.Fatal(err)
		}
		run(b, c)
	})
}
