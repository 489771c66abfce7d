//go:build unix

package observer

import (
	"os/exec"
	"syscall"
)

// ownGroup runs cmd in a process group of its own, and makes a cancel kill
// the whole group: the CLI with anything it started.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}

// killGroup kills what is left of cmd's group after it exited.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// noWindow leaves cmd as it is: only Windows opens a console for a child.
func noWindow(*exec.Cmd) {}
