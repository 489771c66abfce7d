package rpc

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"syscall"
	"time"
)

// ConnectOptions say how Connect reaches the daemon of a Mnemo home. Only
// Home and Client are required.
type ConnectOptions struct {
	// Home is the Mnemo home directory (Home()): Connect dials
	// SocketPath(Home), and starts a daemon as StartFor(Home, …) says.
	Home string
	// Client is the kind sent in the hello: ClientHook, ClientServe,
	// ClientMCP or ClientCLI.
	Client string
	// Command is the daemon's argv (DaemonCommand), run when no daemon
	// listens. Empty: never start one; no daemon is then an error matching
	// ErrNoDaemon.
	Command []string
	// Deadline, when not zero, bounds every read and write on the
	// connection for its whole life, also a write to a daemon that stopped
	// reading: for a client whose calls all end by then, such as a hook.
	// Zero: ctx bounds the connect only, and each call its own context.
	Deadline time.Time
	// Attempts bounds the dials when the daemon closes the connection
	// during the hello. 0 means 3; 1 never dials again.
	Attempts int
	// Logger gets a debug record for each dial that is tried again; nil
	// logs nothing.
	Logger *slog.Logger
}

// Connect connects to the daemon of o.Home, starting one when none listens
// and o.Command is set, and says hello as o.Client; the Client it returns
// is ready for calls. Close it when done.
//
// The start is DialOrStart's: under the start lock <home>/run/start.lock,
// and the new daemon gets 5 s to listen, or less when ctx's deadline is
// sooner. The hello is bounded by 5 s and ctx. A daemon that dies or exits
// at idle while a client connects closes or resets the connection during
// the hello; Connect then dials again (up to o.Attempts dials, 50 ms and
// 100 ms apart), so that a new daemon is started or the socket found gone.
// ctx bounds everything.
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
	attempts := o.Attempts
	if attempts <= 0 {
		attempts = 3
	}
	for attempt := 1; ; attempt++ {
		nc, err := connectOnce(ctx, o)
		if err == nil || attempt >= attempts || !connectionLost(err) {
			return nc, err
		}
		if o.Logger != nil {
			o.Logger.Debug("daemon connection lost during the handshake; dialing again", "attempt", attempt, "err", err)
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(time.Duration(attempt) * 50 * time.Millisecond):
		}
	}
}

// connectOnce dials (or starts) the daemon once and says hello.
func connectOnce(ctx context.Context, o ConnectOptions) (net.Conn, error) {
	var (
		nc  net.Conn
		err error
	)
	if len(o.Command) > 0 {
		wait := 5 * time.Second
		if deadline, ok := ctx.Deadline(); ok {
			wait = min(wait, max(time.Until(deadline), time.Millisecond))
		}
		nc, err = DialOrStart(ctx, StartFor(o.Home, o.Command, wait))
	} else {
		nc, err = DialSocket(ctx, SocketPath(o.Home))
	}
	if err != nil {
		return nil, err
	}
	hctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := Handshake(hctx, nc, o.Client); err != nil {
		nc.Close()
		return nil, err
	}
	if !o.Deadline.IsZero() {
		_ = nc.SetDeadline(o.Deadline)
	}
	return nc, nil
}

// connectionLost reports whether err says the other end closed the
// connection: a daemon that was killed or was exiting.
func connectionLost(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}
