//go:build race

package main_test

// raceBuild says the binaries under test (this test binary) are built
// with the race detector, which makes a process start and run several
// times slower: timing bounds are then reported, not asserted.
const raceBuild = true
