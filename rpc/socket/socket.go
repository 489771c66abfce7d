package socket

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// ErrDaemonRunning is returned by ListenLock (and so rpc.Listen) when a
// daemon already serves the socket.
var ErrDaemonRunning = errors.New("a daemon is already running")

// ErrNoDaemon matches (errors.Is) a DialError that found no daemon: no
// socket file, or a socket file nobody listens on.
var ErrNoDaemon = errors.New("no daemon listening")

// DialError is the error of Dial.
type DialError struct {
	Path string
	Err  error // the underlying error
}

// Error says "no daemon listening at <path>" when no daemon is there, else
// names the path and the failure.
func (e *DialError) Error() string {
	if e.noDaemon() {
		return "no daemon listening at " + e.Path
	}
	return fmt.Sprintf("connect to daemon at %s: %v", e.Path, e.Err)
}

// Is matches ErrNoDaemon when no daemon is there.
func (e *DialError) Is(target error) bool { return target == ErrNoDaemon && e.noDaemon() }

func (e *DialError) Unwrap() error { return e.Err }

func (e *DialError) noDaemon() bool { return noDaemon(e.Err) }

// Conn is a connection to the daemon's socket: on Unix an *os.File on the
// connected socket (the runtime's poller serves its deadlines; no package
// net), on Windows a net.Conn.
type Conn interface {
	io.ReadWriteCloser
	SetDeadline(t time.Time) error
}

// Dial connects to the daemon's socket at path. Its error is a *DialError:
// errors.Is(err, ErrNoDaemon) when there is no socket file or nobody
// listens on it (start a daemon), otherwise a real failure (a permission
// problem, ctx ended).
func Dial(ctx context.Context, path string) (Conn, error) {
	c, err := dialUnix(ctx, path)
	if err != nil {
		return nil, &DialError{Path: path, Err: err}
	}
	return c, nil
}

// Home returns the Mnemo home directory, where the daemon's socket, store
// and logs live: $MNEMO_HOME, else $XDG_DATA_HOME/mnemo, else
// ~/.local/share/mnemo (on Windows %LocalAppData%\mnemo, see
// defaultHome). Every Mnemo program resolves it the same way.
func Home() (string, error) {
	if h := os.Getenv("MNEMO_HOME"); h != "" {
		return filepath.Abs(h)
	}
	if x := os.Getenv("XDG_DATA_HOME"); x != "" {
		return filepath.Join(x, "mnemo"), nil
	}
	h, err := defaultHome()
	if err != nil {
		return "", fmt.Errorf("find the Mnemo home: %w (set MNEMO_HOME)", err)
	}
	return h, nil
}

// Running reports whether a daemon serves the home whose socket is at
// sock (Path): whether a listener holds its lock (ListenLock). It costs
// three system calls and no connection, so a hook that hands its event
// over by the journal checks it each time; a daemon frozen (SIGSTOP)
// still counts as running.
func Running(sock string) bool { return lockHeld(sock + ".lock") }

// homeSocket is the socket path in a Mnemo home (<home>/run/mnemo.sock).
func homeSocket(home string) string {
	return filepath.Join(filepath.Clean(home), "run", "mnemo.sock")
}

// homeHash is the hash that names a home's socket elsewhere when
// homeSocket is too long for a socket: computed only then.
func homeHash(home string) string {
	sum := sha256.Sum256([]byte(filepath.Clean(home)))
	return hex.EncodeToString(sum[:8])
}

// ListenLock takes the exclusive lock on <path>.lock that a listener on
// the socket path holds for its life (rpc.Listen); a lock held elsewhere
// is an error wrapping ErrDaemonRunning. Close the file to let go.
//
// Running reads the same lock: a daemon runs when it cannot share it.
func ListenLock(path string) (*os.File, error) {
	lock, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("listen %s: %w", path, err)
	}
	locked, err := tryLock(lock)
	if err == nil && !locked {
		// A client checking whether a daemon runs (Running) holds a
		// shared lock for a few microseconds: a lock held longer is a
		// daemon's. Polling for a free moment lost to a few clients
		// checking in a loop, whose shared locks overlap; a waiting lock
		// is woken by the system the moment the last one lets go.
		locked, err = lockWithin(lock, listenLockWait) // closes lock unless locked
	} else if err != nil {
		lock.Close()
	}
	switch {
	case err != nil:
		return nil, fmt.Errorf("listen %s: lock: %w", path, err)
	case !locked:
		return nil, fmt.Errorf("listen %s: %w (its lock is held)", path, ErrDaemonRunning)
	}
	return lock, nil
}

// listenLockWait is how long ListenLock waits for the clients checking
// the lock to let go of it: what a second daemon, started while one runs,
// takes to say so. Four clients checking in tight loops under the race
// detector kept a 50 ms wait from its lock in 1 to 2 runs of 30
// (TestDaemonRunningDoesNotStopAStart; polling every millisecond, 10 to 16),
// 200 ms in none of 90.
const listenLockWait = 200 * time.Millisecond

// lockWithin takes f's exclusive lock, waiting at most d, and reports
// whether it has it. When it has not, f is no longer the caller's: it is
// closed when the lock comes, or now on an error, and the lock with it.
func lockWithin(f *os.File, d time.Duration) (bool, error) {
	got := make(chan error, 1)
	go func() { got <- waitLock(f) }()
	select {
	case err := <-got:
		if err != nil {
			f.Close()
			return false, err
		}
		return true, nil
	case <-time.After(d):
		go func() {
			<-got
			f.Close()
		}()
		return false, nil
	}
}
