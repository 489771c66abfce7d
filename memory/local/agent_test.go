package local_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/diff"
	"github.com/rogpeppe/go-internal/txtar"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/local"
)

var update = flag.Bool("update", false, "rewrite the golden files of TestLocalGolden")

// The local agent's golden sessions live in testdata/sessions, one
// txtar each: its comment says what it shows, its events.jsonl holds one
// Claude Code hook payload (the hook's stdin) per line, or a reference
// {"recorded": "<scenario>/<NNN-Event>.json"} to a payload recorded from the
// real CLI (testdata/recorded, copied from the e2e probe, scrubbed as
// they were). Editor events use the same shape with tool_name "Open" or
// "Save". What the agent makes of them is in testdata/golden.

// hookPayload is the part of a hook's stdin the replay reads.
type hookPayload struct {
	HookEventName        string          `json:"hook_event_name"`
	Cwd                  string          `json:"cwd"`
	Platform             string          `json:"platform"`
	Prompt               string          `json:"prompt"`
	ToolName             string          `json:"tool_name"`
	ToolInput            json.RawMessage `json:"tool_input"`
	ToolResponse         json.RawMessage `json:"tool_response"`
	ToolUseID            string          `json:"tool_use_id"`
	Error                string          `json:"error"`
	IsInterrupt          bool            `json:"is_interrupt"`
	LastAssistantMessage string          `json:"last_assistant_message"`
	Recorded             string          `json:"recorded"`
}

type localSession struct {
	name    string
	comment string
	events  []hookPayload
}

func loadLocalSessions(tb testing.TB) []localSession {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "sessions", "*.txtar"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no golden sessions: %v", err)
	}
	var out []localSession
	for _, f := range files {
		a, err := txtar.ParseFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		s := localSession{name: strings.TrimSuffix(filepath.Base(f), ".txtar"), comment: string(a.Comment)}
		for _, file := range a.Files {
			if file.Name != "events.jsonl" {
				tb.Fatalf("%s: unexpected file %q", f, file.Name)
			}
			for i, line := range bytes.Split(file.Data, []byte("\n")) {
				if len(bytes.TrimSpace(line)) == 0 {
					continue
				}
				var p hookPayload
				if err := json.Unmarshal(line, &p); err != nil {
					tb.Fatalf("%s line %d: %v", f, i+1, err)
				}
				if p.Recorded != "" {
					p = loadRecorded(tb, p.Recorded)
				}
				s.events = append(s.events, p)
			}
		}
		out = append(out, s)
	}
	return out
}

// loadRecorded reads the stdin of a hook call recorded from the real CLI.
func loadRecorded(tb testing.TB, name string) hookPayload {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "recorded", filepath.FromSlash(name)))
	if err != nil {
		tb.Fatal(err)
	}
	var rec struct {
		Stdin hookPayload `json:"stdin"`
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
	return rec.Stdin
}

// event maps a payload to the queued event the worker hands the agent, the
// way the hook does: a PostToolUseFailure becomes the response
// {"error", "isError": true, "interrupted"}.
func (p hookPayload) event(prompt int) (memory.Event, bool) {
	ev := memory.Event{ContentSessionID: "golden", PromptNumber: prompt, Cwd: p.Cwd, Platform: p.Platform}
	switch p.HookEventName {
	case "PostToolUse":
		ev.Kind, ev.ToolName, ev.ToolInput, ev.ToolResponse, ev.ToolUseID = memory.EventTool, p.ToolName, p.ToolInput, p.ToolResponse, p.ToolUseID
	case "PostToolUseFailure":
		resp, _ := json.Marshal(map[string]any{"error": p.Error, "isError": true, "interrupted": p.IsInterrupt})
		ev.Kind, ev.ToolName, ev.ToolInput, ev.ToolResponse, ev.ToolUseID = memory.EventTool, p.ToolName, p.ToolInput, resp, p.ToolUseID
	case "Stop":
		ev.Kind, ev.LastAssistantMessage, ev.Cwd = memory.EventStop, p.LastAssistantMessage, ""
	default:
		return ev, false
	}
	return ev, true
}

// goldenObservation and goldenSummary are the content fields an agent
// fills in; the worker adds ids, sessions and times.
type goldenObservation struct {
	Type          string   `json:"type"`
	Title         string   `json:"title"`
	Subtitle      string   `json:"subtitle,omitempty"`
	Facts         []string `json:"facts,omitempty"`
	Narrative     string   `json:"narrative,omitempty"`
	Concepts      []string `json:"concepts,omitempty"`
	FilesRead     []string `json:"filesRead,omitempty"`
	FilesModified []string `json:"filesModified,omitempty"`
	Tool          string   `json:"tool,omitempty"`
	Evidence      string   `json:"evidence,omitempty"`
}

type goldenSummary struct {
	Request       string   `json:"request"`
	Investigated  string   `json:"investigated"`
	Learned       string   `json:"learned"`
	Completed     string   `json:"completed"`
	NextSteps     string   `json:"nextSteps"`
	Notes         string   `json:"notes"`
	FilesRead     []string `json:"filesRead"`
	FilesModified []string `json:"filesModified"`
}

type goldenTurn struct {
	Prompt       int                 `json:"prompt"`
	Request      string              `json:"request"`
	Observations []goldenObservation `json:"observations"`
	Summaries    []goldenSummary     `json:"summaries,omitempty"`
}

type replayTurn struct {
	prompt       int
	request      string
	observations []memory.Observation
	summaries    []memory.Summary
}

