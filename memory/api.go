package memory

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Errors the domain returns; callers match them with errors.Is.
var (
	// ErrInvalid marks bad input; the error's text names the field.
	ErrInvalid = errors.New("invalid input")
	// ErrNotFound marks a lookup of something that does not exist.
	ErrNotFound = errors.New("not found")
	// ErrClosed is returned after Close.
	ErrClosed = errors.New("memory closed")
	// ErrSchema is returned by Open for a data directory written by a newer
	// Mnemo.
	ErrSchema = errors.New("unsupported schema version")
)

// FieldError is bad input in one named field. It matches ErrInvalid.
type FieldError struct {
	Field  string
	Reason string
}

func (e *FieldError) Error() string        { return e.Field + " " + e.Reason }
func (e *FieldError) Is(target error) bool { return target == ErrInvalid }

func required(field, v string) error {
	if strings.TrimSpace(v) == "" {
		return &FieldError{field, "is required"}
	}
	return nil
}

// Limits on input sizes; bigger inputs are cut, not refused.
const (
	MaxPromptBytes   = 64 << 10
	MaxToolJSONBytes = 256 << 10
	MaxMessageBytes  = 64 << 10
	DefaultLimit     = 20
	MaxLimit         = 1000
)

// BackfillKeyPrefix starts the event keys of the calls a back-fill
// rebuilds from an agent's transcripts. The store keeps those keys for
// good, where it forgets a hook's after 30 days: a back-fill may be
// resumed, or a session topped up, at any later time, and must still
// store each record once.
const BackfillKeyPrefix = "bf-"

// SessionStartParams opens (or reopens) a session and asks for context.
type SessionStartParams struct {
	ContentSessionID string `json:"contentSessionId"`
	Cwd              string `json:"cwd"`
	Project          string `json:"project,omitempty"`
	Source           string `json:"source,omitempty"` // startup, resume, clear, compact, fork
	Platform         string `json:"platform,omitempty"`
	// NoContext says the client cannot show context (a host whose session
	// start takes none): the session is opened, no context is built or
	// audited.
	NoContext bool `json:"noContext,omitzero"`
	// NoCapture says the session stores nothing (PauseEnv): no session
	// record is made; the context is given unless NoContext.
	NoCapture bool `json:"noCapture,omitzero"`
	// At is when the stage happened, for history brought in after the
	// fact (a back-fill); zero, as the hooks send it, means now, and so
	// does a time still to come.
	At time.Time `json:"at,omitzero"`
	// EventKey makes the call idempotent: a call repeated with the same key
	// (a hook replaying its spool) has no further effect.
	EventKey string `json:"eventKey,omitempty"`
}

// Validate reports the first missing field.
func (p *SessionStartParams) Validate() error {
	return required("contentSessionId", p.ContentSessionID)
}

// ContextResult is what SessionStart and mnemo/context return.
type ContextResult struct {
	SessionID      uint64   `json:"sessionId,omitzero"`
	Project        string   `json:"project"`
	Context        string   `json:"context"`
	ObservationIDs []uint64 `json:"observationIds"`
	Bytes          int      `json:"bytes"`
	// Items says why each observation was chosen, in the order of
	// ObservationIDs: mnemo/context's preview has them (the hooks are not
	// sent them; their injection's audit keeps them).
	Items []InjectionItem `json:"items,omitempty"`
	// Left are the observations left out because what they saw of their
	// files is gone, with why (the preview's; the audit keeps them too).
	Left []InjectionItem `json:"left,omitempty"`
}

// UserPromptParams records a user prompt.
type UserPromptParams struct {
	ContentSessionID string `json:"contentSessionId"`
	Cwd              string `json:"cwd"`
	Prompt           string `json:"prompt"`
	Platform         string `json:"platform,omitempty"`
	// NoRecall says the client cannot show a prompt's recall (a host whose
	// prompt stage takes no context): the prompt is stored, nothing is
	// searched or marked given.
	NoRecall bool `json:"noRecall,omitzero"`
	// NoCapture says the session stores nothing (PauseEnv): the prompt
	// is neither stored nor numbered; the recall is given unless NoRecall.
	NoCapture bool `json:"noCapture,omitzero"`
	// At is when the stage happened, for history brought in after the
	// fact (a back-fill); zero, as the hooks send it, means now, and so
	// does a time still to come.
	At time.Time `json:"at,omitzero"`
	// EventKey makes the call idempotent: a call repeated with the same key
	// (a hook replaying its spool) has no further effect.
	EventKey string `json:"eventKey,omitempty"`
}

