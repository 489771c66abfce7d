package memory

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"
)

// SessionStatus is where a session is in its life.
type SessionStatus string

// The states of a session.
const (
	StatusInitialized SessionStatus = "initialized" // created, no prompt yet
	StatusActive      SessionStatus = "active"      // at least one prompt
	StatusCompleted   SessionStatus = "completed"   // SessionEnd seen
)

// A Session is one content session: a Claude Code session, an editor
// window's session, or any other client's.
type Session struct {
	ID               uint64        `json:"id"`
	ContentSessionID string        `json:"contentSessionId"`
	Project          string        `json:"project"`
	Cwd              string        `json:"cwd,omitempty"`
	Platform         string        `json:"platform"`
	Status           SessionStatus `json:"status"`
	PromptCounter    int           `json:"promptCounter"`
	// MemorySessionID is empty until the memory agent reports its own
	// session id (rule 2); "has a real memory session" means non-empty.
	MemorySessionID string `json:"memorySessionId"`
	// MemorySessions lists every memory session this content session went
	// through, oldest first, including the current one (rule 4).
	MemorySessions []string `json:"memorySessions,omitempty"`
	// ForceInit makes the next agent run a fresh one (rule 3): set for live
	// sessions after a daemon restart or crash recovery.
	ForceInit bool `json:"forceInit"`
	// ResumeOverride is a memory session id a caller asked to resume
	// explicitly; it wins over the stored one for the next agent run
	// (rule 6) and is cleared once that run registers its session.
	ResumeOverride string `json:"resumeOverride,omitempty"`
	// Turns records, per prompt, where the memory agent's conversation
	// stood after it: the uuid of its last assistant message (rule 9).
	Turns []TurnAnchor `json:"turns,omitempty"`
	// PrivatePrompts lists the prompt numbers that were entirely private:
	// nothing of those turns is stored.
	PrivatePrompts []int     `json:"privatePrompts,omitempty"`
	CreatedAt      time.Time `json:"createdAt"`
	UpdatedAt      time.Time `json:"updatedAt"`
	CompletedAt    time.Time `json:"completedAt,omitzero"`
}

// HasMemorySession reports whether the memory agent has registered a
// memory session for s.
func (s *Session) HasMemorySession() bool { return s.MemorySessionID != "" }

func (s *Session) PromptPrivate(n int) bool {
	for _, p := range s.PrivatePrompts {
		if p == n {
			return true
		}
	}
	return false
}

// A TurnAnchor is the last assistant message of the memory agent's run for
// one prompt of a session.
type TurnAnchor struct {
	PromptNumber    int    `json:"promptNumber"`
	MemorySessionID string `json:"memorySessionId"`
	AssistantUUID   string `json:"assistantUuid"`
}

// A Prompt is one user prompt of a session, privacy tags stripped.
type Prompt struct {
	SessionID uint64    `json:"sessionId"`
	Number    int       `json:"number"`
	Text      string    `json:"text"`
	Time      time.Time `json:"time"`
}

