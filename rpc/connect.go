package rpc

import (
	"context"
	"net"

	"github.com/mnemo-dev/mnemo/rpc/socket"
)

// ConnectOptions say how Connect reaches the daemon of a Mnemo home
// (socket.Options: Home and Client required; Command or CommandFunc to
// start a daemon, Version for the hand-over, Deadline, Attempts, Logger).
type ConnectOptions = socket.Options

// Connect connects to the daemon of o.Home, starting one when none listens
// and o.Command is set, and says hello as o.Client; the Client it returns
// is ready for calls. Close it when done.
//
// The connect is socket.Connect's: the start under the start lock
// <home>/run/start.lock (the new daemon gets 5 s to listen, or less when
// ctx's deadline is sooner), the hello bounded by 5 s and ctx, a dial again
// (up to o.Attempts) when a dying daemon drops the connection during the
// hello, and the hand-over from a daemon older than o.Version. ctx bounds
// everything.
//
// Errors: a *DialError, matching ErrNoDaemon when no daemon listens and
// none may be started; an error wrapping ErrDaemonStart when a started
// daemon did not come up; an *Error of CodeVersionMismatch, worded for the
// user, from a daemon of another protocol version; otherwise ctx's error
// or the handshake's I/O error.
func Connect(ctx context.Context, o ConnectOptions) (*Client, error) {
	nc, err := ConnectConn(ctx, o)
	if err != nil {
		return nil, err
	}
	return NewClient(nc, nil), nil
}

// ConnectConn is Connect for a forwarder (Forward): it returns the socket
// connection itself after the hello, with nothing reading it yet. Its
// errors are Connect's.
func ConnectConn(ctx context.Context, o ConnectOptions) (net.Conn, error) {
	c, err := socket.Connect(ctx, o)
	if err != nil {
		return nil, err
	}
	nc, err := netConn(c)
	if err == nil && !o.Deadline.IsZero() {
		_ = nc.SetDeadline(o.Deadline) // the descriptor's copy has none yet
	}
	return nc, err
}

// CallOnce is Connect, one Call and Close for a client that makes one call
// per process (socket.CallOnce, which the hook calls itself): the hello
// and the call in one write, their two answers read in order. params are
// encoded with encoding/json; result nil discards the result.
//
// Errors: Connect's, from the hello; then Call's: the daemon's error
// response as an *Error, ctx's error wrapped when ctx ends first, or a
// transport or decoding error wrapped with the method.
func CallOnce(ctx context.Context, o ConnectOptions, method string, params, result any) error {
	return socket.CallOnce(ctx, o, method, params, result)
}
