package local

import (
	"context"
	"slices"

	"github.com/mnemo-dev/mnemo/memory"
)

// Agent is the default memory agent, the one that works without a model
// (see the package comment for what it makes of events). The zero value
// is ready to use.
type Agent struct{}

// Name implements memory.Agent.
func (Agent) Name() string { return "local" }

// Run implements memory.Agent. The local agent accepts any memory session id: it
// continues ResumeID or adopts NewID.
func (Agent) Run(ctx context.Context, in memory.AgentInput) (memory.AgentOutput, error) {
	if err := ctx.Err(); err != nil {
		return memory.AgentOutput{}, err
	}
	out := memory.AgentOutput{MemorySessionID: in.ResumeID}
	if out.MemorySessionID == "" {
		out.MemorySessionID = in.NewID
	}
	turn := slices.Clip(in.Turn) // appending never writes into the caller's array
	add := func(o memory.Observation) {
		out.Observations = append(out.Observations, o)
		turn = append(turn, o)
	}
	for _, ev := range in.Events {
		if d, ok := decisionNote(in.Request, turn); ok {
			add(d)
		}
		switch ev.Kind {
		case memory.EventTool:
			if o, ok := observe(ev, in.Request, turn); ok {
				add(o)
			}
		case memory.EventStop:
			for _, o := range conversationNotes(ev, in.Request, turn) {
				add(o)
			}
			if o, ok := promptNote(in.Request, turn); ok {
				add(o)
			}
			if s, ok := summarize(ev, in.Request, turn); ok {
				out.Summary = &s
			}
		}
	}
	return out, nil
}

// Limits that keep every observation short and every event fast.
const (
	maxTitle    = 120
	maxSubtitle = 160
	maxFact     = 200
	maxFacts    = 10
	maxConcepts = 8
	maxScan     = 32 << 10 // bytes of tool output or file content scanned
)
