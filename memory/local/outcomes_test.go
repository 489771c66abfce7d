package local_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/mnemo-dev/mnemo/memory"
)

var outcomeSplits = flag.String("outcomes", "dev,heldout", "the splits of testdata/outcomes TestOutcomesCannotLie replays (tune on dev alone)")

// An outcome case is one real run of a test runner or a build tool,
// recorded by testdata/outcomes/record.sh: the command line as typed, what
// it printed on stdout and stderr, the shell's exit code, and the label,
// the runner's own result (its exit code in the plain run of the same
// command; a masked run, `… | tail -5`, `… || true`, has the label of its
// plain run).
type outcomeCase struct {
	split, name string
	command     string
	cwd         string
	runner      string
	mask        string
	exit        int
	label       string // pass | fail
	stdout      string
	stderr      string
}

func loadOutcomeCases(tb testing.TB, split string) []outcomeCase {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "outcomes", split, "*.txtar"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no %s outcome cases: %v", split, err)
	}
	var out []outcomeCase
	for _, f := range files {
		a, err := txtar.ParseFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		c := outcomeCase{split: split, name: strings.TrimSuffix(filepath.Base(f), ".txtar")}
		sc := bufio.NewScanner(bytes.NewReader(a.Comment))
		for sc.Scan() {
			k, v, ok := strings.Cut(sc.Text(), ": ")
			if !ok {
				continue
			}
			switch k {
			case "command":
				c.command = v
			case "cwd":
				c.cwd = v
			case "runner":
				c.runner = v
			case "mask":
				c.mask = v
			case "exit":
				c.exit, err = strconv.Atoi(v)
			case "label":
				c.label = v
			}
		}
		for _, file := range a.Files {
			switch file.Name {
			case "stdout":
				c.stdout = string(file.Data)
			case "stderr":
				c.stderr = string(file.Data)
			}
		}
		if err != nil || c.command == "" || (c.label != "pass" && c.label != "fail") {
			tb.Fatalf("%s: a case needs a command, an exit code and a label pass or fail (%v)", f, err)
		}
		out = append(out, c)
	}
	return out
}

// payloads are the hook payloads Claude Code sends for the case: the
// prompt, the Bash call (PostToolUse with stdout and stderr when the
// command line exited 0 — there is no exit code in it —, else
// PostToolUseFailure whose error is "Exit code N", the stderr and the
// stdout, its middle cut past 10,000 characters), and the turn's end.
func (c outcomeCase) payloads() []hookPayload {
	input, _ := json.Marshal(map[string]string{"command": c.command, "description": "Run " + c.runner})
	tool := hookPayload{Cwd: c.cwd, ToolName: "Bash", ToolInput: input, ToolUseID: "toolu_" + c.name}
	stdout, stderr := strings.TrimSpace(c.stdout), strings.TrimSpace(c.stderr)
	if c.exit == 0 {
		tool.HookEventName = "PostToolUse"
		tool.ToolResponse, _ = json.Marshal(map[string]any{
			"stdout": stdout, "stderr": stderr, "interrupted": false, "isImage": false, "noOutputExpected": false,
		})
	} else {
		tool.HookEventName = "PostToolUseFailure"
		var parts []string
		for _, p := range []string{fmt.Sprintf("Exit code %d", c.exit), stderr, stdout} {
			if p != "" {
				parts = append(parts, p)
			}
		}
		msg := strings.TrimSpace(strings.Join(parts, "\n"))
		if len(msg) > 10000 {
			msg = fmt.Sprintf("%s\n\n... [%d characters truncated] ...\n\n%s", msg[:5000], len(msg)-10000, msg[len(msg)-5000:])
		}
		tool.Error = msg
	}
	return []hookPayload{
		{HookEventName: "UserPromptSubmit", Cwd: c.cwd, Prompt: "run the tests and tell me whether they pass"},
		tool,
		{HookEventName: "Stop", Cwd: c.cwd},
	}
}

