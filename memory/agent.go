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

// ErrFallback means the agent declines this run (its token budget is
// spent, its endpoint is down): the local agent makes the observations
// instead, at once, in a fresh memory session.
var ErrFallback = errors.New("the agent declined; the local agent takes over")

// AgentReporter is implemented by agents with a state worth showing in
// mnemo/status (a spent budget, an unreachable endpoint).
type AgentReporter interface {
	// AgentStatus describes the agent's state in one line; "" when normal.
	AgentStatus() string
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
	// AssistantUUID is the uuid of the run's last assistant message (its
	// text, after any thinking): the point a rewind or a resume-at must
	// keep (rule 9). Empty for agents without such ids.
	AssistantUUID string
}
