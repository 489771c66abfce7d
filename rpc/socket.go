package rpc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/mnemo-dev/mnemo/rpc/socket"
)

// The socket, the daemon's start and the hello from a client's side are
// package socket's (standard library only, so that the hook links no
// JSON-RPC machinery); these are its names here, for the programs that
// speak JSON-RPC over the connection.

// ErrDaemonRunning is returned by Listen when a daemon already serves the
// socket.
var ErrDaemonRunning = socket.ErrDaemonRunning

// ErrNoDaemon matches (errors.Is) a DialError that found no daemon: no
// socket file, or a socket file nobody listens on.
var ErrNoDaemon = socket.ErrNoDaemon

// DialError is the error of DialSocket.
type DialError = socket.DialError

// DialSocket connects to the daemon's socket at path (socket.Dial). Its
// error is a *DialError: errors.Is(err, ErrNoDaemon) when there is no
// socket file or nobody listens on it (start a daemon), otherwise a real
// failure (a permission problem, ctx ended).
func DialSocket(ctx context.Context, path string) (net.Conn, error) {
	c, err := socket.Dial(ctx, path)
	if err != nil {
		return nil, err
	}
	return netConn(c)
}

// netConn is c as a net.Conn: on Unix socket's *os.File becomes a
// *net.UnixConn on the same socket (the file is closed, its descriptor
// duplicated).
func netConn(c socket.Conn) (net.Conn, error) {
	if nc, ok := c.(net.Conn); ok {
		return nc, nil
	}
	f, ok := c.(*os.File)
	if !ok {
		c.Close()
		return nil, fmt.Errorf("rpc: a connection of type %T", c)
	}
	defer f.Close()
	nc, err := net.FileConn(f)
	if err != nil {
		return nil, fmt.Errorf("connect to daemon at %s: %w", f.Name(), err)
	}
	return nc, nil
}

// SocketPath returns the daemon's socket path for the Mnemo home directory
// home (socket.Path): <home>/run/mnemo.sock, or a short private path named
// by a hash of home when that is too long for a socket.
func SocketPath(home string) string { return socket.Path(home) }

// Home returns the Mnemo home directory (socket.Home): $MNEMO_HOME, else
// $XDG_DATA_HOME/mnemo, else ~/.local/share/mnemo (on Windows
// %LocalAppData%\mnemo).
func Home() (string, error) { return socket.Home() }

// DaemonRunning reports whether a daemon serves the home whose socket is
// at sock (SocketPath): whether a listener holds its lock (socket.Running).
func DaemonRunning(sock string) bool { return socket.Running(sock) }

// clearStale removes a socket file at path that nobody listens on.
func clearStale(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.Mode().Type() != os.ModeSocket {
		return fmt.Errorf("%s exists and is not a socket; remove it", path)
	}
	nc, err := net.DialTimeout("unix", path, time.Second)
	if err == nil {
		nc.Close()
		return ErrDaemonRunning
	}
	if !refused(err) {
		return fmt.Errorf("probe existing socket: %w", err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove stale socket: %w", err)
	}
	return nil
}

// StartOptions say how to start the daemon when none is listening.
type StartOptions = socket.StartOptions

// ErrDaemonStart is returned when a started daemon did not come up.
var ErrDaemonStart = socket.ErrDaemonStart

// StartDetached starts the daemon of o as socket.DialOrStart does (under
// the start lock, detached), without waiting for it (socket.StartDetached);
// it reports whether it spawned one.
func StartDetached(o StartOptions) (bool, error) { return socket.StartDetached(o) }

// StartFor returns how clients start the daemon of home with command
// (socket.StartFor).
func StartFor(home string, command []string, wait time.Duration) StartOptions {
	return socket.StartFor(home, command, wait)
}

// StartFailPath is where a failed start of the daemon of home is
// remembered (socket.StartFailPath); a daemon that opened its store
// removes it.
func StartFailPath(home string) string { return socket.StartFailPath(home) }

// DaemonCommand is the argv that starts the daemon of home with the mnemo
// binary at mnemo (socket.DaemonCommand).
func DaemonCommand(mnemo, home string) []string { return socket.DaemonCommand(mnemo, home) }

// Terminate asks the process pid to exit (socket.Terminate).
func Terminate(pid int) error { return socket.Terminate(pid) }

// ProcessAlive reports whether the process pid is still there
// (socket.ProcessAlive).
func ProcessAlive(pid int) bool { return socket.ProcessAlive(pid) }

// CompareVersions compares two versions of Mnemo (socket.CompareVersions):
// -1, 0 or +1, and ok false when either is not a release to compare.
func CompareVersions(a, b string) (cmp int, ok bool) { return socket.CompareVersions(a, b) }

// ReleaseVersion is the version a binary goes by (socket.ReleaseVersion).
func ReleaseVersion(stamped string) string { return socket.ReleaseVersion(stamped) }
