package local_test

import (
	"strings"
	"testing"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/local"
)

// RunOf reads back what the agent recorded of every recorded real run
// (testdata/outcomes, both splits): the same outcome the record states (a
// failed run read as failed, never as passed, whatever the shell's exit
// code; a passing run never as failed), the run's primary command, and the
// kind of run.
func TestRunOfReadsTheRecordedOutcome(t *testing.T) {
	for _, split := range []string{"dev", "heldout"} {
		for _, c := range loadOutcomeCases(t, split) {
			t.Run(split+"/"+c.name, func(t *testing.T) {
				turns := replay(t, localSession{name: c.name, events: c.payloads()})
				o := turns[0].observations[0]
				r, ok := local.RunOf(&o)
				if !ok {
					t.Fatalf("not read as a run: %s %q", o.Title, o.Facts)
				}
				want := local.RunRan
				switch {
				case saysFailed(o):
					want = local.RunFailed
				case saysPassed(o) && o.Type != memory.TypeDiscovery:
					want = local.RunPassed
				}
				if r.Outcome != want {
					t.Errorf("%s (label %s): read as %s, the record says %s: %s %q", c.command, c.label, r.Outcome, want, o.Title, o.Facts)
				}
				if c.label == "fail" && r.Outcome == local.RunPassed || c.label == "pass" && r.Outcome == local.RunFailed {
					t.Errorf("%s (label %s) read as %s", c.command, c.label, r.Outcome)
				}
				if r.Command == "" || !strings.Contains(c.command, strings.Fields(r.Command)[0]) {
					t.Errorf("%s: primary command %q", c.command, r.Command)
				}
				if r.Kind == "" {
					t.Errorf("%s: no kind", c.command)
				}
			})
		}
	}
}

// A command that cannot run here is broken; a test that fails is not.
func TestRunOfTellsABrokenCommand(t *testing.T) {
	cases := []struct {
		command, err string
		broken       bool
	}{
		{"make test", "Exit code 2\nmake: *** No rule to make target 'test'.  Stop.", true},
		{"./run_tests.sh", "Exit code 127\n/bin/bash: ./run_tests.sh: No such file or directory", true},
		{"python -m pytest", "Exit code 1\n/usr/bin/python: No module named pytest", true},
		{"npm run lint", "Exit code 1\nnpm error Missing script: \"lint\"", true},
		{"go test ./...", "Exit code 1\n--- FAIL: TestOpen (0.00s)\n    open_test.go:12: open testdata/x: no such file or directory\nFAIL", false},
		{"python -m pytest", "Exit code 1\nE   ModuleNotFoundError: No module named 'app.utils'\n1 failed in 0.1s", false},
	}
	for _, c := range cases {
		ev := hookPayload{HookEventName: "PostToolUseFailure", Cwd: "/src/app", ToolName: "Bash", ToolUseID: "toolu_1", Error: c.err}
		ev.ToolInput = []byte(`{"command":"` + strings.ReplaceAll(c.command, `"`, `\"`) + `"}`)
		turns := replay(t, localSession{name: "broken", events: []hookPayload{
			{HookEventName: "UserPromptSubmit", Cwd: "/src/app", Prompt: "run the tests"}, ev, {HookEventName: "Stop", Cwd: "/src/app"},
		}})
		o := turns[0].observations[0]
		r, ok := local.RunOf(&o)
		if !ok || r.Outcome != local.RunFailed || r.Broken != c.broken {
			t.Errorf("%s / %q: read %+v (ok %v), want failed, broken %v; record %s %q", c.command, c.err, r, ok, c.broken, o.Title, o.Facts)
		}
	}
}
