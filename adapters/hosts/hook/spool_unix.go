//go:build unix

package hook

import (
	"errors"
	"os"
	"syscall"
)

// openFile is os.OpenFile: on Unix a file can be renamed while others
// have it open, which TakeSpool does under the lock.
func openFile(path string, flag int, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(path, flag, perm)
}

// lockFile takes an exclusive flock(2) on f, waiting for it.
func lockFile(f *os.File) error { return flock(f, syscall.LOCK_EX) }

// unlockFile releases lockFile's lock.
func unlockFile(f *os.File) error { return flock(f, syscall.LOCK_UN) }

func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}
