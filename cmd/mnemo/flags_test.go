package main

import (
	"io"
	"slices"
	"strings"
	"testing"
)

// A command's options may follow its arguments: they are moved in front
// of them, with their values; global options, unknown words and what
// follows "--" stay where they are.
func TestOptionsMayFollowArguments(t *testing.T) {
	app := newApp(strings.NewReader(""), io.Discard, io.Discard)
	for _, tc := range []struct{ in, want string }{
		{"mnemo search rounding --json", "mnemo search --json rounding"},
		{"mnemo search rounding --limit 3 cart", "mnemo search --limit 3 rounding cart"},
		{"mnemo search rounding --limit=3", "mnemo search --limit=3 rounding"},
		{"mnemo --home /h search rounding --json", "mnemo --home /h search --json rounding"},
		{"mnemo timeline --before 1 --after 1 4", "mnemo timeline --before 1 --after 1 4"},
		{"mnemo timeline 4 --before 1", "mnemo timeline --before 1 4"},
		{"mnemo search -- --json", "mnemo search -- --json"},
		{"mnemo search rounding --nope", "mnemo search rounding --nope"},
		{"mnemo status", "mnemo status"},
	} {
		got := strings.Join(flagsFirst(app, strings.Fields(tc.in)), " ")
		if got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := flagsFirst(app, []string{"mnemo"}); !slices.Equal(got, []string{"mnemo"}) {
		t.Errorf("no command: %q", got)
	}
}
