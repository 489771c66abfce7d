package memory_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/mnemo-dev/mnemo/memory"
)

// Clip counts runes, not bytes, trims, and marks a cut with "…" within
// the limit.
func TestClip(t *testing.T) {
	for _, tt := range []struct {
		in   string
		n    int
		want string
	}{
		{"  short  ", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"one word too many", 10, "one word…"},
		{"naïve café crème", 16, "naïve café crème"}, // 16 runes, 19 bytes
		{"naïve café crème", 8, "naïve c…"},
	} {
		if got := memory.Clip(tt.in, tt.n); got != tt.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

func TestFirstLineAndFirstNonEmpty(t *testing.T) {
	if got := memory.FirstLine("\n  fix the rounding  \nthen the tests"); got != "fix the rounding" {
		t.Errorf("FirstLine = %q", got)
	}
	if got := memory.FirstNonEmpty("", "  ", " the subtitle ", "the narrative"); got != "the subtitle" {
		t.Errorf("FirstNonEmpty = %q", got)
	}
	if got := memory.FirstNonEmpty("", " "); got != "" {
		t.Errorf("FirstNonEmpty of blanks = %q", got)
	}
}

// Dedupe keeps the first n distinct non-empty items in order, for short
// lists and long ones alike (which it counts with a map).
func TestDedupe(t *testing.T) {
	if got := memory.Dedupe([]string{"cart", "", "tax", "cart", "rates", "tax"}, 8); !slices.Equal(got, []string{"cart", "tax", "rates"}) {
		t.Errorf("Dedupe = %q", got)
	}
	var long []string
	for i := range 40 {
		long = append(long, fmt.Sprint(i%5))
	}
	if got := memory.Dedupe(long, 3); !slices.Equal(got, []string{"0", "1", "2"}) {
		t.Errorf("Dedupe of a long list = %q", got)
	}
}
