//go:build unix

package hook_test

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// stopChildren sends SIGTERM to each child daemon of home that still runs
// and waits for it to be gone. A child that exited early (one that lost the
// race for the socket) left its pid behind, and pids are reused quickly
// (pid_max is 32768 on many machines): only a process whose command line is
// still that child's is signalled, never another program's.
func stopChildren(t *testing.T, home string) {
	for _, pid := range childPIDs(t, home) {
		if !isChild(pid, home) {
			continue
		}
		_ = syscall.Kill(pid, syscall.SIGTERM)
		deadline := time.Now().Add(5 * time.Second)
		for isChild(pid, home) {
			if time.Now().After(deadline) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
				t.Errorf("child daemon %d ignored SIGTERM", pid)
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// isChild reports whether pid is a child daemon of home that has not been
// reaped: its command line names this test binary and --home home.
func isChild(pid int, home string) bool {
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || len(cmdline) == 0 { // gone, or a zombie
		return false
	}
	exe, err := os.Executable()
	if err != nil {
		return false
	}
	args := strings.Split(strings.TrimSuffix(string(cmdline), "\x00"), "\x00")
	if args[0] != exe {
		return false
	}
	for i, a := range args {
		if a == "--home" && i+1 < len(args) && args[i+1] == home {
			return true
		}
	}
	return false
}

// holdShared opens the journal file at path for appending and takes its
// shared lock, as a hook does before its write; closing the file lets go.
func holdShared(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH); err != nil {
		t.Fatal(err)
	}
	return f
}
