//go:build unix

package main_test

import "syscall"

// processAlive reports whether the process pid is still there.
func processAlive(pid int) bool { return syscall.Kill(pid, 0) == nil }
