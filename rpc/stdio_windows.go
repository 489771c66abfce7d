package rpc

import (
	"errors"
	"io"
	"os"
	"sync"

	"golang.org/x/sys/windows"
)

// Stdio returns this process's stdin and stdout as one io.ReadWriteCloser.
//
// A Read of a pipe on Windows blocks in ReadFile, which closing the handle
// does not end; Close therefore first cancels the I/O pending on stdin
// (CancelIoEx), which ends such a Read with an error, then closes stdin and
// stdout. After Stdio, do not use os.Stdin.
func Stdio() io.ReadWriteCloser { return &stdio{in: os.Stdin, out: os.Stdout} }

type stdio struct {
	in, out *os.File

	once sync.Once
	err  error
}

func (s *stdio) Read(p []byte) (int, error)  { return s.in.Read(p) }
func (s *stdio) Write(p []byte) (int, error) { return s.out.Write(p) }

// Close cancels a pending Read of stdin, then closes stdin and stdout.
func (s *stdio) Close() error {
	s.once.Do(func() {
		// ERROR_NOT_FOUND: no I/O was pending; any other failure leaves a
		// blocked Read to end when the other end closes the pipe.
		_ = windows.CancelIoEx(windows.Handle(s.in.Fd()), nil)
		s.err = errors.Join(s.in.Close(), s.out.Close())
	})
	return s.err
}
