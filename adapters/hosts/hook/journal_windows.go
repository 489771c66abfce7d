package hook

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/windows"
)

// journalAppender is a journal file open for appending.
type journalAppender struct{ f *os.File }

// openJournalAppend opens the journal at path for appending, shared for
// renaming (openFile); a missing file is an error matching os.ErrNotExist.
func openJournalAppend(path string) (journalAppender, error) {
	f, err := openFile(path, os.O_WRONLY|os.O_APPEND, 0)
	return journalAppender{f}, err
}

// append writes rec under a shared lock, once it has checked that the
// file is still the one at path, and reports true; it reports false when
// the daemon is rotating the file.
func (a journalAppender) append(path string, rec []byte, sync bool) (bool, error) {
	err := windows.LockFileEx(windows.Handle(a.f.Fd()), windows.LOCKFILE_FAIL_IMMEDIATELY, 0, ^uint32(0), ^uint32(0), new(windows.Overlapped))
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("journal: lock: %w", err)
	}
	if same, err := isFileAt(a.f, path); err != nil || !same {
		return false, err
	}
	if _, err := a.f.Write(rec); err != nil {
		return false, fmt.Errorf("journal: write: %w", err)
	}
	if sync {
		if err := a.f.Sync(); err != nil {
			return false, fmt.Errorf("journal: fsync: %w", err)
		}
	}
	return true, nil
}

func (a journalAppender) close() { a.f.Close() }

// tryLockExclusive takes an exclusive lock on f without waiting, and
// reports whether it got it.
func tryLockExclusive(f *os.File) bool {
	err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, ^uint32(0), ^uint32(0), new(windows.Overlapped))
	return err == nil
}