// Validate reports the first missing field.
func (p *UserPromptParams) Validate() error {
	return required("contentSessionId", p.ContentSessionID)
}

// UserPromptResult says which session and prompt number a prompt got,
// and what of the memory the prompt recalls.
type UserPromptResult struct {
	SessionID    uint64 `json:"sessionId"`
	PromptNumber int    `json:"promptNumber"`
	Private      bool   `json:"private"`
	// Context is the recall at the moment of need: the few memories that
	// best match the prompt, above a relevance floor, that this session
	// has not been given yet (an earlier prompt's recall, or SessionStart's
	// context with their text: a title alone is not given) and did not
	// make itself; one line each (id · type · title · files), the best
	// followed by the passage of their text the prompt needs, in a
	// <mnemo-context> element, at most MaxPromptContextBytes. Empty when
	// nothing clears the floor, when the prompt is entirely private, when
	// recall is turned off, and when the call repeats an event key.
	Context string `json:"context,omitempty"`
	// ObservationIDs are the observations Context lists, best first.
	ObservationIDs []uint64 `json:"observationIds,omitempty"`
}

// The bounds of a prompt's recall (UserPromptResult.Context).
const (
	MaxPromptContextBytes = 1536
	MaxPromptContextItems = 5
)

// ToolUseParams is one tool run (or an editor event) to remember.
type ToolUseParams struct {
	ContentSessionID string          `json:"contentSessionId"`
	Cwd              string          `json:"cwd"`
	ToolName         string          `json:"toolName"`
	ToolInput        json.RawMessage `json:"toolInput,omitempty"`
	ToolResponse     json.RawMessage `json:"toolResponse,omitempty"`
	ToolUseID        string          `json:"toolUseId,omitempty"`
	Platform         string          `json:"platform,omitempty"`
	// Source is where the event comes from, kept on its observations:
	// SourceEditor for an editor's saves and opens; empty for a tool run
	// (SourceAgent).
	Source string `json:"source,omitempty"`
	// At is when the stage happened, for history brought in after the
	// fact (a back-fill); zero, as the hooks send it, means now, and so
	// does a time still to come.
	At time.Time `json:"at,omitzero"`
	// EventKey makes the call idempotent: a call repeated with the same key
	// (a hook replaying its spool) has no further effect.
	EventKey string `json:"eventKey,omitempty"`
}

// Validate reports the first missing or bad field.
func (p *ToolUseParams) Validate() error {
	if err := required("contentSessionId", p.ContentSessionID); err != nil {
		return err
	}
	if err := required("toolName", p.ToolName); err != nil {
		return err
	}
	switch p.Source {
	case "", SourceAgent, SourceEditor:
		return nil
	}
	return &FieldError{"source", "must be " + SourceAgent + " or " + SourceEditor}
}

// QueueResult says whether an event was queued, and if not, why.
type QueueResult struct {
	Queued  bool   `json:"queued"`
	Skipped string `json:"skipped,omitempty"`
	EventID uint64 `json:"eventId,omitzero"`
}

// StopParams asks for a summary of the turn that just ended, and for the
// records of what it said.
type StopParams struct {
	ContentSessionID string `json:"contentSessionId"`
	// Cwd is the session's folder, for a session not recorded yet (its
	// project) and for one whose project's capture is paused.
	Cwd             string `json:"cwd,omitempty"`
	LastUserMessage string `json:"lastUserMessage,omitempty"`
	// LastAssistantMessage is the turn's answer as the host's hook sends
	// it (Claude Code's last_assistant_message, Cursor's stop text…).
	LastAssistantMessage string `json:"lastAssistantMessage,omitempty"`
	// TranscriptPath is the session's transcript. For a Claude Code
	// session's live turn end, the daemon reads the turn's texts there
	// (memory/transcript): the hook never reads it.
	TranscriptPath string `json:"transcriptPath,omitempty"`
	// Texts are the texts the agent wrote in the turn, in order, when the
	// client has them (a back-fill reads them from the transcript it
	// replays); the daemon then reads no transcript.
	Texts []TurnText `json:"texts,omitempty"`
	// At is when the stage happened, for history brought in after the
	// fact (a back-fill); zero, as the hooks send it, means now, and so
	// does a time still to come.
	At time.Time `json:"at,omitzero"`
	// EventKey makes the call idempotent: a call repeated with the same key
	// (a hook replaying its spool) has no further effect.
	EventKey string `json:"eventKey,omitempty"`
}