// saysPassed and saysFailed read what a record says of a run, as a reader
// of the memory would: a title that passes or succeeds, a fact that the
// exit code was 0 or that it passed; a title that fails, a failing test,
// a non-zero exit code or a fact that it failed.
var (
	passWordsRE = regexp.MustCompile(`(?i)\b(?:passes|passed|pass|succeeds|succeeded)\b`)
	// passClaimRE finds a pass title in a summary ("go test ./... passes.",
	// "… succeeds after fixing …"), not the word in an error message
	// ("Snapshot passes lock by value").
	passClaimRE = regexp.MustCompile(`\b(?:passes|succeeds)(?:\.|$| after )`)
	exitCodeRE  = regexp.MustCompile(`^exit code (\d+)$`)
)

func saysPassed(o memory.Observation) bool {
	if passWordsRE.MatchString(o.Title) && !strings.Contains(o.Title, " fail") {
		return true
	}
	for _, f := range o.Facts {
		if m := exitCodeRE.FindStringSubmatch(f); m != nil && m[1] == "0" || strings.HasPrefix(f, "exit code") && strings.HasSuffix(f, "passed") {
			return true
		}
	}
	return false
}

func saysFailed(o memory.Observation) bool {
	if strings.Contains(o.Title, " fails") || strings.Contains(o.Title, " fail:") || strings.HasSuffix(o.Title, " fail") || strings.HasPrefix(o.Title, "Command failed") {
		return true
	}
	for _, f := range o.Facts {
		if m := exitCodeRE.FindStringSubmatch(f); m != nil && m[1] != "0" || strings.HasPrefix(f, "exit code") && strings.HasSuffix(f, "failed") || strings.HasPrefix(f, "failing test: ") {
			return true
		}
	}
	return false
}

// outcomeScore counts, per label, what the records said.
type outcomeScore struct {
	cases, passed, failed, ran int
}

func (s outcomeScore) share(n int) string {
	if s.cases == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f (%d/%d)", float64(n)/float64(s.cases), n, s.cases)
}

// TestOutcomesCannotLie replays every recorded run through the local agent
// as Claude Code's hook sends it, then ends the turn: a run whose runner
// failed is never recorded, titled, typed, factualised or summarised as
// passing (nor listed under Completed), whatever the exit code the shell
// reported; a run that passed is said to fail never. It logs the share of
// passing runs recognised as passing and the share said only to have run,
// for the dev split (tuned on) and the held-out split (recorded before the
// tuning and not tuned on), and keeps each above the floor it reached.
func TestOutcomesCannotLie(t *testing.T) {
	floors := map[string]struct{ pass, fail float64 }{
		"dev":     {pass: 0.97, fail: 0.98},
		"heldout": {pass: 0.88, fail: 0.93},
	}
	for _, split := range strings.Split(*outcomeSplits, ",") {
		var pass, fail outcomeScore
		for _, c := range loadOutcomeCases(t, split) {
			t.Run(split+"/"+c.name, func(t *testing.T) {
				turns := replay(t, localSession{name: c.name, events: c.payloads()})
				if len(turns) != 1 || len(turns[0].observations) != 1 || len(turns[0].summaries) != 1 {
					t.Fatalf("%d turns; want one with one observation and one summary", len(turns))
				}
				o, s := turns[0].observations[0], turns[0].summaries[0]
				passed, failed := saysPassed(o), saysFailed(o)
				desc := fmt.Sprintf("%s · %s | facts %q | completed %q", o.Type, o.Title, o.Facts, s.Completed)
				switch c.label {
				case "fail":
					fail.cases++
					if passed {
						t.Errorf("the %s run failed, and the record says it passed: %s", c.runner, desc)
					}
					switch o.Type {
					case memory.TypeChange, memory.TypeBugfix, memory.TypeFeature, memory.TypeRefactor:
						t.Errorf("the %s run failed, and it is recorded as a %s (listed as completed): %s", c.runner, o.Type, desc)
					}
					if strings.Contains(s.Completed, o.Title) || passWordsRE.MatchString(s.Completed) || passClaimRE.MatchString(s.Investigated) {
						t.Errorf("the %s run failed, and the summary says it was completed or passed: %+v", c.runner, s)
					}
					if !strings.Contains(s.Completed+s.Investigated, o.Title) {
						t.Errorf("the summary does not name the run: %+v", s)
					}
					if failed && !strings.Contains(s.NextSteps, "Make ") {
						t.Errorf("the %s run failed, and the summary's next steps do not ask to make it pass: %q", c.runner, s.NextSteps)
					}
				case "pass":
					pass.cases++
					if failed {
						t.Errorf("the %s run passed, and the record says it failed: %s", c.runner, desc)
					}
					if strings.Contains(s.NextSteps, "Make ") {
						t.Errorf("the %s run passed, and the summary asks to make it pass: %q", c.runner, s.NextSteps)
					}
				}
				tally := &pass
				if c.label == "fail" {
					tally = &fail
				}
				switch {
				case passed:
					tally.passed++
				case failed:
					tally.failed++
				default:
					tally.ran++
				}
				if testing.Verbose() {
					t.Logf("%s (exit %d): %s", c.label, c.exit, desc)
				}
			})
		}
		t.Logf("%s: %d passing runs: recognised as passing %s, said only to have run %s; %d failing runs: recognised as failing %s, said only to have run %s",
			split, pass.cases, pass.share(pass.passed), pass.share(pass.ran), fail.cases, fail.share(fail.failed), fail.share(fail.ran))
		f := floors[split]
		if got := float64(pass.passed) / float64(max(pass.cases, 1)); got < f.pass {
			t.Errorf("%s: passing runs recognised as passing %.3f, below the floor %.2f", split, got, f.pass)
		}
		if got := float64(fail.failed) / float64(max(fail.cases, 1)); got < f.fail {
			t.Errorf("%s: failing runs recognised as failing %.3f, below the floor %.2f", split, got, f.fail)
		}
	}
}

