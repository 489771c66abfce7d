package store_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/store"
)

func searchIDs(t *testing.T, m *store.Memory, mode, q string) []uint64 {
	t.Helper()
	res, err := m.Search(context.Background(), memory.SearchParams{Query: q, Project: "shop", Mode: mode})
	if err != nil {
		t.Fatal(err)
	}
	var ids []uint64
	for _, h := range res.Hits {
		ids = append(ids, h.ID)
	}
	return ids
}

// A correction replaces a record's title and text, keeps what it said as
// an edit, and re-indexes it: keyword and vector search find the new words
// and no longer the old ones. An export carries the history and an import
// restores it; neither version of the record is imported twice.
func TestCorrectKeepsHistoryAndReindexes(t *testing.T) {
	ctx := context.Background()
	m := openRecall(t, store.Options{})
	tax, _ := saveShop(t, m)
	before, err := m.Get(ctx, memory.IDsParams{IDs: []uint64{tax}})
	if err != nil {
		t.Fatal(err)
	}
	old := before.Observations[0]

	res, err := m.Correct(ctx, memory.CorrectParams{ID: tax, Title: "Tax lines round half up, per the auditor", Text: "roundCents rounds half up (math.Round) on purpose: the auditor wants commercial rounding"})
	if err != nil {
		t.Fatal(err)
	}
	o := res.Observation
	if !res.Changed || o.Title != "Tax lines round half up, per the auditor" || !strings.Contains(o.Narrative, "commercial rounding") || o.Subtitle != "" || o.Facts != nil {
		t.Fatalf("corrected = %+v", res)
	}
	if len(o.Edits) != 1 || o.Edits[0].Title != old.Title || o.Edits[0].Narrative != old.Narrative || o.Edits[0].Time.IsZero() {
		t.Fatalf("edits = %+v, want the old title and text", o.Edits)
	}
	if !slices.Equal(o.FilesModified, old.FilesModified) || o.Type != old.Type || !o.Time.Equal(old.Time) {
		t.Errorf("the correction changed more than the title and text: %+v", o)
	}
	got, _ := m.Get(ctx, memory.IDsParams{IDs: []uint64{tax}})
	if g := got.Observations[0]; g.Title != o.Title || len(g.Edits) != 1 {
		t.Fatalf("stored = %+v", g)
	}
	for _, mode := range []string{memory.ModeKeyword, memory.ModeVector} {
		if ids := searchIDs(t, m, mode, "auditor commercial"); len(ids) == 0 || ids[0] != tax {
			t.Errorf("%s search for the new words = %v, want #%d first", mode, ids, tax)
		}
	}
	if ids := searchIDs(t, m, memory.ModeKeyword, "even"); slices.Contains(ids, tax) {
		t.Errorf("keyword search still finds #%d by its old words: %v", tax, ids)
	}

	// A second correction of the title alone keeps the text, and the history grows.
	res, err = m.Correct(ctx, memory.CorrectParams{ID: tax, Title: "Tax lines round half up"})
	if err != nil || !res.Changed || len(res.Observation.Edits) != 2 || res.Observation.Narrative != o.Narrative {
		t.Fatalf("second correction = %+v, %v", res, err)
	}
	// Saying it again changes nothing.
	res, err = m.Correct(ctx, memory.CorrectParams{ID: tax, Title: "Tax lines round half up"})
	if err != nil || res.Changed || len(res.Observation.Edits) != 2 {
		t.Fatalf("a correction that says the same = %+v, %v", res, err)
	}

	// Saving the first version's text again finds the corrected record.
	again, err := m.Save(ctx, memory.SaveParams{Project: "shop", Type: old.Type, Title: old.Title, Text: old.Narrative, Files: old.FilesModified})
	if err != nil || again.ID != tax {
		t.Errorf("saving the text as it read before the correction = %+v, %v; want #%d", again, err, tax)
	}

	var buf bytes.Buffer
	if _, err := m.Export(ctx, &buf, false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"edits":[`) {
		t.Fatalf("the export lacks the edits:\n%s", buf.String())
	}
	fresh := openRecall(t, store.Options{})
	if _, err := fresh.Import(ctx, bytes.NewReader(buf.Bytes()), nil); err != nil {
		t.Fatal(err)
	}
	imported, _ := fresh.Search(ctx, memory.SearchParams{Query: "auditor", Project: "shop"})
	if len(imported.Hits) == 0 {
		t.Fatal("the imported correction is not found")
	}
	back, _ := fresh.Get(ctx, memory.IDsParams{IDs: []uint64{imported.Hits[0].ID}})
	if b := back.Observations[0]; b.Title != "Tax lines round half up" || len(b.Edits) != 2 || b.Edits[0].Title != old.Title {
		t.Fatalf("imported = %+v", b)
	}
	r, err := fresh.Import(ctx, bytes.NewReader(buf.Bytes()), nil)
	if err != nil || r.Observations != 0 {
		t.Errorf("a second import stored %d observations (%v), want none", r.Observations, err)
	}

	// Forgetting a corrected record removes every hash it was known by: the
	// first version saved again is a new record.
	if _, err := m.Forget(ctx, memory.IDsParams{IDs: []uint64{tax}}); err != nil {
		t.Fatal(err)
	}
	if s, err := m.Save(ctx, memory.SaveParams{Project: "shop", Type: old.Type, Title: old.Title, Text: old.Narrative, Files: old.FilesModified}); err != nil || s.ID == tax {
		t.Errorf("saving the forgotten record's first text = %+v, %v; want a new id", s, err)
	}
}

// Bad corrections are refused and change nothing: an unknown id (named),
// an empty correction, a text that is all private.
func TestCorrectRefusesBadInput(t *testing.T) {
	ctx := context.Background()
	m := openRecall(t, store.Options{})
	tax, _ := saveShop(t, m)
	_, err := m.Correct(ctx, memory.CorrectParams{ID: 999, Text: "whatever"})
	if !errors.Is(err, memory.ErrNotFound) || !strings.Contains(err.Error(), "#999") {
		t.Errorf("unknown id: %v", err)
	}
	for _, p := range []memory.CorrectParams{
		{ID: tax},
		{ID: tax, Title: "  ", Text: "\n"},
		{ID: tax, Text: "<private>the real reason</private>"},
		{Text: "no id"},
	} {
		if _, err := m.Correct(ctx, p); !errors.Is(err, memory.ErrInvalid) {
			t.Errorf("Correct(%+v) = %v, want invalid input", p, err)
		}
	}
	got, _ := m.Get(ctx, memory.IDsParams{IDs: []uint64{tax}})
	if o := got.Observations[0]; len(o.Edits) != 0 || o.Title != "Fixed the tax rounding in cart/tax.go" {
		t.Errorf("a refused correction changed the record: %+v", o)
	}
}

// A pinned observation is in every context of its project, first, however
// old and however many newer ones there are, and the audit says why; an
// unpinned one competes again. Unknown ids change nothing.
func TestPinnedComeFirstInContext(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	clock := newClock(now.AddDate(-1, 0, 0))
	m := openRecall(t, store.Options{ContextBytes: 2048, Now: clock.Now})
	old := mustSave(t, m, memory.TypeDiscovery, "The staging database is read-only on Sundays", "backups run all Sunday")
	clock.Set(now)
	for i := range 100 {
		clock.Add(time.Minute)
		mustSave(t, m, memory.TypeBugfix, fmt.Sprintf("Fixed bug %03d in cart/line%03d.go", i, i), fmt.Sprintf("bug %d", i))
	}
	start := func(csid string) memory.ContextResult {
		t.Helper()
		r, err := m.SessionStart(ctx, memory.SessionStartParams{ContentSessionID: csid, Project: "shop", Source: "startup"})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := start("cc-before"); slices.Contains(r.ObservationIDs, old) {
		t.Fatalf("a year-old discovery made the context among 100 newer fixes: %v", r.ObservationIDs)
	}

	if _, err := m.Pin(ctx, memory.IDsParams{IDs: []uint64{old, 998, 999}}); !errors.Is(err, memory.ErrNotFound) || !strings.Contains(err.Error(), "#998, #999") {
		t.Fatalf("pinning unknown ids: %v", err)
	}
	if r := start("cc-refused"); slices.Contains(r.ObservationIDs, old) {
		t.Fatal("a refused pin pinned the known id")
	}
	res, err := m.Pin(ctx, memory.IDsParams{IDs: []uint64{old}})
	if err != nil || !slices.Equal(res.Changed, []uint64{old}) {
		t.Fatalf("pin = %+v, %v", res, err)
	}
	if res, _ := m.Pin(ctx, memory.IDsParams{IDs: []uint64{old}}); !slices.Equal(res.Unchanged, []uint64{old}) {
		t.Errorf("pinning again = %+v, want it unchanged", res)
	}
	r := start("cc-pinned")
	if len(r.ObservationIDs) == 0 || r.ObservationIDs[0] != old || r.Bytes > 2048 {
		t.Fatalf("context ids = %v (%d bytes), want #%d first:\n%s", r.ObservationIDs, r.Bytes, old, r.Context)
	}
	row := fmt.Sprintf("## Pinned (id · time · type · what)\n- #%d · ", old)
	if !strings.Contains(r.Context, row) || strings.Index(r.Context, row) > strings.Index(r.Context, "## What was learned and decided") {
		t.Errorf("the context does not list the pin first:\n%s", r.Context)
	}
	inj := lastInjection(t, m)
	if inj.ContentSessionID != "cc-pinned" || inj.Items[0].ID != old || inj.Items[0].Reason != "pinned" {
		t.Errorf("audit = %+v, want #%d first because pinned", inj, old)
	}
	if got, _ := m.Get(ctx, memory.IDsParams{IDs: []uint64{old}}); !got.Observations[0].Pinned {
		t.Error("the record does not say it is pinned")
	}

	if _, err := m.Unpin(ctx, memory.IDsParams{IDs: []uint64{old}}); err != nil {
		t.Fatal(err)
	}
	if r := start("cc-unpinned"); slices.Contains(r.ObservationIDs, old) {
		t.Errorf("an unpinned record stays in the context: %v", r.ObservationIDs)
	}
	// Forgetting a pinned record takes it out of the pins.
	if _, err := m.Pin(ctx, memory.IDsParams{IDs: []uint64{old}}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Forget(ctx, memory.IDsParams{IDs: []uint64{old}}); err != nil {
		t.Fatal(err)
	}
	if r := start("cc-forgotten"); slices.Contains(r.ObservationIDs, old) || strings.Contains(r.Context, "## Pinned") {
		t.Errorf("a forgotten pin is still given:\n%s", r.Context)
	}
}
