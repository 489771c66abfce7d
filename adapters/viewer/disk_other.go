//go:build !unix

package viewer

import "io/fs"

// diskBytes is the file's size: os.Stat does not say what a file takes on
// disk outside Unix.
func diskBytes(fi fs.FileInfo) int64 { return fi.Size() }