// An Observation is one compact, structured note made from a raw event.
type Observation struct {
	ID               uint64   `json:"id"`
	SessionID        uint64   `json:"sessionId"`
	ContentSessionID string   `json:"contentSessionId"`
	MemorySessionID  string   `json:"memorySessionId"`
	PromptNumber     int      `json:"promptNumber"`
	Project          string   `json:"project"`
	Type             string   `json:"type"`
	Title            string   `json:"title"`
	Subtitle         string   `json:"subtitle"`
	Facts            []string `json:"facts"`
	Narrative        string   `json:"narrative"`
	Concepts         []string `json:"concepts"`
	FilesRead        []string `json:"filesRead"`
	FilesModified    []string `json:"filesModified"`
	// Evidence is a bounded excerpt of the raw event: the command, the
	// identifiers and lines a change added and removed, the error, warning
	// and test lines of the output, the event's distinct identifiers and
	// paths. Search finds it; the compact index and the context never show
	// it.
	Evidence string `json:"evidence,omitempty"`
	Tool     string `json:"tool"`
	// ToolUseID names the tool run the observation was made from, when it
	// was made from one.
	ToolUseID string `json:"toolUseId,omitempty"`
	// Request is the prompt of the turn it served: an excerpt of at most
	// MaxRequestExcerpt bytes (the prompt is kept whole once, with its
	// session's prompts).
	Request string `json:"request"`
	// Why is what the agent wrote just before the tool call the
	// observation was made from: why it made the call.
	Why    string `json:"why,omitempty"`
	Source string `json:"source"` // SourceAgent, SourceSaved or SourceEditor
	// SavedBy is SavedByPerson for a memory a person saved (SourceSaved);
	// empty when the agent saved it.
	SavedBy string `json:"savedBy,omitempty"`
	// Host is the coding agent or editor whose session it was made in
	// (the session's platform: "claude-code", "codex", "vscode", …).
	Host string `json:"host,omitempty"`
	// Anchor is the place in a file the observation is about, when it
	// has one: the selection a person remembered on purpose.
	Anchor *Anchor `json:"anchor,omitempty"`
	// FileAnchors are what it saw of its files when it was made (none for
	// history brought in after the fact); State is how that compares with
	// the files now (StateCurrent…), set on the records a read returns,
	// never stored; "" when it has no anchors.
	FileAnchors []FileAnchor `json:"fileAnchors,omitempty"`
	State       string       `json:"state,omitempty"`
	// Reverted links an edit undone later in its session and the edit
	// that undid it, each to the other: both are StateReverted.
	Reverted uint64 `json:"reverted,omitzero"`
	// SupersededBy links it to the later observation that says what is
	// true now about the same subject (StateSuperseded); Supersedes are
	// the earlier ones the observation supersedes, each linked back.
	SupersededBy uint64   `json:"supersededBy,omitzero"`
	Supersedes   []uint64 `json:"supersedes,omitempty"`
	// Count is how many times the same fact was seen (FactKey): a fact
	// seen again is folded into its record when it is stored, which
	// counts it and keeps the latest time in LastSeen. 0 or 1: seen once.
	Count    int       `json:"count,omitzero"`
	LastSeen time.Time `json:"lastSeen,omitzero"`
	// Wrong is a person's word that it is wrong (mnemo/markWrong).
	Wrong bool `json:"wrong,omitzero"`
	// Kept is a person's word that it still holds though its files
	// changed (mnemo/keep, or a correction): it clears StateReview until
	// a file changes again.
	Kept *Keep `json:"kept,omitempty"`
	// Pinned keeps the observation in every SessionStart context of its
	// project, first, whatever its age (mnemo/pin).
	Pinned bool `json:"pinned,omitzero"`
	// Edits are the observation's corrections, oldest first, each with
	// what it said until then (mnemo/correct).
	Edits []Edit `json:"edits,omitempty"`
	// Origin says who made an observation that arrived from a team
	// server, and where; nil for the observations made here.
	Origin *Origin   `json:"origin,omitempty"`
	Time   time.Time `json:"time"`
	// Hash is ContentHash as the observation now reads; the hashes of its
	// earlier versions (PastHashes) are indexed beside it.
	Hash string `json:"hash"`
}

// An Anchor is a range of a file: lines and columns count from 1 (as
// editors show them), the end line is included, a column of 0 means the
// whole line.
type Anchor struct {
	File        string `json:"file"`
	StartLine   int    `json:"startLine"`
	StartColumn int    `json:"startColumn,omitzero"`
	EndLine     int    `json:"endLine"`
	EndColumn   int    `json:"endColumn,omitzero"`
}

// String is the anchor as editors and compilers print places:
// file:12-18, or file:12:5 for a range within one line.
func (a Anchor) String() string {
	switch {
	case a.StartLine == a.EndLine && a.StartColumn > 0:
		return fmt.Sprintf("%s:%d:%d", a.File, a.StartLine, a.StartColumn)
	case a.StartLine == a.EndLine:
		return fmt.Sprintf("%s:%d", a.File, a.StartLine)
	}
	return fmt.Sprintf("%s:%d-%d", a.File, a.StartLine, a.EndLine)
}

// Where an observation came from.
const (
	SourceAgent  = "agent"  // made by the memory agent from a tool event
	SourceSaved  = "saved"  // saved on purpose (mnemo/save)
	SourceEditor = "editor" // made from an editor event
)

// Observation types the local agent produces; agents may use others.
const (
	TypeBugfix    = "bugfix"
	TypeFeature   = "feature"
	TypeRefactor  = "refactor"
	TypeChange    = "change"
	TypeDiscovery = "discovery"
	TypeDecision  = "decision"
	TypeSecurity  = "security_note"
	TypeNote      = "note"
	// TypePrompt is what the person said in a turn that left no other
	// record (a chat turn, a question the agent answered without a tool
	// call or a finding): the prompt itself, found by search and by a
	// later prompt's recall, never given in a session's context.
	TypePrompt = "prompt"
)

