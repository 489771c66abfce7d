package memory

import "time"

// A Change is one change of the memory, as those who watch it live (the
// viewer) are told of it: enough to show it in a list, and the id to
// fetch the whole record by.
type Change struct {
	Kind ChangeKind `json:"kind"`
	Time time.Time  `json:"time"`
	// ID is the observation's or summary's id (KindObservation,
	// KindSummary) or the session's (KindSession, KindPrompt).
	ID uint64 `json:"id,omitzero"`
	// IDs are the observations forgotten (KindForget).
	IDs              []uint64 `json:"ids,omitempty"`
	ContentSessionID string   `json:"contentSessionId,omitempty"`
	Project          string   `json:"project,omitempty"`
	Host             string   `json:"host,omitempty"`
	PromptNumber     int      `json:"promptNumber,omitzero"`
	// Type is an observation's type.
	Type string `json:"type,omitempty"`
	// Title is an observation's title, a summary's request, a prompt's
	// text (cut to ChangeTitleBytes).
	Title string `json:"title,omitempty"`
	// Status is a session's (KindSession).
	Status SessionStatus `json:"status,omitempty"`
}

// ChangeKind says what changed.
type ChangeKind string

// The kinds of change.
const (
	KindPrompt      ChangeKind = "prompt"      // a prompt was stored
	KindObservation ChangeKind = "observation" // an observation was stored (made, saved, corrected or pinned)
	KindSummary     ChangeKind = "summary"     // a summary was stored
	KindSession     ChangeKind = "session"     // a session opened or ended
	KindForget      ChangeKind = "forget"      // observations were forgotten
	// KindLost tells a watcher that changes were dropped while it was
	// slow: what it shows may be stale, and it should read it again.
	KindLost ChangeKind = "lost"
)

// ChangeTitleBytes bounds a Change's Title.
const ChangeTitleBytes = 200
