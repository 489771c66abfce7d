//go:build !unix

package observer

import "os/exec"

// ownGroup leaves cmd as it is: a cancel kills the CLI only.
func ownGroup(cmd *exec.Cmd) {}

// killGroup has no group to kill.
func killGroup(cmd *exec.Cmd) {}
