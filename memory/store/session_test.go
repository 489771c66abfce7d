package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/store"
)

// A session comes with its prompts, its observations (oldest first) and
// its summaries, and nothing of another session.
func TestSessionRecords(t *testing.T) {
	m := MustOpen(t, store.Options{InMemory: true})
	ctx := context.Background()
	mustPrompt(t, m, "cc-a", "why is the cart total wrong?")
	mustTool(t, m, "cc-a", "Read", readInput, `{"type":"text","file":{"filePath":"/src/shop/cart/total.go","content":"package cart"}}`)
	mustPrompt(t, m, "cc-b", "another session")
	mustTool(t, m, "cc-b", "Read", `{"file_path":"/src/shop/other.go"}`, `{"type":"text","file":{"filePath":"/src/shop/other.go","content":"package other"}}`)
	if _, err := m.Stop(ctx, memory.StopParams{ContentSessionID: "cc-a", LastUserMessage: "why is the cart total wrong?", LastAssistantMessage: "It rounds each line."}); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, m)

	r, err := m.SessionRecords(ctx, memory.SessionParams{ContentSessionID: "cc-a"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Session.ContentSessionID != "cc-a" || len(r.Prompts) != 1 || r.Prompts[0].Text != "why is the cart total wrong?" {
		t.Errorf("session and prompts: %+v %+v", r.Session, r.Prompts)
	}
	if r.ObservationTotal != 1 || len(r.Observations) != 1 || len(r.Observations[0].Files) == 0 || r.Observations[0].Files[0] != "cart/total.go" {
		t.Errorf("observations: %d %+v", r.ObservationTotal, r.Observations)
	}
	if len(r.Summaries) != 1 || r.Summaries[0].ContentSessionID != "cc-a" {
		t.Errorf("summaries: %+v", r.Summaries)
	}
	if _, err := m.SessionRecords(ctx, memory.SessionParams{ContentSessionID: "nope"}); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("an unknown session: %v, want not found", err)
	}
	if _, err := m.SessionRecords(ctx, memory.SessionParams{}); err == nil {
		t.Error("no session id: no error")
	}
}

// The context preview says why each observation is in it; the injections
// given to sessions are listed newest first, by project.
func TestContextPreviewAndInjections(t *testing.T) {
	m := MustOpen(t, store.Options{InMemory: true})
	ctx := context.Background()
	mustPrompt(t, m, "cc-a", "why is the cart total wrong?")
	mustTool(t, m, "cc-a", "Edit", `{"file_path":"/src/shop/cart/total.go","old_string":"a","new_string":"b"}`, `{"filePath":"/src/shop/cart/total.go"}`)
	waitIdle(t, m)
	pre, err := m.Context(ctx, memory.ContextParams{Project: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	if len(pre.ObservationIDs) != 1 || len(pre.Items) != 1 || pre.Items[0].ID != pre.ObservationIDs[0] || pre.Items[0].Reason == "" {
		t.Fatalf("preview: ids %v, items %+v", pre.ObservationIDs, pre.Items)
	}
	start, err := m.SessionStart(ctx, memory.SessionStartParams{ContentSessionID: "cc-b", Cwd: "/src/shop", Source: "startup"})
	if err != nil {
		t.Fatal(err)
	}
	if len(start.Items) != 0 {
		t.Errorf("a session's context carries items: %+v", start.Items)
	}
	inj, err := m.InjectionsOf(ctx, memory.InjectionsParams{Project: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	if len(inj.Injections) != 1 || inj.Injections[0].ContentSessionID != "cc-b" || len(inj.Injections[0].Items) != 1 {
		t.Errorf("injections: %+v", inj.Injections)
	}
	if other, _ := m.InjectionsOf(ctx, memory.InjectionsParams{Project: "elsewhere"}); len(other.Injections) != 0 {
		t.Errorf("another project's injections: %+v", other.Injections)
	}
}
