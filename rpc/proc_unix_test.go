//go:build unix

package rpc_test

import "syscall"

// terminate asks the process pid to exit (SIGTERM).
func terminate(pid int) error { return syscall.Kill(pid, syscall.SIGTERM) }

// running reports whether the process pid is still there.
func running(pid int) bool { return syscall.Kill(pid, 0) == nil }
