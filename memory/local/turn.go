package local

import (
	"strings"

	"github.com/mnemo-dev/mnemo/memory"
)

// A runNote is an observation of a command with its exit code in its facts.
type runNote struct{ *memory.Observation }

func (r runNote) fact(prefix string) string {
	for _, f := range r.Facts {
		if v, ok := strings.CutPrefix(f, prefix); ok {
			return v
		}
	}
	return ""
}

func (r runNote) command() string {
	return primaryCommand(strings.TrimSuffix(r.fact("$ "), " …")).String()
}

// cause names what failed: the failing tests, or the command.
func (r runNote) cause() string {
	var names []string
	for _, f := range r.Facts {
		if v, ok := strings.CutPrefix(f, "failing test: "); ok {
			names = append(names, v)
		}
	}
	if len(names) > 0 {
		return listMore(names, 2, len(names))
	}
	return r.command()
}

func (r runNote) errorMessage() string { return r.fact("error: ") }

// state reports whether the observation is a failed run that counts (a
// test, a build, the program, or any command with a real error) or a
// passing test or build; 0 otherwise.
func (r runNote) state() int {
	cmd := r.fact("$ ")
	code := r.fact("exit code ")
	if cmd == "" || code == "" {
		return 0
	}
	kind := primaryCommand(strings.TrimSuffix(cmd, " …")).kind
	if rest, ok := strings.CutPrefix(code, unknownExit+" "); ok {
		// Read from the output: "failed" or "passed".
		code = "0"
		if rest == "failed" {
			code = "?"
		}
	}
	if code != "0" {
		if kind == kindTest || kind == kindBuild || kind == kindRun || errorScore(r.errorMessage()) >= 80 {
			return runFailed
		}
		return 0
	}
	if kind == kindTest || kind == kindBuild {
		return runPassed
	}
	return 0
}

const (
	runFailed = 1
	runPassed = 2
)

// lastFailure returns the turn's most recent failed run, unless a passing
// test or build came after it.
func lastFailure(turn []memory.Observation) *runNote {
	r, _ := lastFailureAt(turn)
	return r
}

func lastFailureAt(turn []memory.Observation) (*runNote, int) {
	for i := len(turn) - 1; i >= 0; i-- {
		r := runNote{&turn[i]}
		switch r.state() {
		case runFailed:
			return &r, i
		case runPassed:
			return nil, -1
		}
	}
	return nil, -1
}
