package local

import (
	"path"
	"slices"
	"strings"

	"github.com/mnemo-dev/mnemo/memory"
)

// A Run is what one of this agent's command records says of the run it
// saw, read back from the record (observeCommand wrote it): the command
// line, the command in it that decides what it does, what kind of run it
// was and how it ended as the agent judged it (outcome.go: a piped run
// that failed is a failed run, a run whose end nothing shows only ran).
// Project knowledge (memory/knowledge) adds runs up from these.
type Run struct {
	// Line is the command line as the record's "$ " fact holds it (its
	// first line).
	Line string
	// Command is the primary command of the line, with the wrappers that
	// run it in the project's environment: `go test ./...` of `cd api &&
	// go test ./... 2>&1 | tail -5`, `uv run pytest -q`.
	Command string
	// Runner names the tool that ran: "go test", "make", "pytest".
	Runner string
	Kind   string // RunTest, RunBuild, RunLint or RunProgram
	// Outcome is RunPassed, RunFailed or RunRan (nothing shows how it
	// ended, or it was interrupted).
	Outcome string
	// Error is the telling line of a failed run (its first error, or the
	// failing tests), "" when none was seen.
	Error string
	// Broken: the failure says that the command itself does not work here
	// (not found, no such make target or script), not that what it checked
	// failed.
	Broken bool
}

// The kinds of run.
const (
	RunTest    = "test"
	RunBuild   = "build"
	RunLint    = "lint"
	RunProgram = "run"
)

// How a run ended.
const (
	RunPassed = "passed"
	RunFailed = "failed"
	RunRan    = "ran"
)

// lintRunners are the build-kind runners that check code rather than make
// it.
var lintRunners = wordSet("eslint", "ruff", "mypy", "pyright", "golangci-lint", "staticcheck", "flake8", "pylint",
	"prettier", "gofmt", "black", "rubocop", "shellcheck", "biome", "go vet", "cargo clippy", "cargo fmt", "clippy-driver")

// RunOf reads the run an observation of this agent records: false for a
// record of anything but a test run, a build, a lint or a run of the
// program (a read, an edit, an install, a commit, a record of another
// agent).
func RunOf(o *memory.Observation) (Run, bool) {
	line := ""
	for _, f := range o.Facts {
		if l, ok := strings.CutPrefix(f, "$ "); ok {
			line = strings.TrimSpace(l)
			break
		}
	}
	if line == "" || !isShellTool(o.Tool) {
		return Run{}, false
	}
	segs := parseShell(strings.TrimSuffix(line, " …"))
	p := primaryAt(segs)
	if p < 0 {
		return Run{}, false
	}
	c := segs[p]
	r := Run{Line: line, Command: c.String(), Runner: runnerName(c)}
	if len(c.wrappers) > 0 {
		// How to run it here: `uv run pytest`, not `pytest`.
		r.Command = memory.Clip(strings.Join(c.wrappers, " ")+" "+r.Command, 100)
		r.Runner = strings.Join(c.wrappers, " ") + " " + r.Runner
	}
	switch c.kind {
	case kindTest:
		r.Kind = RunTest
	case kindBuild:
		r.Kind = RunBuild
		if lintRunners[r.Runner] || lintRunners[path.Base(c.words[0])] || slices.ContainsFunc(c.words, func(w string) bool {
			return strings.Contains(w, "lint") || w == "vet" || w == "clippy" || w == "typecheck"
		}) {
			r.Kind = RunLint
		}
	case kindRun:
		r.Kind = RunProgram
	default:
		return Run{}, false
	}
	core := c.String()
	title, narrative := o.Title, strings.ToLower(o.Narrative)
	switch {
	case strings.HasPrefix(title, "Interrupted: "), strings.HasSuffix(title, " (outcome not shown)"),
		strings.HasPrefix(title, "Started ") && strings.HasSuffix(title, " in the background"):
		r.Outcome = RunRan
	case strings.HasPrefix(narrative, strings.ToLower(core)+" failed"):
		// failedCommand's narrative: "<core> failed …".
		r.Outcome = RunFailed
		r.Error = o.Subtitle
		for _, f := range o.Facts {
			if e, ok := strings.CutPrefix(f, "error: "); ok {
				r.Error = e
				break
			}
		}
		if tests := factsWith(o.Facts, "failing test: "); len(tests) > 0 && r.Error == "" {
			r.Error = strings.Join(tests, ", ") + " failed"
		}
		r.Broken = brokenCommand(o, c)
	case title == core+" passes", title == core+" succeeds",
		strings.HasPrefix(title, core+" passes after fixing "), strings.HasPrefix(title, core+" succeeds after fixing "):
		r.Outcome = RunPassed
	case r.Kind == RunProgram && slices.Contains(o.Facts, "exit code 0"):
		r.Outcome = RunPassed
	default:
		r.Outcome = RunRan
	}
	return r, true
}

// factsWith returns what follows prefix in the facts that begin with it.
func factsWith(facts []string, prefix string) []string {
	var out []string
	for _, f := range facts {
		if v, ok := strings.CutPrefix(f, prefix); ok {
			out = append(out, v)
		}
	}
	return out
}

// brokenSigns are what a shell, make, just or a package manager prints
// when the command itself cannot run here.
var brokenSigns = []string{
	"command not found", "no rule to make target", "missing script", "unknown command", "no such command",
	"is not recognized as", "does not contain recipe", "justfile does not contain",
	"task not found", "could not find task", "unknown subcommand", "not a valid command",
	"exit code 127", "exit code 126",
}

// brokenCommand reports whether a failed run's record says the command
// c could not run at all: a sign of brokenSigns, or the program itself
// missing ("./run_tests.sh: No such file or directory", "No module named
// pytest"), not a file or module the code under test asked for.
func brokenCommand(o *memory.Observation, c shellCommand) bool {
	text := strings.ToLower(o.Title + "\n" + o.Subtitle + "\n" + o.Narrative + "\n" + strings.Join(o.Facts, "\n"))
	for _, s := range brokenSigns {
		if strings.Contains(text, s) {
			return true
		}
	}
	prog := strings.ToLower(path.Base(c.words[0]))
	if len(c.words) > 2 && c.words[1] == "-m" {
		prog = strings.ToLower(c.words[2])
	}
	return strings.Contains(text, prog+": no such file or directory") || strings.Contains(text, "no module named "+prog) ||
		strings.Contains(text, "no module named '"+prog+"'")
}
