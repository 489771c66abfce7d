package memory_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/memory"
)

// A record's last confirmation is the latest of its making, the same
// fact seen again, a person's keep and a person's correction.
func TestConfirmed(t *testing.T) {
	made := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	for _, c := range []struct {
		name string
		o    memory.Observation
		want time.Time
	}{
		{"made", memory.Observation{Time: made}, made},
		{"seen again", memory.Observation{Time: made, LastSeen: made.Add(3 * day)}, made.Add(3 * day)},
		{"kept", memory.Observation{Time: made, LastSeen: made.Add(day), Kept: &memory.Keep{Time: made.Add(5 * day)}}, made.Add(5 * day)},
		{"corrected", memory.Observation{Time: made, Kept: &memory.Keep{Time: made.Add(day)}, Edits: []memory.Edit{{Time: made.Add(2 * day)}, {Time: made.Add(4 * day)}}}, made.Add(4 * day)},
		{"an older keep", memory.Observation{Time: made, LastSeen: made.Add(6 * day), Kept: &memory.Keep{Time: made.Add(day)}}, made.Add(6 * day)},
	} {
		if got := c.o.Confirmed(); !got.Equal(c.want) {
			t.Errorf("%s: Confirmed() = %v, want %v", c.name, got, c.want)
		}
	}
}

// A record that needs review says so in a listing and in full.
func TestReviewMarks(t *testing.T) {
	if got := memory.StateMark(memory.StateReview); got != " [needs review]" {
		t.Errorf("StateMark = %q", got)
	}
	o := memory.Observation{ID: 4, Type: "bugfix", Title: "Fixed add", State: memory.StateReview, Time: time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)}
	if md := o.Markdown(); !strings.Contains(md, " · needs review: its file changed since, nothing confirmed it since 2026-11-0") || !strings.Contains(md, "(mnemo keep, correct or forget)") {
		t.Errorf("Markdown:\n%s", md)
	}
}
