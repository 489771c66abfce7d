//go:build unix

package socket

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// maxSocketPath is the longest socket path the kernel takes (sun_path less
// its NUL): 107 bytes on Linux, 103 on macOS and the BSDs.
const maxSocketPath = len(syscall.RawSockaddrUnix{}.Path) - 1

// Path returns the daemon's socket path for the Mnemo home directory
// home: <home>/run/mnemo.sock, or, when that is longer than a socket path
// may be, a short private path named by a hash of home:
// $XDG_RUNTIME_DIR/mnemo-<hash>.sock when XDG_RUNTIME_DIR is a directory of
// this user's, else <os.TempDir()>/mnemo-<uid>/<hash>.sock (rpc.Listen makes
// that folder 0700 and checks its owner). The same home always gives the
// same path.
func Path(home string) string {
	p := homeSocket(home)
	if len(p) <= maxSocketPath {
		return p
	}
	hash := homeHash(home)
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

// dialUnix connects a Unix socket to path with the system calls package net
// would make (a non-blocking socket, close-on-exec, connect) and returns it
// as an *os.File, which the runtime's poller serves like a net.Conn: reads,
// writes and deadlines. A hook links no package net for its one call.
func dialUnix(ctx context.Context, path string) (Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// As package net does where SOCK_CLOEXEC is missing (macOS): no fork
	// between the socket and its close-on-exec.
	syscall.ForkLock.RLock()
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err == nil {
		syscall.CloseOnExec(fd)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return nil, os.NewSyscallError("socket", err)
	}
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return nil, os.NewSyscallError("setnonblock", err)
	}
	for {
		err = syscall.Connect(fd, &syscall.SockaddrUnix{Name: path})
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil && !errors.Is(err, syscall.EINPROGRESS) && !errors.Is(err, syscall.EALREADY) {
		syscall.Close(fd)
		return nil, os.NewSyscallError("connect", err)
	}
	f := os.NewFile(uintptr(fd), path) // non-blocking: the poller serves it
	if err != nil {
		// A connect under way (a backlog some systems queue): wait until
		// the socket is writable, bounded by ctx, and read its outcome.
		if err := waitConnect(ctx, f); err != nil {
			f.Close()
			return nil, err
		}
	}
	return f, nil
}

// waitConnect waits for the connect under way on f, bounded by ctx, and
// returns its outcome.
func waitConnect(ctx context.Context, f *os.File) error {
	if d, ok := ctx.Deadline(); ok {
		_ = f.SetWriteDeadline(d)
	}
	stop := context.AfterFunc(ctx, func() { _ = f.SetWriteDeadline(time.Unix(1, 0)) })
	defer stop()
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var cerr error
	if werr := rc.Write(func(fd uintptr) bool {
		n, err := syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_ERROR)
		switch {
		case err != nil:
			cerr = os.NewSyscallError("getsockopt", err)
		case syscall.Errno(n) == syscall.EINPROGRESS || syscall.Errno(n) == syscall.EALREADY:
			return false
		case n != 0:
			cerr = os.NewSyscallError("connect", syscall.Errno(n))
		}
		return true
	}); werr != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return werr
	}
	_ = f.SetWriteDeadline(time.Time{})
	return cerr
}
