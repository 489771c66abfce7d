package main

import (
	"path/filepath"
	"testing"
)

// Both knowledge splits load, with the sessions and cases their README
// counts, and every replaced case names the old fact.
func TestKnowledgeSplitsLoad(t *testing.T) {
	for _, c := range []struct {
		split           string
		sessions, cases int
	}{{"dev", 27, 17}, {"test", 37, 18}, {"test2", 22, 14}} {
		s, err := LoadKnowledge(filepath.Join("testdata", "knowledge", c.split))
		if err != nil {
			t.Fatal(err)
		}
		sessions := 0
		for _, p := range s.Projects {
			for _, pl := range p.Payloads {
				if pl.HookEventName == "SessionStart" {
					sessions++
				}
			}
		}
		if sessions != c.sessions || len(s.Cases) != c.cases {
			t.Errorf("%s: %d sessions, %d cases; the README says %d and %d", c.split, sessions, len(s.Cases), c.sessions, c.cases)
		}
	}
}

// A replaced fact is held as words: "npm test passes" is not held by
// "pnpm test passes".
func TestReplacedFactIsHeldAsWords(t *testing.T) {
	for _, c := range []struct {
		text, phrase string
		want         bool
	}{
		{"- #3 · change · pnpm test passes", "npm test passes", false},
		{"- #3 · change · npm test passes", "npm test passes", true},
		{"`npm test` passed 3×", "`npm test` passed", true},
		{"Use SQLite for the local cache of notes", "SQLite for the local cache", true},
		{"pnpm test passes; npm test passes", "npm test passes", true},
	} {
		if got := holdsAny(c.text, [][]string{{c.phrase}}); got != c.want {
			t.Errorf("holdsAny(%q, %q) = %v, want %v", c.text, c.phrase, got, c.want)
		}
	}
}
