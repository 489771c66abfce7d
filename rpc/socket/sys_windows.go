package socket

import (
	"errors"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/windows"
)

// tryLock takes an exclusive LockFileEx lock on all of f if nobody holds
// one, and reports false when another handle does. The lock goes with the
// handle's close (or the process's end).
func tryLock(f *os.File) (bool, error) {
	err := windows.LockFileEx(windows.Handle(f.Fd()),
		windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, ^uint32(0), ^uint32(0), new(windows.Overlapped))
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
		return false, nil
	}
	return err == nil, err
}

// unlock releases tryLock's lock.
func unlock(f *os.File) error {
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, ^uint32(0), ^uint32(0), new(windows.Overlapped))
}

// waitLock takes an exclusive LockFileEx lock on all of f, waiting as long
// as another handle holds one.
func waitLock(f *os.File) error {
	return windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK, 0, ^uint32(0), ^uint32(0), new(windows.Overlapped))
}

// detach starts cmd with no console (DETACHED_PROCESS: no window opens, and
// the closing of the caller's console does not reach it) in a process group
// of its own (CREATE_NEW_PROCESS_GROUP: a Ctrl+C in the caller's console is
// not delivered to it).
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{
		CreationFlags: windows.CREATE_NEW_PROCESS_GROUP | windows.DETACHED_PROCESS,
		HideWindow:    true,
	}
}

// PeerGone reports an I/O error that says the other end closed or reset
// the connection: Winsock's codes on the socket, the pipe's on stdio.
func PeerGone(err error) bool {
	return errors.Is(err, windows.WSAECONNRESET) || errors.Is(err, windows.WSAECONNABORTED) ||
		errors.Is(err, windows.ERROR_BROKEN_PIPE) || errors.Is(err, windows.ERROR_NO_DATA)
}

// Terminate ends the process pid (TerminateProcess), as `mnemo daemon
// stop` does on Windows: no signal asks a detached process for an orderly
// exit, and nothing is lost (every write the daemon acknowledged is held
// by the system; the next daemon replays Badger's log).
func Terminate(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	defer p.Release()
	return p.Kill()
}

// ProcessAlive reports whether the process pid is still there: it can be opened
// and has no exit code yet (STILL_ACTIVE, 259).
func ProcessAlive(pid int) bool {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return false
	}
	defer windows.CloseHandle(h)
	var code uint32
	return windows.GetExitCodeProcess(h, &code) == nil && code == 259
}

// lockHeld reports whether another handle holds an exclusive lock on the
// file at path: it takes a shared one without waiting and lets go at once.
// A missing file is not held.
func lockHeld(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	err = windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_FAIL_IMMEDIATELY, 0, ^uint32(0), ^uint32(0), new(windows.Overlapped))
	return errors.Is(err, windows.ERROR_LOCK_VIOLATION)
}