// replay runs a session through LocalAgent the way the worker does: one
// event per Run, in.Turn holding the observations already stored for the
// event's prompt (oldest first, identical notes stored once per session,
// as the store's content hash does), a fresh memory session first and
// resumed after.
func replay(tb testing.TB, s localSession) []replayTurn {
	tb.Helper()
	ctx := context.Background()
	var (
		turns    []replayTurn
		prompt   int
		request  string
		stored   = map[int][]memory.Observation{}
		seen     = map[string]bool{}
		memoryID string
	)
	sess := memory.Session{ID: 1, ContentSessionID: "golden", Project: "golden", Platform: "claude-code"}
	for _, p := range s.events {
		if p.HookEventName == "UserPromptSubmit" {
			prompt++
			request = p.Prompt
			turns = append(turns, replayTurn{prompt: prompt, request: request})
			continue
		}
		ev, ok := p.event(prompt)
		if !ok {
			continue
		}
		if len(turns) == 0 {
			turns = append(turns, replayTurn{}) // an editor: events before any prompt
		}
		in := memory.AgentInput{Session: sess, Request: request, Events: []memory.Event{ev}, Turn: stored[prompt]}
		if memoryID == "" {
			in.NewID = "memory-session-1"
		} else {
			in.ResumeID = memoryID
		}
		before := slices.Clone(in.Turn)
		out, err := local.Agent{}.Run(ctx, in)
		if err != nil {
			tb.Fatalf("%s: run: %v", s.name, err)
		}
		if want := in.ResumeID + in.NewID; out.MemorySessionID != want {
			tb.Fatalf("%s: memory session %q, want %q", s.name, out.MemorySessionID, want)
		}
		if !reflect.DeepEqual(before, in.Turn) {
			tb.Fatalf("%s: the agent changed its input turn", s.name)
		}
		memoryID = out.MemorySessionID
		t := &turns[len(turns)-1]
		for _, o := range out.Observations {
			t.observations = append(t.observations, o)
			key := fmt.Sprint(o.Type, o.Title, o.Narrative, o.Facts, o.FilesRead, o.FilesModified)
			if !seen[key] {
				seen[key] = true
				stored[prompt] = append(stored[prompt], o)
			}
		}
		if out.Summary != nil {
			t.summaries = append(t.summaries, *out.Summary)
		}
	}
	return turns
}

func goldenOf(turns []replayTurn) []goldenTurn {
	out := make([]goldenTurn, 0, len(turns))
	for _, t := range turns {
		g := goldenTurn{Prompt: t.prompt, Request: t.request, Observations: []goldenObservation{}}
		for _, o := range t.observations {
			g.Observations = append(g.Observations, goldenObservation{
				Type: o.Type, Title: o.Title, Subtitle: o.Subtitle, Facts: o.Facts, Narrative: o.Narrative,
				Concepts: o.Concepts, FilesRead: o.FilesRead, FilesModified: o.FilesModified, Tool: o.Tool,
				Evidence: o.Evidence,
			})
		}
		for _, s := range t.summaries {
			g.Summaries = append(g.Summaries, goldenSummary{
				Request: s.Request, Investigated: s.Investigated, Learned: s.Learned, Completed: s.Completed,
				NextSteps: s.NextSteps, Notes: s.Notes, FilesRead: s.FilesRead, FilesModified: s.FilesModified,
			})
		}
		out = append(out, g)
	}
	return out
}

// TestLocalGolden replays every golden session through the local agent and
// compares what it makes with testdata/golden/<session>.json.
// `go test ./memory/local -run TestLocalGolden -update` rewrites them.
func TestLocalGolden(t *testing.T) {
	for _, s := range loadLocalSessions(t) {
		t.Run(s.name, func(t *testing.T) {
			got, err := json.MarshalIndent(goldenOf(replay(t, s)), "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			path := filepath.Join("testdata", "golden", s.name+".json")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from what the agent makes now (-update rewrites it):\n%s", path, diff.Diff("golden", want, "got", got))
			}
		})
	}
}

// The rules docs/architecture.md §6 states hold for every golden session: every
// observation keeps the request of its turn, names files relative to the
// project, and every summary names the files its turn touched; the agent
// is deterministic, and one Run over a whole turn makes what one Run per
// event makes.
func TestLocalAgentInvariants(t *testing.T) {
	types := []string{memory.TypeBugfix, memory.TypeFeature, memory.TypeRefactor, memory.TypeChange, memory.TypeDiscovery, memory.TypeDecision, memory.TypeSecurity, memory.TypePrompt}
	for _, s := range loadLocalSessions(t) {
		t.Run(s.name, func(t *testing.T) {
			turns := replay(t, s)
			if again := replay(t, s); !reflect.DeepEqual(goldenOf(turns), goldenOf(again)) {
				t.Fatal("two replays of the same session differ")
			}
			for _, turn := range turns {
				read, modified := map[string]bool{}, map[string]bool{}
				for _, o := range turn.observations {
					if o.Request != turn.request {
						t.Errorf("observation %q has request %q, want its turn's %q", o.Title, o.Request, turn.request)
					}
					if o.Title == "" || !slices.Contains(types, o.Type) {
						t.Errorf("observation %+v: no title or an unknown type", o)
					}
					for _, f := range o.Files() {
						if strings.HasPrefix(f, "/") || strings.Contains(f, "$WORK") {
							t.Errorf("observation %q names %q, not a project-relative path", o.Title, f)
						}
					}
					for _, f := range o.FilesRead {
						read[f] = true
					}
					for _, f := range o.FilesModified {
						modified[f] = true
					}
				}
				for _, sum := range turn.summaries {
					for f := range modified {
						if !slices.Contains(sum.FilesModified, f) {
							t.Errorf("summary of prompt %d does not name modified file %s: %v", turn.prompt, f, sum.FilesModified)
						}
					}
					for f := range read {
						if !slices.Contains(sum.FilesRead, f) {
							t.Errorf("summary of prompt %d does not name read file %s: %v", turn.prompt, f, sum.FilesRead)
						}
					}
				}
			}
			// One Run over each turn's tool events at once.
			prompt, request := 0, ""
			var events []memory.Event
			flush := func() {
				if len(events) == 0 {
					return
				}
				out, err := local.Agent{}.Run(context.Background(), memory.AgentInput{NewID: "m", Request: request, Events: events})
				if err != nil {
					t.Fatal(err)
				}
				var one []memory.Observation
				for _, turn := range turns {
					if turn.prompt == prompt {
						one = turn.observations
					}
				}
				if titles(out.Observations) != titles(one) {
					t.Errorf("prompt %d: one run over the turn made\n%s\nwant\n%s", prompt, titles(out.Observations), titles(one))
				}
				events = nil
			}
			for _, p := range s.events {
				if p.HookEventName == "UserPromptSubmit" {
					flush()
					prompt, request = prompt+1, p.Prompt
					continue
				}
				if ev, ok := p.event(prompt); ok && ev.Kind == memory.EventTool {
					events = append(events, ev)
				}
			}
			flush()
		})
	}
}

