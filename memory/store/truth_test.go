package store_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/store"
)

// tool plays one tool run in a session of the project at cwd, with an
// event key when key is not "".
func tool(t *testing.T, m *store.Memory, csid, cwd, name string, in, out any, key string) memory.QueueResult {
	t.Helper()
	i, _ := json.Marshal(in)
	o, _ := json.Marshal(out)
	r, err := m.PostToolUse(context.Background(), memory.ToolUseParams{ContentSessionID: csid, Cwd: cwd, ToolName: name, ToolInput: i, ToolResponse: o, EventKey: key})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func read(t *testing.T, m *store.Memory, csid, path, content string) {
	t.Helper()
	tool(t, m, csid, filepath.Dir(path), "Read", map[string]any{"file_path": path},
		map[string]any{"type": "text", "file": map[string]any{"filePath": path, "content": content, "numLines": strings.Count(content, "\n"), "startLine": 1, "totalLines": strings.Count(content, "\n")}}, "")
}

func run(t *testing.T, m *store.Memory, csid, cwd, command, stdout, key string) {
	t.Helper()
	tool(t, m, csid, cwd, "Bash", map[string]any{"command": command}, map[string]any{"stdout": stdout, "stderr": "", "interrupted": false}, key)
}

func all(t *testing.T, m *store.Memory, project string) []memory.Observation {
	t.Helper()
	s, err := m.Search(context.Background(), memory.SearchParams{Project: project, Limit: memory.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	var ids []uint64
	for _, h := range s.Hits {
		ids = append(ids, h.ID)
	}
	if len(ids) == 0 {
		return nil
	}
	g, err := m.Get(context.Background(), memory.IDsParams{IDs: ids})
	if err != nil {
		t.Fatal(err)
	}
	return g.Observations
}

func titled(obs []memory.Observation, prefix string) []memory.Observation {
	var out []memory.Observation
	for _, o := range obs {
		if strings.HasPrefix(o.Title, prefix) {
			out = append(out, o)
		}
	}
	return out
}

const passing = "ok  \texample.com/calc\t%s\n"

// The same file read in two sessions while it holds the same bytes, and
// the same test run passing in both (in another time), are one record
// each, with a count of 2 and the latest time, shown by get, search and
// the timeline; a replayed event does not count again; the second
// session's turn still has them (its summary names the read). A read
// after the file changed, and the same edit made in two sessions, are
// never folded.
func TestTheSameFactIsFolded(t *testing.T) {
	project := filepath.Join(t.TempDir(), "calc")
	os.MkdirAll(project, 0o700)
	path := filepath.Join(project, "calc.go")
	src := "package calc\n\nfunc Add(a, b int) int { return a + b }\n"
	write(t, path, src)
	clock := newClock(time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC))
	m := MustOpen(t, store.Options{InMemory: true, Now: clock.Now})
	ctx := context.Background()
	other := filepath.Join(project, "other.go")
	for i, csid := range []string{"cc-1", "cc-2"} {
		clock.Add(time.Hour)
		promptIn(t, m, csid, project, "check calc")
		if i == 1 {
			// The second session edits another file first.
			write(t, other, "package calc\n// y\n")
			edit(t, m, csid, project, other, "", "// y")
			clock.Add(time.Minute)
		}
		read(t, m, csid, path, src)
		run(t, m, csid, project, "go test ./...", strings.ReplaceAll(passing, "%s", []string{"0.012s", "0.034s"}[i]), csid+"-test")
		waitIdle(t, m)
	}
	// The hook replays the second session's test run from its spool.
	if r := tool(t, m, "cc-2", project, "Bash", map[string]any{"command": "go test ./..."}, map[string]any{"stdout": "ok"}, "cc-2-test"); r.Queued {
		t.Fatalf("a replayed event was queued again: %+v", r)
	}
	if _, err := m.Stop(ctx, memory.StopParams{ContentSessionID: "cc-2"}); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, m)
	obs := titled(all(t, m, "calc"), "Read calc.go")
	obs = append(obs, titled(all(t, m, "calc"), "go test")...)
	if len(obs) != 2 || len(all(t, m, "calc")) != 3 {
		t.Fatalf("want 2 records and an edit, got %+v", all(t, m, "calc"))
	}
	for _, o := range obs {
		if o.Count != 2 || !o.LastSeen.Equal(clock.Now()) || o.LastSeen.Equal(o.Time) {
			t.Errorf("#%d %q: count %d, last seen %v (made %v), want 2 and %v", o.ID, o.Title, o.Count, o.LastSeen, o.Time, clock.Now())
		}
	}
	s, _ := m.Search(ctx, memory.SearchParams{Query: "go test", Project: "calc"})
	if len(s.Hits) == 0 || s.Hits[0].Count != 2 || s.Hits[0].LastSeen.IsZero() {
		t.Errorf("search hits: %+v", s.Hits)
	}
	tl, _ := m.Timeline(ctx, memory.TimelineParams{Anchor: json.RawMessage(itoa(obs[0].ID))})
	counted := 0
	for _, o := range tl.Observations {
		if o.Count == 2 {
			counted++
		}
	}
	if counted != 2 {
		t.Errorf("timeline: %+v", tl.Observations)
	}
	sess := mustSession(t, m, "cc-2")
	sums, _ := m.Summaries(ctx, sess.ID)
	if len(sums) != 1 || !strings.Contains(sums[0].Investigated, "Read calc.go") {
		t.Errorf("the second session's turn lost its folded read: %+v", sums)
	}
	// The second session lists what it saw in the order it saw it.
	rec, err := m.SessionRecords(ctx, memory.SessionParams{ContentSessionID: "cc-2"})
	var order []string
	for _, h := range rec.Observations {
		order = append(order, h.Title)
	}
	if err != nil || len(order) != 3 || !strings.HasPrefix(order[0], "Edited other.go") || order[1] != "Read calc.go" {
		t.Errorf("the second session's records: %v %q", err, order)
	}

	// The file changed: a read of it is a new fact (and the newer read
	// supersedes the older). An edit made twice is two records.
	clock.Add(time.Hour)
	src2 := src + "\nfunc Sub(a, b int) int { return a - b }\n"
	write(t, path, src2)
	promptIn(t, m, "cc-3", project, "add sub")
	read(t, m, "cc-3", path, src2)
	for _, csid := range []string{"cc-3", "cc-4"} {
		write(t, path, src2+"// x\n")
		edit(t, m, csid, project, path, "", "// x")
	}
	waitIdle(t, m)
	obs = all(t, m, "calc")
	reads := titled(obs, "Read calc.go")
	if len(reads) != 2 || reads[0].Count == reads[1].Count {
		t.Errorf("reads of a changed file: %+v", reads)
	}
	if edits := len(obs) - len(reads) - 2; edits != 2 {
		t.Errorf("want 2 edits, got %d: %+v", edits, obs)
	}
}

// Forgetting a fact seen many times forgets it whole, its count with it:
// the same fact seen once more is a new record of one.
func TestForgetAFoldedFact(t *testing.T) {
	project := filepath.Join(t.TempDir(), "calc")
	os.MkdirAll(project, 0o700)
	m := MustOpen(t, store.Options{InMemory: true})
	ctx := context.Background()
	for _, csid := range []string{"cc-1", "cc-2", "cc-3"} {
		promptIn(t, m, csid, project, "test")
		run(t, m, csid, project, "go test ./...", strings.ReplaceAll(passing, "%s", "0.1s"), "")
		waitIdle(t, m)
	}
	obs := all(t, m, "calc")
	if len(obs) != 1 || obs[0].Count != 3 {
		t.Fatalf("%+v", obs)
	}
	if _, err := m.Forget(ctx, memory.IDsParams{IDs: []uint64{obs[0].ID}}); err != nil {
		t.Fatal(err)
	}
	if r, err := m.SessionRecords(ctx, memory.SessionParams{ContentSessionID: "cc-2"}); err != nil || len(r.Observations) != 0 {
		t.Errorf("the session that saw it again still lists the forgotten fact: %v %+v", err, r.Observations)
	}
	promptIn(t, m, "cc-4", project, "test")
	run(t, m, "cc-4", project, "go test ./...", strings.ReplaceAll(passing, "%s", "0.2s"), "")
	waitIdle(t, m)
	if obs = all(t, m, "calc"); len(obs) != 1 || obs[0].Count > 1 {
		t.Errorf("after forget: %+v", obs)
	}
}

// An export of folded records imported elsewhere keeps their counts;
// imported again, it changes nothing.
func TestImportKeepsCounts(t *testing.T) {
	project := filepath.Join(t.TempDir(), "calc")
	os.MkdirAll(project, 0o700)
	m := MustOpen(t, store.Options{InMemory: true})
	ctx := context.Background()
	for _, csid := range []string{"cc-1", "cc-2"} {
		promptIn(t, m, csid, project, "test")
		run(t, m, csid, project, "go test ./...", strings.ReplaceAll(passing, "%s", "0.1s"), "")
		waitIdle(t, m)
	}
	var buf bytes.Buffer
	if _, err := m.Export(ctx, &buf, false); err != nil {
		t.Fatal(err)
	}
	other := MustOpen(t, store.Options{InMemory: true})
	for i := range 2 {
		res, err := other.Import(ctx, bytes.NewReader(buf.Bytes()), nil)
		if err != nil {
			t.Fatal(err)
		}
		if i == 1 && (res.Observations != 0 || res.Folded != 0 || res.Duplicates == 0) {
			t.Errorf("imported again: %+v", res)
		}
		waitIdle(t, other)
		if obs := all(t, other, "calc"); len(obs) != 1 || obs[0].Count != 2 {
			t.Errorf("import %d: %+v", i+1, obs)
		}
	}
}

func byTitle(t *testing.T, obs []memory.Observation, prefix string) memory.Observation {
	t.Helper()
	got := titled(obs, prefix)
	if len(got) != 1 {
		t.Fatalf("want one %q, got %+v", prefix, got)
	}
	return got[0]
}

// A later run of the very same command supersedes the earlier one (both
// kept, linked both ways, the state shown); the context leaves the older
// out unless pinned (then it is marked), a prompt that asks for it is
// given it marked, and it is its own again when the newer is marked
// wrong or forgotten. Another command supersedes nothing.
func TestALaterRunSupersedesTheEarlierOne(t *testing.T) {
	project := filepath.Join(t.TempDir(), "calc")
	os.MkdirAll(project, 0o700)
	m := MustOpen(t, store.Options{InMemory: true})
	ctx := context.Background()
	promptIn(t, m, "cc-1", project, "run the tests")
	tool(t, m, "cc-1", project, "Bash", map[string]any{"command": "go test ./..."}, map[string]any{"error": "Exit code 1\n--- FAIL: TestAdd\n    calc_test.go:9: got -1, want 3", "isError": true}, "")
	run(t, m, "cc-1", project, "go vet ./...", "", "")
	waitIdle(t, m)
	promptIn(t, m, "cc-2", project, "run the tests again")
	run(t, m, "cc-2", project, "go test ./...", strings.ReplaceAll(passing, "%s", "0.1s"), "")
	waitIdle(t, m)
	obs := all(t, m, "calc")
	failed, passed, vet := byTitle(t, obs, "TestAdd fails"), byTitle(t, obs, "go test ./... passes"), byTitle(t, obs, "go vet")
	if failed.SupersededBy != passed.ID || len(passed.Supersedes) != 1 || passed.Supersedes[0] != failed.ID || failed.State != memory.StateSuperseded ||
		vet.SupersededBy != 0 || vet.State != "" {
		t.Fatalf("links: failed %+v\npassed %+v\nvet %+v", failed, passed, vet)
	}
	s, _ := m.Search(ctx, memory.SearchParams{Query: "TestAdd", Project: "calc"})
	if len(s.Hits) == 0 || s.Hits[0].ID != failed.ID || s.Hits[0].State != memory.StateSuperseded || s.Hits[0].SupersededBy != passed.ID {
		t.Errorf("search: %+v", s.Hits)
	}
	c, _ := m.Context(ctx, memory.ContextParams{Project: "calc"})
	if strings.Contains(c.Context, "TestAdd fails") || len(c.Left) != 1 || c.Left[0].ID != failed.ID || !strings.Contains(c.Left[0].Reason, "superseded by #"+itoa(passed.ID)) {
		t.Errorf("context: left %+v\n%s", c.Left, c.Context)
	}
	// A prompt that asks for the old failure is given it, marked.
	r, err := m.UserPromptSubmit(ctx, memory.UserPromptParams{ContentSessionID: "cc-ask", Cwd: project, Prompt: "why did TestAdd fail with got -1, want 3?"})
	if err != nil || !strings.Contains(r.Context, "#"+itoa(failed.ID)+" · discovery · TestAdd fails: got -1, want 3 · calc_test.go [superseded by #"+itoa(passed.ID)+"]") {
		t.Errorf("prompt recall: %v\n%s", err, r.Context)
	}
	if _, err := m.Pin(ctx, memory.IDsParams{IDs: []uint64{failed.ID}}); err != nil {
		t.Fatal(err)
	}
	if c, _ = m.Context(ctx, memory.ContextParams{Project: "calc"}); !strings.Contains(c.Context, "[superseded by #"+itoa(passed.ID)+"]") {
		t.Errorf("a pinned superseded record is not marked:\n%s", c.Context)
	}
	m.Unpin(ctx, memory.IDsParams{IDs: []uint64{failed.ID}})
	if _, err := m.MarkWrong(ctx, memory.IDsParams{IDs: []uint64{passed.ID}}); err != nil {
		t.Fatal(err)
	}
	if f := byTitle(t, all(t, m, "calc"), "TestAdd fails"); f.SupersededBy != 0 || f.State != "" {
		t.Errorf("superseded by a wrong record: %+v", f)
	}
	m.UnmarkWrong(ctx, memory.IDsParams{IDs: []uint64{passed.ID}})

	// Run again and forget the newer: the older is its own again.
	promptIn(t, m, "cc-3", project, "and again")
	run(t, m, "cc-3", project, "go test ./...", "ok  \texample.com/calc\t(cached)\n", "")
	waitIdle(t, m)
	cached := all(t, m, "calc")[0]
	if len(cached.Supersedes) != 1 || cached.Supersedes[0] != passed.ID {
		t.Fatalf("the third run supersedes %v", cached.Supersedes)
	}
	older := cached.Supersedes[0]
	if _, err := m.Forget(ctx, memory.IDsParams{IDs: []uint64{cached.ID}}); err != nil {
		t.Fatal(err)
	}
	g, _ := m.Get(ctx, memory.IDsParams{IDs: []uint64{older}})
	if len(g.Observations) != 1 || g.Observations[0].SupersededBy != 0 {
		t.Errorf("after forgetting the newer: %+v", g.Observations)
	}
	if d, err := m.Doctor(ctx); err != nil || len(d.Problems) != 0 {
		t.Errorf("doctor: %v %+v", err, d.Problems)
	}
}

// A decision that names, as what it replaces, what an earlier one chose
// supersedes it; one that names what the earlier one replaced, or
// another subject, does not.
func TestALaterDecisionSupersedesTheEarlierOne(t *testing.T) {
	m := MustOpen(t, store.Options{InMemory: true})
	ctx := context.Background()
	decide := func(csid, prompt string) {
		mustPrompt(t, m, csid, prompt)
		mustTool(t, m, csid, "Bash", `{"command":"ls"}`, `{"stdout":"go.mod"}`)
		waitIdle(t, m)
	}
	decide("cc-1", "Let's use pnpm instead of npm for installs.")
	decide("cc-2", "We decided to use zap for logging.")
	decide("cc-3", "Let's use bun rather than npm in CI.")
	decide("cc-4", "Switch from pnpm to yarn, please.")
	obs, _ := m.Search(ctx, memory.SearchParams{Types: []string{memory.TypeDecision}, Limit: 10})
	sup := map[string]uint64{}
	for _, h := range obs.Hits {
		sup[h.Title] = h.SupersededBy
	}
	if len(sup) != 4 {
		t.Fatalf("decisions: %+v", obs.Hits)
	}
	for title, by := range sup {
		if want := strings.Contains(title, "pnpm instead of npm"); (by != 0) != want {
			t.Errorf("%q superseded by #%d, want superseded %v", title, by, want)
		}
	}
}

// An edit that rewrites every line an earlier edit of the file wrote
// supersedes it; an edit of other lines does not.
func TestAnEditThatRewritesAnEarlierOneSupersedesIt(t *testing.T) {
	project := filepath.Join(t.TempDir(), "calc")
	os.MkdirAll(project, 0o700)
	path := filepath.Join(project, "calc.go")
	m := MustOpen(t, store.Options{InMemory: true})
	promptIn(t, m, "cc-e", project, "fix add")
	write(t, path, "package calc\n\nfunc add(a, b int) int {\n\treturn a + b + 0\n}\n")
	edit(t, m, "cc-e", project, path, "\treturn a - b", "\treturn a + b + 0")
	write(t, path, "package calc\n\n// add adds.\nfunc add(a, b int) int {\n\treturn a + b + 0\n}\n")
	edit(t, m, "cc-e", project, path, "func add(a, b int) int {", "// add adds.\nfunc add(a, b int) int {")
	waitIdle(t, m)
	promptIn(t, m, "cc-f", project, "simplify add")
	write(t, path, "package calc\n\n// add adds.\nfunc add(a, b int) int {\n\treturn a + b\n}\n")
	edit(t, m, "cc-f", project, path, "\treturn a + b + 0", "\treturn a + b")
	waitIdle(t, m)
	obs := all(t, m, "calc")
	if len(obs) != 3 {
		t.Fatalf("%+v", obs)
	}
	newest, doc, first := obs[0], obs[1], obs[2]
	if first.SupersededBy != newest.ID || doc.SupersededBy != 0 || len(newest.Supersedes) != 1 {
		t.Errorf("first %d→%d, doc %d→%d, newest %d supersedes %v", first.ID, first.SupersededBy, doc.ID, doc.SupersededBy, newest.ID, newest.Supersedes)
	}
}

// A summary's item that is a dead record's title is cut whole, never a
// longer item that starts with it.
func TestCutItem(t *testing.T) {
	for _, tc := range []struct{ text, title, want string }{
		{"Fixed a.go. Read b.go.", "Fixed a.go", " Read b.go."},
		{"Read a.go.bak. Read a.go.", "Read a.go", "Read a.go.bak. "},
		{"Read a.go", "Read a.go", ""},
		{"xRead a.go.", "Read a.go", "xRead a.go."},
	} {
		if got, _ := store.CutItem(tc.text, tc.title); got != tc.want {
			t.Errorf("cutItem(%q, %q) = %q, want %q", tc.text, tc.title, got, tc.want)
		}
	}
}

// An import gives the links between records (superseded, reverted) the
// ids the records get in the store they are imported into.
func TestImportKeepsLinks(t *testing.T) {
	project := filepath.Join(t.TempDir(), "calc")
	os.MkdirAll(project, 0o700)
	m := MustOpen(t, store.Options{InMemory: true})
	ctx := context.Background()
	promptIn(t, m, "cc-1", project, "test")
	tool(t, m, "cc-1", project, "Bash", map[string]any{"command": "go test ./..."}, map[string]any{"error": "Exit code 1\n--- FAIL: TestAdd\n    calc_test.go:9: got -1, want 3", "isError": true}, "")
	run(t, m, "cc-1", project, "go test ./...", strings.ReplaceAll(passing, "%s", "0.1s"), "")
	waitIdle(t, m)
	var buf bytes.Buffer
	if _, err := m.Export(ctx, &buf, false); err != nil {
		t.Fatal(err)
	}
	other := MustOpen(t, store.Options{InMemory: true})
	if _, err := other.Save(ctx, memory.SaveParams{Project: "calc", Text: "an older note, so that the ids move"}); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Import(ctx, bytes.NewReader(buf.Bytes()), nil); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, other)
	obs := all(t, other, "calc")
	failed, passed := byTitle(t, obs, "TestAdd fails"), byTitle(t, obs, "go test ./... passes")
	if failed.SupersededBy != passed.ID || len(passed.Supersedes) != 1 || passed.Supersedes[0] != failed.ID || failed.ID == 1 {
		t.Errorf("links after import: failed #%d → %d, passed #%d → %v", failed.ID, failed.SupersededBy, passed.ID, passed.Supersedes)
	}
}
