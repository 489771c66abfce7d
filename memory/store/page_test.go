package store_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/store"
)

// Records pages through every observation in the order of ids, of one
// project or of all, and refuses a limit past MaxLimit.
func TestRecordsPages(t *testing.T) {
	m := MustOpen(t, store.Options{InMemory: true})
	ctx := context.Background()
	var want []uint64
	for i := range 7 {
		project := "alpha"
		if i%3 == 2 {
			project = "beta"
		}
		r, err := m.Save(ctx, memory.SaveParams{Text: "note " + strings.Repeat("x", i+1), Project: project})
		if err != nil {
			t.Fatal(err)
		}
		if project == "alpha" {
			want = append(want, r.ID)
		}
	}
	var got []uint64
	pages := 0
	for after := uint64(0); ; {
		page, err := m.Records(ctx, memory.RecordsParams{After: after, Project: "alpha", Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, o := range page.Observations {
			if o.Project != "alpha" || o.Narrative == "" {
				t.Errorf("record %+v: another project's, or not whole", o)
			}
			got = append(got, o.ID)
		}
		if page.Next == 0 {
			break
		}
		after = page.Next
	}
	if !slices.Equal(got, want) || pages != 3 {
		t.Errorf("paged %v in %d pages, want %v in 3", got, pages, want)
	}
	all, err := m.Records(ctx, memory.RecordsParams{})
	if err != nil || len(all.Observations) != 7 || all.Next != 0 {
		t.Errorf("every project: %d records, next %d, %v; want 7, 0", len(all.Observations), all.Next, err)
	}
	if _, err := m.Records(ctx, memory.RecordsParams{Limit: memory.MaxLimit + 1}); !errors.Is(err, memory.ErrInvalid) {
		t.Errorf("a limit past the most: %v, want invalid", err)
	}
}