// Validate reports the first missing field.
func (p *StopParams) Validate() error {
	return required("contentSessionId", p.ContentSessionID)
}

// A TurnText is one text the agent wrote in a turn: its reasoning before
// tool calls, or its answer.
type TurnText struct {
	Text string `json:"text"`
	// ToolUseIDs are the tool calls that came right after the text, before
	// any other text: the text is why the agent made them. None for the
	// answer.
	ToolUseIDs []string `json:"toolUseIds,omitempty"`
}

// The bounds of a turn's texts as an event keeps them (BoundTexts).
const (
	MaxTurnTexts     = 64
	MaxTurnTextBytes = 16 << 10
	MaxTurnBytes     = 64 << 10
)

// BoundTexts bounds a turn's texts: at most MaxTurnTexts (the first ones
// and the last ones, which hold the answer), each cut to
// MaxTurnTextBytes, all of them to MaxTurnBytes (the answer served
// first, then the others in order; those left without room go). Empty
// texts are dropped. It returns a new slice.
func BoundTexts(texts []TurnText) []TurnText {
	out := slices.DeleteFunc(slices.Clone(texts), func(t TurnText) bool { return strings.TrimSpace(t.Text) == "" })
	if len(out) > MaxTurnTexts {
		tail := MaxTurnTexts / 4
		out = append(out[:MaxTurnTexts-tail], out[len(out)-tail:]...)
	}
	if len(out) == 0 {
		return nil
	}
	budget := MaxTurnBytes
	cut := func(t *TurnText) {
		if n := min(budget, MaxTurnTextBytes); len(t.Text) > n {
			for n > 0 && !utf8.RuneStart(t.Text[n]) {
				n--
			}
			t.Text = t.Text[:n]
		}
		budget -= len(t.Text)
	}
	last := len(out) - 1
	cut(&out[last])
	for i := range out[:last] {
		cut(&out[i])
	}
	return slices.DeleteFunc(out, func(t TurnText) bool { return t.Text == "" })
}

// MaxRequestExcerpt bounds what an observation keeps of its turn's
// prompt (Observation.Request): a pasted spec of tens of KB is kept
// once, with the session's prompts, not copied into every record.
const MaxRequestExcerpt = 1 << 10

// SessionEndParams closes a session.
type SessionEndParams struct {
	ContentSessionID string `json:"contentSessionId"`
	Reason           string `json:"reason,omitempty"`
	// Cwd is the session's folder: a session of a project whose capture
	// is paused has no record to complete, and its end is skipped
	// (SessionEndResult.Skipped) instead of not found.
	Cwd string `json:"cwd,omitempty"`
	// At is when the stage happened, for history brought in after the
	// fact (a back-fill); zero, as the hooks send it, means now, and so
	// does a time still to come.
	At time.Time `json:"at,omitzero"`
	// EventKey makes the call idempotent: a call repeated with the same key
	// (a hook replaying its spool) has no further effect.
	EventKey string `json:"eventKey,omitempty"`
}

// Validate reports the first missing field.
func (p *SessionEndParams) Validate() error {
	return required("contentSessionId", p.ContentSessionID)
}

// SessionEndResult is the session's status after SessionEnd.
type SessionEndResult struct {
	Status  SessionStatus `json:"status"`
	Skipped string        `json:"skipped,omitempty"`
}

// SearchParams filters and ranks observations. With no query the filters
// alone apply, newest first.
type SearchParams struct {
	Query   string   `json:"query,omitempty"`
	Project string   `json:"project,omitempty"`
	Types   []string `json:"types,omitempty"`
	Files   []string `json:"files,omitempty"`
	// Host keeps the observations made in one host's sessions
	// ("claude-code", "codex", …).
	Host string `json:"host,omitempty"`
	// Author keeps this machine's observations (AuthorMine), those that
	// arrived from a team server (AuthorTeam), or one author's.
	Author string    `json:"author,omitempty"`
	Since  time.Time `json:"since,omitzero"`
	Until  time.Time `json:"until,omitzero"`
	Limit  int       `json:"limit,omitzero"`
	// Mode picks the rankings: "hybrid" (the default, keywords and meaning
	// fused), "keyword" or "vector".
	Mode string `json:"mode,omitempty"`
}

