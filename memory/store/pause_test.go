package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/store"
)

func counts(t *testing.T, m *store.Memory) memory.Counts {
	t.Helper()
	c, err := m.Counts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A project whose capture is paused stores nothing new from its sessions
// (no session, prompt, event, observation or summary) and still gets its
// context and recall; other projects go on; resuming captures again. The
// pauses are kept with SavePaused before they apply.
func TestPauseCapture(t *testing.T) {
	ctx := context.Background()
	var saved map[string]string
	m := openRecall(t, store.Options{SavePaused: func(p map[string]string) error { saved = maps.Clone(p); return nil }})
	tax, _ := saveShop(t, m)
	before := counts(t, m)

	res, err := m.Pause(ctx, memory.PauseParams{Cwd: "/src/shop", What: memory.PauseCapture})
	if err != nil || res.Project != "shop" || res.Pause != (memory.Pause{Capture: true}) || !maps.Equal(saved, map[string]string{"shop": "capture"}) {
		t.Fatalf("pause = %+v, %v; saved %v", res, err, saved)
	}
	start, err := m.SessionStart(ctx, memory.SessionStartParams{ContentSessionID: "cc-p", Cwd: "/src/shop", Source: "startup"})
	if err != nil || start.SessionID != 0 || !strings.Contains(start.Context, "Fixed the tax rounding") {
		t.Fatalf("start = %+v, %v; want the context and no session", start, err)
	}
	if inj := lastInjection(t, m); inj.ContentSessionID != "cc-p" || len(inj.Items) == 0 {
		t.Errorf("the context given is not audited: %+v", inj)
	}
	p := mustPrompt(t, m, "cc-p", taxPrompt)
	if p.SessionID != 0 || p.PromptNumber != 0 || len(p.ObservationIDs) != 0 {
		// SessionStart gave #tax already; the recall gives nothing twice.
		t.Errorf("prompt = %+v; want no session, no number, nothing given twice", p)
	}
	// A session that got no context is recalled the fix, audited as given.
	if r := mustPrompt(t, m, "cc-p2", taxPrompt); len(r.ObservationIDs) == 0 || r.ObservationIDs[0] != tax || r.SessionID != 0 {
		t.Errorf("recall while capture is paused = %+v; want #%d", r, tax)
	}
	if inj := lastInjection(t, m); inj.ContentSessionID != "cc-p2" || inj.Source != memory.InjectionPrompt || inj.Items[0].ID != tax {
		t.Errorf("the recall is not audited: %+v", inj)
	}
	if q := mustTool(t, m, "cc-p", "Bash", `{"command":"go test ./..."}`, `{"stdout":"ok"}`); q.Queued || q.Skipped != "capture is paused for project shop" {
		t.Errorf("tool use = %+v; want skipped because paused", q)
	}
	if q, err := m.Stop(ctx, memory.StopParams{ContentSessionID: "cc-p", Cwd: "/src/shop", LastAssistantMessage: "done"}); err != nil || q.Queued {
		t.Errorf("stop = %+v, %v; want skipped", q, err)
	}
	if e, err := m.SessionEnd(ctx, memory.SessionEndParams{ContentSessionID: "cc-p", Cwd: "/src/shop"}); err != nil || e.Skipped == "" {
		t.Errorf("session end = %+v, %v; want skipped", e, err)
	}
	if _, err := m.SessionEnd(ctx, memory.SessionEndParams{ContentSessionID: "cc-p"}); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("session end without a folder = %v; want not found", err)
	}
	if after := counts(t, m); after != before {
		t.Errorf("counts went from %+v to %+v while capture was paused", before, after)
	}
	if _, err := m.Session(ctx, "cc-p"); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("a paused session was recorded: %v", err)
	}

	// Another project is not paused.
	other, err := m.PostToolUse(ctx, memory.ToolUseParams{ContentSessionID: "cc-blog", Cwd: "/src/blog", ToolName: "Bash", ToolInput: json.RawMessage(`{"command":"ls"}`)})
	if err != nil || !other.Queued {
		t.Errorf("another project's event = %+v, %v; want queued", other, err)
	}
	if st, _ := m.Status(ctx); len(st.Paused) != 1 || st.Paused[0] != (memory.PausedProject{Project: "shop", Pause: memory.Pause{Capture: true}}) {
		t.Errorf("status paused = %+v", st.Paused)
	}

	res, err = m.Resume(ctx, memory.PauseParams{Project: "shop"})
	if err != nil || res.Pause != (memory.Pause{}) || len(res.Paused) != 0 || len(saved) != 0 {
		t.Fatalf("resume = %+v, %v; saved %v", res, err, saved)
	}
	if q := mustTool(t, m, "cc-p", "Bash", `{"command":"go test ./..."}`, `{"stdout":"ok"}`); !q.Queued {
		t.Errorf("after resume: %+v; want queued", q)
	}
}

