//go:build unix

package rpc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"syscall"
)

// maxSocketPath is the longest socket path the kernel takes (sun_path less
// its NUL): 107 bytes on Linux, 103 on macOS and the BSDs.
const maxSocketPath = len(syscall.RawSockaddrUnix{}.Path) - 1

// SocketPath returns the daemon's socket path for the Mnemo home directory
// home: <home>/run/mnemo.sock, or, when that is longer than a socket path
// may be, a short private path named by a hash of home:
// $XDG_RUNTIME_DIR/mnemo-<hash>.sock when XDG_RUNTIME_DIR is a directory of
// this user's, else <os.TempDir()>/mnemo-<uid>/<hash>.sock (Listen makes that
// folder 0700 and checks its owner). The same home always gives the same path.
func SocketPath(home string) string {
	p, hash := homeSocket(home)
	if len(p) <= maxSocketPath {
		return p
	}
	if dir := os.Getenv("XDG_RUNTIME_DIR"); dir != "" && filepath.IsAbs(dir) {
		p := filepath.Join(dir, "mnemo-"+hash+".sock")
		if len(p) <= maxSocketPath && ownedDir(dir) {
			return p
		}
	}
	uidDir := fmt.Sprintf("mnemo-%d", os.Getuid())
	p = filepath.Join(os.TempDir(), uidDir, hash+".sock")
	if len(p) > maxSocketPath {
		p = filepath.Join("/tmp", uidDir, hash+".sock")
	}
	return p
}

// ownedDir reports whether dir is a directory (not a symlink) of this user's.
func ownedDir(dir string) bool {
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}

// Listen listens on the Unix socket path for the daemon.
//
// It creates the socket's folder 0700 (and tightens an existing one of this
// user's to 0700; a folder of another user's, or a symlink, is an error),
// takes an exclusive lock on <path>.lock for the listener's life, and handles
// what is already at path: a live socket (or a held lock) fails with an error
// wrapping ErrDaemonRunning; a stale socket (connection refused) is removed;
// any other file is an error and left alone. The new socket is chmod 0600.
//
// The listener's Accept checks each peer's uid (SO_PEERCRED on Linux,
// LOCAL_PEERCRED on macOS/FreeBSD) and closes, logging to slog.Default(), a
// connection from any other user. Close removes the socket file and releases
// the lock.
func Listen(path string) (net.Listener, error) {
	dir := filepath.Dir(path)
	if err := privateDir(dir); err != nil {
		return nil, fmt.Errorf("listen %s: %w", path, err)
	}

	lock, err := listenLock(path)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (net.Listener, error) {
		lock.Close()
		return nil, fmt.Errorf("listen %s: %w", path, err)
	}

	if err := clearStale(path); err != nil {
		return fail(err)
	}
	ul, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return fail(err)
	}
	ul.SetUnlinkOnClose(true)
	if err := os.Chmod(path, 0o600); err != nil {
		ul.Close()
		return fail(err)
	}
	return &listener{UnixListener: ul, lock: lock, uid: os.Getuid(), path: path}, nil
}

// privateDir makes dir (and its parents) and ensures it is a real directory
// of this user's with mode 0700.
func privateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory (a symlink?); remove it", dir)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("%s belongs to uid %d, not to you (uid %d); remove it", dir, st.Uid, os.Getuid())
	}
	if fi.Mode().Perm() != 0o700 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return err
		}
	}
	return nil
}

// refused reports whether dialing a socket file failed because nobody
// listens on it.
func refused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }

// listener refuses connections from other users.
type listener struct {
	*net.UnixListener
	lock *os.File
	uid  int
	path string

	closeOnce sync.Once
	closeErr  error
}

// Accept returns the next connection from this user; connections from any
// other uid are closed and logged.
func (l *listener) Accept() (net.Conn, error) {
	for {
		nc, err := l.AcceptUnix()
		if err != nil {
			return nil, err
		}
		uid, err := peerUID(nc)
		if err == nil && uid == l.uid {
			return nc, nil
		}
		slog.Default().Warn("rpc: refused a connection from another user",
			"socket", l.path, "peerUID", uid, "err", err)
		nc.Close()
	}
}

// Close stops listening, removes the socket file and releases the lock.
func (l *listener) Close() error {
	l.closeOnce.Do(func() {
		l.closeErr = l.UnixListener.Close()
		l.lock.Close()
	})
	return l.closeErr
}

// noDaemon reports whether a dial error means that no daemon is there: no
// socket file, or a socket file nobody listens on.
func noDaemon(err error) bool {
	return errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED)
}

// defaultHome is ~/.local/share/mnemo, where XDG_DATA_HOME would put it.
func defaultHome() (string, error) {
	h, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(h, ".local", "share", "mnemo"), nil
}

// dialUnix connects to the Unix socket at path.
func dialUnix(ctx context.Context, path string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, "unix", path)
}
