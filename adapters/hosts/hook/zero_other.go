//go:build !linux

package hook

import "os"

// zeroRange zeroes n bytes of f at off by writing zeros over them.
func zeroRange(f *os.File, off, n int64) error { return writeZeros(f, off, n) }
