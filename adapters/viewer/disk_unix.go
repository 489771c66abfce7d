//go:build unix

package viewer

import (
	"io/fs"
	"syscall"
)

// diskBytes is what the file takes on disk: its allocated blocks (as du
// counts them), not its apparent size.
func diskBytes(fi fs.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int64(st.Blocks) * 512
	}
	return fi.Size()
}
