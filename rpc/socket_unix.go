//go:build unix

package rpc

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/mnemo-dev/mnemo/rpc/socket"
)

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

	lock, err := socket.ListenLock(path)
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
