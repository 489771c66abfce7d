//go:build unix

package vscode

import "os/exec"

// noWindow leaves cmd as it is: only Windows opens a console for a child.
func noWindow(*exec.Cmd) {}
