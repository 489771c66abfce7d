package rpc_test

import (
	"os"

	"golang.org/x/sys/windows"
)

// terminate ends the process pid: Windows cannot send another process a
// SIGTERM, so it is killed.
func terminate(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	defer p.Release()
	return p.Kill()
}

// stillActive is the exit code of a process that has not exited
// (STILL_ACTIVE).
const stillActive = 259

// running reports whether the process pid is still there: it can be opened
// and has no exit code yet.
func running(pid int) bool {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return false
	}
	defer windows.CloseHandle(h)
	var code uint32
	return windows.GetExitCodeProcess(h, &code) == nil && code == stillActive
}