func titles(obs []memory.Observation) string {
	var b strings.Builder
	for _, o := range obs {
		fmt.Fprintf(&b, "%s: %s\n", o.Type, o.Title)
	}
	return b.String()
}

// localCase is one event after a turn so far, and what the agent should
// make of it.
type localCase struct {
	name      string
	request   string
	before    []toolCall // the turn so far
	call      toolCall
	wantType  string
	wantTitle string
	wantFacts []string // facts that must be present
}

type toolCall struct {
	tool, input, response string
}

func (c toolCall) event() memory.Event {
	ev := memory.Event{Kind: memory.EventTool, Cwd: "/src/app", ToolName: c.tool, ToolInput: json.RawMessage(c.input)}
	if c.response != "" {
		ev.ToolResponse = json.RawMessage(c.response)
	}
	return ev
}

func runTurn(t *testing.T, request string, calls ...toolCall) []memory.Observation {
	t.Helper()
	var turn []memory.Observation
	for _, c := range calls {
		out, err := local.Agent{}.Run(context.Background(), memory.AgentInput{NewID: "m", Request: request, Events: []memory.Event{c.event()}, Turn: turn})
		if err != nil {
			t.Fatal(err)
		}
		turn = append(turn, out.Observations...)
	}
	return turn
}

const (
	failingGoTest = `{"error":"Exit code 1\n--- FAIL: TestTotalWithDiscount (0.00s)\n    total_test.go:31: got 90, want 81\nFAIL\tapp/cart\t0.004s","isError":true,"interrupted":false}`
	passingGoTest = `{"stdout":"ok  \tapp/cart\t0.003s","stderr":"","interrupted":false}`
)

