package memory

import (
	"strings"
	"time"
)

// Project knowledge: what many records of a project add up to, derived
// without a model from the records themselves (memory/knowledge makes it,
// docs/architecture.md §7): how to work here, what keeps failing and what
// fixed it, what moves together and what is hot, the decisions in force.
// Every line names the records it came from; a line whose records are
// forgotten or marked wrong is not given.

// The kinds of knowledge line, in the order they are shown.
const (
	KnowledgeCommand  = "command"  // a command that builds, tests, lints or runs the project
	KnowledgeFailure  = "failure"  // an error seen in more than one session, and what fixed it
	KnowledgeTogether = "together" // files edited together
	KnowledgeHot      = "hot"      // files most changed lately
	KnowledgeDecision = "decision" // a decision in force
	// KnowledgeReplaced is a command no longer offered (it stopped working
	// or was replaced): never shown as knowledge; the context leaves out
	// the records of its passing runs, which no longer say how to work.
	KnowledgeReplaced = "replaced"
)

// KnowledgeKinds lists the kinds in the order they are shown.
var KnowledgeKinds = []string{KnowledgeCommand, KnowledgeFailure, KnowledgeTogether, KnowledgeHot, KnowledgeDecision}

// Knowledge is a project's knowledge as last derived.
type Knowledge struct {
	Project string `json:"project"`
	// Computed is when it was derived; Records how many observations it
	// was derived from.
	Computed time.Time       `json:"computed"`
	Records  int             `json:"records"`
	Lines    []KnowledgeLine `json:"lines"`
	// Replaced are the commands no longer offered (KnowledgeReplaced),
	// each with the records of its passing runs.
	Replaced []KnowledgeLine `json:"replaced,omitempty"`
}

// A KnowledgeLine is one thing the records add up to.
type KnowledgeLine struct {
	Kind string `json:"kind"` // KnowledgeCommand…
	// Text is the line as the context shows it, without its ids.
	Text string `json:"text"`
	// Key is what the line is about, as a project's own instructions
	// (CLAUDE.md, AGENTS.md) would write it: the command, the error, the
	// files, the decision. A line whose key those already hold is not
	// repeated in the context.
	Key string `json:"key"`
	// IDs are the records it came from, the most telling first (at most
	// MaxKnowledgeIDs).
	IDs []uint64 `json:"ids"`
	// Count is how many times it was seen (runs, failures, turns);
	// Sessions in how many sessions.
	Count    int       `json:"count,omitzero"`
	Sessions int       `json:"sessions,omitzero"`
	Last     time.Time `json:"last"`
	// Why says why the line is given (and, in the injection audit, why
	// its records are).
	Why string `json:"why"`
}

// MaxKnowledgeIDs bounds the record ids a knowledge line keeps.
const MaxKnowledgeIDs = 16

// KnowledgeParams asks for a project's knowledge.
type KnowledgeParams struct {
	Project string `json:"project,omitempty"`
	Cwd     string `json:"cwd,omitempty"`
	// Refresh derives it again from the records now; otherwise the last
	// derived knowledge is returned (derived now when there is none).
	Refresh bool `json:"refresh,omitzero"`
}

// Validate requires a project or a working directory.
func (p *KnowledgeParams) Validate() error {
	if strings.TrimSpace(p.Project) == "" && strings.TrimSpace(p.Cwd) == "" {
		return &FieldError{"project", "or cwd is required"}
	}
	return nil
}
