//go:build unix

package main

import "syscall"

// stopProcess sends the process pid SIGTERM: the daemon then stops
// accepting, finishes what it has under way and closes its store.
func stopProcess(pid int) error { return syscall.Kill(pid, syscall.SIGTERM) }

// processRunning reports whether the process pid is still there.
func processRunning(pid int) bool { return syscall.Kill(pid, 0) == nil }
