package socket

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/windows"
)

// maxSocketPath is the longest socket path Windows takes (sun_path of
// afunix.h less its NUL): 107 bytes.
const maxSocketPath = len(syscall.RawSockaddrUnix{}.Path) - 1

// Path returns the daemon's socket path for the Mnemo home directory
// home: <home>\run\mnemo.sock, or, when that is longer than a socket path
// may be, a short path named by a hash of home in this user's temporary
// folder: %TEMP%\mnemo\<hash>.sock (%TEMP% is in the user's profile;
// rpc.Listen gives that folder the same ACL as <home>\run). The same home
// always gives the same path.
func Path(home string) string {
	p := homeSocket(home)
	if len(p) <= maxSocketPath {
		return p
	}
	return filepath.Join(os.TempDir(), "mnemo", homeHash(home)+".sock")
}

// dialUnix connects to the Unix socket at path (AF_UNIX through Winsock, with
// package net). A missing socket file is reported as such before Winsock
// is asked, so that "no daemon" does not depend on which error code
// connect gives for a missing path.
func dialUnix(ctx context.Context, path string) (Conn, error) {
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, &net.OpError{Op: "dial", Net: "unix", Addr: &net.UnixAddr{Name: path, Net: "unix"}, Err: err}
	}
	var d net.Dialer
	return d.DialContext(ctx, "unix", path)
}

// noDaemon reports whether a dial error means that no daemon is there: no
// socket file, or a socket file nobody listens on (WSAECONNREFUSED).
func noDaemon(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, windows.WSAECONNREFUSED)
}

// defaultHome is %LocalAppData%\mnemo: the user's own, machine-local data
// folder (a store must not roam with the profile).
func defaultHome() (string, error) {
	dir, err := windows.KnownFolderPath(windows.FOLDERID_LocalAppData, 0)
	if err != nil {
		return "", fmt.Errorf("find %%LocalAppData%%: %w", err)
	}
	return filepath.Join(dir, "mnemo"), nil
}
