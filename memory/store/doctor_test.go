package store_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/store"
)

// A back-fill queues work of months ago: the queue's age is counted from
// when each event was queued, not from when its work happened, and a
// queue that is stale says so in one line, however many events wait.
func TestDoctorStaleQueueCountsFromQueued(t *testing.T) {
	clock := newClock(time.Now())
	m := MustOpen(t, store.Options{Agent: blockedAgent{}, Now: clock.Now})
	ctx := context.Background()
	long := clock.Now().Add(-255 * 24 * time.Hour)
	for i := range 5 {
		_, err := m.PostToolUse(ctx, memory.ToolUseParams{
			ContentSessionID: "bf-old", Cwd: "/src/shop", ToolName: "Read", At: long.Add(time.Duration(i) * time.Minute),
			ToolInput: json.RawMessage(`{"file_path":"/src/shop/a.go"}`), ToolResponse: json.RawMessage(`{}`),
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	res, err := m.Doctor(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range res.Problems {
		if p.Check == "stale-queue" {
			t.Fatalf("events queued just now are stale: %s", p.Detail)
		}
	}

	clock.Add(store.StaleQueueAge + time.Minute)
	res, err = m.Doctor(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var stale []string
	for _, p := range res.Problems {
		if p.Check == "stale-queue" {
			stale = append(stale, p.Detail)
		}
	}
	if len(stale) != 1 || !strings.HasPrefix(stale[0], "5 events have waited in the queue longer than 10m0s") || !strings.Contains(stale[0], "for 11m0s") {
		t.Fatalf("stale-queue problems = %q, want one line for the 5 events, the oldest waiting 11m0s", stale)
	}
}