// The search modes.
const (
	ModeHybrid  = "hybrid"
	ModeKeyword = "keyword"
	ModeVector  = "vector"
)

// Validate checks the limit, the mode and the time range.
func (p *SearchParams) Validate() error {
	if p.Limit < 0 || p.Limit > MaxLimit {
		return &FieldError{"limit", fmt.Sprintf("must be between 1 and %d", MaxLimit)}
	}
	switch p.Mode {
	case "", ModeHybrid, ModeKeyword, ModeVector:
	default:
		return &FieldError{"mode", fmt.Sprintf("is %q; want hybrid, keyword or vector", p.Mode)}
	}
	if !p.Since.IsZero() && !p.Until.IsZero() && p.Until.Before(p.Since) {
		return &FieldError{"until", "is before since"}
	}
	return nil
}

// A Hit is one row of a search's compact index.
type Hit struct {
	ID      uint64 `json:"id"`
	Title   string `json:"title"`
	Type    string `json:"type"`
	Project string `json:"project"`
	Host    string `json:"host,omitempty"`
	// Author is who made an observation that arrived from a team server.
	Author  string    `json:"author,omitempty"`
	Time    time.Time `json:"time"`
	Files   []string  `json:"files"`
	Score   float64   `json:"score"`
	Snippet string    `json:"snippet"`
	// State is how what the observation saw compares with its files now
	// (StateCurrent, StateChanged, StateGone; "" without anchors), or
	// what became of it (StateSuperseded, StateReverted, StateWrong).
	State string `json:"state,omitempty"`
	// SupersededBy is the later observation that superseded it.
	SupersededBy uint64 `json:"supersededBy,omitzero"`
	// Count and LastSeen: how many times the same fact was seen, and
	// when last (Observation.Count); 0 when seen once.
	Count    int       `json:"count,omitzero"`
	LastSeen time.Time `json:"lastSeen,omitzero"`
}

// SearchResult is a ranked list of hits.
type SearchResult struct {
	Hits []Hit `json:"hits"`
	// Total is how many hits were returned, len(Hits); More says that
	// more hits clear the relevance floor than the limit let through.
	// (Counting them all would cost a search without a limit.)
	Total int  `json:"total"`
	More  bool `json:"more,omitzero"`
	// Closest says that no hit holds the query's words: the hits are
	// only the closest to it in meaning (the sentence encoder's first few,
	// or the hashing embedder's nearest), not matches. Never set for a
	// search by meaning alone (ModeVector) or without a query.
	Closest bool `json:"closest,omitzero"`
}

// TimelineParams asks for the observations around an anchor: an
// observation id (a JSON number) or a time (an RFC 3339 string).
type TimelineParams struct {
	Anchor  json.RawMessage `json:"anchor"`
	Before  int             `json:"before,omitzero"`
	After   int             `json:"after,omitzero"`
	Project string          `json:"project,omitempty"`
}

// Validate checks that the anchor is an id or a time.
func (p *TimelineParams) Validate() error {
	_, _, err := p.ParseAnchor()
	return err
}

// ParseAnchor reads Anchor: an observation id, or an RFC 3339 time.
func (p *TimelineParams) ParseAnchor() (id uint64, t time.Time, err error) {
	raw := strings.TrimSpace(string(p.Anchor))
	if raw == "" || raw == "null" {
		return 0, time.Time{}, &FieldError{"anchor", "is required (an observation id or an RFC 3339 time)"}
	}
	if err := json.Unmarshal(p.Anchor, &id); err == nil && id > 0 {
		return id, time.Time{}, nil
	}
	var s string
	if err := json.Unmarshal(p.Anchor, &s); err == nil {
		if t, err := time.Parse(time.RFC3339, s); err == nil {
			return 0, t, nil
		}
		var n uint64
		if _, err := fmt.Sscan(s, &n); err == nil && n > 0 {
			return n, time.Time{}, nil
		}
	}
	return 0, time.Time{}, &FieldError{"anchor", "must be an observation id or an RFC 3339 time"}
}

