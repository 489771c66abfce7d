// Package cputime reads the CPU time the current process has used, for
// tests that bound how much work something does: unlike the time on the
// clock, it does not grow when other programs share the machine's cores.
// It imports only the standard library.
package cputime

import "time"

// Process is the CPU time this process has used so far, user and system
// (kernel) together; 0 where it cannot be read. What one call costs is the
// difference of two readings, which counts every thread of the process: a
// test that reads it runs alone (not in parallel with others) and allows
// for the collector's share.
func Process() time.Duration { return process() }
