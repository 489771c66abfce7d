package main_test

import "golang.org/x/sys/windows"

// processAlive reports whether the process pid is still there: it can be
// opened and has no exit code yet (STILL_ACTIVE, 259).
func processAlive(pid int) bool {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return false
	}
	defer windows.CloseHandle(h)
	var code uint32
	return windows.GetExitCodeProcess(h, &code) == nil && code == 259
}