// TestLocalAgentClassifies pins the classification rules of issue 5 one
// event at a time.
func TestLocalAgentClassifies(t *testing.T) {
	goTest := `{"command":"go test ./cart/"}`
	cases := []localCase{
		{
			name:      "failing test names the test and the assertion",
			call:      toolCall{"Bash", goTest, failingGoTest},
			wantType:  memory.TypeDiscovery,
			wantTitle: "TestTotalWithDiscount fails: got 90, want 81",
			wantFacts: []string{"$ go test ./cart/", "exit code 1", "failing test: TestTotalWithDiscount", "error: total_test.go:31: got 90, want 81"},
		},
		{
			name:      "edit after a failing test is a bugfix",
			before:    []toolCall{{"Bash", goTest, failingGoTest}},
			call:      toolCall{"Edit", `{"file_path":"/src/app/cart/total.go","old_string":"total - discount","new_string":"total * (1 - rate)"}`, `{"filePath":"/src/app/cart/total.go"}`},
			wantType:  memory.TypeBugfix,
			wantTitle: "Fixed cart/total.go: total - discount → total * (1 - rate)",
			wantFacts: []string{"fixes: TestTotalWithDiscount"},
		},
		{
			name:      "edit after a failing run names the function it sits in",
			before:    []toolCall{{"Bash", goTest, failingGoTest}},
			call:      toolCall{"Edit", `{"file_path":"/src/app/cart/total.go","old_string":"\treturn total - discount\n","new_string":"\tif rate > 0 {\n\t\treturn total * (1 - rate)\n\t}\n\treturn total\n"}`, `{"filePath":"/src/app/cart/total.go","originalFile":"package cart\n\n// Total sums the cart.\nfunc (c *Cart) Total(rate float64) float64 {\n\ttotal := c.sum()\n\treturn total - discount\n}\n"}`},
			wantType:  memory.TypeBugfix,
			wantTitle: "Fixed Cart.Total in cart/total.go after TestTotalWithDiscount failed",
			wantFacts: []string{"symbols: Cart.Total"},
		},
		{
			name:      "passing run after the fix confirms it",
			before:    []toolCall{{"Bash", goTest, failingGoTest}, {"Edit", `{"file_path":"/src/app/cart/total.go","old_string":"a","new_string":"b"}`, `{}`}},
			call:      toolCall{"Bash", goTest, passingGoTest},
			wantType:  memory.TypeBugfix,
			wantTitle: "go test ./cart/ passes after fixing cart/total.go",
			wantFacts: []string{"exit code 0", "result: ok app/cart 0.003s", "fixes: TestTotalWithDiscount"},
		},
		{
			name:      "edit after the tests pass again is a change",
			before:    []toolCall{{"Bash", goTest, failingGoTest}, {"Bash", goTest, passingGoTest}},
			call:      toolCall{"Edit", `{"file_path":"/src/app/README.md","old_string":"beta","new_string":"stable"}`, `{}`},
			wantType:  memory.TypeChange,
			wantTitle: "Changed README.md: beta → stable",
		},
		{
			name:      "a failing grep does not make the next edit a fix",
			before:    []toolCall{{"Bash", `{"command":"grep -rn TODO ."}`, `{"error":"Exit code 1","isError":true}`}},
			call:      toolCall{"Edit", `{"file_path":"/src/app/notes.txt","old_string":"draft","new_string":"final"}`, `{}`},
			wantType:  memory.TypeChange,
			wantTitle: "Changed notes.txt: draft → final",
		},
		{
			name:      "a new file is a feature naming what it declares",
			call:      toolCall{"Write", `{"file_path":"/src/app/payments/backoff.go","content":"package payments\n\n// retryWithBackoff retries fn on HTTP 503.\nfunc retryWithBackoff(fn func() error) error { return fn() }\n"}`, `{"type":"create","filePath":"/src/app/payments/backoff.go"}`},
			wantType:  memory.TypeFeature,
			wantTitle: "Created payments/backoff.go with retryWithBackoff",
			wantFacts: []string{"doc: retryWithBackoff retries fn on HTTP 503."},
		},
		{
			name:      "a save of a file never seen is a new file",
			call:      toolCall{"Save", `{"file_path":"/src/app/billing/tax.go"}`, ``},
			wantType:  memory.TypeFeature,
			wantTitle: "Saved new file billing/tax.go",
		},
		{
			name:      "a save of an opened file is a change",
			before:    []toolCall{{"Open", `{"file_path":"/src/app/billing/tax.go"}`, ``}},
			call:      toolCall{"Save", `{"file_path":"/src/app/billing/tax.go"}`, ``},
			wantType:  memory.TypeChange,
			wantTitle: "Saved billing/tax.go",
		},
		{
			name:      "git mv is a refactor",
			call:      toolCall{"Bash", `{"command":"git mv internal/util/strings.go internal/text/text.go"}`, `{"stdout":"","stderr":"","interrupted":false}`},
			wantType:  memory.TypeRefactor,
			wantTitle: "Moved internal/util/strings.go to internal/text/text.go",
		},
		{
			name:      "mv within a folder is a rename",
			call:      toolCall{"Bash", `{"command":"mv billing/round.go billing/rounding.go"}`, `{"stdout":"","stderr":"","interrupted":false}`},
			wantType:  memory.TypeRefactor,
			wantTitle: "Renamed billing/round.go to rounding.go",
		},
		{
			name:      "an edit that only renames an identifier is a refactor",
			call:      toolCall{"Edit", `{"file_path":"/src/app/text/text.go","old_string":"Normalize","new_string":"NormalizeSpace","replace_all":true}`, `{}`},
			wantType:  memory.TypeRefactor,
			wantTitle: "Renamed Normalize to NormalizeSpace in text/text.go",
		},
		{
			name:      "a grep is a discovery listing the matching files",
			call:      toolCall{"Grep", `{"pattern":"func round","path":"/src/app/billing"}`, `{"mode":"files_with_matches","filenames":["/src/app/billing/rounding.go"],"numFiles":1}`},
			wantType:  memory.TypeDiscovery,
			wantTitle: `Searched for "func round" in billing`,
			wantFacts: []string{`1 file match "func round": billing/rounding.go`},
		},
		{
			name:      "a grep without matches says so",
			call:      toolCall{"Grep", `{"pattern":"RoundHalfEven"}`, `{"mode":"files_with_matches","filenames":[],"numFiles":0}`},
			wantType:  memory.TypeDiscovery,
			wantTitle: `No matches for "RoundHalfEven"`,
		},
		{
			name:      "a read names the declarations and their docs",
			call:      toolCall{"Read", `{"file_path":"/src/app/billing/rounding.go"}`, `{"type":"text","file":{"filePath":"/src/app/billing/rounding.go","content":"package billing\n\n// roundCents rounds half away from zero.\nfunc roundCents(v float64) int64 { return 0 }\n","numLines":4,"startLine":1,"totalLines":4}}`},
			wantType:  memory.TypeDiscovery,
			wantTitle: "Read billing/rounding.go",
			wantFacts: []string{"declares: roundCents", "doc: roundCents rounds half away from zero."},
		},
		{
			name:      "an edit of auth code is a security note",
			call:      toolCall{"Edit", `{"file_path":"/src/app/src/auth/jwt.ts","old_string":"const SECRET = \"dev\";","new_string":"const SECRET = requireEnv(\"JWT_SECRET\");"}`, `{}`},
			wantType:  memory.TypeSecurity,
			wantFacts: []string{"security-relevant: auth, jwt, secret"},
		},
		{
			name:      "an edit under a prompt asking for a fix is a bugfix",
			request:   "the discount is wrong, fix it",
			call:      toolCall{"Edit", `{"file_path":"/src/app/cart/total.go","old_string":"0.1","new_string":"0.15"}`, `{}`},
			wantType:  memory.TypeBugfix,
			wantTitle: "Fixed cart/total.go: 0.1 → 0.15",
		},
		{
			name:      "a commit is titled by its subject",
			call:      toolCall{"Bash", `{"command":"git commit -m \"billing: round half to even\""}`, `{"stdout":"[main 1a2b3c4] billing: round half to even\n 1 file changed, 1 insertion(+), 1 deletion(-)","stderr":"","interrupted":false}`},
			wantType:  memory.TypeChange,
			wantTitle: "Committed: billing: round half to even",
			wantFacts: []string{"commit 1a2b3c4 on main", "1 file changed, 1 insertion(+), 1 deletion(-)"},
		},
		{
			name:      "adding a dependency",
			call:      toolCall{"Bash", `{"command":"go get golang.org/x/time@v0.5.0"}`, `{"stdout":"","stderr":"go: added golang.org/x/time v0.5.0","interrupted":false}`},
			wantType:  memory.TypeChange,
			wantTitle: "Added dependency golang.org/x/time@v0.5.0",
		},
		{
			name:      "a compiler error is the telling line",
			call:      toolCall{"Bash", `{"command":"go build ./..."}`, `{"error":"Exit code 1\n# app/billing\nbilling/rounding.go:4:41: undefined: math.RoundHalfEven","isError":true}`},
			wantType:  memory.TypeDiscovery,
			wantTitle: "go build ./... fails: undefined: math.RoundHalfEven",
			wantFacts: []string{"error: billing/rounding.go:4:41: undefined: math.RoundHalfEven"},
		},
		{
			name:      "an edit the tool refused changed nothing",
			call:      toolCall{"Edit", `{"file_path":"/src/app/a.go","old_string":"x","new_string":"y"}`, `{"error":"String to replace not found in file.","isError":true,"interrupted":false}`},
			wantType:  memory.TypeDiscovery,
			wantTitle: "Could not edit a.go",
			wantFacts: []string{"error: String to replace not found in file."},
		},
		{
			name:      "cat through Bash is a read",
			call:      toolCall{"Bash", `{"command":"cat src/auth/jwt.ts | head -20","description":"Show jwt.ts"}`, `{"stdout":"import jwt from \"jsonwebtoken\";","stderr":"","interrupted":false}`},
			wantType:  memory.TypeDiscovery,
			wantTitle: "Read src/auth/jwt.ts",
		},
		{
			name:      "a pytest failure names the test and its assertion",
			call:      toolCall{"Bash", `{"command":"pytest -q"}`, `{"error":"Exit code 1\nFAILED tests/test_cart.py::test_total - assert 90 == 81\n1 failed in 0.02s","isError":true}`},
			wantType:  memory.TypeDiscovery,
			wantTitle: "test_total fails: assert 90 == 81",
		},
		{
			name:      "a Python traceback ends in the exception",
			call:      toolCall{"Bash", `{"command":"python app.py"}`, `{"error":"Exit code 1\nTraceback (most recent call last):\n  File \"app.py\", line 12, in <module>\n    main()\n  File \"app.py\", line 8, in main\n    uid = session[\"user_id\"]\nKeyError: 'user_id'","isError":true}`},
			wantType:  memory.TypeDiscovery,
			wantTitle: "python app.py fails: KeyError: 'user_id'",
		},
		{
			name:      "a Rust panic reads its message",
			call:      toolCall{"Bash", `{"command":"cargo test"}`, `{"error":"Exit code 101\ntest tests::total ... FAILED\n\nthread 'tests::total' panicked at src/lib.rs:10:5:\nassertion ` + "`left == right`" + ` failed\n  left: 90\n right: 81","isError":true}`},
			wantType:  memory.TypeDiscovery,
			wantTitle: "tests::total fails: thread 'tests::total' panicked at src/lib.rs:10:5: assertion `left == right` failed",
		},
		{
			name:      "a jest failure reads expected and received",
			call:      toolCall{"Bash", `{"command":"npm test"}`, `{"error":"Exit code 1\nFAIL src/cart.test.ts\n  ● cart › applies the discount\n\n    expect(received).toBe(expected)\n\n    Expected: 81\n    Received: 90\n\n      at Object.<anonymous> (src/cart.test.ts:12:5)","isError":true}`},
			wantType:  memory.TypeDiscovery,
			wantTitle: "applies the discount fails: expected 81, received 90",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			turn := runTurn(t, tc.request, append(slices.Clone(tc.before), tc.call)...)
			o := turn[len(turn)-1]
			if o.Type != tc.wantType || (tc.wantTitle != "" && o.Title != tc.wantTitle) {
				t.Errorf("got %s: %q, want %s: %q", o.Type, o.Title, tc.wantType, tc.wantTitle)
			}
			for _, f := range tc.wantFacts {
				if !slices.Contains(o.Facts, f) {
					t.Errorf("facts %q lack %q", o.Facts, f)
				}
			}
		})
	}
}

