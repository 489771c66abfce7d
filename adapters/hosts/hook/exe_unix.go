//go:build unix

package hook

import "os"

// exeSuffix ends the name of an executable file.
const exeSuffix = ""

// executable reports whether fi is a regular file with an execute bit.
func executable(fi os.FileInfo) bool { return fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 }
