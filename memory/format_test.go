package memory_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/memory"
)

// A record shows what became of it: superseded (with the newer's id),
// what it supersedes, and how many times the same fact was seen and when
// last; a row shows the same in brackets.
func TestRecordsShowTheirStateAndCount(t *testing.T) {
	last := time.Date(2026, 11, 28, 9, 30, 0, 0, time.Local)
	o := memory.Observation{ID: 7, Type: memory.TypeChange, Title: "go test ./... passes", State: memory.StateSuperseded, SupersededBy: 9,
		Supersedes: []uint64{3}, Count: 4, Time: last.Add(-48 * time.Hour), LastSeen: last}
	got := o.Markdown()
	for _, want := range []string{"superseded by #9", "supersedes #3", "seen 4 times, last 2026-11-28 09:30"} {
		if !strings.Contains(got, want) {
			t.Errorf("the record does not say %q:\n%s", want, got)
		}
	}
	if m := memory.StateMark(memory.StateSuperseded) + memory.SeenMark(4, last); m != " [superseded] (seen 4×, last 2026-11-28 09:30)" {
		t.Errorf("row mark %q", m)
	}
	if m := memory.SeenMark(1, last); m != "" {
		t.Errorf("a fact seen once is marked %q", m)
	}
}
