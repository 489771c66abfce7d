package daemon

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// watchDir returns a channel that receives when a file in dir is written,
// created or renamed into it (inotify), and the function that stops the
// watch. The channel holds one notification at most: a reader catches up
// with all of them at once.
func watchDir(dir string) (<-chan struct{}, func(), error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, func() {}, fmt.Errorf("inotify: %w", err)
	}
	if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_MODIFY|unix.IN_CREATE|unix.IN_MOVED_TO); err != nil {
		unix.Close(fd)
		return nil, func() {}, fmt.Errorf("inotify %s: %w", dir, err)
	}
	// A non-blocking descriptor in an *os.File is read through the
	// runtime's poller, and Close wakes the reader.
	f := os.NewFile(uintptr(fd), "inotify")
	ch := make(chan struct{}, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 64<<10)
		for {
			if _, err := f.Read(buf); err != nil {
				return
			}
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}()
	return ch, func() { f.Close(); <-done }, nil
}
