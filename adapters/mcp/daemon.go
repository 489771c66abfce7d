package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/mnemo-dev/mnemo/rpc"
)

// A Caller calls one of the daemon's methods. *rpc.Client and
// *DaemonClient satisfy it.
//
// Call decodes the result into result. An error answered by the daemon is
// an *rpc.Error (rpc.CodeOf classifies it: invalid params, not found…); a
// daemon that cannot be reached is an error matching ErrDaemonUnreachable.
type Caller interface {
	Call(ctx context.Context, method string, params, result any) error
}

// ErrDaemonUnreachable marks a call that could not reach the daemon: no
// connection could be made, or it broke and a new one failed too.
var ErrDaemonUnreachable = errors.New("the Mnemo daemon is unreachable")

// DaemonClient is a Caller that keeps one connection to the daemon. It
// dials on the first call, and again on the next call after the
// connection dropped (the daemon stopped, was restarted or upgraded). A
// call whose connection breaks under it is retried once on a new
// connection; that is safe for every tool's method: searches and reads
// have no effect, a save of the same text is stored once, a correction
// or a pin made again changes nothing more, and forgetting twice removes
// nothing more.
type DaemonClient struct {
	connect func(context.Context) (*rpc.Client, error)
	log     *slog.Logger

	mu     sync.Mutex
	cl     *rpc.Client
	closed bool
}

// NewDaemonClient returns a client that connects with connect, which must
// return a client ready for calls (rpc.Connect: handshake done). log may
// be nil.
func NewDaemonClient(connect func(context.Context) (*rpc.Client, error), log *slog.Logger) *DaemonClient {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &DaemonClient{connect: connect, log: log}
}

// Connect makes sure a connection is open, dialing when there is none. A
// server calls it once at start so that the daemon is warm by the first
// tool call; failing is not fatal, the next call dials again.
func (d *DaemonClient) Connect(ctx context.Context) error {
	_, err := d.client(ctx)
	return err
}

// Call calls method on the daemon. See Caller for its errors; ctx ending
// returns an error wrapping ctx.Err().
func (d *DaemonClient) Call(ctx context.Context, method string, params, result any) error {
	for attempt := 0; ; attempt++ {
		cl, err := d.client(ctx)
		if err != nil {
			return err
		}
		err = cl.Call(ctx, method, params, result)
		if err == nil {
			return nil
		}
		if _, answered := errors.AsType[*rpc.Error](err); answered || ctx.Err() != nil {
			return err
		}
		// The connection failed under the call: drop it, so that the
		// next attempt (or the next call) dials a new one.
		d.drop(cl)
		d.log.Warn("daemon connection lost", "method", method, "err", err)
		if attempt > 0 {
			return fmt.Errorf("%w: %w", ErrDaemonUnreachable, err)
		}
	}
}

// Close closes the connection; later calls fail.
func (d *DaemonClient) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	if d.cl == nil {
		return nil
	}
	err := d.cl.Close()
	d.cl = nil
	return err
}

// client returns the open connection, dialing a new one when there is none
// or the last one has ended.
func (d *DaemonClient) client(ctx context.Context) (*rpc.Client, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, fmt.Errorf("%w: the client is closed", ErrDaemonUnreachable)
	}
	if d.cl != nil {
		select {
		case <-d.cl.Done():
			d.cl.Close()
			d.cl = nil
			d.log.Info("daemon connection had ended; reconnecting")
		default:
			return d.cl, nil
		}
	}
	cl, err := d.connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrDaemonUnreachable, err)
	}
	d.cl = cl
	d.log.Info("connected to the daemon")
	return d.cl, nil
}

func (d *DaemonClient) drop(cl *rpc.Client) {
	d.mu.Lock()
	if d.cl == cl {
		d.cl = nil
	}
	d.mu.Unlock()
	cl.Close()
}
