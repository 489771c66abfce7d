package rpc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"time"

	"go.lsp.dev/jsonrpc2"
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
	// CommandFunc, when Command is empty, returns it: called only once a
	// daemon must be started (no daemon listens, or an older one was asked
	// to hand over), so that a client with a daemon running does not look
	// for the binary.
	CommandFunc func() []string
	// Version is this client's Mnemo version. A daemon of an older version
	// (CompareVersions) is asked to hand over when a daemon may be started
	// (Command or CommandFunc): it is stopped as `mnemo daemon stop` stops
	// it, and this client's daemon started. A daemon of a newer version
	// refuses this client (a downgrade) with an *Error of
	// CodeVersionMismatch, unless Resume. Empty: neither.
	Version string
	// Resume says that this client carries on a session a daemon that went
	// away had (Hello.Resume): a newer daemon serves it.
	Resume bool
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

// connectOnce dials (or starts) the daemon once and says hello; a daemon
// older than o.Version hands over (once) to a new one.
func connectOnce(ctx context.Context, o ConnectOptions) (net.Conn, error) {
	for handedOver := false; ; handedOver = true {
		nc, err := dial(ctx, o)
		if err != nil {
			return nil, err
		}
		hctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		hr, err := handshake(hctx, nc, o.hello())
		cancel()
		if err != nil {
			nc.Close()
			if old, ok := olderProtocol(err); ok && !handedOver && o.mayHandOver(old) {
				if err := handOver(ctx, o, old); err != nil {
					return nil, err
				}
				continue
			}
			return nil, err
		}
		if handedOver {
			if c, ok := CompareVersions(o.Version, hr.ServerVersion); ok && c > 0 {
				// The daemon started is older still: see staleFile.
				_ = os.WriteFile(staleFile(o.Home), []byte(hr.ServerVersion+"\n"), 0o600)
			}
		}
		if !handedOver && o.mayHandOver(hr) {
			nc.Close()
			if err := handOver(ctx, o, hr); err != nil {
				return nil, err
			}
			continue
		}
		if c, ok := CompareVersions(o.Version, hr.ServerVersion); ok && c < 0 && !o.Resume {
			nc.Close()
			return nil, olderClient(o.Version, hr.ServerVersion, hr.PID)
		}
		if !o.Deadline.IsZero() {
			_ = nc.SetDeadline(o.Deadline)
		}
		return nc, nil
	}
}

// hello is the hello o's client says.
func (o ConnectOptions) hello() Hello {
	return Hello{Client: o.Client, Version: o.Version, Resume: o.Resume}
}

// dial connects to the daemon of o.Home, starting one when none listens and
// o.Command (or o.CommandFunc's) is set.
func dial(ctx context.Context, o ConnectOptions) (net.Conn, error) {
	if len(o.Command) == 0 {
		nc, err := DialSocket(ctx, SocketPath(o.Home))
		if err == nil || !errors.Is(err, ErrNoDaemon) || o.CommandFunc == nil {
			return nc, err
		}
		if o.Command = o.CommandFunc(); len(o.Command) == 0 {
			return nil, err
		}
	}
	wait := 5 * time.Second
	if deadline, ok := ctx.Deadline(); ok {
		wait = min(wait, max(time.Until(deadline), time.Millisecond))
	}
	return DialOrStart(ctx, StartFor(o.Home, o.Command, wait))
}