// TimelineResult is the neighbourhood of an anchor, oldest first.
type TimelineResult struct {
	AnchorID     uint64        `json:"anchorId,omitzero"`
	Observations []Observation `json:"observations"`
}

// IDsParams names observations.
type IDsParams struct {
	IDs []uint64 `json:"ids"`
}

// Validate requires at least one id and at most MaxLimit.
func (p *IDsParams) Validate() error {
	if len(p.IDs) == 0 {
		return &FieldError{"ids", "must name at least one observation"}
	}
	if len(p.IDs) > MaxLimit {
		return &FieldError{"ids", fmt.Sprintf("may name at most %d observations", MaxLimit)}
	}
	return nil
}

// ObservationsResult carries full records.
type ObservationsResult struct {
	Observations []Observation `json:"observations"`
	Missing      []uint64      `json:"missing,omitzero"`
}

// RecordsParams asks for a page of full observations in the order of
// their ids: those after After (0 for the first page), of Project or of
// every project, at most Limit (default DefaultLimit, at most MaxLimit).
type RecordsParams struct {
	After   uint64 `json:"after,omitzero"`
	Project string `json:"project,omitempty"`
	Limit   int    `json:"limit,omitzero"`
}

// Validate checks the limit.
func (p *RecordsParams) Validate() error {
	if p.Limit < 0 || p.Limit > MaxLimit {
		return &FieldError{"limit", fmt.Sprintf("must be between 0 and %d", MaxLimit)}
	}
	return nil
}

// RecordsResult is one page of full records; Next is the After of the
// next page, 0 after the last.
type RecordsResult struct {
	Observations []Observation `json:"observations"`
	Next         uint64        `json:"next,omitzero"`
}

// ContextParams asks what SessionStart would inject for a project.
type ContextParams struct {
	Project string `json:"project,omitempty"`
	Cwd     string `json:"cwd,omitempty"`
}

// Validate requires a project or a working directory.
func (p *ContextParams) Validate() error {
	if strings.TrimSpace(p.Project) == "" && strings.TrimSpace(p.Cwd) == "" {
		return &FieldError{"project", "or cwd is required"}
	}
	return nil
}

// SaveParams is a memory saved on purpose.
type SaveParams struct {
	Text    string   `json:"text"`
	Title   string   `json:"title,omitempty"`
	Type    string   `json:"type,omitempty"`
	Project string   `json:"project,omitempty"`
	Cwd     string   `json:"cwd,omitempty"`
	Files   []string `json:"files,omitempty"`
	// Anchor is where in a file the text comes from (an editor's
	// selection); it is kept on the observation.
	Anchor *Anchor `json:"anchor,omitempty"`
	// By is who saves it: SavedByPerson for a person (mnemo remember),
	// empty for the agent (its save_memory tool); kept on the observation
	// (Observation.SavedBy).
	By string `json:"by,omitempty"`
}

// SavedByPerson is SaveParams.By, and Observation.SavedBy, for a memory a
// person saved.
const SavedByPerson = "person"

// Validate requires text and a project or working directory, and an
// anchor, when given, to name a file and a range that starts at line 1 or
// later and does not end before it starts.
func (p *SaveParams) Validate() error {
	if err := required("text", p.Text); err != nil {
		return err
	}
	if strings.TrimSpace(p.Project) == "" && strings.TrimSpace(p.Cwd) == "" {
		return &FieldError{"project", "or cwd is required"}
	}
	if a := p.Anchor; a != nil {
		if err := required("anchor.file", a.File); err != nil {
			return err
		}
		if a.StartLine < 1 || a.EndLine < a.StartLine || a.StartColumn < 0 || a.EndColumn < 0 ||
			a.EndLine == a.StartLine && a.EndColumn != 0 && a.EndColumn < a.StartColumn {
			return &FieldError{"anchor", "must be a range from line 1 on whose end is not before its start"}
		}
	}
	if p.By != "" && p.By != SavedByPerson {
		return &FieldError{"by", fmt.Sprintf("is %q; want %q or nothing (the agent)", p.By, SavedByPerson)}
	}
	return nil
}

// SaveResult is the stored observation's id.
type SaveResult struct {
	ID uint64 `json:"id"`
	// Truncated says the text was longer than MaxMessageBytes, once its
	// private parts were removed, and was cut there.
	Truncated bool `json:"truncated,omitzero"`
}