// A project whose injection is paused gets no context and no recall, and
// nothing is audited as given; its work is still recorded.
func TestPauseInject(t *testing.T) {
	ctx := context.Background()
	m := openRecall(t, store.Options{Paused: map[string]string{"shop": "inject"}})
	saveShop(t, m)
	start, err := m.SessionStart(ctx, memory.SessionStartParams{ContentSessionID: "cc-i", Cwd: "/src/shop", Source: "startup"})
	if err != nil || start.Context != "" || len(start.ObservationIDs) != 0 || start.SessionID == 0 {
		t.Fatalf("start = %+v, %v; want a session and no context", start, err)
	}
	p := mustPrompt(t, m, "cc-i", taxPrompt)
	if p.Context != "" || p.PromptNumber != 1 {
		t.Errorf("prompt = %+v; want number 1 and no recall", p)
	}
	if n := countInjections(t, m); n != 0 {
		t.Errorf("%d injections audited while injection is paused", n)
	}
	if c := counts(t, m); c.Sessions != 1 || c.Prompts != 1 {
		t.Errorf("counts = %+v; want the session and its prompt", c)
	}
	// Resuming injection alone gives the context again.
	if _, err := m.Resume(ctx, memory.PauseParams{Project: "shop", What: memory.PauseInject}); err != nil {
		t.Fatal(err)
	}
	if r, _ := m.SessionStart(ctx, memory.SessionStartParams{ContentSessionID: "cc-i2", Cwd: "/src/shop"}); r.Context == "" {
		t.Error("no context after resume")
	}
}

// One session's pause (MNEMO_PAUSE in the hook: NoCapture) stores nothing
// and gives the context; a pause that cannot be saved changes nothing;
// bad pauses are refused.
func TestPauseSessionAndErrors(t *testing.T) {
	ctx := context.Background()
	m := openRecall(t, store.Options{SavePaused: func(map[string]string) error { return errors.New("disk full") }})
	saveShop(t, m)
	start, err := m.SessionStart(ctx, memory.SessionStartParams{ContentSessionID: "cc-s", Cwd: "/src/shop", NoCapture: true})
	if err != nil || start.SessionID != 0 || start.Context == "" {
		t.Fatalf("start = %+v, %v", start, err)
	}
	p, err := m.UserPromptSubmit(ctx, memory.UserPromptParams{ContentSessionID: "cc-s", Cwd: "/src/shop", Prompt: "what about invoice numbers per tenant", NoCapture: true})
	if err != nil || p.SessionID != 0 {
		t.Fatalf("prompt = %+v, %v", p, err)
	}
	if c := counts(t, m); c.Sessions != 0 || c.Prompts != 0 {
		t.Errorf("counts = %+v; want nothing of the session", c)
	}
	if _, err := m.Pause(ctx, memory.PauseParams{Project: "shop"}); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("a pause that could not be kept: %v", err)
	}
	if ps := m.Paused(); len(ps) != 0 {
		t.Errorf("paused %+v after a failed save", ps)
	}
	for _, p := range []memory.PauseParams{{}, {Project: "shop", What: "everything"}} {
		if _, err := m.Pause(ctx, p); !errors.Is(err, memory.ErrInvalid) {
			t.Errorf("Pause(%+v) = %v; want invalid", p, err)
		}
	}
	if _, err := store.Open(ctx, store.Options{InMemory: true, Paused: map[string]string{"shop": "sometimes"}}); err == nil || !strings.Contains(err.Error(), `"sometimes"`) {
		t.Errorf("open with a bad pause: %v", err)
	}
}
