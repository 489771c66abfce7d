package vscode

import (
	"os/exec"
	"syscall"

	"golang.org/x/sys/windows"
)

// noWindow starts cmd without a console window: the daemon and an editor's
// `mnemo serve` have no console, and Windows would open one for git.
func noWindow(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.CREATE_NO_WINDOW, HideWindow: true}
}
