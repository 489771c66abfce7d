package rpc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"go.lsp.dev/jsonrpc2"
)

// Serve starts serving rwc with h: it frames rwc with NewStream, builds a
// jsonrpc2.Conn with opts (e.g. jsonrpc2.WithCodec for LSP results) and
// starts its read goroutine. The caller waits on Done() and ends the
// connection with Close(), which closes rwc. ctx is the parent of every
// handler's context; canceling it stops reading only at the next frame
// boundary, so Close is the real teardown.
func Serve(ctx context.Context, rwc io.ReadWriteCloser, h jsonrpc2.Handler, opts ...jsonrpc2.Option) jsonrpc2.Conn {
	c := jsonrpc2.NewConn(NewStream(rwc), opts...)
	c.Go(ctx, h)
	return c
}

// ServeListener accepts connections on ln and runs serve(ctx, nc) for each on
// its own goroutine; serve should block until the connection ends, e.g.
//
//	c := rpc.Serve(ctx, nc, rpc.RequireHello(mux.Handler(), version, nil))
//	<-c.Done()
//
// It returns when ctx is done (nil) or Accept fails for good (the error).
// Either way it first closes ln and every open connection and waits for every
// serve call to return. Temporary Accept failures (out of file descriptors)
// are retried with a backoff.
func ServeListener(ctx context.Context, ln net.Listener, serve func(ctx context.Context, nc net.Conn)) error {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns = make(map[net.Conn]struct{})
	)
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer func() {
		stop()
		ln.Close()
		mu.Lock()
		for nc := range conns {
			nc.Close()
		}
		mu.Unlock()
		wg.Wait()
	}()

	var backoff time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if acceptRetry(err) {
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				select {
				case <-time.After(backoff):
					continue
				case <-ctx.Done():
					return nil
				}
			}
			return fmt.Errorf("rpc: accept: %w", err)
		}
		backoff = 0
		mu.Lock()
		conns[nc] = struct{}{}
		mu.Unlock()
		wg.Go(func() {
			defer func() {
				nc.Close()
				mu.Lock()
				delete(conns, nc)
				mu.Unlock()
			}()
			serve(ctx, nc)
		})
	}
}

// Client is the calling end of a connection: a hook, the CLI, the MCP server
// or the forwarder's daemon side. It is cheap to make (no goroutine but the
// connection's reader) and safe for concurrent use.
type Client struct {
	conn jsonrpc2.Conn
}

// NewClient starts a client over rwc with LSP framing. h handles what the
// peer sends unasked (notifications such as $/progress, or calls); nil drops
// notifications and answers calls with -32601. Close the client to close rwc.
func NewClient(rwc io.ReadWriteCloser, h jsonrpc2.Handler) *Client {
	if h == nil {
		h = jsonrpc2.MethodNotFoundHandler
	}
	return &Client{conn: Serve(context.Background(), rwc, h)}
}

// Dial connects to the daemon's socket at path (see DialSocket for its
// errors) and returns a client on it. The caller still has to call Hello.
func Dial(ctx context.Context, path string) (*Client, error) {
	nc, err := DialSocket(ctx, path)
	if err != nil {
		return nil, err
	}
	return NewClient(nc, nil), nil
}

// Call calls method with params (nil sends none) and decodes the result
// into result (nil discards it).
//
// Errors: the peer's error response as an *Error (CodeOf and errors.Is work
// on it); if ctx ends first, an error wrapping ctx.Err(), after telling the
// peer with $/cancelRequest; otherwise a transport or decoding error,
// wrapped with the method.
func (c *Client) Call(ctx context.Context, method string, params, result any) error {
	id, err := c.conn.Call(ctx, method, params, result)
	if err == nil {
		return nil
	}
	if e, ok := errors.AsType[*jsonrpc2.Error](err); ok {
		return fromWire(e)
	}
	if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(err, ctxErr) && id.IsValid() {
		nctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		_ = c.conn.Notify(nctx, MethodCancelRequest, cancelParams(id))
		cancel()
	}
	return fmt.Errorf("call %s: %w", method, err)
}

// cancelParams is {"id": <id>} for $/cancelRequest.
func cancelParams(id jsonrpc2.ID) jsonrpc2.RawMessage {
	if n, ok := id.Number(); ok {
		return jsonrpc2.RawMessage(fmt.Appendf(nil, `{"id":%d}`, n))
	}
	s, _ := id.StringValue()
	b, _ := jsonrpc2.DefaultCodec.Marshal(map[string]string{"id": s})
	return b
}

// Notify sends a notification. Its error is a transport error only.
func (c *Client) Notify(ctx context.Context, method string, params any) error {
	if err := c.conn.Notify(ctx, method, params); err != nil {
		return fmt.Errorf("notify %s: %w", method, err)
	}
	return nil
}

// Done is closed when the connection has ended (the peer closed it, or
// Close).
func (c *Client) Done() <-chan struct{} { return c.conn.Done() }

// Close ends the connection and closes its rwc. It waits for calls in flight
// to return, so bound them with their contexts.
func (c *Client) Close() error {
	return c.conn.Close()
}
