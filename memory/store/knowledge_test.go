package store_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/rules"
	"github.com/mnemo-dev/mnemo/memory/store"
)

// history plays sessions of a project through the stages, one hour apart,
// with the local agent: each its own content session, ended.
type history struct {
	t       *testing.T
	m       *store.Memory
	clock   *testClock
	project string // the project's folder
	n       int
}

func newHistory(t *testing.T) *history {
	t.Helper()
	project := filepath.Join(t.TempDir(), "calc")
	if err := os.MkdirAll(project, 0o700); err != nil {
		t.Fatal(err)
	}
	clock := newClock(time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC))
	return &history{t: t, m: MustOpen(t, store.Options{InMemory: true, Now: clock.Now}), clock: clock, project: project}
}

// session plays one session: a prompt, then each step (a func of the
// session's id), then its end.
func (h *history) session(prompt string, steps ...func(csid string)) string {
	h.t.Helper()
	h.n++
	csid := fmt.Sprintf("cc-%d", h.n)
	h.clock.Add(time.Hour)
	promptIn(h.t, h.m, csid, h.project, prompt)
	for _, step := range steps {
		h.clock.Add(time.Minute)
		step(csid)
	}
	waitIdle(h.t, h.m)
	if _, err := h.m.SessionEnd(context.Background(), memory.SessionEndParams{ContentSessionID: csid}); err != nil {
		h.t.Fatal(err)
	}
	return csid
}

// pass runs a command that exits 0 with out.
func (h *history) pass(command, out string) func(string) {
	return func(csid string) {
		tool(h.t, h.m, csid, h.project, "Bash", map[string]any{"command": command}, map[string]any{"stdout": out, "stderr": "", "interrupted": false}, "")
	}
}

// fail runs a command that fails (Claude Code's PostToolUseFailure).
func (h *history) fail(command, err string) func(string) {
	return func(csid string) {
		tool(h.t, h.m, csid, h.project, "Bash", map[string]any{"command": command}, map[string]any{"error": err, "isError": true}, "")
	}
}

// change edits a file of the project.
func (h *history) change(file, old, new string) func(string) {
	return func(csid string) {
		path := filepath.Join(h.project, file)
		write(h.t, path, "package calc\n"+new+"\n")
		edit(h.t, h.m, csid, h.project, path, old, new)
	}
}

func (h *history) knowledge(refresh bool) memory.Knowledge {
	h.t.Helper()
	k, err := h.m.Knowledge(context.Background(), memory.KnowledgeParams{Cwd: h.project, Refresh: refresh})
	if err != nil {
		h.t.Fatal(err)
	}
	return k
}

func (h *history) context() memory.ContextResult {
	h.t.Helper()
	res, err := h.m.Context(context.Background(), memory.ContextParams{Cwd: h.project})
	if err != nil {
		h.t.Fatal(err)
	}
	return res
}

// line returns the knowledge line of a kind whose text holds part.
func line(k memory.Knowledge, kind, part string) *memory.KnowledgeLine {
	for i, l := range k.Lines {
		if l.Kind == kind && strings.Contains(l.Text, part) {
			return &k.Lines[i]
		}
	}
	return nil
}

const (
	addFails  = "Exit code 1\n--- FAIL: TestAdd (0.00s)\n    calc_test.go:9: Add(2, 2) = 5, want 4\nFAIL\nFAIL\texample.com/calc\t%s\nFAIL\n"
	addPasses = "ok  \texample.com/calc\t%s\n"
	noTarget  = "Exit code 2\nmake: *** No rule to make target 'test'.  Stop.\n"
)

