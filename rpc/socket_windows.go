package rpc

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"golang.org/x/sys/windows"

	"github.com/mnemo-dev/mnemo/rpc/socket"
)

// maxSocketPath is the longest socket path Windows takes (sun_path of
// afunix.h less its NUL): 107 bytes.
const maxSocketPath = len(syscall.RawSockaddrUnix{}.Path) - 1

// Listen listens on the Unix socket path for the daemon (AF_UNIX, Windows 10
// 1803 and later).
//
// It creates the socket's folder and gives it a protected ACL that grants
// this user alone (inherited by the socket file and the lock; a folder owned
// by another user, or a link, is an error), takes an exclusive lock on
// <path>.lock for the listener's life, and handles what is already at path:
// a live socket (or a held lock) fails with an error wrapping
// ErrDaemonRunning; a stale socket (connection refused) is removed; any
// other file is an error and left alone.
//
// Windows gives no peer credentials on AF_UNIX sockets (no SO_PEERCRED), so
// Accept cannot check the peer's user as it does on Unix: what keeps other
// users out is the ACL of the folder and of the socket file, which a client
// must be allowed to open to connect. Close removes the socket file and
// releases the lock.
func Listen(path string) (net.Listener, error) {
	if len(path) > maxSocketPath {
		return nil, fmt.Errorf("listen %s: the path is %d bytes, longer than a socket path may be (%d); set MNEMO_HOME to a shorter folder",
			path, len(path), maxSocketPath)
	}
	if err := privateDir(filepath.Dir(path)); err != nil {
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
	return &listener{UnixListener: ul, lock: lock}, nil
}

// privateDir makes dir (and its parents), ensures it is a real directory
// owned by this user (or by the Administrators group, the owner of what an
// elevated process creates), and sets its ACL to one protected entry that
// gives this user full control, inherited by what is inside: the ACL
// counterpart of Unix's 0700.
func privateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory (a link?); remove it", dir)
	}
	token := windows.GetCurrentProcessToken()
	user, err := token.GetTokenUser()
	if err != nil {
		return fmt.Errorf("this process's user: %w", err)
	}
	me := user.User.Sid
	sd, err := windows.GetNamedSecurityInfo(dir, windows.SE_FILE_OBJECT, windows.OWNER_SECURITY_INFORMATION)
	if err != nil {
		return fmt.Errorf("%s: read its owner: %w", dir, err)
	}
	owner, _, err := sd.Owner()
	if err != nil {
		return fmt.Errorf("%s: read its owner: %w", dir, err)
	}
	if !owner.Equals(me) && !(token.IsElevated() && owner.IsWellKnown(windows.WinBuiltinAdministratorsSid)) {
		return fmt.Errorf("%s belongs to %s, not to you (%s); remove it", dir, owner, me)
	}
	sd, err = windows.SecurityDescriptorFromString("D:P(A;OICI;FA;;;" + me.String() + ")")
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	dacl, _, err := sd.DACL()
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	if err := windows.SetNamedSecurityInfo(dir, windows.SE_FILE_OBJECT,
		windows.DACL_SECURITY_INFORMATION|windows.PROTECTED_DACL_SECURITY_INFORMATION, nil, nil, dacl, nil); err != nil {
		return fmt.Errorf("%s: set its ACL: %w", dir, err)
	}
	return nil
}

// refused reports whether dialing a socket file failed because nobody
// listens on it.
func refused(err error) bool { return errors.Is(err, windows.WSAECONNREFUSED) }

// listener is the daemon's socket and its lock.
type listener struct {
	*net.UnixListener
	lock *os.File

	closeOnce sync.Once
	closeErr  error
}

// Close stops listening, removes the socket file and releases the lock.
func (l *listener) Close() error {
	l.closeOnce.Do(func() {
		l.closeErr = l.UnixListener.Close()
		l.lock.Close()
	})
	return l.closeErr
}
