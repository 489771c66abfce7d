package vector_test

import (
	"time"

	"golang.org/x/sys/windows"
)

// processCPU is the CPU time this process has used (user and kernel).
func processCPU() time.Duration {
	var created, exited, kernel, user windows.Filetime
	if err := windows.GetProcessTimes(windows.CurrentProcess(), &created, &exited, &kernel, &user); err != nil {
		return 0
	}
	ticks := func(f windows.Filetime) int64 { return int64(f.HighDateTime)<<32 | int64(f.LowDateTime) } // 100 ns each
	return time.Duration(ticks(kernel)+ticks(user)) * 100
}

// threadCPU is, on Windows, the process's CPU time (x/sys/windows has no
// GetThreadTimes): with GOMAXPROCS=1, close to the thread's.
func threadCPU() time.Duration { return processCPU() }
