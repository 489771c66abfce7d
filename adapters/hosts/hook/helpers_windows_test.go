package hook_test

import (
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/windows"
)

// stopChildren kills each child daemon of home that still runs: Windows
// cannot send another process a SIGTERM. Process ids are reused, so only a
// process whose image is this test binary is killed.
func stopChildren(t *testing.T, home string) {
	exe, err := os.Executable()
	if err != nil {
		t.Error(err)
		return
	}
	for _, pid := range childPIDs(t, home) {
		h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION|windows.PROCESS_TERMINATE|windows.SYNCHRONIZE, false, uint32(pid))
		if err != nil {
			continue // gone
		}
		buf := make([]uint16, windows.MAX_LONG_PATH)
		n := uint32(len(buf))
		if windows.QueryFullProcessImageName(h, 0, &buf[0], &n) == nil && strings.EqualFold(windows.UTF16ToString(buf[:n]), exe) {
			_ = windows.TerminateProcess(h, 1)
			_, _ = windows.WaitForSingleObject(h, 5000)
		}
		windows.CloseHandle(h)
	}
}

// holdShared opens the journal file at path for appending and takes its
// shared lock, as a hook does before its write; closing the file lets go.
func holdShared(t *testing.T, path string) *os.File {
	t.Helper()
	name, _ := windows.UTF16PtrFromString(path)
	h, err := windows.CreateFile(name, windows.FILE_APPEND_DATA|windows.SYNCHRONIZE,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil, windows.OPEN_EXISTING, windows.FILE_ATTRIBUTE_NORMAL, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := windows.LockFileEx(h, 0, 0, ^uint32(0), ^uint32(0), new(windows.Overlapped)); err != nil {
		t.Fatal(err)
	}
	return os.NewFile(uintptr(h), path)
}
