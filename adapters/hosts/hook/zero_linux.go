package hook

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// zeroRange zeroes n bytes of f at off: it punches a hole (the file
// system frees the blocks; reads give zeros), or writes zeros where the
// file system cannot.
func zeroRange(f *os.File, off, n int64) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) {
		ferr = ignoringEINTR(func() error {
			return unix.Fallocate(int(fd), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, off, n)
		})
	}); err != nil {
		return err
	}
	if errors.Is(ferr, unix.EOPNOTSUPP) || errors.Is(ferr, unix.ENOSYS) {
		return writeZeros(f, off, n)
	}
	return ferr
}
