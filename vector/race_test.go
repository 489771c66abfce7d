//go:build race

package vector_test

// raceEnabled: the race detector is on, and the encoder's arithmetic runs
// ten times slower.
const raceEnabled = true
