package hook

import "os"

// exeSuffix ends the name of an executable file.
const exeSuffix = ".exe"

// executable reports whether fi is a regular file: Windows has no execute
// bit, and the name's .exe says the rest.
func executable(fi os.FileInfo) bool { return fi.Mode().IsRegular() }
