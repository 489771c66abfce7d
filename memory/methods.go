package memory

// The five stages of a session, by their hook names (Claude Code's, onto
// which every other host's events and an editor's are mapped): the hook
// adapter names its events with them, and the daemon tells by them which
// stage ended a session.
const (
	StageSessionStart     = "SessionStart"
	StageUserPromptSubmit = "UserPromptSubmit"
	StagePostToolUse      = "PostToolUse"
	StageStop             = "Stop"
	StageSessionEnd       = "SessionEnd"
)

// The JSON-RPC methods of the daemon (docs/architecture.md §3), named once for both ends:
// the daemon (cmd/internal/daemon) registers them, and every client calls
// them by these names: the hook directly, the CLI, MCP and the benchmarks
// through memory/client. The params and results are the types of this
// package named beside each.
const (
	// The five stages.
	MethodSessionStart     = "mnemo/sessionStart"     // SessionStartParams → ContextResult
	MethodUserPromptSubmit = "mnemo/userPromptSubmit" // UserPromptParams → UserPromptResult
	MethodPostToolUse      = "mnemo/postToolUse"      // ToolUseParams → QueueResult
	MethodStop             = "mnemo/stop"             // StopParams → QueueResult
	MethodSessionEnd       = "mnemo/sessionEnd"       // SessionEndParams → SessionEndResult

	// Recall.
	MethodSearch          = "mnemo/search"          // SearchParams → SearchResult
	MethodTimeline        = "mnemo/timeline"        // TimelineParams → TimelineResult
	MethodGetObservations = "mnemo/getObservations" // IDsParams → ObservationsResult
	MethodRecords         = "mnemo/records"         // RecordsParams → RecordsResult
	MethodContext         = "mnemo/context"         // ContextParams → ContextResult
	MethodSave            = "mnemo/save"            // SaveParams → SaveResult
	MethodForget          = "mnemo/forget"          // IDsParams → ForgetResult
	MethodCorrect         = "mnemo/correct"         // CorrectParams → CorrectResult
	MethodPin             = "mnemo/pin"             // IDsParams → PinResult
	MethodUnpin           = "mnemo/unpin"           // IDsParams → PinResult
	MethodMarkWrong       = "mnemo/markWrong"       // IDsParams → PinResult
	MethodUnmarkWrong     = "mnemo/unmarkWrong"     // IDsParams → PinResult
	// What many records of a project add up to (knowledge.go).
	MethodKnowledge = "mnemo/knowledge" // KnowledgeParams → Knowledge

	// A second look for what aged (memory/review.go): the records that
	// need review, and a person's word that one still holds.
	MethodReview = "mnemo/review" // ReviewParams → ReviewResult
	MethodKeep   = "mnemo/keep"   // IDsParams → PinResult

	// Maintenance.
	MethodStatus   = "mnemo/status"   // no params → Status
	MethodSessions = "mnemo/sessions" // no params → SessionsResult
	MethodSession  = "mnemo/session"  // SessionParams → SessionResult
	MethodDoctor   = "mnemo/doctor"   // no params → DoctorResult
	MethodReindex  = "mnemo/reindex"  // no params → ReindexResult
	MethodExport   = "mnemo/export"   // ExportParams → ExportResult
	MethodImport   = "mnemo/import"   // ImportParams → ImportResult

	// The audit of what was injected.
	MethodInjections = "mnemo/injections" // InjectionsParams → InjectionsResult

	// Opt-outs.
	MethodPause  = "mnemo/pause"  // PauseParams → PauseResult
	MethodResume = "mnemo/resume" // PauseParams → PauseResult

	// Team memory (docs/team.md).
	MethodTeamJoin   = "mnemo/teamJoin"   // TeamParams → TeamStatus
	MethodTeamLeave  = "mnemo/teamLeave"  // TeamParams → TeamStatus
	MethodTeamStatus = "mnemo/teamStatus" // no params → TeamStatus

	// The memory viewer: the daemon starts it if it does not serve yet
	// (adapters/viewer, a client of these methods like any other) and
	// returns its address.
	MethodViewer = "mnemo/viewer" // no params → ViewerResult

	// Live changes. After MethodWatch the daemon sends that connection a
	// MethodChanged notification for every change of the memory (its
	// params a Change, KindLost when it fell behind) until the connection
	// closes; a second MethodWatch changes nothing.
	MethodWatch   = "mnemo/watch"   // no params → WatchResult
	MethodChanged = "mnemo/changed" // notification, server → client: Change
)

// ViewerResult is MethodViewer's answer.
type ViewerResult struct {
	// URL opens the viewer: it carries the user's token once.
	URL  string `json:"url"`
	Port int    `json:"port"`
}

// WatchResult is MethodWatch's answer: empty, the changes follow as
// notifications.
type WatchResult struct{}
