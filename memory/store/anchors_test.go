package store_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/store"
)

// edit plays an Edit of path as Claude Code reports it, once the file
// holds its result.
func edit(t *testing.T, m *store.Memory, csid, cwd, path, oldText, newText string) {
	t.Helper()
	in, _ := json.Marshal(map[string]any{"file_path": path, "old_string": oldText, "new_string": newText})
	out, _ := json.Marshal(map[string]any{"filePath": path, "oldString": oldText, "newString": newText})
	if _, err := m.PostToolUse(context.Background(), memory.ToolUseParams{ContentSessionID: csid, Cwd: cwd, ToolName: "Edit", ToolInput: in, ToolResponse: out}); err != nil {
		t.Fatal(err)
	}
}

func promptIn(t *testing.T, m *store.Memory, csid, cwd, prompt string) {
	t.Helper()
	if _, err := m.UserPromptSubmit(context.Background(), memory.UserPromptParams{ContentSessionID: csid, Cwd: cwd, Prompt: prompt}); err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	// A later write in the same instant must still look changed.
	later := time.Now().Add(time.Duration(len(text)) * time.Millisecond)
	os.Chtimes(path, later, later)
}

// A record of an edit goes current → changed (the file changed, the
// edited function is still there) → gone (the function is gone, then the
// file): search, get and the context say so, the context marks a changed
// record and leaves a gone one out, and the audit says why.
func TestAnchorsFollowTheCode(t *testing.T) {
	dir := t.TempDir()
	project := filepath.Join(dir, "calc")
	if err := os.MkdirAll(filepath.Join(project, ".git"), 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(project, "calc.go")
	m := MustOpen(t, store.Options{InMemory: true})
	ctx := context.Background()
	promptIn(t, m, "cc-a", project, "fix add")
	write(t, path, "package calc\n\nfunc add(a, b int) int {\n\treturn a + b\n}\n")
	edit(t, m, "cc-a", project, path, "\treturn a - b", "\treturn a + b")
	waitIdle(t, m)

	found, err := m.Search(ctx, memory.SearchParams{Project: "calc", Limit: 5})
	if err != nil || len(found.Hits) != 1 {
		t.Fatalf("search: %v %+v", err, found)
	}
	id := found.Hits[0].ID
	state := func() (hit, got string, ctxRes memory.ContextResult) {
		t.Helper()
		s, err := m.Search(ctx, memory.SearchParams{Project: "calc", Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range s.Hits {
			if h.ID == id {
				hit = h.State
			}
		}
		g, err := m.Get(ctx, memory.IDsParams{IDs: []uint64{id}})
		if err != nil || len(g.Observations) != 1 {
			t.Fatalf("get: %v %+v", err, g)
		}
		o := g.Observations[0]
		if len(o.FileAnchors) != 1 || o.FileAnchors[0].File != "calc.go" || o.FileAnchors[0].Blob == "" || len(o.FileAnchors[0].Region) != 1 {
			t.Fatalf("anchors: %+v", o.FileAnchors)
		}
		if ctxRes, err = m.Context(ctx, memory.ContextParams{Project: "calc"}); err != nil {
			t.Fatal(err)
		}
		return hit, o.State, ctxRes
	}

	hit, got, c := state()
	if hit != memory.StateCurrent || got != memory.StateCurrent || !strings.Contains(c.Context, "#"+itoa(id)) || strings.Contains(c.Context, "[changed since]") {
		t.Errorf("as made: hit %q, get %q, context:\n%s", hit, got, c.Context)
	}

	write(t, path, "package calc\n\n// add adds.\nfunc add(a, b int) int {\n\treturn a + b\n}\n\nfunc mul(a, b int) int { return a * b }\n")
	hit, got, c = state()
	if hit != memory.StateChanged || got != memory.StateChanged || !strings.Contains(c.Context, "[changed since]") || !strings.Contains(c.Items[0].Reason, "changed") {
		t.Errorf("file changed: hit %q, get %q, items %+v, context:\n%s", hit, got, c.Items, c.Context)
	}

	write(t, path, "package calc\n\nfunc mul(a, b int) int { return a * b }\n")
	hit, got, c = state()
	if hit != memory.StateGone || got != memory.StateGone || strings.Contains(c.Context, "#"+itoa(id)+" ") || len(c.Left) != 1 || c.Left[0].ID != id {
		t.Errorf("function gone: hit %q, get %q, left %+v, context:\n%s", hit, got, c.Left, c.Context)
	}
	// The injection given to a session says what it left out.
	if _, err := m.SessionStart(ctx, memory.SessionStartParams{ContentSessionID: "cc-b", Cwd: project, Source: "startup"}); err != nil {
		t.Fatal(err)
	}
	inj, err := m.InjectionsOf(ctx, memory.InjectionsParams{Project: "calc"})
	if err != nil || len(inj.Injections) != 1 || len(inj.Injections[0].Left) != 1 || !strings.Contains(inj.Injections[0].Left[0].Reason, "gone") {
		t.Errorf("the audit: %v %+v", err, inj)
	}

	os.Remove(path)
	if hit, got, _ = state(); hit != memory.StateGone || got != memory.StateGone {
		t.Errorf("file gone: hit %q, get %q", hit, got)
	}
}

// A session that tries a fix, sees the test still fail, reverts it and
// fixes it another way: the next context has the fix that worked, not the
// attempt nor its undo.
func TestRevertedAttemptIsNotInTheNextContext(t *testing.T) {
	project := filepath.Join(t.TempDir(), "calc")
	os.MkdirAll(project, 0o700)
	path := filepath.Join(project, "calc.py")
	m := MustOpen(t, store.Options{InMemory: true})
	promptIn(t, m, "cc-r", project, "make mul pass")
	write(t, path, "def mul(a, b):\n    return a ** b\n")
	edit(t, m, "cc-r", project, path, "    return a + b", "    return a ** b")
	write(t, path, "def mul(a, b):\n    return a + b\n")
	edit(t, m, "cc-r", project, path, "    return a ** b", "    return a + b")
	write(t, path, "def mul(a, b):\n    return a * b\n")
	edit(t, m, "cc-r", project, path, "    return a + b", "    return a * b")
	waitIdle(t, m)
	c, err := m.Context(context.Background(), memory.ContextParams{Project: "calc"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(c.Context, "a * b") || strings.Contains(c.Context, "a ** b") || len(c.ObservationIDs) != 1 || len(c.Left) != 2 {
		t.Errorf("ids %v, left %+v, context:\n%s", c.ObservationIDs, c.Left, c.Context)
	}
}

// History brought in after the fact (a back-fill) has no anchors: what
// the files hold now says nothing of what it saw.
func TestBackfilledEventsHaveNoAnchors(t *testing.T) {
	project := filepath.Join(t.TempDir(), "calc")
	os.MkdirAll(project, 0o700)
	path := filepath.Join(project, "calc.py")
	write(t, path, "def mul(a, b):\n    return a * b\n")
	m := MustOpen(t, store.Options{InMemory: true})
	in, _ := json.Marshal(map[string]any{"file_path": path})
	if _, err := m.PostToolUse(context.Background(), memory.ToolUseParams{ContentSessionID: "cc-old", Cwd: project, ToolName: "Read", ToolInput: in,
		ToolResponse: json.RawMessage(`{"type":"text","file":{"filePath":"` + path + `","content":"def mul(a, b):"}}`), At: time.Now().Add(-48 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, m)
	s, _ := m.Search(context.Background(), memory.SearchParams{Project: "calc"})
	if len(s.Hits) != 1 || s.Hits[0].State != "" {
		t.Errorf("a back-filled read: %+v", s.Hits)
	}
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }

// An edit undone later in its session, with nothing after it: both the
// attempt and the undo are marked reverted, linked to each other, and
// neither is given to the next session; the file is as it was.
func TestUndoneEditIsReverted(t *testing.T) {
	project := filepath.Join(t.TempDir(), "calc")
	os.MkdirAll(project, 0o700)
	path := filepath.Join(project, "calc.py")
	m := MustOpen(t, store.Options{InMemory: true})
	ctx := context.Background()
	promptIn(t, m, "cc-u", project, "try a faster mul")
	write(t, path, "def mul(a, b):\n    return sum([a] * b)\n")
	edit(t, m, "cc-u", project, path, "    return a * b", "    return sum([a] * b)")
	write(t, path, "def mul(a, b):\n    return a * b\n")
	edit(t, m, "cc-u", project, path, "    return sum([a] * b)", "    return a * b")
	waitIdle(t, m)
	s, err := m.Search(ctx, memory.SearchParams{Project: "calc"})
	if err != nil || len(s.Hits) != 2 {
		t.Fatalf("search: %v %+v", err, s)
	}
	for _, h := range s.Hits {
		if h.State != memory.StateReverted {
			t.Errorf("#%d %q: state %q, want reverted", h.ID, h.Title, h.State)
		}
	}
	g, _ := m.Get(ctx, memory.IDsParams{IDs: []uint64{s.Hits[0].ID, s.Hits[1].ID}})
	if g.Observations[0].Reverted != g.Observations[1].ID || g.Observations[1].Reverted != g.Observations[0].ID {
		t.Errorf("not linked: %d→%d, %d→%d", g.Observations[0].ID, g.Observations[0].Reverted, g.Observations[1].ID, g.Observations[1].Reverted)
	}
	c, err := m.Context(ctx, memory.ContextParams{Project: "calc"})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.ObservationIDs) != 0 || len(c.Left) != 2 || !strings.Contains(c.Left[0].Reason, "reverted") {
		t.Errorf("ids %v, left %+v, context:\n%s", c.ObservationIDs, c.Left, c.Context)
	}
}

// The last session's summary names what its turn did: once the function
// an edit wrote is deleted from the tree, the summary's line that repeats
// the edit's title leaves the context with the edit, the rest of the
// summary stays, and the audit says why.
func TestSummaryLineOfAGoneRecordLeavesTheContext(t *testing.T) {
	project := filepath.Join(t.TempDir(), "calc")
	os.MkdirAll(project, 0o700)
	path := filepath.Join(project, "calc.go")
	m := MustOpen(t, store.Options{InMemory: true})
	ctx := context.Background()
	promptIn(t, m, "cc-s", project, "fix add")
	write(t, path, "package calc\n\nfunc add(a, b int) int {\n\treturn a + b\n}\n")
	edit(t, m, "cc-s", project, path, "\treturn a - b", "\treturn a + b")
	if _, err := m.Stop(ctx, memory.StopParams{ContentSessionID: "cc-s", LastAssistantMessage: "The sign in add was wrong."}); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, m)
	c, err := m.Context(ctx, memory.ContextParams{Project: "calc"})
	if err != nil || len(c.ObservationIDs) != 1 {
		t.Fatalf("%v %+v", err, c)
	}
	g, _ := m.Get(ctx, memory.IDsParams{IDs: c.ObservationIDs})
	id, title := g.Observations[0].ID, g.Observations[0].Title
	if !strings.Contains(c.Context, "- Completed: "+title) || strings.Count(c.Context, title) != 2 {
		t.Fatalf("the summary does not name %q:\n%s", title, c.Context)
	}

	write(t, path, "package calc\n")
	c, err = m.Context(ctx, memory.ContextParams{Project: "calc"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(c.Context, title) || strings.Contains(c.Context, "- Completed:") ||
		!strings.Contains(c.Context, "- Request: fix add") || !strings.Contains(c.Context, "The sign in add was wrong") {
		t.Errorf("the gone edit's title is still in the context:\n%s", c.Context)
	}
	var summaryLine bool
	for _, l := range c.Left {
		if l.ID == id && strings.HasPrefix(l.Reason, "summary line left out (Completed named it): gone") {
			summaryLine = true
		}
	}
	if !summaryLine {
		t.Errorf("the preview does not say the summary line was left out: %+v", c.Left)
	}
	if _, err := m.SessionStart(ctx, memory.SessionStartParams{ContentSessionID: "cc-t", Cwd: project, Source: "startup"}); err != nil {
		t.Fatal(err)
	}
	inj, err := m.InjectionsOf(ctx, memory.InjectionsParams{Project: "calc"})
	if err != nil || len(inj.Injections) != 1 || len(inj.Injections[0].Left) != 2 {
		t.Errorf("the audit: %v %+v", err, inj)
	}
}
