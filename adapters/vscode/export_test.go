package vscode

import "time"

// Timer is the idle timer, as a test's clock makes it.
type Timer = timer

// SetAfterFunc makes e start its idle timer with afterFunc instead of
// time.AfterFunc. Call it before e serves a connection.
func SetAfterFunc(e *Editor, afterFunc func(d time.Duration, f func()) Timer) {
	e.afterFunc = afterFunc
}

// ChangedRegions is the line diff of the saves: the regions of old and new
// lines that differ, as [oldStart, oldEnd, newStart, newEnd].
func ChangedRegions(old, new []string) [][4]int { return changedRegions(old, new) }
