//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package vector

import (
	"errors"
	"os"
)

// mapFile is not available here: the weights are read into the heap.
func mapFile(*os.File, int64) ([]byte, error) {
	return nil, errors.New("memory mapping is not supported on this platform")
}

func unmapFile([]byte) error { return nil }
