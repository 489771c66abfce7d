package observer

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"

	"golang.org/x/sys/windows"
)

// ownGroup starts cmd without a console window (the daemon has none, and
// Windows would open one for the CLI) in a process group of its own, and
// makes a cancel end the CLI's whole process tree (taskkill /T /F: the CLI
// with anything it started), or the CLI alone when taskkill fails.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{
		CreationFlags: windows.CREATE_NO_WINDOW | windows.CREATE_NEW_PROCESS_GROUP,
		HideWindow:    true,
	}
	cmd.Cancel = func() error {
		kill := exec.Command(taskkill(), "/T", "/F", "/PID", strconv.Itoa(cmd.Process.Pid))
		noWindow(kill)
		if err := kill.Run(); err != nil {
			return cmd.Process.Kill()
		}
		return nil
	}
}

// killGroup does nothing: once the CLI has exited, Windows no longer links
// what it started to it, so nothing is left to find by its process id.
func killGroup(*exec.Cmd) {}

// noWindow starts cmd without a console window.
func noWindow(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.CREATE_NO_WINDOW, HideWindow: true}
}

// taskkill is Windows's taskkill.exe, by its full path when SystemRoot is
// known (not whatever a PATH holds first).
func taskkill() string {
	if root := os.Getenv("SystemRoot"); root != "" {
		return filepath.Join(root, "System32", "taskkill.exe")
	}
	return "taskkill.exe"
}
