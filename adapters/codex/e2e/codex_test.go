//go:build e2e

package e2e_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fixCalcDone is the last reply of the fix-calc script.
const fixCalcDone = "Fixed add and mul in calc.py; sh test.sh passes."

// Patches of the fix-calc script, in apply_patch's format (paths relative to
// the working directory).
const (
	fixAddPatch = `*** Begin Patch
*** Update File: calc.py
@@
 def add(a, b):
-    return a - b
+    return a + b
*** End Patch
`
	fixMulPatch = `*** Begin Patch
*** Update File: calc.py
@@
 def mul(a, b):
-    return a + b
+    return a * b
*** End Patch
`
)

// fixCalcScript reads calc.py, fixes add, runs the failing tests, fixes mul
// and runs the tests again: shell commands through exec_command, edits
// through apply_patch.
func fixCalcScript() script {
	return script{Name: "fix-calc", Steps: []step{
		{Text: "I'll read calc.py first.", Calls: []call{{Shell: "cat calc.py"}}},
		{Text: "add subtracts; fixing it.", Calls: []call{{Patch: fixAddPatch}}},
		{Text: "Running the tests.", Calls: []call{{Shell: "sh test.sh"}}},
		{Text: "mul adds instead of multiplying; fixing it.", Calls: []call{{Patch: fixMulPatch}}},
		{Text: "Running the tests again.", Calls: []call{{Shell: "sh test.sh"}}},
		{Text: fixCalcDone},
	}}
}

// toolStep says what one tool call of the fix-calc session must give back.
type toolStep struct {
	kind     string // command_execution or file_change
	command  string // the shell command (command_execution)
	exitCode int
	output   string // a substring of the output the model receives
}

var fixCalcTools = []toolStep{
	{"command_execution", "cat calc.py", 0, "def mul(a, b):"},
	{"file_change", "", 0, "Success. Updated the following files:\nM calc.py"},
	{"command_execution", "sh test.sh", 1, "mul(2, 3) should be 6, got 5"},
	{"file_change", "", 0, "Success. Updated the following files:\nM calc.py"},
	{"command_execution", "sh test.sh", 0, "all tests passed"},
}

// runFixCalc runs session 1 and checks, from the CLI's --json events, from
// the model server's requests and from the project, that every tool ran and
// that its result came back to the model.
func (h *world) runFixCalc(t *testing.T, extra ...string) *codexRun {
	t.Helper()
	h.srv.register(fixCalcScript())
	run := h.exec("fix-calc", "SCENARIO:fix-calc make sh test.sh pass", extra...)
	run.mustSucceed(t)

	var tools []execItem
	var final string
	for _, it := range run.items() {
		switch it.Type {
		case "command_execution", "file_change":
			tools = append(tools, it)
		case "agent_message":
			final = it.Text
		}
	}
	if final != fixCalcDone {
		t.Errorf("last agent message %q, want %q", final, fixCalcDone)
	}
	if len(tools) != len(fixCalcTools) {
		t.Fatalf("the run has %d tool items, want %d:\n%s", len(tools), len(fixCalcTools), run.Stdout)
	}
	for i, want := range fixCalcTools {
		got := tools[i]
		switch {
		case got.Type != want.kind:
			t.Errorf("tool %d: %s, want %s", i, got.Type, want.kind)
		case want.kind == "command_execution" && (!strings.Contains(got.Command, want.command) ||
			got.ExitCode == nil || *got.ExitCode != want.exitCode):
			t.Errorf("tool %d: command %q exit %v, want %q exit %d", i, got.Command, got.ExitCode, want.command, want.exitCode)
		case want.kind == "file_change" && (got.Status != "completed" || len(got.Changes) != 1 ||
			got.Changes[0].Path != filepath.Join(h.Project, "calc.py") || got.Changes[0].Kind != "update"):
			t.Errorf("tool %d: file change %+v, want calc.py updated", i, got)
		}
	}

	// Each call's output went back to the model in the next request.
	reqs := h.srv.requests("fix-calc")
	if len(reqs) != len(fixCalcTools)+1 {
		t.Fatalf("the model got %d requests, want %d", len(reqs), len(fixCalcTools)+1)
	}
	for i, want := range fixCalcTools {
		callID := reqs[i].Replied[len(reqs[i].Replied)-1].CallID
		out, ok := reqs[i+1].req.CallOutput(callID)
		if !ok || !strings.Contains(out.OutputText(), want.output) {
			t.Errorf("request %d: the output of call %s lacks %q:\n%s", i+1, callID, want.output, out.OutputText())
		}
	}
	for i, r := range reqs {
		if r.Step != i {
			t.Errorf("request %d was answered as step %d", i, r.Step)
		}
		if !slices.Contains(r.req.ToolNames(), "exec_command") || !slices.Contains(r.req.ToolNames(), "apply_patch") {
			t.Fatalf("request %d offers %v, want exec_command and apply_patch", i, r.req.ToolNames())
		}
	}

	data, err := os.ReadFile(filepath.Join(h.Project, "calc.py"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "return a + b") || !strings.Contains(string(data), "return a * b") {
		t.Errorf("calc.py after the session:\n%s", data)
	}
	return run
}
