package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/store"
)

// next reads the next change, or fails after a second.
func next(t *testing.T, ch <-chan memory.Change) memory.Change {
	t.Helper()
	select {
	case c, ok := <-ch:
		if !ok {
			t.Fatal("the watch ended")
		}
		return c
	case <-time.After(time.Second):
		t.Fatal("no change within a second")
	}
	return memory.Change{}
}

// A watcher is told of each change as it is made: a session opened, a
// prompt, the observation and the summary the agent made of the turn, a
// memory saved, observations forgotten, the session's end.
func TestWatchTellsEachChange(t *testing.T) {
	m := MustOpen(t, store.Options{InMemory: true})
	ctx := context.Background()
	ch := m.Watch(t.Context())

	if _, err := m.SessionStart(ctx, memory.SessionStartParams{ContentSessionID: "cc-w", Cwd: "/src/shop", Platform: "claude-code"}); err != nil {
		t.Fatal(err)
	}
	if c := next(t, ch); c.Kind != memory.KindSession || c.ContentSessionID != "cc-w" || c.Project != "shop" || c.Host != "claude-code" {
		t.Errorf("session start: %+v", c)
	}
	mustPrompt(t, m, "cc-w", "why is the cart total wrong?")
	if c := next(t, ch); c.Kind != memory.KindPrompt || c.PromptNumber != 1 || c.Title != "why is the cart total wrong?" {
		t.Errorf("prompt: %+v", c)
	}
	mustTool(t, m, "cc-w", "Read", readInput, `{"type":"text","file":{"filePath":"/src/shop/cart/total.go","content":"package cart"}}`)
	obs := next(t, ch)
	if obs.Kind != memory.KindObservation || obs.ID == 0 || obs.Title == "" || obs.Type == "" || obs.Project != "shop" {
		t.Errorf("observation: %+v", obs)
	}
	if _, err := m.Stop(ctx, memory.StopParams{ContentSessionID: "cc-w", LastUserMessage: "why is the cart total wrong?", LastAssistantMessage: "It rounds each line."}); err != nil {
		t.Fatal(err)
	}
	if c := next(t, ch); c.Kind != memory.KindSummary || c.ID == 0 || c.PromptNumber != 1 {
		t.Errorf("summary: %+v", c)
	}
	saved, err := m.Save(ctx, memory.SaveParams{Project: "shop", Text: "Totals round once, at the end."})
	if err != nil {
		t.Fatal(err)
	}
	if c := next(t, ch); c.Kind != memory.KindObservation || c.ID != saved.ID {
		t.Errorf("save: %+v, want observation %d", c, saved.ID)
	}
	// A correction and a pin change a stored observation: told again.
	if _, err := m.Correct(ctx, memory.CorrectParams{ID: saved.ID, Title: "Totals round once"}); err != nil {
		t.Fatal(err)
	}
	if c := next(t, ch); c.Kind != memory.KindObservation || c.ID != saved.ID || c.Title != "Totals round once" {
		t.Errorf("correct: %+v, want observation %d with its new title", c, saved.ID)
	}
	if _, err := m.Pin(ctx, memory.IDsParams{IDs: []uint64{saved.ID}}); err != nil {
		t.Fatal(err)
	}
	if c := next(t, ch); c.Kind != memory.KindObservation || c.ID != saved.ID {
		t.Errorf("pin: %+v, want observation %d", c, saved.ID)
	}
	if _, err := m.Forget(ctx, memory.IDsParams{IDs: []uint64{obs.ID, saved.ID}}); err != nil {
		t.Fatal(err)
	}
	if c := next(t, ch); c.Kind != memory.KindForget || fmt.Sprint(c.IDs) != fmt.Sprint([]uint64{obs.ID, saved.ID}) {
		t.Errorf("forget: %+v", c)
	}
	if _, err := m.SessionEnd(ctx, memory.SessionEndParams{ContentSessionID: "cc-w"}); err != nil {
		t.Fatal(err)
	}
	if c := next(t, ch); c.Kind != memory.KindSession || c.Status != memory.StatusCompleted {
		t.Errorf("session end: %+v", c)
	}
}

// A watcher that does not read loses what does not fit and is told so;
// the memory is never held up; the watch ends with its context.
func TestWatchSlowWatcherLosesAndIsTold(t *testing.T) {
	m := MustOpen(t, store.Options{InMemory: true})
	ctx, cancel := context.WithCancel(context.Background())
	ch := m.Watch(ctx)
	began := time.Now()
	for i := range 300 {
		mustPrompt(t, m, "cc-slow", fmt.Sprintf("prompt %d", i))
	}
	if took := time.Since(began); took > 30*time.Second {
		t.Fatalf("300 prompts took %v with a watcher not reading", took)
	}
	n := 0
	for range 256 {
		if c := next(t, ch); c.Kind != memory.KindPrompt {
			t.Fatalf("change %d: %+v", n, c)
		}
		n++
	}
	mustPrompt(t, m, "cc-slow", "one more")
	if c := next(t, ch); c.Kind != memory.KindLost {
		t.Errorf("after the drops: %+v, want %q", c, memory.KindLost)
	}
	if c := next(t, ch); c.Kind != memory.KindPrompt || c.Title != "one more" {
		t.Errorf("then: %+v", c)
	}
	cancel()
	select {
	case _, ok := <-ch:
		if ok {
			t.Error("a change after the watch's context ended")
		}
	case <-time.After(time.Second):
		t.Error("the watch did not end with its context")
	}
}