// A choice stated in the prompt becomes one decision observation per turn,
// before the turn's first tool observation.
func TestLocalAgentRecordsDecisions(t *testing.T) {
	cases := []struct {
		request string
		want    string // "" for no decision
	}{
		{"Fix the totals. We decided to use banker's rounding (half-even) instead of half-up for all money.", "Decision: use banker's rounding (half-even) instead of half-up for all money"},
		{"Add a cache. Let's go with an LRU rather than a TTL map.", "Decision: go with an LRU rather than a TTL map"},
		{"From now on, always use slog for logging", "Decision: always use slog for logging"},
		{"Prefer table-driven tests over many small test functions.", "Decision: prefer table-driven tests over many small test functions"},
		{"the function returns 0 instead of the total, fix it", ""},
		{"read the file and summarize it", ""},
		// Stated, also in a closing prompt, also as "Decision: …".
		{"ok, thanks. Decision: we batch the archive deletes at 5,000 rows per transaction. I'll do it tomorrow.", "Decision: we batch the archive deletes at 5,000 rows per transaction"},
		{"Go with yaml.v3 then — no new dependency. And keys must be kebab-case.", "Decision: go with yaml.v3 then — no new dependency"},
		// Asked for, not stated.
		{"Decision: work out exactly what the retry budget should be, then tell me.", ""},
		{"Should we use SSE instead of polling?", ""},
		{"Help me decide whether to use SSE instead of polling; give me the trade-offs.", ""},
		{"Should we move the tests from Jest to Vitest? Give me the trade-offs, don't decide yet.", ""},
		// A move stated as a choice.
		{"Handlebars helpers can't be async. Migrate from Handlebars to Eta templates.", "Decision: migrate from Handlebars to Eta templates"},
		{"We moved away from Redux to React Query last sprint, so delete the store.", "Decision: we moved away from Redux to React Query last sprint, so delete the store"},
		// A description, not a choice.
		{"The cart empties when people switch from the product page to checkout on Safari. Fix it.", ""},
		{"The modal moves from the left to the right when it opens. Fix it.", ""},
	}
	read := toolCall{"Read", `{"file_path":"/src/app/a.go"}`, `{}`}
	for _, tc := range cases {
		t.Run(tc.request, func(t *testing.T) {
			turn := runTurn(t, tc.request, read, read)
			var decisions []memory.Observation
			for _, o := range turn {
				if o.Type == memory.TypeDecision {
					decisions = append(decisions, o)
				}
			}
			switch {
			case tc.want == "" && len(decisions) > 0:
				t.Fatalf("decision %q from a prompt that states none", decisions[0].Title)
			case tc.want != "" && (len(decisions) != 1 || decisions[0].Title != tc.want || turn[0].Type != memory.TypeDecision):
				t.Fatalf("turn:\n%swant one decision %q first", titles(turn), tc.want)
			}
		})
	}
}

