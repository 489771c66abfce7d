//go:build unix

package hook

import (
	"context"
	"errors"
	"io"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// readFile reads the payload from the file f on this goroutine, each read
// after a poll(2) bounded by wait and ctx (then in.err is errStdinWait). It
// reports false when f's descriptor cannot be had, and the caller reads
// some other way.
func readFile(ctx context.Context, f *os.File, wait time.Time) (input, bool) {
	rc, err := f.SyscallConn()
	if err != nil {
		return input{}, false
	}
	var in input
	cerr := rc.Control(func(fd uintptr) {
		// readPayload reads into its own buffer: one read gets a
		// payload of up to 16 KB, and bigger ones in growing steps.
		w, size, err := readPayload(&pollReader{fd: int(fd), deadline: wait, ctx: ctx})
		in = input{w, size, err}
	})
	return in, cerr == nil
}

// pollReader reads the file descriptor fd, waiting with poll(2) for it to
// be readable until deadline or until ctx ends (checked between reads), so
// that a read never blocks past them. It leaves the descriptor's flags as
// they are.
type pollReader struct {
	fd       int
	deadline time.Time
	ctx      context.Context
}

func (r *pollReader) Read(p []byte) (int, error) {
	for {
		if r.ctx.Err() != nil {
			return 0, errStdinWait
		}
		left := time.Until(r.deadline)
		if left <= 0 {
			return 0, errStdinWait
		}
		fds := []unix.PollFd{{Fd: int32(r.fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int(min(left, 100*time.Millisecond)/time.Millisecond)+1)
		if errors.Is(err, unix.EINTR) || (err == nil && n == 0) {
			continue
		}
		if err != nil {
			return 0, err
		}
		k, err := unix.Read(r.fd, p)
		switch {
		case errors.Is(err, unix.EINTR), errors.Is(err, unix.EAGAIN):
			continue
		case err != nil:
			return 0, err
		case k == 0:
			return 0, io.EOF
		}
		return k, nil
	}
}
