package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/store"
)

// The local half of team memory, without a server: what is queued for
// pushing (only shared projects, with the record, as it reads when
// pushed), what an arrival does (stored with its origin, never queued,
// applied once however often it comes), and tombstones that win.
func TestTeamOutboxAndArrivals(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	m := MustOpen(t, store.Options{Dir: dir + "/db"})
	m.SetShared([]string{"shared"})
	machine := m.Machine()
	if machine == "" {
		t.Fatal("no machine id")
	}
	mine, err := m.Save(ctx, memory.SaveParams{Project: "shared", Title: "zebra plan", Text: "zebras on monday, Authorization: Bearer abcDEF123456.ghi-jkl"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Save(ctx, memory.SaveParams{Project: "elsewhere", Title: "zebra elsewhere", Text: "not shared"}); err != nil {
		t.Fatal(err)
	}
	if n := m.OutboxLen(); n != 1 {
		t.Fatalf("outbox holds %d, want 1 (the shared project's record only)", n)
	}
	if _, err := m.Correct(ctx, memory.CorrectParams{ID: mine.ID, Title: "zebra plan, tuesday"}); err != nil {
		t.Fatal(err)
	}
	out, err := m.Outbox(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 || out[0].Op != memory.OpPut || out[0].GID != memory.GlobalID(machine, mine.ID) || out[0].Observation == nil {
		t.Fatalf("outbox: %+v", out)
	}
	// Pushed as it reads now, without what only this machine means.
	if p := out[0].Observation; p.Title != "zebra plan, tuesday" || p.ID != 0 || len(p.Edits) != 0 || strings.Contains(p.Narrative, "abcDEF123456") {
		t.Errorf("pushed form: %+v", p)
	}
	if err := m.Pushed(ctx, []uint64{out[0].Seq, out[1].Seq}); err != nil {
		t.Fatal(err)
	}

	// Arrivals: stored with their origin, never queued, idempotent.
	put := memory.Arrival{Op: memory.OpPut, GID: "other-machine/7", Project: "shared", Author: "bob", Machine: "other-machine", Revised: time.Now(),
		Observation: &memory.Observation{Project: "shared", Type: "note", Title: "zebra from bob", Narrative: "bob's zebra"}}
	for range 2 {
		if _, _, err := m.Arrive(ctx, "server-1\x00shared", "1:1", []memory.Arrival{put}); err != nil {
			t.Fatal(err)
		}
	}
	r, err := m.Search(ctx, memory.SearchParams{Query: "zebra", Author: memory.AuthorTeam, Mode: memory.ModeKeyword})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Hits) != 1 || r.Hits[0].Author != "bob" {
		t.Fatalf("arrived hits: %+v", r.Hits)
	}
	if cur, _ := m.TeamCursor("server-1\x00shared"); cur != "1:1" {
		t.Errorf("cursor %q", cur)
	}
	if n := m.OutboxLen(); n != 0 {
		t.Errorf("an arrival queued %d pushes", n)
	}
	// An older version of it changes nothing; a forget removes it, and a
	// put after the forget is not applied.
	old := put
	old.Revised = put.Revised.Add(-time.Hour)
	old.Observation = &memory.Observation{Project: "shared", Type: "note", Title: "zebra from bob, older", Narrative: "x"}
	forget := memory.Arrival{Op: memory.OpForget, GID: put.GID, Project: "shared"}
	late := put
	late.Revised = put.Revised.Add(time.Hour)
	if _, _, err := m.Arrive(ctx, "server-1\x00shared", "1:2", []memory.Arrival{old}); err != nil {
		t.Fatal(err)
	}
	if r, _ := m.Search(ctx, memory.SearchParams{Query: "older", Mode: memory.ModeKeyword}); len(r.Hits) != 0 {
		t.Errorf("an older version was applied: %+v", r.Hits)
	}
	if _, _, err := m.Arrive(ctx, "server-1\x00shared", "1:4", []memory.Arrival{forget, late}); err != nil {
		t.Fatal(err)
	}
	if r, _ := m.Search(ctx, memory.SearchParams{Query: "zebra", Author: memory.AuthorTeam, Mode: memory.ModeKeyword}); len(r.Hits) != 0 {
		t.Errorf("after a tombstone: %+v", r.Hits)
	}

	// A forget of one's own shared record queues its tombstone.
	if _, err := m.Forget(ctx, memory.IDsParams{IDs: []uint64{mine.ID}}); err != nil {
		t.Fatal(err)
	}
	out, _ = m.Outbox(ctx, 10)
	if len(out) != 1 || out[0].Op != memory.OpForget || out[0].GID != memory.GlobalID(machine, mine.ID) {
		t.Errorf("outbox after a forget: %+v", out)
	}
	// The outbox and the machine id outlive a restart.
	m.Close()
	m2 := MustOpen(t, store.Options{Dir: dir + "/db"})
	if m2.Machine() != machine || m2.OutboxLen() != 1 {
		t.Errorf("after a restart: machine %q (was %q), outbox %d", m2.Machine(), machine, m2.OutboxLen())
	}
}
