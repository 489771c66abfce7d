package memory_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/memory"
)

// Times read as people type them, against a fixed now in a zone that is
// not UTC: dates and midnights are in now's zone, a day closing a range
// ends at its last instant, and what cannot be read names the forms.
func TestParseTime(t *testing.T) {
	zone := time.FixedZone("CET", 3600)
	now := time.Date(2026, 3, 10, 15, 4, 5, 0, zone)
	for _, tc := range []struct {
		in   string
		end  bool
		want time.Time
	}{
		{"2026-05-01T09:00:00Z", false, time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)},
		{"2026-05-01T09:00:00+02:00", true, time.Date(2026, 5, 1, 7, 0, 0, 0, time.UTC)},
		{"2026-01-15 10:30", false, time.Date(2026, 1, 15, 10, 30, 0, 0, zone)},
		{" 2026-01-15T10:30:07 ", true, time.Date(2026, 1, 15, 10, 30, 7, 0, zone)},
		{"2026-01-15", false, time.Date(2026, 1, 15, 0, 0, 0, 0, zone)},
		{"2026-01-15", true, time.Date(2026, 1, 16, 0, 0, 0, 0, zone).Add(-time.Nanosecond)},
		{"today", false, time.Date(2026, 3, 10, 0, 0, 0, 0, zone)},
		{"today", true, time.Date(2026, 3, 11, 0, 0, 0, 0, zone).Add(-time.Nanosecond)},
		{"Yesterday", false, time.Date(2026, 3, 9, 0, 0, 0, 0, zone)},
		{"now", true, now},
		{"90m", false, now.Add(-90 * time.Minute)},
		{"36h", false, now.Add(-36 * time.Hour)},
		{"3d", false, time.Date(2026, 3, 7, 15, 4, 5, 0, zone)},
		{"2w", true, time.Date(2026, 2, 24, 15, 4, 5, 0, zone)},
	} {
		got, err := memory.ParseTime(tc.in, tc.end, now)
		if err != nil || !got.Equal(tc.want) {
			t.Errorf("ParseTime(%q, end %t) = %v, %v; want %v", tc.in, tc.end, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "last tuesday", "7 days", "3x", "-3d", "d", "2026-13-01", "15/01/2026"} {
		_, err := memory.ParseTime(bad, false, now)
		if err == nil || !strings.Contains(err.Error(), memory.TimeForms) {
			t.Errorf("ParseTime(%q): %v; want an error naming the forms", bad, err)
		}
	}
}
