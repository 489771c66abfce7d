//go:build !race

package hook_test

// raceBuild says the test binary has the race detector (race_test.go).
const raceBuild = false
