package main

import "testing"

// A mistyped command gets the closest one, when one is close.
func TestClosest(t *testing.T) {
	names := []string{"search", "sessions", "setup", "status", "serve", "get", "team"}
	for _, tc := range []struct{ in, want string }{
		{"serach", "search"}, {"sesions", "sessions"}, {"stat", "status"}, {"gte", "get"},
		{"SEARCH", "search"}, {"xyzzy", ""}, {"se", ""}, {"teams", "team"},
	} {
		if got := closest(tc.in, names); got != tc.want {
			t.Errorf("closest(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
