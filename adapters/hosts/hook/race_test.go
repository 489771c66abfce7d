//go:build race

package hook_test

// raceBuild: the race detector makes byte loops ten times slower; the
// big-event test then reads a tenth of its payload and reports its time.
const raceBuild = true