// CallOnce is Connect, one Call and Close for a client that makes one call
// per process, such as a hook: the hello and the call go out in one write,
// and their two answers are read in order, so that the call costs one round
// trip to the daemon, not two. The daemon handles the hello before it reads
// the call (RequireHello answers it inline), so the wire is the one Connect
// and Call make, and a daemon that refuses the hello refuses the call too
// (-32002) without running it. result nil discards the call's result. No
// goroutine is started and nothing is left open.
//
// Errors: Connect's, from the hello; then Call's: the daemon's error
// response as an *Error, ctx's error wrapped when ctx ends first, or a
// transport or decoding error wrapped with the method. A call that ends
// without its answer may still have run in the daemon.
func CallOnce(ctx context.Context, o ConnectOptions, method string, params, result any) error {
	var body []byte
	if params != nil {
		b, err := jsonrpc2.DefaultCodec.Marshal(params)
		if err != nil {
			return fmt.Errorf("call %s: %w", method, err)
		}
		body = b
	}
	hello, err := helloParams(o.hello())
	if err != nil {
		return err
	}
	callID := jsonrpc2.NewNumberID(2)
	frames := appendFrame(nil, jsonrpc2.AppendCall(nil, helloID, MethodHello, hello))
	frames = appendFrame(frames, jsonrpc2.AppendCall(nil, callID, method, body))

	attempts := o.Attempts
	if attempts <= 0 {
		attempts = 3
	}
	handedOver := false
	for attempt := 1; ; attempt++ {
		hr, answered, err := callOnce(ctx, o, frames, callID, method, result)
		if old, ok := olderProtocol(err); ok && !handedOver && o.mayHandOver(old) {
			// A daemon of an older protocol refused the hello, and so the
			// call: it hands over, and the call goes to the new daemon.
			handedOver = true
			if herr := handOver(ctx, o, old); herr != nil {
				return errors.Join(err, herr)
			}
			attempt--
			continue
		}
		if err == nil && !handedOver && o.mayHandOver(hr) {
			// The call was answered: the hand-over is for the next client,
			// bounded by what is left of ctx.
			if herr := startNew(ctx, o, hr); herr != nil && o.Logger != nil {
				o.Logger.Warn("hand-over to a new daemon", "err", herr)
			}
			return nil
		}
		if err == nil || answered || attempt >= attempts || !connectionLost(err) {
			return err
		}
		if o.Logger != nil {
			o.Logger.Debug("daemon connection lost during the handshake; dialing again", "attempt", attempt, "err", err)
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(attempt) * 50 * time.Millisecond):
		}
	}
}

// callOnce dials once, writes frames (the hello and the call) and reads
// their answers. answered says whether the daemon answered the hello, and
// hr is its answer.
func callOnce(ctx context.Context, o ConnectOptions, frames []byte, callID jsonrpc2.ID, method string, result any) (hr HelloResult, answered bool, err error) {
	nc, err := dial(ctx, o)
	if err != nil {
		return hr, false, err
	}
	defer nc.Close()
	if !o.Deadline.IsZero() {
		_ = nc.SetDeadline(o.Deadline)
	}
	// Once ctx is done, fail the pending I/O; closing the connection then
	// tells the daemon.
	stop := context.AfterFunc(ctx, func() { _ = nc.SetDeadline(time.Unix(1, 0)) })
	defer stop()

	if _, err := nc.Write(frames); err != nil {
		return hr, false, handshakeErr(ctx, err)
	}
	r := bufio.NewReader(nc)
	if hr, err = readHelloAnswer(ctx, r, helloID); err != nil {
		return hr, false, err
	}
	resp, err := ReadFrame(r)
	if err != nil {
		return hr, true, callErr(ctx, method, err)
	}
	msg, err := jsonrpc2.DecodeMessage(resp)
	if err != nil {
		return hr, true, fmt.Errorf("call %s: bad response: %w", method, err)
	}
	res, ok := msg.(*jsonrpc2.Response)
	if !ok || res.ID() != callID {
		return hr, true, fmt.Errorf("call %s: the daemon answered something else", method)
	}
	if err := res.Err(); err != nil {
		if e, ok := errors.AsType[*jsonrpc2.Error](err); ok {
			return hr, true, fromWire(e)
		}
		return hr, true, fmt.Errorf("call %s: %w", method, err)
	}
	if result != nil {
		if err := jsonrpc2.DefaultCodec.Unmarshal(res.Result(), result); err != nil {
			return hr, true, fmt.Errorf("call %s: bad result: %w", method, err)
		}
	}
	return hr, true, nil
}

// callErr is an I/O error of a call, as ctx's error when ctx ended first.
func callErr(ctx context.Context, method string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("call %s: %w", method, ctx.Err())
	}
	return fmt.Errorf("call %s: %w", method, err)
}

// connectionLost reportswhether err says the other end closed the
// connection: a daemon that was killed or was exiting.
func connectionLost(err error) bool {
	return peerGone(err) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}
