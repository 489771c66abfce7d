//go:build unix

package rpc

import (
	"errors"
	"io"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// Stdio returns this process's stdin and stdout as one io.ReadWriteCloser
// whose Close really ends a pending Read.
//
// With a plain os.Stdin, a Read blocked in the read(2) syscall cannot be
// interrupted, so jsonrpc2's Conn.Close (and Forward) hang until the peer
// closes the pipe. Stdio sets O_NONBLOCK on fd 0 and wraps it with
// os.NewFile, which registers it with the runtime poller: Read still blocks
// the goroutine, but Close wakes it with os.ErrClosed.
//
// Close closes stdin and stdout, then restores the original blocking mode of
// stdin's open file description (which a shell may share). After Stdio, do
// not use os.Stdin. If fd 0 cannot be made non-blocking, the plain stdin is
// used: Close then still closes both but cannot interrupt a blocked Read.
func Stdio() io.ReadWriteCloser {
	s := &stdio{in: os.Stdin, out: os.Stdout, restoreFD: -1}
	const fd = 0
	flags, err := unix.FcntlInt(fd, unix.F_GETFL, 0)
	if err != nil {
		return s
	}
	if flags&unix.O_NONBLOCK != 0 {
		// Already non-blocking when the process started: os.Stdin is
		// registered with the poller, and a second registration would fail.
		return s
	}
	// Keep a second descriptor of the same open file description, to put the
	// flag back after fd 0 is closed.
	dup, err := unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return s
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(dup)
		return s
	}
	s.restoreFD, s.flags = dup, flags
	s.in = os.NewFile(fd, "stdin")
	return s
}

type stdio struct {
	in, out   *os.File
	restoreFD int // a dup of fd 0 to restore flags through, or -1
	flags     int // fd 0's original file status flags

	once sync.Once
	err  error
}

func (s *stdio) Read(p []byte) (int, error)  { return s.in.Read(p) }
func (s *stdio) Write(p []byte) (int, error) { return s.out.Write(p) }

// Close closes stdin and stdout; a Read blocked in another goroutine returns
// os.ErrClosed. Then it restores stdin's blocking mode.
func (s *stdio) Close() error {
	s.once.Do(func() {
		s.err = errors.Join(s.in.Close(), s.out.Close())
		if s.restoreFD >= 0 {
			_, _ = unix.FcntlInt(uintptr(s.restoreFD), unix.F_SETFL, s.flags)
			unix.Close(s.restoreFD)
		}
	})
	return s.err
}
