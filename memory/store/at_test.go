package store_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/store"
)

// History brought in after the fact (a back-fill) keeps the time of the
// work: the session's start, the prompt, the observation and the summary
// take the calls' At; a time still to come is read as now, and so is none.
func TestStagesKeepTheirTime(t *testing.T) {
	ctx := context.Background()
	m := MustOpen(t, store.Options{InMemory: true})
	day := time.Date(2025, 6, 2, 9, 0, 0, 0, time.UTC)
	at := func(min int) time.Time { return day.Add(time.Duration(min) * time.Minute) }
	if _, err := m.SessionStart(ctx, memory.SessionStartParams{ContentSessionID: "old", Cwd: "/src/shop", At: at(0)}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.UserPromptSubmit(ctx, memory.UserPromptParams{ContentSessionID: "old", Cwd: "/src/shop", Prompt: "fix the tax rounding", At: at(1)}); err != nil {
		t.Fatal(err)
	}
	in, _ := json.Marshal(map[string]string{"file_path": "/src/shop/tax.go", "old_string": "math.Round(x)", "new_string": "math.RoundToEven(x)"})
	if _, err := m.PostToolUse(ctx, memory.ToolUseParams{ContentSessionID: "old", Cwd: "/src/shop", ToolName: "Edit", ToolInput: in, At: at(2)}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Stop(ctx, memory.StopParams{ContentSessionID: "old", LastAssistantMessage: "Tax now rounds half-even.", At: at(3)}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.SessionEnd(ctx, memory.SessionEndParams{ContentSessionID: "old", At: at(4)}); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, m)
	s := mustSession(t, m, "old")
	if !s.CreatedAt.Equal(at(0)) || !s.CompletedAt.Equal(at(4)) {
		t.Errorf("session created %v, completed %v; want %v, %v", s.CreatedAt, s.CompletedAt, at(0), at(4))
	}
	obs := observationsOf(t, m, s.ID)
	if len(obs) != 1 || !obs[0].Time.Equal(at(2)) {
		t.Fatalf("observations %+v; want one at %v", obs, at(2))
	}
	sums, err := m.Summaries(ctx, s.ID)
	if err != nil || len(sums) != 1 || !sums[0].Time.Equal(at(3)) {
		t.Errorf("summaries %+v (%v); want one at %v", sums, err, at(3))
	}

	// A time still to come is now.
	before := time.Now()
	if _, err := m.SessionStart(ctx, memory.SessionStartParams{ContentSessionID: "future", Cwd: "/src/shop", At: time.Now().Add(48 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if f := mustSession(t, m, "future"); f.CreatedAt.Before(before) || f.CreatedAt.After(time.Now()) {
		t.Errorf("a start dated in the future was stored at %v, want now", f.CreatedAt)
	}
}