// The four kinds of knowledge from two sessions' records: the commands
// that passed, the error both sessions saw and the change after which the
// tests passed, the files edited together, the decision. Every line names
// records of the project that show it, and the next session's context
// carries the block, audited.
func TestKnowledgeAddsUpTheRecords(t *testing.T) {
	h := newHistory(t)
	h.session("add Add and its test",
		h.pass("make test", fmt.Sprintf(addPasses, "0.010s")),
		h.change("calc.go", "", "func Add(a, b int) int { return a + b + 1 }"),
		h.change("calc_test.go", "", "func TestAdd(t *testing.T) {}"),
		h.fail("go test ./...", fmt.Sprintf(addFails, "0.012s")),
		h.change("calc.go", "a + b + 1", "a + b"),
		h.pass("go test ./...", fmt.Sprintf(addPasses, "0.011s")),
	)
	h.session("let's use int64 instead of int for amounts",
		h.change("calc.go", "a + b", "a + b + 1 // int64"),
		h.change("calc_test.go", "", "func TestAdd64(t *testing.T) {}"),
		h.fail("go test ./... 2>&1 | tail -20", fmt.Sprintf(addFails, "0.013s")),
		h.change("calc.go", "a + b + 1 // int64", "a + b // int64"),
		h.pass("go test ./...", fmt.Sprintf(addPasses, "0.014s")),
	)
	k := h.knowledge(true)
	t.Logf("knowledge:\n%s", dump(k))

	cmd := line(k, memory.KnowledgeCommand, "`go test ./...`")
	if cmd == nil || !strings.Contains(cmd.Text, "in 2 sessions") || !strings.Contains(cmd.Text, "failed 2×") {
		t.Errorf("no line of how to run the tests with both sessions' runs: %+v", cmd)
	}
	if line(k, memory.KnowledgeCommand, "`make test`") == nil {
		t.Errorf("make test passed and nothing replaced it, but it is not offered")
	}
	fail := line(k, memory.KnowledgeFailure, "Add(2, 2) = 5, want 4")
	if fail == nil || !strings.Contains(fail.Text, "in 2 sessions") || !strings.Contains(fail.Text, "passed again after changing `calc.go`") {
		t.Errorf("no line of the error both sessions saw and its fix: %+v", fail)
	}
	if line(k, memory.KnowledgeTogether, "`calc.go` and `calc_test.go`") == nil {
		t.Errorf("calc.go and calc_test.go changed together in both sessions: no line")
	}
	dec := line(k, memory.KnowledgeDecision, "int64")
	if dec == nil {
		t.Errorf("no line of the decision in force")
	}
	// Every line links to records of the project that say what it says.
	for _, l := range k.Lines {
		if len(l.IDs) == 0 {
			t.Errorf("line %q names no record", l.Text)
			continue
		}
		got, err := h.m.Get(context.Background(), memory.IDsParams{IDs: l.IDs})
		if err != nil || len(got.Missing) > 0 {
			t.Fatalf("line %q: records %v: %v, missing %v", l.Text, l.IDs, err, got.Missing)
		}
		for _, o := range got.Observations {
			if o.Project != "calc" {
				t.Errorf("line %q cites #%d of project %q", l.Text, o.ID, o.Project)
			}
		}
		if !slices.ContainsFunc(got.Observations, func(o memory.Observation) bool { return shows(&o, l) }) {
			t.Errorf("no record of line %q (%v) shows its subject %q", l.Text, l.IDs, l.Key)
		}
	}

	// The next session's context carries the block, and its audit says
	// why each record of it was given.
	start, err := h.m.SessionStart(context.Background(), memory.SessionStartParams{ContentSessionID: "cc-next", Cwd: h.project, Source: "startup"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Project knowledge", "`go test ./...` passed", "Add(2, 2) = 5, want 4"} {
		if !strings.Contains(start.Context, want) {
			t.Errorf("the context lacks %q:\n%s", want, start.Context)
		}
	}
	inj, err := h.m.InjectionsOf(context.Background(), memory.InjectionsParams{Project: "calc", Limit: 1})
	if err != nil || len(inj.Injections) != 1 {
		t.Fatalf("injections: %v %+v", err, inj)
	}
	audited := 0
	for _, it := range inj.Injections[0].Items {
		if strings.HasPrefix(it.Reason, "project knowledge, ") {
			audited++
		}
	}
	if audited == 0 {
		t.Errorf("the injection's audit gives no reason of project knowledge: %+v", inj.Injections[0].Items)
	}
}

// shows reports whether a record is about what a knowledge line says: the
// command it ran, the error it saw, a file it changed, the decision.
func shows(o *memory.Observation, l memory.KnowledgeLine) bool {
	text := strings.Join(append([]string{o.Title, o.Subtitle, o.Narrative}, append(o.Facts, o.FilesModified...)...), "\n")
	for _, part := range strings.Fields(l.Key) {
		if strings.Contains(text, part) {
			return true
		}
	}
	return false
}

func dump(k memory.Knowledge) string {
	var b strings.Builder
	for _, l := range k.Lines {
		fmt.Fprintf(&b, "%s: %s %v\n", l.Kind, l.Text, l.IDs)
	}
	return b.String()
}

// A line disappears when its records are forgotten or marked wrong: at
// once from what is given (the context and mnemo/knowledge), and from what
// is derived next.
func TestKnowledgeLineGoesWithItsRecords(t *testing.T) {
	h := newHistory(t)
	for i := range 2 {
		h.session("fix Add",
			h.fail("go test ./...", fmt.Sprintf(addFails, fmt.Sprintf("0.0%d1s", i))),
			h.change("calc.go", "a + b + 1", "a + b"),
			h.pass("go test ./...", fmt.Sprintf(addPasses, fmt.Sprintf("0.0%d2s", i))),
		)
	}
	h.session("we decided to use int64 for amounts", h.change("calc.go", "int", "int64"))
	k := h.knowledge(true)
	fail := line(k, memory.KnowledgeFailure, "want 4")
	dec := line(k, memory.KnowledgeDecision, "int64")
	if fail == nil || dec == nil {
		t.Fatalf("want a failure and a decision line:\n%s", dump(k))
	}
	if ctx := h.context().Context; !strings.Contains(ctx, "want 4") {
		t.Fatalf("the context lacks the failure line:\n%s", ctx)
	}

	// Forget one of the failures: its line is no longer given.
	failedRun := fail.IDs[len(fail.IDs)-1]
	if _, err := h.m.Forget(context.Background(), memory.IDsParams{IDs: []uint64{failedRun}}); err != nil {
		t.Fatal(err)
	}
	if got := h.knowledge(false); line(got, memory.KnowledgeFailure, "want 4") != nil {
		t.Errorf("a line whose record was forgotten is still given:\n%s", dump(got))
	}
	if ctx := h.context().Context; strings.Contains(ctx, "want 4") {
		t.Errorf("the context still gives the line of a forgotten record:\n%s", ctx)
	}
	if got := h.knowledge(true); line(got, memory.KnowledgeFailure, "want 4") != nil {
		t.Errorf("one session's failure left, and it still keeps failing:\n%s", dump(got))
	}

	// Mark the decision wrong: its line goes, and does not come back.
	if _, err := h.m.MarkWrong(context.Background(), memory.IDsParams{IDs: dec.IDs}); err != nil {
		t.Fatal(err)
	}
	if got := h.knowledge(false); line(got, memory.KnowledgeDecision, "int64") != nil {
		t.Errorf("a decision marked wrong is still given:\n%s", dump(got))
	}
	if got := h.knowledge(true); line(got, memory.KnowledgeDecision, "int64") != nil {
		t.Errorf("a decision marked wrong is derived again:\n%s", dump(got))
	}
}

// The knowledge changes when the facts do: a test command whose target
// went away and another runner that passed since stops being offered; a
// command replaced by another runner of its kind too; an error that
// passed again after a change says so.
func TestKnowledgeFollowsTheFacts(t *testing.T) {
	h := newHistory(t)
	h.session("run the tests", h.pass("make test", fmt.Sprintf(addPasses, "0.01s")), h.pass("npm run lint", "done\n"), h.pass("npm run build", "built\n"))
	h.session("run the tests again", h.pass("make test", fmt.Sprintf(addPasses, "0.02s")))
	k := h.knowledge(true)
	if line(k, memory.KnowledgeCommand, "`make test`") == nil {
		t.Fatalf("make test is not offered:\n%s", dump(k))
	}

	// The Makefile's test target went away; the project runs just now.
	h.session("run the tests",
		h.fail("make test", noTarget),
		h.pass("just test", fmt.Sprintf(addPasses, "0.03s")),
	)
	k = h.knowledge(true)
	if l := line(k, memory.KnowledgeCommand, "`make test`"); l != nil {
		t.Errorf("make test stopped working, but is offered: %s", l.Text)
	}
	if line(k, memory.KnowledgeCommand, "`just test`") == nil {
		t.Errorf("just test is not offered:\n%s", dump(k))
	}

	// The lint runs fail, and another runner passes after: replaced.
	h.session("lint", h.fail("npm run lint", "Exit code 1\n/src/a.js\n  1:1  error  'x' is not defined  no-undef\n"), h.pass("pnpm run lint", "done\n"))
	k = h.knowledge(true)
	if l := line(k, memory.KnowledgeCommand, "`npm run lint`"); l != nil {
		t.Errorf("npm run lint was replaced by pnpm run lint, but is offered: %s", l.Text)
	}

	// A decision moves the builds from npm to pnpm: npm's build is no
	// longer offered, and its passing run leaves the context.
	h.session("Let's switch from npm to pnpm for the builds.", h.pass("pnpm run build", "built\n"))
	k = h.knowledge(true)
	if l := line(k, memory.KnowledgeCommand, "`npm run build`"); l != nil {
		t.Errorf("a decision moved the builds away from npm, but npm run build is offered: %s", l.Text)
	}
	ctx := h.context()
	if strings.Contains(ctx.Context, "· npm run build succeeds") || !strings.Contains(ctx.Context, "`pnpm run build` passed") {
		t.Errorf("the context still says npm builds, or not that pnpm does:\n%s", ctx.Context)
	}
	if !slices.ContainsFunc(ctx.Left, func(it memory.InjectionItem) bool { return strings.Contains(it.Reason, "moved away from it") }) {
		t.Errorf("the preview does not say why npm's build was left out: %+v", ctx.Left)
	}

	// An error two sessions saw, not passed since; then passed after a change.
	h.session("fix Add", h.fail("just test", fmt.Sprintf(addFails, "0.04s")))
	h.session("fix Add", h.fail("just test", fmt.Sprintf(addFails, "0.05s")))
	k = h.knowledge(true)
	open := line(k, memory.KnowledgeFailure, "want 4")
	if open == nil || !strings.Contains(open.Text, "not passed since") {
		t.Fatalf("want the failing error, not passed since:\n%s", dump(k))
	}
	h.session("fix Add for good", h.change("calc.go", "a + b + 1", "a + b"), h.pass("just test", fmt.Sprintf(addPasses, "0.06s")))
	k = h.knowledge(true)
	fixed := line(k, memory.KnowledgeFailure, "want 4")
	if fixed == nil || fixed.Text == open.Text || !strings.Contains(fixed.Text, "passed again after changing `calc.go`") {
		t.Errorf("the error stopped recurring after calc.go changed; the line says:\n%s", dump(k))
	}
}

// The block does not repeat what the project's own CLAUDE.md or AGENTS.md
// says (Mnemo's own block in AGENTS.md aside): the line is left out, and
// the audit says why.
func TestKnowledgeLeavesOutWhatInstructionsSay(t *testing.T) {
	h := newHistory(t)
	for i := range 2 {
		h.session("run the tests", h.pass("go test ./...", fmt.Sprintf(addPasses, fmt.Sprintf("0.0%ds", i))), h.pass("go vet ./...", ""))
	}
	h.knowledge(true)
	// AGENTS.md holds both commands, but only inside Mnemo's block.
	if _, err := rules.Write(filepath.Join(h.project, "AGENTS.md"), "- `go test ./...` and `go vet ./...`", "# Agents\n"); err != nil {
		t.Fatal(err)
	}
	ctx := h.context()
	if !strings.Contains(ctx.Context, "`go test ./...` passed") || !strings.Contains(ctx.Context, "`go vet ./...` passed") {
		t.Fatalf("Mnemo's own block kept lines out of the context:\n%s", ctx.Context)
	}
	if err := os.WriteFile(filepath.Join(h.project, "CLAUDE.md"), []byte("# calc\n\nRun the tests with `go  test ./...` before committing.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx = h.context()
	if strings.Contains(ctx.Context, "`go test ./...` passed") {
		t.Errorf("the context repeats what CLAUDE.md says:\n%s", ctx.Context)
	}
	if !strings.Contains(ctx.Context, "`go vet ./...` passed") {
		t.Errorf("a line CLAUDE.md does not say was left out:\n%s", ctx.Context)
	}
	if !slices.ContainsFunc(ctx.Left, func(it memory.InjectionItem) bool {
		return strings.Contains(it.Reason, "already in CLAUDE.md")
	}) {
		t.Errorf("the preview does not say the line was left out for CLAUDE.md: %+v", ctx.Left)
	}
}
