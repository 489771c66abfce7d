package local_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/local"
)

// A host that gives a command's output without its exit code (Codex CLI,
// VS Code, Cursor): the output tells a failure, a pass is claimed only
// where the output shows one, and no exit code is made up.
func TestCommandWithoutExitCode(t *testing.T) {
	for _, tc := range []struct {
		name, command, output string
		typ, title            string
		fact                  string // a fact the observation must have; "" for none about the exit
	}{
		{"a traceback", "python3 test_calc.py", "Traceback (most recent call last):\n  File \"test_calc.py\", line 4\nAssertionError: add(2, 3) should be 5, got -1\n",
			memory.TypeDiscovery, "python3 test_calc.py fails: AssertionError: add(2, 3) should be 5, got -1", "exit code not given; the output shows it failed"},
		{"a failing Go test", "go test ./billing/", "--- FAIL: TestRoundHalfEven (0.00s)\n    rounding_test.go:12: got 0.38, want 0.37\nFAIL\nFAIL\tbilling\t0.01s\n",
			memory.TypeDiscovery, "TestRoundHalfEven fails", "exit code not given; the output shows it failed"},
		{"a passing Go test", "go test ./billing/", "ok  \tbilling\t0.01s\n",
			memory.TypeChange, "go test ./billing/ passes", "exit code not given; the output shows it passed"},
		{"a test run that says nothing", "go test ./billing/", "",
			memory.TypeDiscovery, "go test ./billing/ (outcome not shown)", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, _ := json.Marshal(map[string]any{"stdout": tc.output, "exitUnknown": true})
			in, _ := json.Marshal(map[string]string{"command": tc.command})
			res, err := local.Agent{}.Run(context.Background(), memory.AgentInput{NewID: "m", Request: "fix the tests",
				Events: []memory.Event{{Kind: memory.EventTool, Cwd: "/src", ToolName: "Bash", ToolInput: in, ToolResponse: out}}})
			if err != nil || len(res.Observations) != 1 {
				t.Fatalf("%d observations (%v)", len(res.Observations), err)
			}
			o := res.Observations[0]
			if o.Type != tc.typ || !strings.HasPrefix(o.Title, tc.title) {
				t.Errorf("%s · %s; want %s · %s…", o.Type, o.Title, tc.typ, tc.title)
			}
			facts := strings.Join(o.Facts, "\n")
			if strings.Contains(facts, "exit code 0") || strings.Contains(facts, "exit code 1") {
				t.Errorf("an exit code made up: %q", facts)
			}
			if tc.fact != "" && !strings.Contains(facts, tc.fact) {
				t.Errorf("facts %q lack %q", facts, tc.fact)
			}
		})
	}
}

// A response too big to keep whole is stored as a clipped string of its
// JSON: its output is read from that text, so the observation says what
// the command printed, not a subtitle of raw JSON.
func TestOversizedResponseIsReadAsOutput(t *testing.T) {
	var log strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&log, "line %d: ERROR the widget %d failed\n", i, i)
	}
	whole, _ := json.Marshal(map[string]any{"stdout": log.String(), "stderr": "", "interrupted": false})
	clipped := string(whole[:len(whole)/2]) + "\n…[truncated]" // as the store clips it
	out, _ := json.Marshal(clipped)
	in, _ := json.Marshal(map[string]string{"command": "./run-widgets.sh"})
	res, err := local.Agent{}.Run(context.Background(), memory.AgentInput{NewID: "m", Request: "why do the widgets fail",
		Events: []memory.Event{{Kind: memory.EventTool, Cwd: "/src", ToolName: "Bash", ToolInput: in, ToolResponse: out}}})
	if err != nil || len(res.Observations) != 1 {
		t.Fatalf("%d observations (%v)", len(res.Observations), err)
	}
	o := res.Observations[0]
	for _, s := range []string{o.Title, o.Subtitle, o.Narrative, o.Evidence} {
		if strings.Contains(s, `{"stdout"`) || strings.Contains(s, `\n`) {
			t.Errorf("raw JSON in the observation: %q", s)
		}
	}
	if !strings.Contains(o.Subtitle+o.Title+o.Narrative, "line 0: ERROR the widget 0 failed") {
		t.Errorf("the output is not read: %s · %s · %s", o.Title, o.Subtitle, o.Narrative)
	}
}
