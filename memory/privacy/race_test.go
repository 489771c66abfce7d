//go:build race

package privacy_test

// slowdown scales the time limits of the linear-time tests: the race
// detector makes byte loops several times slower.
const slowdown = 10
