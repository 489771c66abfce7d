package hosts

import "slices"

// The hosts: the coding agents whose hooks mnemo-hook reads. Claude
// Code's hook format has become the common one; every other host speaks a
// dialect of it (dialect.go), which the hook maps onto Claude Code's
// payload before anything else sees it.
const (
	ClaudeCode = "claude-code" // Claude Code: settings.json hooks, the reference dialect
	Codex      = "codex"       // OpenAI Codex CLI: hooks.json, Claude's event names
	Gemini     = "gemini"      // Gemini CLI (and Antigravity): settings.json hooks, its own event names
	Cursor     = "cursor"      // Cursor: hooks.json (version 1), camelCase events, conversation_id
	VSCode     = "vscode"      // VS Code agent hooks: .github/hooks/*.json, sessionId and hookEventName
	Copilot    = "copilot"     // GitHub Copilot CLI: camelCase or "VS Code compatible" PascalCase
	OpenCode   = "opencode"    // OpenCode: Mnemo's plugin speaks Claude's format with OpenCode's tools
	Windsurf   = "windsurf"    // Windsurf Cascade hooks: snake_case actions, trajectory_id
)

// A Host is what Mnemo knows of one coding agent's hooks.
type Host struct {
	// Name is the host's name on the command line (mnemo-hook --host,
	// mnemo install) and the platform its sessions are stored under.
	Name string
	// Title is its name for people.
	Title string
	// Events maps the host's own event names, those its configuration
	// lists, onto the stage events of Stages.
	Events map[string]string
	// Inject lists the stage events whose context the host takes from a
	// hook's answer; a host that takes none gets its project's context
	// through a rules file (rules.go) instead.
	Inject []string
}

// All lists every host Mnemo hooks into, Claude Code first.
var All = []Host{
	{
		Name: ClaudeCode, Title: "Claude Code",
		Events: stageNames(EventSessionStart, EventUserPromptSubmit, EventPostToolUse, EventPostToolUseFailure, EventStop, EventSessionEnd),
		Inject: []string{EventSessionStart, EventUserPromptSubmit},
	},
	{
		// Codex CLI 0.169.0 fires SessionEnd ("reason": "other") when a
		// session closes, its hook's timeout cut to 3 s.
		Name: Codex, Title: "Codex CLI",
		Events: stageNames(EventSessionStart, EventUserPromptSubmit, EventPostToolUse, EventStop, EventSessionEnd),
		Inject: []string{EventSessionStart, EventUserPromptSubmit},
	},
	{
		// BeforeAgent's additionalContext goes in front of that turn's
		// prompt, in a <hook_context> element with its < and > escaped
		// (privacy strips it from the prompt hooks then see); SessionEnd
		// is awaited, at least in -p mode.
		Name: Gemini, Title: "Gemini CLI",
		Events: map[string]string{
			"SessionStart": EventSessionStart, "BeforeAgent": EventUserPromptSubmit,
			"AfterTool": EventPostToolUse, "AfterAgent": EventStop, "SessionEnd": EventSessionEnd,
		},
		Inject: []string{EventSessionStart, EventUserPromptSubmit},
	},
	{
		// Cursor's postToolUse covers every tool in current builds; older
		// builds only have the per-kind events, which the hook maps too.
		// The installer hooks both families' edits and commands; one run
		// sent as both is one event (dialect.go's dedupeKey).
		// beforeSubmitPrompt cannot inject; some builds refuse
		// sessionStart, hence the rules file.
		Name: Cursor, Title: "Cursor",
		Events: map[string]string{
			"sessionStart": EventSessionStart, "beforeSubmitPrompt": EventUserPromptSubmit,
			"postToolUse": EventPostToolUse, "postToolUseFailure": EventPostToolUseFailure,
			"afterShellExecution": EventPostToolUse, "afterFileEdit": EventPostToolUse, "afterMCPExecution": EventPostToolUse,
			"stop": EventStop, "sessionEnd": EventSessionEnd,
		},
		Inject: []string{EventSessionStart},
	},
	{
		// VS Code's agent hooks have no SessionEnd, and UserPromptSubmit
		// cannot inject.
		Name: VSCode, Title: "VS Code agent hooks",
		Events: stageNames(EventSessionStart, EventUserPromptSubmit, EventPostToolUse, EventStop),
		Inject: []string{EventSessionStart},
	},
	{
		// Copilot CLI processes neither sessionStart's nor
		// userPromptSubmitted's output: its context goes through
		// .github/copilot-instructions.md.
		Name: Copilot, Title: "GitHub Copilot CLI",
		Events: map[string]string{
			"sessionStart": EventSessionStart, "userPromptSubmitted": EventUserPromptSubmit,
			"postToolUse": EventPostToolUse, "postToolUseFailure": EventPostToolUseFailure,
			"agentStop": EventStop, "sessionEnd": EventSessionEnd,
			// The "VS Code compatible" dialect, chosen by PascalCase names.
			"SessionStart": EventSessionStart, "UserPromptSubmit": EventUserPromptSubmit,
			"PostToolUse": EventPostToolUse, "PostToolUseFailure": EventPostToolUseFailure,
			"Stop": EventStop, "SessionEnd": EventSessionEnd,
		},
	},
	{
		Name: OpenCode, Title: "OpenCode",
		Events: stageNames(EventSessionStart, EventUserPromptSubmit, EventPostToolUse, EventStop, EventSessionEnd),
		Inject: []string{EventSessionStart, EventUserPromptSubmit},
	},
	{
		// Cascade has no session events and injects nothing.
		Name: Windsurf, Title: "Windsurf",
		Events: map[string]string{
			"pre_user_prompt": EventUserPromptSubmit,
			"post_read_code":  EventPostToolUse, "post_write_code": EventPostToolUse,
			"post_run_command": EventPostToolUse, "post_mcp_tool_use": EventPostToolUse,
			"post_cascade_response": EventStop,
		},
	},
}