// ForgetResult says what was deleted and what did not exist.
type ForgetResult struct {
	Deleted []uint64 `json:"deleted"`
	Missing []uint64 `json:"missing"`
}

// Counts are the sizes of the store.
type Counts struct {
	Sessions     int `json:"sessions"`
	Prompts      int `json:"prompts"`
	Observations int `json:"observations"`
	Summaries    int `json:"summaries"`
	Queued       int `json:"queued"`
}

// Status describes a running memory.
type Status struct {
	Version         string `json:"version"`
	ProtocolVersion int    `json:"protocolVersion"`
	DataDir         string `json:"dataDir"`
	Counts          Counts `json:"counts"`
	Embedder        string `json:"embedder"`
	Agent           string `json:"agent"`
	PID             int    `json:"pid"`
	Notice          string `json:"notice,omitempty"`
	// Paused lists the projects whose capture or injection is paused.
	Paused []PausedProject `json:"paused,omitempty"`
	// Sync is how the group sync kept its window; absent when writes are
	// not synced (in memory, benchmarks).
	Sync *SyncStatus `json:"sync,omitempty"`
	// Journal is what the daemon took in from the hooks' journal.
	Journal *JournalStatus `json:"journal,omitempty"`
	// KnowledgePending counts the sessions ended whose projects' knowledge
	// the daemon has yet to derive again (docs/architecture.md §7).
	KnowledgePending int `json:"knowledgePending,omitzero"`
}

// SyncStatus says how the group sync kept its window
// (docs/architecture.md §2): how many syncs ran, and how long after an
// acknowledged write the sync that covered it ended, the last time and at
// most since the daemon started.
type SyncStatus struct {
	WindowMs  float64 `json:"windowMs"`
	Syncs     uint64  `json:"syncs"`
	LastLagMs float64 `json:"lastLagMs"`
	MaxLagMs  float64 `json:"maxLagMs"`
	// MaxStartMs is the longest a write waited for its sync to start (it
	// starts at once, or when the one running ends); MaxSyncMs the longest
	// one sync took the disk.
	MaxStartMs float64 `json:"maxStartMs"`
	MaxSyncMs  float64 `json:"maxSyncMs"`
	// Errors counts failed syncs (each is tried again).
	Errors uint64 `json:"errors,omitempty"`
}

// JournalStatus is the daemon's reading of the hooks' journal
// (docs/architecture.md §2): the records it took in since it started, the
// ones it could not store (logged), and the bytes written but not yet
// read.
type JournalStatus struct {
	Taken    int64 `json:"taken"`
	Rejected int64 `json:"rejected,omitempty"`
	Unread   int64 `json:"unread"`
}

// SessionParams names one session by its content session id.
type SessionParams struct {
	ContentSessionID string `json:"contentSessionId"`
}

// Validate requires the session's id.
func (p *SessionParams) Validate() error {
	if strings.TrimSpace(p.ContentSessionID) == "" {
		return &FieldError{"contentSessionId", "is required"}
	}
	return nil
}

// SessionResult is one session with what was remembered of it: its
// prompts, its observations as compact hits (oldest first, at most
// MaxSessionObservations; ObservationTotal says how many there are) and
// its summaries.
type SessionResult struct {
	Session          Session      `json:"session"`
	Prompts          []Prompt     `json:"prompts"`
	Observations     []SessionHit `json:"observations"`
	ObservationTotal int          `json:"observationTotal"`
	Summaries        []Summary    `json:"summaries"`
}

// SessionHit is an observation of a session: its hit, and the prompt of
// the turn it was made in.
type SessionHit struct {
	Hit
	PromptNumber int `json:"promptNumber"`
}

// MaxSessionObservations bounds the observations of a SessionResult.
const MaxSessionObservations = 1000

// InjectionsParams asks for the newest context injections, of one
// project when Project is set.
type InjectionsParams struct {
	Project string `json:"project,omitempty"`
	Limit   int    `json:"limit,omitzero"` // default 20, at most MaxLimit
}

// Validate checks the limit.
func (p *InjectionsParams) Validate() error {
	if p.Limit < 0 || p.Limit > MaxLimit {
		return &FieldError{"limit", fmt.Sprintf("must be between 1 and %d", MaxLimit)}
	}
	return nil
}

// InjectionsResult lists context injections, newest first.
type InjectionsResult struct {
	Injections []Injection `json:"injections"`
}
