package cputime_test

import (
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/memory/internal/cputime"
)

// A sleep does not show in Process; work on the CPU does, however busy
// the machine is (the loop ends when its CPU time shows, or fails after
// ten seconds on the clock).
func TestProcess(t *testing.T) {
	start := cputime.Process()
	if start <= 0 {
		t.Fatalf("Process() = %v at the start of a test", start)
	}
	time.Sleep(100 * time.Millisecond)
	slept := cputime.Process() - start
	if slept > 50*time.Millisecond {
		t.Errorf("a sleep of 100 ms counted %v of CPU", slept)
	}
	x, began := 1.0, time.Now()
	for cputime.Process()-start-slept < 20*time.Millisecond {
		for range 100_000 {
			x = x*1.0000001 + 1e-9
		}
		if time.Since(began) > 10*time.Second {
			t.Fatalf("ten seconds of arithmetic counted %v of CPU (%g)", cputime.Process()-start-slept, x)
		}
	}
	t.Logf("a sleep of 100 ms: %v of CPU; 20 ms of CPU took %v on the clock", slept, time.Since(began))
}
