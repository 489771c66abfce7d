package socket

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// Logger is where a connect says what it did along the way: a dial tried
// again, a hand-over. *slog.Logger is one (a nil *slog.Logger is not: leave
// Options.Logger nil instead).
type Logger interface {
	Debug(msg string, args ...any)
	Info(msg string, args ...any)
	Warn(msg string, args ...any)
}

// Options say how Connect and CallOnce reach the daemon of a Mnemo home
// (rpc.ConnectOptions is this type). Only Home and Client are required.
type Options struct {
	// Home is the Mnemo home directory (Home()): Connect dials
	// Path(Home), and starts a daemon as StartFor(Home, …) says.
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
	// Logger gets a debug record for each dial that is tried again, and
	// the hand-overs; nil logs nothing.
	Logger Logger
}

// Connect connects to the daemon of o.Home, starting one when none listens
// and o.Command is set, says hello as o.Client, and returns the connection
// with nothing reading it yet (rpc.Connect serves JSON-RPC on it).
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
func Connect(ctx context.Context, o Options) (Conn, error) {
	attempts := o.Attempts
	if attempts <= 0 {
		attempts = 3
	}
	for attempt := 1; ; attempt++ {
		c, err := connectOnce(ctx, o)
		if err == nil || attempt >= attempts || !connectionLost(err) {
			return c, err
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
func connectOnce(ctx context.Context, o Options) (Conn, error) {
	for handedOver := false; ; handedOver = true {
		c, err := dial(ctx, o)
		if err != nil {
			return nil, err
		}
		hctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		hr, err := Handshake(hctx, c, o.hello())
		cancel()
		if err != nil {
			c.Close()
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
			c.Close()
			if err := handOver(ctx, o, hr); err != nil {
				return nil, err
			}
			continue
		}
		if cmp, ok := CompareVersions(o.Version, hr.ServerVersion); ok && cmp < 0 && !o.Resume {
			c.Close()
			return nil, OlderClient(o.Version, hr.ServerVersion, hr.PID)
		}
		if !o.Deadline.IsZero() {
			_ = c.SetDeadline(o.Deadline)
		}
		return c, nil
	}
}

// hello is the hello o's client says.
func (o Options) hello() Hello {
	return Hello{Client: o.Client, Version: o.Version, Resume: o.Resume}
}

// dial connects to the daemon of o.Home, starting one when none listens and
// o.Command (or o.CommandFunc's) is set.
func dial(ctx context.Context, o Options) (Conn, error) {
	if len(o.Command) == 0 {
		c, err := Dial(ctx, Path(o.Home))
		if err == nil || !errors.Is(err, ErrNoDaemon) || o.CommandFunc == nil {
			return c, err
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

// callID is the id of CallOnce's call, after the hello's.
const callID = 2

// CallOnce is Connect, one call and close for a client that makes one call
// per process, such as a hook: the hello and the call go out in one write,
// and their two answers are read in order, so that the call costs one round
// trip to the daemon, not two. The daemon handles the hello before it reads
// the call (rpc.RequireHello answers it inline), so the wire is the one
// rpc.Connect and a call make, and a daemon that refuses the hello refuses
// the call too (-32002) without running it. params are encoded with
// encoding/json (a json.RawMessage goes as it is); nil sends none. result
// nil discards the call's result. No goroutine is started and nothing is
// left open.
//
// Errors: Connect's, from the hello; then the call's: the daemon's error
// response as an *Error, ctx's error wrapped when ctx ends first, or a
// transport or decoding error wrapped with the method. A call that ends
// without its answer may still have run in the daemon.
func CallOnce(ctx context.Context, o Options, method string, params, result any) error {
	var body []byte
	if params != nil {
		b, err := json.Marshal(params)
		if err != nil {
			return fmt.Errorf("call %s: %w", method, err)
		}
		body = b
	}
	hello, err := helloParams(o.hello())
	if err != nil {
		return err
	}
	frames := appendFrame(nil, appendCall(nil, helloID, MethodHello, hello))
	frames = appendFrame(frames, appendCall(nil, callID, method, body))

	attempts := o.Attempts
	if attempts <= 0 {
		attempts = 3
	}
	handedOver := false
	for attempt := 1; ; attempt++ {
		hr, answered, err := callOnce(ctx, o, frames, method, result)
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
func callOnce(ctx context.Context, o Options, frames []byte, method string, result any) (hr HelloResult, answered bool, err error) {
	c, err := dial(ctx, o)
	if err != nil {
		return hr, false, err
	}
	defer c.Close()
	if !o.Deadline.IsZero() {
		_ = c.SetDeadline(o.Deadline)
	}
	// Once ctx is done, fail the pending I/O; closing the connection then
	// tells the daemon.
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Unix(1, 0)) })
	defer stop()

	if _, err := c.Write(frames); err != nil {
		return hr, false, handshakeErr(ctx, err)
	}
	r := bufio.NewReader(c)
	if hr, err = readHelloAnswer(ctx, r); err != nil {
		return hr, false, err
	}
	raw, err := readAnswer(r, callID)
	switch {
	case errors.Is(err, errNotAnswer):
		return hr, true, fmt.Errorf("call %s: the daemon answered something else", method)
	case err != nil:
		if _, ok := errors.AsType[*Error](err); ok {
			return hr, true, err
		}
		return hr, true, callErr(ctx, method, err)
	}
	if result != nil {
		if err := json.Unmarshal(raw, result); err != nil {
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

// connectionLost reports whether err says the other end closed the
// connection: a daemon that was killed or was exiting.
func connectionLost(err error) bool {
	return PeerGone(err) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}
