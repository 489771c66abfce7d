package store_test

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
