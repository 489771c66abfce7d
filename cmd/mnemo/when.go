package main

import (
	"fmt"
	"time"

	"github.com/mnemo-dev/mnemo/memory"
)

// timeFlag reads value, given to the option name, as a time
// (memory.ParseTime; end: it closes a range); the zero time when value is
// empty.
func timeFlag(value, name string, end bool) (time.Time, error) {
	if value == "" {
		return time.Time{}, nil
	}
	t, err := memory.ParseTime(value, end, time.Now())
	if err != nil {
		return time.Time{}, fmt.Errorf("--%s: %w", name, err)
	}
	return t, nil
}
