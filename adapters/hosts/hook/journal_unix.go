//go:build unix

package hook

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// journalAppender is a journal file open for appending: a bare file
// descriptor, so that a hook's append costs its system calls and nothing
// else (an *os.File would set up the runtime's poller first).
type journalAppender struct{ fd int }

// openJournalAppend opens the journal at path for appending; a missing
// file is an error matching os.ErrNotExist.
func openJournalAppend(path string) (journalAppender, error) {
	for {
		fd, err := unix.Open(path, unix.O_WRONLY|unix.O_APPEND|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return journalAppender{}, &os.PathError{Op: "open", Path: path, Err: err}
		}
		return journalAppender{fd}, nil
	}
}

// append writes rec in one write(2) under a shared lock, once it has
// checked that the file is still the one at path, and reports true; it
// reports false when the daemon is rotating the file (it holds or held
// the exclusive lock, or renamed the file away).
func (a journalAppender) append(path string, rec []byte, sync bool) (bool, error) {
	if err := ignoringEINTR(func() error { return unix.Flock(a.fd, unix.LOCK_SH|unix.LOCK_NB) }); err != nil {
		if errors.Is(err, unix.EWOULDBLOCK) {
			return false, nil
		}
		return false, fmt.Errorf("journal: lock: %w", err)
	}
	var held, now unix.Stat_t
	if err := unix.Fstat(a.fd, &held); err != nil {
		return false, fmt.Errorf("journal: %w", err)
	}
	if err := unix.Stat(path, &now); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return false, nil
		}
		return false, fmt.Errorf("journal: %w", err)
	}
	if held.Dev != now.Dev || held.Ino != now.Ino {
		return false, nil
	}
	var n int
	err := ignoringEINTR(func() (err error) { n, err = unix.Write(a.fd, rec); return err })
	if err != nil {
		return false, fmt.Errorf("journal: write: %w", err)
	}
	if n != len(rec) {
		// The rest cannot follow it: another hook may have appended
		// meanwhile. The reader skips the part as a record cut short.
		return false, fmt.Errorf("journal: write: %d of %d bytes written", n, len(rec))
	}
	if sync {
		if err := ignoringEINTR(func() error { return unix.Fsync(a.fd) }); err != nil {
			return false, fmt.Errorf("journal: fsync: %w", err)
		}
	}
	return true, nil
}

func (a journalAppender) close() { unix.Close(a.fd) }

// tryLockExclusive takes an exclusive lock on f without waiting, and
// reports whether it got it.
func tryLockExclusive(f *os.File) bool {
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	var lerr error
	if err := rc.Control(func(fd uintptr) {
		lerr = ignoringEINTR(func() error { return unix.Flock(int(fd), unix.LOCK_EX|unix.LOCK_NB) })
	}); err != nil {
		return false
	}
	return lerr == nil
}

func ignoringEINTR(fn func() error) error {
	for {
		if err := fn(); !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}
