package hosts

import (
	"encoding/json"
	"time"

	"github.com/mnemo-dev/mnemo/memory"
)

// The Claude Code hook events Mnemo handles: the memory's stages, and a
// failed tool run (a PostToolUse to the memory).
const (
	EventSessionStart       = memory.StageSessionStart
	EventUserPromptSubmit   = memory.StageUserPromptSubmit
	EventPostToolUse        = memory.StagePostToolUse
	EventPostToolUseFailure = "PostToolUseFailure"
	EventStop               = memory.StageStop
	EventSessionEnd         = memory.StageSessionEnd
)

// The hook's deadlines, start to answer. Claude Code waits for a hook, so
// every stage has a hard bound; what misses it goes to the spool.
const (
	// SessionStartBudget bounds SessionStart, which may start the daemon
	// and has the context to wait for.
	SessionStartBudget = 2 * time.Second
	// EventBudget bounds UserPromptSubmit, PostToolUse, PostToolUseFailure
	// and Stop, which may start the daemon too. UserPromptSubmit's answer
	// waits for the prompt's recall, which the daemon bounds well within
	// it (a late recall is dropped, the prompt still answered).
	EventBudget = 1 * time.Second
	// SessionEndBudget bounds SessionEnd, which never starts a daemon:
	// Claude Code gives all SessionEnd hooks 1.5 s together, and the
	// session is closing.
	SessionEndBudget = 200 * time.Millisecond
)

// A Stage is how Mnemo hooks one Claude Code event.
type Stage struct {
	// Event is the hook event name, e.g. "PostToolUse"; it is also the
	// hook's only argument.
	Event string
	// Method is the daemon method the event maps onto.
	Method string
	// Matcher is the hook matcher, "" for none (everything).
	Matcher string
	// Timeout is Claude Code's timeout for the hook, in seconds: above
	// Budget with room for the process start and a spool write.
	Timeout int
	// Budget is the hook's own deadline, from reading the payload to its
	// answer. A stage that spools gives the daemon nine tenths of it and
	// keeps the rest for the spool write.
	Budget time.Duration
	// StartsDaemon says whether the hook starts a daemon when none runs.
	StartsDaemon bool
	// Spools says whether a call that failed is appended to the spool.
	Spools bool
	// Context says whether the daemon's answer carries context to inject:
	// the hook prints it as hookSpecificOutput.additionalContext.
	Context bool
}

// Stages lists the events Mnemo hooks, in the order Claude Code fires
// them. The plugin's hooks/hooks.json and Install both follow it.
//
// SessionStart matches every source Claude Code has: startup, resume,
// clear, compact (the context is injected again after compaction) and fork
// (a forked session has a new id).
var Stages = []Stage{
	{Event: EventSessionStart, Method: memory.MethodSessionStart, Matcher: "startup|resume|clear|compact|fork", Timeout: 10, Budget: SessionStartBudget, StartsDaemon: true, Context: true},
	{Event: EventUserPromptSubmit, Method: memory.MethodUserPromptSubmit, Timeout: 5, Budget: EventBudget, StartsDaemon: true, Spools: true, Context: true},
	{Event: EventPostToolUse, Method: memory.MethodPostToolUse, Timeout: 5, Budget: EventBudget, StartsDaemon: true, Spools: true},
	{Event: EventPostToolUseFailure, Method: memory.MethodPostToolUse, Timeout: 5, Budget: EventBudget, StartsDaemon: true, Spools: true},
	{Event: EventStop, Method: memory.MethodStop, Timeout: 5, Budget: EventBudget, StartsDaemon: true, Spools: true},
	{Event: EventSessionEnd, Method: memory.MethodSessionEnd, Timeout: 1, Budget: SessionEndBudget, Spools: true},
}

// stageNamed returns the stage of a stage event ("PostToolUse").
func stageNamed(event string) (Stage, bool) {
	for _, s := range Stages {
		if s.Event == event {
			return s, true
		}
	}
	return Stage{}, false
}

// Payload is what Claude Code writes to a command hook's stdin (as of
// Claude Code 2.1.330): the common fields, then those of each event Mnemo
// hooks. Other fields are ignored when decoding.
type Payload struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path,omitempty"`
	Cwd            string `json:"cwd,omitempty"`
	HookEventName  string `json:"hook_event_name"`
	// PromptID names the user turn (Claude Code 2.1.196+; absent before
	// the first prompt).
	PromptID       string `json:"prompt_id,omitempty"`
	PermissionMode string `json:"permission_mode,omitempty"`
	// AgentID and AgentType are set inside a subagent.
	AgentID   string `json:"agent_id,omitempty"`
	AgentType string `json:"agent_type,omitempty"`

	// SessionStart: startup, resume, clear, compact or fork.
	Source string `json:"source,omitempty"`
	Model  string `json:"model,omitempty"`

	// UserPromptSubmit.
	Prompt string `json:"prompt,omitempty"`

	// PostToolUse and PostToolUseFailure.
	ToolName     string          `json:"tool_name,omitempty"`
	ToolInput    json.RawMessage `json:"tool_input,omitempty"`
	ToolResponse json.RawMessage `json:"tool_response,omitempty"`
	ToolUseID    string          `json:"tool_use_id,omitempty"`
	DurationMS   int64           `json:"duration_ms,omitempty"`
	// Error and IsInterrupt are PostToolUseFailure's: the failure text
	// ("Exit code 3\nfailing") and whether the user interrupted the tool.
	Error       string `json:"error,omitempty"`
	IsInterrupt bool   `json:"is_interrupt,omitempty"`

	// Stop.
	StopHookActive       bool   `json:"stop_hook_active,omitempty"`
	LastAssistantMessage string `json:"last_assistant_message,omitempty"`

	// SessionEnd: clear, resume, logout, prompt_input_exit or other.
	Reason string `json:"reason,omitempty"`

	// Host is the host whose dialect the payload came in (dialect.go);
	// empty means Claude Code's.
	Host string `json:"-"`
	// LastUserMessage is the turn's prompt, for a host whose turn end
	// carries it (Gemini CLI's AfterAgent).
	LastUserMessage string `json:"-"`
	// Texts are a Stop's texts of the turn, when a back-fill has them from
	// the transcript it reads (memory.StopParams.Texts).
	Texts []memory.TurnText `json:"-"`
	// Stage is the stage of HookEventName for Host, resolved once when
	// the payload is read (Wire.Normalize) and passed on from there; a
	// payload built by hand may leave it zero, and Translate resolves it.
	Stage Stage `json:"-"`
	// EventKey is the event key of a payload that names its event (see
	// Wire.dedupeKey), else "": the hook then makes a fresh one.
	EventKey string `json:"-"`
}

// Output is what the hook prints on stdout: one JSON object. SessionStart
// and UserPromptSubmit set HookSpecificOutput when the daemon gave them
// context; otherwise the hook prints {}, which is a valid answer for every
// stage and changes nothing.
type Output struct {
	HookSpecificOutput *HookSpecificOutput `json:"hookSpecificOutput,omitempty"`
}

// HookSpecificOutput carries the context SessionStart or UserPromptSubmit
// injects: {"hookEventName":"UserPromptSubmit","additionalContext":"…"}.
// Claude Code delivers AdditionalContext to the model as a system
// reminder (for UserPromptSubmit, next to the prompt).
type HookSpecificOutput struct {
	HookEventName     string `json:"hookEventName"`
	AdditionalContext string `json:"additionalContext,omitempty"`
}
