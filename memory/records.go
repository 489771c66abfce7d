package memory

import (
	"fmt"
	"time"
)

// Record is one line of an export.
type Record struct {
	Kind        string       `json:"kind"`
	Session     *Session     `json:"session,omitempty"`
	Prompt      *Prompt      `json:"prompt,omitempty"`
	Observation *Observation `json:"observation,omitempty"`
	Summary     *Summary     `json:"summary,omitempty"`
	Embedder    string       `json:"embedder,omitempty"`
	Vector      []float32    `json:"vector,omitempty"`
}

// Validate reports a record whose kind does not match what it holds.
func (r *Record) Validate() error {
	switch {
	case r.Kind == "session" && r.Session != nil && r.Session.ContentSessionID != "":
	case r.Kind == "prompt" && r.Prompt != nil:
	case r.Kind == "observation" && r.Observation != nil && r.Observation.Title != "":
	case r.Kind == "summary" && r.Summary != nil:
	default:
		return &FieldError{"kind", fmt.Sprintf("%q does not match its record (a session needs a contentSessionId, an observation a title)", r.Kind)}
	}
	return nil
}

// ImportResult counts what an import stored and what it already had.
type ImportResult struct {
	Sessions     int `json:"sessions"`
	Prompts      int `json:"prompts"`
	Observations int `json:"observations"`
	Summaries    int `json:"summaries"`
	Duplicates   int `json:"duplicates"`
	// Folded counts the observations that were the same fact as one
	// already stored (Observation.FactKey): counted on that record.
	Folded int `json:"folded,omitzero"`
}

// A Problem is one broken invariant that Doctor found.
type Problem struct {
	Check  string `json:"check"`
	Detail string `json:"detail"`
}

// ContextTag wraps everything Mnemo injects, so that Mnemo never stores
// its own output again (the privacy rules strip it at entry).
const ContextTag = "mnemo-context"

// Injection is the audit record of one context injection: what went in
// and why.
type Injection struct {
	ID               uint64    `json:"id"`
	Time             time.Time `json:"time"`
	ContentSessionID string    `json:"contentSessionId,omitempty"`
	Project          string    `json:"project"`
	// Source says what the injection answered: SessionStart's source
	// (startup, resume, clear, compact, fork), or InjectionPrompt.
	Source string `json:"source,omitempty"`
	// PromptNumber is the prompt an InjectionPrompt injection answered.
	PromptNumber int             `json:"promptNumber,omitzero"`
	Bytes        int             `json:"bytes"`
	Items        []InjectionItem `json:"items"`
	// Left are observations the context left out, and why (what they
	// saw of their files is gone).
	Left []InjectionItem `json:"left,omitempty"`
}

// InjectionPrompt is the Source of the injection of a prompt's recall
// (UserPromptResult.Context).
const InjectionPrompt = "prompt"

// InjectionItem is one observation that went into a context.
type InjectionItem struct {
	ID     uint64 `json:"id"`
	Reason string `json:"reason"`
	// Text says the injection gave the record's text (an excerpt), not its
	// title alone: a prompt's recall does not give that record again.
	Text bool `json:"text,omitzero"`
}

// AuditMessage is one message of an agent conversation.
type AuditMessage struct {
	Time             time.Time `json:"time"`
	Role             string    `json:"role"` // "input" or "output"
	ContentSessionID string    `json:"contentSessionId"`
	MemorySessionID  string    `json:"memorySessionId"`
	Resumed          bool      `json:"resumed"`
	PromptNumber     int       `json:"promptNumber"`
	Agent            string    `json:"agent"`
	Content          any       `json:"content"`
}