// Types lists the observation types above, those the agents write and
// people save.
var Types = []string{TypeBugfix, TypeFeature, TypeRefactor, TypeChange, TypeDiscovery, TypeDecision, TypeSecurity, TypeNote}

// Files returns the observation's files, modified first, without repeats.
func (o *Observation) Files() []string {
	out := make([]string, 0, len(o.FilesModified)+len(o.FilesRead))
	seen := make(map[string]bool, cap(out))
	for _, f := range append(append([]string(nil), o.FilesModified...), o.FilesRead...) {
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	return out
}

// A Summary is what one turn of a session came to.
type Summary struct {
	ID               uint64    `json:"id"`
	SessionID        uint64    `json:"sessionId"`
	ContentSessionID string    `json:"contentSessionId"`
	MemorySessionID  string    `json:"memorySessionId"`
	PromptNumber     int       `json:"promptNumber"`
	Project          string    `json:"project"`
	Request          string    `json:"request"`
	Investigated     string    `json:"investigated"`
	Learned          string    `json:"learned"`
	Completed        string    `json:"completed"`
	NextSteps        string    `json:"nextSteps"`
	Notes            string    `json:"notes"`
	FilesRead        []string  `json:"filesRead"`
	FilesModified    []string  `json:"filesModified"`
	Time             time.Time `json:"time"`
}

// EventKind says what a queued event asks the agent for.
type EventKind string

// The kinds of queued events.
const (
	EventTool EventKind = "tool" // make an observation
	EventStop EventKind = "stop" // make a summary
)

// An Event is a raw event waiting in the durable queue for the memory
// agent. Its text is already stripped and redacted.
type Event struct {
	ID               uint64          `json:"id"`
	Kind             EventKind       `json:"kind"`
	SessionID        uint64          `json:"sessionId"`
	ContentSessionID string          `json:"contentSessionId"`
	PromptNumber     int             `json:"promptNumber"`
	Project          string          `json:"project"`
	Cwd              string          `json:"cwd,omitempty"`
	Platform         string          `json:"platform,omitempty"`
	ToolName         string          `json:"toolName,omitempty"`
	ToolInput        json.RawMessage `json:"toolInput,omitempty"`
	ToolResponse     json.RawMessage `json:"toolResponse,omitempty"`
	ToolUseID        string          `json:"toolUseId,omitempty"`
	// FileAnchors are what the tool's files held when the event came
	// (store.PostToolUse); the observations made of it carry them.
	FileAnchors          []FileAnchor `json:"fileAnchors,omitempty"`
	Source               string       `json:"source,omitempty"` // the observations' Source; empty is SourceAgent
	LastUserMessage      string       `json:"lastUserMessage,omitempty"`
	LastAssistantMessage string       `json:"lastAssistantMessage,omitempty"`
	// Texts are what the agent wrote in a stop event's turn, in order, its
	// answer last (StopParams.Texts, or the transcript's), cleaned and
	// bounded (BoundTexts).
	Texts []TurnText `json:"texts,omitempty"`
	// Time is when the event's work happened; Queued when it entered the
	// queue (later, for history brought in after the fact).
	Time   time.Time `json:"time"`
	Queued time.Time `json:"queued,omitzero"`
}

// ContentHash identifies an observation's content within its session, for
// de-duplication: the same note made twice in one session is stored once.
func (o *Observation) ContentHash() string {
	h := sha256.New()
	fmt.Fprintf(h, "%d\x00%s\x00%s\x00%s\x00%s\x00", o.SessionID, o.Project, o.Type, o.Title, o.Narrative)
	for _, part := range [][]string{o.Facts, o.FilesRead, o.FilesModified} {
		for _, s := range part {
			fmt.Fprintf(h, "%s\x01", s)
		}
		h.Write([]byte{0})
	}
	if o.Anchor != nil {
		// The same text remembered from two places is two memories.
		fmt.Fprintf(h, "a\x00%s\x00", o.Anchor)
	}
	if o.Evidence != "" {
		// Two edits of one file may share a title; what they changed tells
		// them apart. Without evidence the hash is what it always was.
		fmt.Fprintf(h, "e\x00%s", o.Evidence)
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}
