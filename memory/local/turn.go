package local

import (
	"slices"
	"strconv"
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
// test, a build, the program, or any command with a real error), a
// passing test or build, or a test or build whose outcome is not known;
// 0 otherwise.
func (r runNote) state() int {
	cmd := r.fact("$ ")
	code := r.fact("exit code ")
	if cmd == "" || code == "" {
		return 0
	}
	kind := primaryCommand(strings.TrimSuffix(cmd, " …")).kind
	if _, err := strconv.Atoi(code); err != nil {
		// Not the runner's own exit code (outcome.go's exitFact): how it
		// ended is the fact's last word, "failed" or "passed", or not
		// known.
		switch {
		case strings.HasSuffix(code, " failed"):
			code = "?"
		case strings.HasSuffix(code, " passed"):
			code = "0"
		case kind == kindTest || kind == kindBuild:
			return runUnknown
		default:
			return 0
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
	runFailed  = 1
	runPassed  = 2
	runUnknown = 3 // a test run or build whose outcome nothing shows
)

// lastFailure returns the turn's most recent failed run, unless a passing
// test or build came after it.
func lastFailure(turn []memory.Observation) *runNote {
	r, _ := lastFailureAt(turn)
	return r
}

// A later run whose outcome nothing shows hides a failure of the same
// command (it may pass now), not of another.
func lastFailureAt(turn []memory.Observation) (*runNote, int) {
	var unknown []string
	for i := len(turn) - 1; i >= 0; i-- {
		r := runNote{&turn[i]}
		switch r.state() {
		case runFailed:
			if slices.Contains(unknown, r.command()) {
				return nil, -1
			}
			return &r, i
		case runPassed:
			return nil, -1
		case runUnknown:
			unknown = append(unknown, r.command())
		}
	}
	return nil, -1
}
