//go:build !race

package main_test

// raceBuild says the binaries under test are built with the race
// detector (see race_test.go).
const raceBuild = false
