package memory

import (
	"context"
	"errors"
)

// An Agent turns queued events into observations and summaries.
//
// The worker calls Run with the events of one session, in order. A run
// either continues a memory session (ResumeID set) or starts a fresh one
// (NewID set: a UUID the agent should adopt as its own session id when it
// can). The agent reports the memory session id it actually ran under;
// nothing is stored before that id is registered (rule 4).
type Agent interface {
	// Name identifies the agent in status and logs ("local", "claude", …).
	Name() string
	// Run processes in.Events. It returns ErrResumeRefused when the agent
	// does not know in.ResumeID (the worker then starts a fresh memory
	// session, rule 6); any other error leaves the events queued.
	Run(ctx context.Context, in AgentInput) (AgentOutput, error)
}

// ErrResumeRefused means the agent could not resume the memory session it
// was asked to (unknown or expired id).
var ErrResumeRefused = errors.New("agent refused to resume the memory session")

// AgentInput is one run of the agent.
type AgentInput struct {
	Session  Session
	ResumeID string // the memory session to continue; "" for a fresh one
	NewID    string // the id to adopt for a fresh memory session
	Request  string // the prompt of the events' turn, stripped
	Events   []Event
	// Turn holds the observations already stored for the events' turn,
	// oldest first: context for classification and for summaries.
	Turn []Observation
}

// AgentOutput is what a run produced. Observations and the summary need
// only their content fields; the worker fills in ids, session fields and
// times.
type AgentOutput struct {
	MemorySessionID string
	Observations    []Observation
	Summary         *Summary
}