// The reply that ends a turn may say the tests pass where the turn's last
// run failed: the summary does not list that as completed, and says what
// the reply claimed beside what failed. Where the run passed, the claim
// stands.
func TestSummaryKeepsNoPassClaimOfAFailedRun(t *testing.T) {
	cases := map[string]outcomeCase{}
	for _, c := range loadOutcomeCases(t, "dev") {
		cases[c.name] = c
	}
	for _, tc := range []struct{ name, label string }{
		{"go-test-payments-fail.tail", "fail"},
		{"pytest-fail.or-true", "fail"},
		{"go-test-payments-pass.tail", "pass"},
	} {
		c, ok := cases[tc.name]
		if !ok || c.label != tc.label {
			t.Fatalf("no %s case %s", tc.label, tc.name)
		}
		events := c.payloads()
		events[len(events)-1].LastAssistantMessage = "I ran the test suite. All tests pass now."
		turns := replay(t, localSession{name: c.name, events: events})
		s := turns[0].summaries[0]
		claimed := strings.Contains(s.Completed, "All tests pass now")
		switch {
		case c.label == "fail" && (claimed || !strings.Contains(s.Notes, `The reply said "All tests pass now", but`)):
			t.Errorf("%s: the run failed, and the summary keeps the claim that the tests pass: completed %q, notes %q", c.name, s.Completed, s.Notes)
		case c.label == "pass" && !claimed:
			t.Errorf("%s: the run passed, and the summary drops the reply's claim: completed %q", c.name, s.Completed)
		}
	}
}

