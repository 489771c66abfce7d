//go:build !race

package privacy_test

// slowdown scales the time limits of the linear-time tests.
const slowdown = 1