func stageNames(events ...string) map[string]string {
	m := make(map[string]string, len(events))
	for _, e := range events {
		m[e] = e
	}
	return m
}

// Named returns the host of a name, and false for a name Mnemo does
// not know.
func Named(name string) (Host, bool) {
	i := slices.IndexFunc(All, func(h Host) bool { return h.Name == name })
	if i < 0 {
		return Host{}, false
	}
	return All[i], true
}

// Names lists the hosts' names, Claude Code's first.
func Names() []string {
	names := make([]string, len(All))
	for i, h := range All {
		names[i] = h.Name
	}
	return names
}

// Stage returns the stage of one of the host's events: its own name for
// it first, then Claude Code's (Cursor and VS Code run the hooks of Claude
// Code's settings too). It reports false for an event Mnemo does not hook.
func (h Host) Stage(event string) (Stage, bool) {
	if s, ok := h.Events[event]; ok {
		return stageNamed(s)
	}
	return stageNamed(event)
}

// StageOf returns the stage of one of a host's events: the host's own name
// for it (Host.Stage), else Claude Code's, which are the stages' own; a
// host Mnemo does not know has Claude Code's alone. It reports false for
// an event Mnemo does not hook.
func StageOf(host, event string) (Stage, bool) {
	if h, ok := Named(host); ok {
		return h.Stage(event)
	}
	return stageNamed(event)
}

// Injects reports whether the host takes context from the answer of a
// stage event.
func (h Host) Injects(stage string) bool { return slices.Contains(h.Inject, stage) }

// Answer is the hook's answer on stdout to a host's event (its own name
// for it, and the stage it maps onto), with the context the daemon gave,
// if any: the context where the host takes it, in its shape (Cursor's
// additional_context, everyone else's hookSpecificOutput), else the
// host's empty answer: {} (Cursor's prompt stage {"continue":true}), and
// nothing at all for Windsurf, which reads no answer.
func Answer(host, event, stage, context string) []byte {
	if host == "" {
		host = ClaudeCode
	}
	if host == Windsurf {
		return nil
	}
	h, _ := Named(host)
	if context != "" && h.Injects(stage) {
		var out any = Output{HookSpecificOutput: &HookSpecificOutput{HookEventName: event, AdditionalContext: context}}
		if host == Cursor {
			out = struct {
				AdditionalContext string `json:"additional_context"`
			}{context}
		}
		if b, err := MarshalJSON(out); err == nil {
			return append(b, '\n')
		}
	}
	if host == Cursor && stage == EventUserPromptSubmit {
		return []byte("{\"continue\":true}\n")
	}
	// Output{} encoded, without the encoder: most answers are this.
	return []byte("{}\n")
}
