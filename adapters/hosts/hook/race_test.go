//go:build race

package hook_test

// raceEnabled: the race detector is on, and CPU-bound work is many times slower.
const raceEnabled = true
