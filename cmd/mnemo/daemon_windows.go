package main

import (
	"os"

	"golang.org/x/sys/windows"
)

// stopProcess kills the process pid (TerminateProcess). Windows has no
// signal one process can send another to ask for an orderly exit: a console
// control event reaches only processes of the caller's console, and the
// daemon runs detached from any. Nothing is lost: every write the daemon
// acknowledged is already fsynced (the store's group commit), queued events
// are in the store, and the next daemon replays Badger's log as after any
// crash; the socket file it leaves is cleared by the next Listen.
func stopProcess(pid int) error {
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

// processRunning reports whether the process pid is still there: it can be
// opened and has no exit code yet.
func processRunning(pid int) bool {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return false
	}
	defer windows.CloseHandle(h)
	var code uint32
	return windows.GetExitCodeProcess(h, &code) == nil && code == stillActive
}