// What a turn's texts said becomes records of its own at the turn's end:
// a reply that states a finding (a cause, a recommendation, a table) is a
// discovery, also in a turn without any tool call; a choice the agent
// adopts is a decision; a short or merely reporting reply makes none.
func TestLocalAgentRemembersTheConversation(t *testing.T) {
	rootCause := "Found it. The root cause is the weekly archive_invoices job: it deletes old invoice_lines in one transaction that held the table lock for 42 minutes, and the export at 02:15 waits on it until the Celery soft time limit kills it."
	table := "Most of the bundle comes from three packages:\n\n| module | size |\n|---|---|\n| moment-timezone | 688 kB |\n| lodash | 541 kB |\n\nNothing changed yet."
	edit := toolCall{"Edit", `{"file_path":"/src/app/a.go","old_string":"x","new_string":"y"}`, `{}`}
	cases := []struct {
		name   string
		tools  []toolCall
		texts  []memory.TurnText
		titles []string // the records the stop makes, in order
	}{
		{"a finding in a turn without tools", nil, []memory.TurnText{{Text: rootCause}},
			[]string{"discovery: " + memory.Clip("The root cause is the weekly archive_invoices job: it deletes old invoice_lines in one transaction that held the table lock for 42 minutes", 120)}},
		{"a table of findings", nil, []memory.TurnText{{Text: table}}, []string{"discovery: Most of the bundle comes from three packages:"}},
		{"an explanation in a turn without tools", nil, []memory.TurnText{{Text: "Floats are the wrong choice for quantities: a third becomes 0.333 and scaling by three gives 0.999 cups. Store a numerator and a denominator with the unit, so that a third times three is exactly one cup again."}},
			[]string{"discovery: Floats are the wrong choice for quantities: a third becomes 0.333 and scaling by three gives 0.999 cups."}},
		{"thanks", nil, []memory.TurnText{{Text: "Glad it works."}}, nil},
		{"a report of what the tools did", []toolCall{edit}, []memory.TurnText{{Text: "Added the CSV view and the button; the tests pass."}}, nil},
		{"a choice the agent adopts before a call", []toolCall{edit},
			[]memory.TurnText{{Text: "The failure is inside librosa 0.10.1. I'll keep numpy below 2 until we move librosa deliberately.", ToolUseIDs: []string{"t1"}}, {Text: "Pinned numpy."}},
			[]string{"decision: Decision: keep numpy below 2 until we move librosa deliberately"}},
		{"an offer is not a choice", nil, []memory.TurnText{{Text: "If you want, I'll use a ring buffer instead of the slice."}}, nil},
		// A finding in the language the person wrote in: its cause words,
		// and Chinese sentence ends.
		{"a finding in German", nil, []memory.TurnText{{Text: "Der Test ist fehlgeschlagen, weil `will_it_rain` den UTC-Versatz um eine Stunde zu klein an `local_day` übergab: die Stunde um 00:30 Ortszeit landete dadurch am Vortag."}},
			[]string{"discovery: " + memory.Clip("Der Test ist fehlgeschlagen, weil will_it_rain den UTC-Versatz um eine Stunde zu klein an local_day übergab: die Stunde um 00:30 Ortszeit landete dadurch am Vortag.", 120)}},
		{"a finding in French", nil, []memory.TurnText{{Text: "Le total est faux parce que la remise est soustraite deux fois dans apply_discount, une fois par ligne et une fois sur le total du panier, ce qui donne 81,00 € au lieu de 90,00 €."}},
			[]string{"discovery: " + memory.Clip("Le total est faux parce que la remise est soustraite deux fois dans apply_discount, une fois par ligne et une fois sur le total du panier, ce qui donne 81,00 € au lieu de 90,00 €.", 120)}},
		{"a finding in Chinese", nil, []memory.TurnText{{Text: "我看过了。测试失败是因为 local_day 收到的时区偏移少了一小时，所以零点半的降雨被算到了前一天，报告因此漏掉了午夜后的雨。"}},
			[]string{"discovery: 测试失败是因为 local_day 收到的时区偏移少了一小时，所以零点半的降雨被算到了前一天，报告因此漏掉了午夜后的雨。"}},
		{"thanks in German", nil, []memory.TurnText{{Text: "Gern geschehen."}}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			turn := runTurn(t, "look into it", tc.tools...)
			out, err := local.Agent{}.Run(context.Background(), memory.AgentInput{ResumeID: "m", Request: "look into it", Turn: turn,
				Events: []memory.Event{{Kind: memory.EventStop, Texts: tc.texts}}})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, o := range out.Observations {
				if o.Type == memory.TypePrompt {
					continue // TestLocalAgentKeepsThePromptOfATurnWithoutRecords
				}
				got = append(got, o.Type+": "+o.Title)
				if o.Tool != "" || o.Request != "look into it" || o.Evidence == "" {
					t.Errorf("%q: tool %q, request %q, evidence %q", o.Title, o.Tool, o.Request, o.Evidence)
				}
			}
			if !slices.Equal(got, tc.titles) {
				t.Errorf("records = %q\nwant %q", got, tc.titles)
			}
			if len(tc.titles) > 0 && len(out.Observations) > 0 && out.Observations[0].Type == memory.TypeDiscovery && !strings.Contains(out.Observations[0].Narrative, strings.Fields(tc.texts[0].Text)[1]) {
				t.Errorf("narrative %q lacks the reply", out.Observations[0].Narrative)
			}
		})
	}
}