// The shell's rules decide when the exit code of a line still tells how
// its runner ended, and the runner's own lines decide when it does not;
// Claude Code's background runs and its reading of a non-zero exit as no
// error ("No matches found") say nothing of the runner.
func TestExitCodeOfTheLine(t *testing.T) {
	for _, tc := range []struct {
		name, command string
		response      map[string]any // Claude Code's PostToolUse tool_response; nil: the failure below
		failure       string         // PostToolUseFailure's error
		background    bool           // run_in_background
		title, fact   string
	}{
		{"pipefail makes the exit code the runner's", "set -o pipefail; go test ./... | tail -3",
			map[string]any{"stdout": "ok  \tshop/cart\t0.01s\nok  \tshop/payments\t0.02s"}, "", false,
			"go test ./... passes", "exit code 0"},
		{"a later command runs only when the tests pass", "go test ./... && echo ok",
			map[string]any{"stdout": "ok  \tshop/cart\t0.01s\nok"}, "", false,
			"go test ./... passes", "exit code 0"},
		{"|| true hides a silent run", "go test ./... > test.log 2>&1 || true",
			map[string]any{"stdout": ""}, "", false,
			"go test ./... (outcome not shown)", "exit code 0 is true's; the output does not tell"},
		{"a grep that keeps go's FAIL lines", `go test ./... 2>&1 | grep -E '^(ok|FAIL)'`,
			map[string]any{"stdout": "ok  \tshop/cart\t0.01s\nok  \tshop/payments\t0.02s"}, "", false,
			"go test ./... passes", "exit code 0 is grep's; the output shows it passed"},
		{"a grep that would drop them", `go test ./... 2>&1 | grep ok`,
			map[string]any{"stdout": "ok  \tshop/cart\t0.01s"}, "", false,
			"go test ./... (outcome not shown)", "exit code 0 is grep's; the output does not tell"},
		{"a basic grep that keeps them too", `go test ./... 2>&1 | grep 'ok\|FAIL'`,
			map[string]any{"stdout": "ok  \tshop/cart\t0.01s"}, "", false,
			"go test ./... passes", "exit code 0 is grep's; the output shows it passed"},
		{"make's end without its error line", "make test 2>&1 | tail -2",
			map[string]any{"stdout": "built cart\nbuilt payments"}, "", false,
			"make test passes", "exit code 0 is tail's; the output shows it passed"},
		{"the same, in parallel", "make -j4 test 2>&1 | tail -2",
			map[string]any{"stdout": "built cart\nbuilt payments"}, "", false,
			"make -j4 test (outcome not shown)", "exit code 0 is tail's; the output does not tell"},
		{"an install nothing shows to have worked", "npm install 2>&1 | tail -1",
			map[string]any{"stdout": "added 3 packages in 2s"}, "", false,
			"npm install (outcome not shown)", "exit code 0 is tail's; the output does not tell"},
		{"grep found nothing", "go test ./... | grep FAIL",
			map[string]any{"stdout": "", "returnCodeInterpretation": "No matches found"}, "", false,
			"go test ./... (outcome not shown)", ""},
		{"the status echoed after the run", `go test ./...; echo "status=$?"`,
			map[string]any{"stdout": "ok  \tshop/cart\t0.01s\nFAIL\tshop/payments [build failed]\nFAIL\nstatus=1"}, "", false,
			"go test ./... fails", "exit code 1"},
		{"a Makefile that ignores the failure", "make test",
			map[string]any{"stdout": "--- FAIL: TestTotal (0.00s)\nFAIL\nFAIL\tshop/cart\t0.01s\nmake: [Makefile:2: test] Error 1 (ignored)"}, "", false,
			"TestTotal fails", "exit code 0"},
		{"a non-zero exit of the line that may be the vet's", "go build ./... && go vet ./...",
			nil, "Exit code 1\n# shop/cart\ncart/cart.go:7:2: fmt.Printf format %d has arg s of wrong type string", false,
			"go build ./... fails", "exit code 1 is the whole line's; the output shows it failed"},
		{"Claude Code's background run", "go test ./...",
			map[string]any{"stdout": "", "backgroundTaskId": "b1"}, "", true,
			"Started go test ./... in the background", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			input, _ := json.Marshal(map[string]any{"command": tc.command, "run_in_background": tc.background})
			tool := hookPayload{HookEventName: "PostToolUse", Cwd: "/src/shop", ToolName: "Bash", ToolInput: input, ToolUseID: "toolu_1"}
			if tc.response != nil {
				tool.ToolResponse, _ = json.Marshal(tc.response)
			} else {
				tool.HookEventName, tool.Error = "PostToolUseFailure", tc.failure
			}
			turns := replay(t, localSession{name: tc.name, events: []hookPayload{
				{HookEventName: "UserPromptSubmit", Prompt: "run the tests"}, tool, {HookEventName: "Stop"},
			}})
			o := turns[0].observations[0]
			if !strings.HasPrefix(o.Title, tc.title) {
				t.Errorf("title %q, want %q…", o.Title, tc.title)
			}
			if tc.fact != "" && !slices.Contains(o.Facts, tc.fact) {
				t.Errorf("facts %q lack %q", o.Facts, tc.fact)
			}
			if tc.fact == "" {
				for _, f := range o.Facts {
					if strings.HasPrefix(f, "exit code 0") {
						t.Errorf("an exit code 0 made up: %q", o.Facts)
					}
				}
			}
		})
	}
}
