package store_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/store"
)

// A record of an edit whose file changed since, and that nothing confirms
// for memory.ReviewAfter, needs review: get, search, the context (marked,
// with the audit's reason) and the review list say so. A later record that
// saw the file as it is now, and a person's keep, each confirm it until the
// file changes again; a correction clears it as a keep does; forget takes
// it off the list.
func TestReviewOfWhatAged(t *testing.T) {
	dir := t.TempDir()
	project := filepath.Join(dir, "calc")
	if err := os.MkdirAll(filepath.Join(project, ".git"), 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(project, "calc.go")
	clock := newClock(time.Now())
	m := MustOpen(t, store.Options{InMemory: true, Now: clock.Now})
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

	// check asks every reader for the record's state, and the review list
	// whether it holds the record.
	check := func(when, want string) memory.ContextResult {
		t.Helper()
		s, err := m.Search(ctx, memory.SearchParams{Project: "calc", Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(s.Hits, func(h memory.Hit) bool { return h.ID == id })
		g, err := m.Get(ctx, memory.IDsParams{IDs: []uint64{id}})
		if err != nil || len(g.Observations) != 1 {
			t.Fatalf("%s: get: %v %+v", when, err, g)
		}
		c, err := m.Context(ctx, memory.ContextParams{Project: "calc"})
		if err != nil {
			t.Fatal(err)
		}
		r, err := m.Review(ctx, memory.ReviewParams{Project: "calc"})
		if err != nil {
			t.Fatal(err)
		}
		listed := len(r.Items) == 1 && r.Items[0].Observation.ID == id && r.Total == 1
		if i < 0 || s.Hits[i].State != want || g.Observations[0].State != want || listed != (want == memory.StateReview) {
			t.Fatalf("%s: want %s; search %+v, get %q, review %+v", when, want, s.Hits, g.Observations[0].State, r)
		}
		marked := strings.Contains(c.Context, "#"+itoa(id)+" ") && strings.Contains(c.Context, "[needs review]")
		if marked != (want == memory.StateReview) {
			t.Fatalf("%s: context:\n%s", when, c.Context)
		}
		if want == memory.StateReview {
			if it := r.Items[0]; !slices.Equal(it.Changed, []string{"calc.go"}) || it.Confirmed.IsZero() || r.AfterDays != 7 {
				t.Fatalf("%s: review item %+v", when, r)
			}
			j := slices.IndexFunc(c.Items, func(it memory.InjectionItem) bool { return it.ID == id })
			if j < 0 || !strings.Contains(c.Items[j].Reason, "marked needs review: calc.go changed since; nothing confirmed it since ") {
				t.Fatalf("%s: the audit's reason: %+v", when, c.Items)
			}
		}
		return c
	}
	check("as made", memory.StateCurrent)

	// The file changes; its record stands for a while, then needs review.
	clock.Add(24 * time.Hour)
	write(t, path, "package calc\n\n// add adds.\nfunc add(a, b int) int {\n\treturn a + b\n}\n")
	check("changed a day later", memory.StateChanged)
	clock.Add(memory.ReviewAfter)
	check("unconfirmed for a week", memory.StateReview)

	// A later read of the file as it is now confirms it (the work went on
	// with its text in view) while the file stays so, however long.
	now, _ := os.ReadFile(path)
	read(t, m, "cc-b", path, string(now))
	waitIdle(t, m) // the read, stored, empties the memo of who saw the file
	check("read as it is now", memory.StateChanged)
	clock.Add(30 * 24 * time.Hour)
	check("read as it is now, a month later", memory.StateChanged)
	// The file changes again, unseen: the read is a month old.
	write(t, path, "package calc\n\n// add adds; see mul.\nfunc add(a, b int) int {\n\treturn a + b\n}\n")
	check("changed after the read", memory.StateReview)

	// A person keeps it: it stands while the file is as it was kept,
	// however long.
	kept, err := m.Keep(ctx, memory.IDsParams{IDs: []uint64{id}})
	if err != nil || !slices.Equal(kept.Changed, []uint64{id}) {
		t.Fatalf("keep: %v %+v", err, kept)
	}
	if again, err := m.Keep(ctx, memory.IDsParams{IDs: []uint64{id}}); err != nil || !slices.Equal(again.Unchanged, []uint64{id}) {
		t.Fatalf("keep again: %v %+v", err, again)
	}
	clock.Add(30 * 24 * time.Hour)
	check("kept a month ago", memory.StateChanged)
	g, _ := m.Get(ctx, memory.IDsParams{IDs: []uint64{id}})
	if md := g.Observations[0].Markdown(); !strings.Contains(md, " · kept by a person ") {
		t.Errorf("the record does not say it was kept:\n%s", md)
	}
	// The file changes again: the keep is a month old.
	write(t, path, "package calc\n\n// add adds two ints.\nfunc add(a, b int) int {\n\treturn a + b\n}\n")
	check("changed again after the keep", memory.StateReview)

	// A correction clears it as a keep does.
	if _, err := m.Correct(ctx, memory.CorrectParams{ID: id, Text: "add returns a + b (it returned a - b)."}); err != nil {
		t.Fatal(err)
	}
	check("corrected", memory.StateChanged)
	clock.Add(memory.ReviewAfter * 2)
	write(t, path, "package calc\n\n// add adds.\nfunc add(a, b int) int {\n\treturn a + b\n}\n\nfunc sub(a, b int) int { return a - b }\n")
	check("changed after the correction", memory.StateReview)

	// Unknown ids keep nothing.
	if _, err := m.Keep(ctx, memory.IDsParams{IDs: []uint64{id, 999}}); !errors.Is(err, memory.ErrNotFound) || !strings.Contains(err.Error(), "#999") {
		t.Errorf("keep #999: %v", err)
	}
	// Forgotten, it leaves the list.
	if _, err := m.Forget(ctx, memory.IDsParams{IDs: []uint64{id}}); err != nil {
		t.Fatal(err)
	}
	if r, err := m.Review(ctx, memory.ReviewParams{}); err != nil || len(r.Items) != 0 || r.Total != 0 {
		t.Errorf("after forget: %v %+v", err, r)
	}
	if _, err := m.Review(ctx, memory.ReviewParams{Limit: -1}); !errors.Is(err, memory.ErrInvalid) {
		t.Errorf("limit -1: %v", err)
	}
}

// With ReviewAfter negative (the settings' "at once"), a changed record
// needs review as soon as its file changes; a gone one is gone, never
// "needs review"; the list is bounded by its limit and says how many.
func TestReviewAtOnceAndTheLimit(t *testing.T) {
	dir := t.TempDir()
	project := filepath.Join(dir, "shop")
	if err := os.MkdirAll(filepath.Join(project, ".git"), 0o700); err != nil {
		t.Fatal(err)
	}
	m := MustOpen(t, store.Options{InMemory: true, ReviewAfter: -1})
	ctx := context.Background()
	promptIn(t, m, "cc-a", project, "add prices")
	var paths []string
	for _, name := range []string{"a.go", "b.go", "c.go"} {
		p := filepath.Join(project, name)
		write(t, p, "package shop\n\nconst price = 1\n")
		edit(t, m, "cc-a", project, p, "const price = 0", "const price = 1")
		paths = append(paths, p)
	}
	waitIdle(t, m)
	if r, err := m.Review(ctx, memory.ReviewParams{Project: "shop"}); err != nil || r.Total != 0 || r.AfterDays != 0 {
		t.Fatalf("nothing changed: %v %+v", err, r)
	}
	write(t, paths[0], "package shop\n\nconst price = 1\n\nconst tax = 2\n")
	write(t, paths[1], "package shop\n\nconst tax = 2\n") // the edit's line is gone
	write(t, paths[2], "package shop\n\n// price in cents.\nconst price = 1\n")
	r, err := m.Review(ctx, memory.ReviewParams{Project: "shop", Limit: 1})
	if err != nil || r.Total != 2 || len(r.Items) != 1 || !r.More || r.Items[0].Changed[0] != "c.go" {
		t.Fatalf("review: %v %+v", err, r)
	}
	if other, err := m.Review(ctx, memory.ReviewParams{Project: "elsewhere"}); err != nil || other.Total != 0 {
		t.Errorf("another project: %v %+v", err, other)
	}
}
