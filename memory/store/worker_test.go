package store_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/store"
)

// gateAgent is the recording agent whose first run waits for the gate to
// open, so that a test can queue events behind it.
type gateAgent struct {
	recordingAgent
	gate    chan struct{}
	started chan struct{}
	once    sync.Once
}

func (a *gateAgent) Run(ctx context.Context, in memory.AgentInput) (memory.AgentOutput, error) {
	first := false
	a.once.Do(func() { first = true })
	if first {
		close(a.started)
		select {
		case <-a.gate:
		case <-ctx.Done():
			return memory.AgentOutput{}, ctx.Err()
		}
	}
	return a.recordingAgent.Run(ctx, in)
}

// TestQueueSessionsTakeTurns checks the worker's order: a session with
// many events queued holds up one queued after them by one event, not by
// all of its own, and each session's events keep their order.
func TestQueueSessionsTakeTurns(t *testing.T) {
	agent := &gateAgent{gate: make(chan struct{}), started: make(chan struct{})}
	m := MustOpen(t, store.Options{Agent: agent})
	mustPrompt(t, m, "busy", "read the cart package")
	mustPrompt(t, m, "other", "look at the total")
	mustTool(t, m, "busy", "Read", readInput, readResponse)
	<-agent.started // the worker holds busy's first event
	for i := 1; i < 10; i++ {
		mustTool(t, m, "busy", "Read", fmt.Sprintf(`{"file_path":"/src/shop/cart/f%d.go"}`, i), readResponse)
	}
	mustTool(t, m, "other", "Read", readInput, readResponse)
	close(agent.gate)
	waitIdle(t, m)

	var order, busy []string
	want := []string{readInput}
	for i := 1; i < 10; i++ {
		want = append(want, fmt.Sprintf(`{"file_path":"/src/shop/cart/f%d.go"}`, i))
	}
	for _, in := range agent.Runs() {
		sid := in.Session.ContentSessionID
		order = append(order, sid)
		if sid == "busy" {
			busy = append(busy, string(in.Events[0].ToolInput))
		}
	}
	if len(order) != 11 {
		t.Fatalf("%d runs, want 11: %v", len(order), order)
	}
	if !slices.Equal(busy, want) {
		t.Errorf("busy's events ran in the order %v, want %v", busy, want)
	}
	if at := slices.Index(order, "other"); at > 2 {
		t.Errorf("the other session's event ran %d-th, after %d of busy's: %v", at+1, at, order)
	}
}
