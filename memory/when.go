package memory

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// TimeForms names the times ParseTime reads, in the words that help and
// errors use.
const TimeForms = "today, yesterday, an age (90m, 36h, 7d, 2w), a date (2026-05-01), a date and time (2026-05-01 09:30) or RFC 3339 (2026-05-01T09:00:00Z)"

// ageRE reads an age (ParseTime). Like replacedRE, compiled on first use
// and reached only from a function, so that the hook does not link
// package regexp.
func ageRE() *regexp.Regexp {
	age.once.Do(func() { age.re = regexp.MustCompile(`^(\d+)\s*(m|min|h|d|w)$`) })
	return age.re
}

var age struct {
	once sync.Once
	re   *regexp.Regexp
}

// localLayouts are the dates and times ParseTime reads in now's zone.
var localLayouts = []string{"2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02 15:04"}

// ParseTime reads a time as people type it, where a search or a timeline
// takes one (the command line, the MCP tools): RFC 3339; a date and time
// or a date in now's zone; today or yesterday; an age before now (90m,
// 36h, 7d, 2w). A day (a date, today, yesterday) is its first instant, or
// its last when end is true (the end of a range: "until 2026-05-01" takes
// in that whole day). The error quotes s and names TimeForms.
func ParseTime(s string, end bool, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	day := func(t time.Time) time.Time {
		start := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, t.Location())
		if end {
			return start.AddDate(0, 0, 1).Add(-time.Nanosecond)
		}
		return start
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	for _, layout := range localLayouts {
		if t, err := time.ParseInLocation(layout, s, now.Location()); err == nil {
			return t, nil
		}
	}
	if t, err := time.ParseInLocation(time.DateOnly, s, now.Location()); err == nil {
		return day(t), nil
	}
	switch strings.ToLower(s) {
	case "now":
		return now, nil
	case "today":
		return day(now), nil
	case "yesterday":
		return day(now.AddDate(0, 0, -1)), nil
	}
	if m := ageRE().FindStringSubmatch(strings.ToLower(s)); m != nil {
		n, err := strconv.Atoi(m[1])
		if err == nil && n <= 100_000 {
			switch m[2] {
			case "d":
				return now.AddDate(0, 0, -n), nil
			case "w":
				return now.AddDate(0, 0, -7*n), nil
			}
			unit := map[string]time.Duration{"m": time.Minute, "min": time.Minute, "h": time.Hour}[m[2]]
			return now.Add(-time.Duration(n) * unit), nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a time: use %s", s, TimeForms)
}