// A turn that leaves no record of its own (no tool call, no finding, no
// decision) keeps its prompt as a record, so that search finds what was
// said in it; a prompt of a word or two, or a message the host wrote
// (a background task's notification), makes none, and neither does a
// turn that has records.
func TestLocalAgentKeepsThePromptOfATurnWithoutRecords(t *testing.T) {
	edit := toolCall{"Edit", `{"file_path":"/src/app/a.go","old_string":"x","new_string":"y"}`, `{}`}
	cases := []struct {
		name, request string
		tools         []toolCall
		answer        string
		want          bool
	}{
		{"a chat turn", "Melanie: I ran a charity race for mental health last Saturday, it was really rewarding.", nil, "", true},
		{"a question answered from what the agent knew", "how does retryWithBackoff in payments/backoff.go decide the delay?", nil, "It doubles it.", true},
		{"thanks", "thanks!", nil, "Glad it works.", false},
		{"a notification", "<task-notification>\n<task-id>a1</task-id>\n<status>completed</status>\n</task-notification>", nil, "", false},
		{"a turn with a tool call", "rename x to y in a.go please", []toolCall{edit}, "Done.", false},
		{"a turn whose answer is a record", "why does the nightly export time out?", nil,
			"Found it. The root cause is the weekly archive_invoices job: it deletes old invoice_lines in one transaction that held the table lock for 42 minutes, and the export at 02:15 waits on it until the Celery soft time limit kills it.", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			turn := runTurn(t, tc.request, tc.tools...)
			out, err := local.Agent{}.Run(context.Background(), memory.AgentInput{ResumeID: "m", Request: tc.request, Turn: turn,
				Events: []memory.Event{{Kind: memory.EventStop, LastAssistantMessage: tc.answer}}})
			if err != nil {
				t.Fatal(err)
			}
			var prompts []memory.Observation
			for _, o := range out.Observations {
				if o.Type == memory.TypePrompt {
					prompts = append(prompts, o)
				}
			}
			if !tc.want {
				if len(prompts) > 0 {
					t.Fatalf("a prompt record %q, want none", prompts[0].Title)
				}
				return
			}
			if len(prompts) != 1 || len(out.Observations) != 1 {
				t.Fatalf("records:\n%swant the prompt's alone", titles(out.Observations))
			}
			o := prompts[0]
			if o.Request != tc.request || o.Title != memory.Clip(tc.request, 120) || o.Tool != "" {
				t.Errorf("record %+v, want the prompt as title and request, no tool", o)
			}
			if strings.Contains(tc.request, "retryWithBackoff") && !strings.Contains(o.Evidence, "retryWithBackoff") {
				t.Errorf("evidence %q lacks the identifier the prompt names", o.Evidence)
			}
		})
	}
}

// A Stop summarizes the turn: the failing run never followed by a pass is
// the next step; the assistant's message is sorted into what was learned,
// completed and left to do.
func TestLocalAgentSummarizes(t *testing.T) {
	turn := runTurn(t, "the cart total is wrong for discounts, fix it",
		toolCall{"Read", `{"file_path":"/src/app/cart/total.go"}`, `{"type":"text","file":{"filePath":"/src/app/cart/total.go","content":"package cart\n","numLines":1,"startLine":1,"totalLines":1}}`},
		toolCall{"Bash", `{"command":"go test ./cart/"}`, failingGoTest},
		toolCall{"Edit", `{"file_path":"/src/app/cart/total.go","old_string":"total - discount","new_string":"total * (1 - rate)"}`, `{}`},
		toolCall{"Bash", `{"command":"go test ./cart/"}`, `{"error":"Exit code 1\n--- FAIL: TestTotalWithDiscount (0.00s)\n    total_test.go:31: got 80.9, want 81","isError":true}`},
	)
	out, err := local.Agent{}.Run(context.Background(), memory.AgentInput{
		ResumeID: "m", Request: "the cart total is wrong for discounts, fix it", Turn: turn,
		Events: []memory.Event{{Kind: memory.EventStop, LastAssistantMessage: "The discount was subtracted instead of applied as a rate. I changed Total to multiply by (1 - rate). A rounding difference remains; next I would round to cents."}},
	})
	if err != nil || out.Summary == nil {
		t.Fatalf("no summary: %v", err)
	}
	s := out.Summary
	checks := []struct{ field, got, want string }{
		{"request", s.Request, "the cart total is wrong for discounts, fix it"},
		{"investigated", s.Investigated, "Read cart/total.go"},
		{"learned", s.Learned, "The discount was subtracted instead of applied as a rate."},
		{"learned", s.Learned, "TestTotalWithDiscount failed: total_test.go:31: got 80.9, want 81"},
		{"completed", s.Completed, "Changed Total to multiply by (1 - rate)."},
		{"completed", s.Completed, "Fixed cart/total.go: total - discount → total * (1 - rate)"},
		{"next steps", s.NextSteps, "Make go test ./cart/ pass: TestTotalWithDiscount still fails (total_test.go:31: got 80.9, want 81)"},
		{"next steps", s.NextSteps, "next I would round to cents."},
	}
	for _, c := range checks {
		if !strings.Contains(c.got, c.want) {
			t.Errorf("%s = %q, want it to contain %q", c.field, c.got, c.want)
		}
	}
	// The failing run's output points at the test file: it was read too.
	if !slices.Equal(s.FilesModified, []string{"cart/total.go"}) || !slices.Equal(s.FilesRead, []string{"cart/total.go", "cart/total_test.go"}) {
		t.Errorf("files read %v, modified %v", s.FilesRead, s.FilesModified)
	}
}

