package memory_test

import (
	"runtime"
	"testing"

	"github.com/mnemo-dev/mnemo/memory"
)

// A transcript written on Windows and read here (a back-fill of another
// machine's sessions) names its project by its own folder, and its files
// relative to it, whatever the slashes and the drive letter's case.
func TestForeignWindowsPaths(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows paths are this system's own here")
	}
	for _, tc := range []struct{ cwd, want string }{
		{`C:\Users\dev\code\will-it-rain`, "will-it-rain"},
		{`c:\Users\dev\code\will-it-rain\`, "will-it-rain"},
		{`D:/work/will-it-rain`, "will-it-rain"},
		{`\\server\share\will-it-rain`, "will-it-rain"},
	} {
		if got := memory.ProjectOf(tc.cwd); got != tc.want {
			t.Errorf("ProjectOf(%s) = %q, want %q", tc.cwd, got, tc.want)
		}
	}
	const cwd = `C:\Users\dev\code\will-it-rain`
	for _, tc := range []struct{ p, want string }{
		{`C:\Users\dev\code\will-it-rain\src\forecast.py`, "src/forecast.py"},
		{`c:/users/dev/code/will-it-rain/src/forecast.py`, "src/forecast.py"},
		{`src\forecast.py`, "src/forecast.py"},
		{cwd, "."},
		{`C:\Users\dev\.claude\settings.json`, "C:/Users/dev/.claude/settings.json"},
	} {
		if got := memory.RelPath(cwd, tc.p); got != tc.want {
			t.Errorf("RelPath(%s) = %q, want %q", tc.p, got, tc.want)
		}
	}
	// A POSIX path is left as it was.
	if got := memory.RelPath("/home/dev/p", "/home/dev/p/a.go"); got != "a.go" {
		t.Errorf("RelPath of a POSIX path = %q", got)
	}
}
