//go:build unix

package socket

import (
	"errors"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// tryLock takes an exclusive flock(2) on f if nobody holds one, and reports
// false when another open file does. The lock goes with the file's close.
func tryLock(f *os.File) (bool, error) {
	err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}

// unlock releases tryLock's lock.
func unlock(f *os.File) error { return unix.Flock(int(f.Fd()), unix.LOCK_UN) }

// waitLock takes an exclusive flock(2) on f, waiting as long as another
// open file holds one.
func waitLock(f *os.File) error {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// detach starts cmd in a session of its own, so that the end of the
// caller's session (a terminal closing, a hook's process group killed) does
// not reach the daemon.
func detach(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} }

// PeerGone reports an I/O error that says the other end closed or reset
// the connection.
func PeerGone(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// Terminate asks the process pid to exit: SIGTERM, which the daemon
// answers with an orderly stop (it stops accepting, lets queued work
// finish for a bounded time and closes its store).
func Terminate(pid int) error { return syscall.Kill(pid, syscall.SIGTERM) }

// ProcessAlive reports whether the process pid is still there.
func ProcessAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// lockHeld reports whether someone holds an exclusive flock on the file at
// path: it takes a shared one without waiting and lets go at once. A
// missing file is not held.
func lockHeld(path string) bool {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	for {
		err = unix.Flock(fd, unix.LOCK_SH|unix.LOCK_NB)
		if !errors.Is(err, unix.EINTR) {
			return errors.Is(err, unix.EWOULDBLOCK)
		}
	}
}