// Code changed after the last passing run is a next step: run it again.
func TestLocalAgentAsksToRerunAfterLaterChanges(t *testing.T) {
	turn := runTurn(t, "tidy the cart code",
		toolCall{"Bash", `{"command":"go test ./cart/"}`, passingGoTest},
		toolCall{"Edit", `{"file_path":"/src/app/cart/total.go","old_string":"sum","new_string":"total"}`, `{}`},
	)
	out, err := local.Agent{}.Run(context.Background(), memory.AgentInput{ResumeID: "m", Request: "tidy the cart code", Turn: turn, Events: []memory.Event{{Kind: memory.EventStop}}})
	if err != nil || out.Summary == nil {
		t.Fatalf("no summary: %v", err)
	}
	if want := "Re-run go test ./cart/: cart/total.go changed after the last run."; out.Summary.NextSteps != want {
		t.Fatalf("next steps %q, want %q", out.Summary.NextSteps, want)
	}
}

// BenchmarkLocalAgent measures one Run per event over every golden
// session's events, with the turn so far as the worker passes it.
func BenchmarkLocalAgent(b *testing.B) {
	var inputs []memory.AgentInput
	for _, s := range loadLocalSessions(b) {
		prompt, request := 0, ""
		var turn []memory.Observation
		for _, p := range s.events {
			if p.HookEventName == "UserPromptSubmit" {
				prompt, request, turn = prompt+1, p.Prompt, nil
				continue
			}
			ev, ok := p.event(prompt)
			if !ok {
				continue
			}
			in := memory.AgentInput{ResumeID: "m", Request: request, Events: []memory.Event{ev}, Turn: turn}
			inputs = append(inputs, in)
			out, _ := local.Agent{}.Run(context.Background(), in)
			turn = append(turn, out.Observations...)
		}
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		for _, in := range inputs {
			if _, err := (local.Agent{}).Run(ctx, in); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(inputs)), "ns/event")
}

// FuzzLocalAgent feeds arbitrary tool inputs, responses and prompts to the
// agent: it must never panic, and it makes at most a decision and one
// observation per event, each with a title.
func FuzzLocalAgent(f *testing.F) {
	for _, s := range loadLocalSessions(f) {
		request := ""
		for _, p := range s.events {
			if p.HookEventName == "UserPromptSubmit" {
				request = p.Prompt
			}
			if ev, ok := p.event(1); ok && ev.Kind == memory.EventTool {
				f.Add(ev.ToolName, string(ev.ToolInput), string(ev.ToolResponse), request)
			}
		}
	}
	f.Add("Bash", `{"command":"a <<EOF\nb\nEOF"}`, `"plain text"`, "")
	f.Add("Edit", `"{\"file_path\":\"/x/y.go\",\"old_str`, `[{"type":"text","text":"hi"}]`, "fix it")
	f.Fuzz(func(t *testing.T, tool, input, response, request string) {
		ev := memory.Event{Kind: memory.EventTool, Cwd: "/src/app", ToolName: tool, ToolInput: json.RawMessage(input), ToolResponse: json.RawMessage(response)}
		before := runTurn(t, request, toolCall{"Bash", `{"command":"go test ./..."}`, failingGoTest})
		out, err := local.Agent{}.Run(context.Background(), memory.AgentInput{NewID: "m", Request: request, Events: []memory.Event{ev, {Kind: memory.EventStop}}, Turn: before})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Observations) > 2 || out.Summary == nil {
			t.Fatalf("%d observations, summary %v", len(out.Observations), out.Summary)
		}
		for _, o := range out.Observations {
			if o.Title == "" || o.Type == "" {
				t.Fatalf("observation without a title or type: %+v", o)
			}
		}
	})
}

// An edit of a settings file is titled by every setting it added, changed
// and removed, not "Edited <file>"; a password next to the change does not
// make it a security note.
func TestLocalAgentNamesTheSettingsAnEditChanged(t *testing.T) {
	edit := func(file, old, new string) toolCall {
		in, _ := json.Marshal(map[string]any{"file_path": "/src/app/" + file, "old_string": old, "new_string": new})
		return toolCall{"Edit", string(in), `{"originalFile":"db:\n  password: ${DB_PASSWORD}\nhttp:\n  timeout: 30s\n  retries: 3\n"}`}
	}
	for _, tc := range []struct {
		call  toolCall
		title string
	}{
		{edit("config/app.yaml", "  timeout: 30s\n  retries: 3", "  timeout: 60s\n  retries: 5\n  backoff: exponential"), "Changed timeout and retries, added backoff in config/app.yaml"},
		{edit("package.json", `    "lint": "eslint .",`, "    \"lint\": \"eslint .\",\n    \"i18n:check\": \"tsx scripts/check.ts\","), "Added i18n:check to package.json"},
		{edit(".env.example", "DB_HOST=localhost\nDB_POOL=5", "DB_HOST=localhost"), "Removed DB_POOL from .env.example"},
	} {
		obs := runTurn(t, "make the http client more patient", tc.call)
		if len(obs) != 1 || obs[0].Title != tc.title || obs[0].Type != memory.TypeChange {
			t.Errorf("got %+v, want a change titled %q", obs, tc.title)
		}
	}
}
