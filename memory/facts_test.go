package memory_test

import (
	"testing"

	"github.com/mnemo-dev/mnemo/memory"
)

// The same fact: a command run again with the same outcome is, whatever
// its durations; a read is not when a number in it differs, nor an edit,
// a decision or a saved note ever.
func TestFactKey(t *testing.T) {
	run := func(out string) *memory.Observation {
		return &memory.Observation{Project: "calc", Type: memory.TypeChange, Tool: "Bash", Title: "go test ./... passes",
			Facts: []string{"$ go test ./...", "exit code 0"}, Evidence: "$ go test ./...\n" + out}
	}
	same := [][2]string{
		{"ok  \texample.com/calc\t0.012s", "ok  \texample.com/calc\t1.5s"},
		{"--- PASS: TestAdd (0.00s)", "--- PASS: TestAdd (0.31s)"},
		{"5 passed in 0.11s", "5 passed in 12.30s"},
		{"Time:        1.234 s", "Time:        0.9 s"},
		{"Finished in 35ms", "Finished in 120ms"},
		{"took 2 seconds, 3µs", "took 9 seconds, 7µs"},
	}
	for _, p := range same {
		if a, b := run(p[0]).FactKey(), run(p[1]).FactKey(); a == "" || a != b {
			t.Errorf("%q and %q are not the same fact", p[0], p[1])
		}
	}
	differ := [][2]string{
		{"5 passed in 0.11s", "6 passed in 0.11s"},
		{"ok  \texample.com/calc\t(cached)", "ok  \texample.com/calc\t0.1s"},
		{"v1.2s", "v1.3s"},
		{"retry after 5sx", "retry after 6sx"},
		{"abc12s", "abc13s"},
	}
	for _, p := range differ {
		if run(p[0]).FactKey() == run(p[1]).FactKey() {
			t.Errorf("%q and %q are the same fact", p[0], p[1])
		}
	}
	read := func(doc string) *memory.Observation {
		return &memory.Observation{Project: "calc", Type: memory.TypeDiscovery, Tool: "Read", Title: "Read cfg.go", FilesRead: []string{"cfg.go"},
			Facts: []string{"doc: " + doc}}
	}
	if read("timeout is 5s").FactKey() == read("timeout is 10s").FactKey() {
		t.Error("a read's durations are its content, not noise")
	}
	anchored := read("x")
	anchored.FileAnchors = []memory.FileAnchor{{File: "cfg.go", Hash: "aa"}}
	other := read("x")
	other.FileAnchors = []memory.FileAnchor{{File: "cfg.go", Hash: "bb"}}
	if anchored.FactKey() == other.FactKey() {
		t.Error("a read of other bytes is the same fact")
	}
	for _, o := range []*memory.Observation{
		{Project: "calc", Type: memory.TypeBugfix, Tool: "Edit", Title: "Fixed calc.go", FilesModified: []string{"calc.go"}},
		{Project: "calc", Type: memory.TypeDecision, Title: "Decision: use pnpm"},
		{Project: "calc", Type: memory.TypeNote, Tool: "Bash", Title: "a note", Source: memory.SourceSaved},
	} {
		if k := o.FactKey(); k != "" {
			t.Errorf("%q has a fact key", o.Title)
		}
	}
}

// The subjects a later record supersedes an earlier one on.
func TestSubject(t *testing.T) {
	whole := &memory.Observation{Project: "calc", Type: memory.TypeDiscovery, Tool: "Read", Title: "Read calc.go", FilesRead: []string{"calc.go"}, Facts: []string{"calc.go: 30 lines"}}
	part := &memory.Observation{Project: "calc", Type: memory.TypeDiscovery, Tool: "Read", Title: "Read calc.go", FilesRead: []string{"calc.go"}, Facts: []string{"calc.go: lines 1–10 of 30"}}
	run := &memory.Observation{Project: "calc", Type: memory.TypeDiscovery, Tool: "Bash", Title: "go test fails", Facts: []string{"$ go test ./..."}}
	clipped := &memory.Observation{Project: "calc", Type: memory.TypeDiscovery, Tool: "Bash", Title: "x", Facts: []string{"$ go test ./… …"}}
	if whole.Subject() == "" || part.Subject() != "" || run.Subject() == "" || clipped.Subject() != "" || whole.Subject() == run.Subject() {
		t.Errorf("subjects: whole %q, part %q, run %q, clipped %q", whole.Subject(), part.Subject(), run.Subject(), clipped.Subject())
	}
	id := uint64(0)
	decide := func(text string) *memory.Observation {
		id++
		return &memory.Observation{ID: id, Project: "calc", Type: memory.TypeDecision, Facts: []string{"decided: " + text}}
	}
	for _, tc := range []struct {
		earlier, later string
		want           bool
	}{
		{"Let's use pnpm instead of npm.", "Switch from pnpm to yarn.", true},
		{"Let's use pnpm instead of npm.", "Use yarn rather than pnpm.", true},
		{"Let's use pnpm instead of npm.", "Use bun rather than npm in CI.", false},
		{"We decided to use zap for logging.", "Switch from pnpm to yarn.", false},
		{"We decided to use zap for logging.", "We will no longer use zap.", true},
		{"We decided to use zap for logging.", "Let's use slog.", false},
	} {
		if got := decide(tc.later).ReplacesDecision(decide(tc.earlier)); got != tc.want {
			t.Errorf("%q after %q: supersedes %v, want %v", tc.later, tc.earlier, got, tc.want)
		}
	}
}
