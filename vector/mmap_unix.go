//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package vector

import (
	"os"
	"syscall"
)

// mapFile maps the first size bytes of f read-only and shared: the pages
// are the page cache's, never copied into the process.
func mapFile(f *os.File, size int64) ([]byte, error) {
	if size == 0 || int64(int(size)) != size {
		return nil, syscall.EINVAL
	}
	return syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
}

// unmapFile releases a mapping of mapFile.
func unmapFile(b []byte) error { return syscall.Munmap(b) }
