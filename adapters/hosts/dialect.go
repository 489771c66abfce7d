package hosts

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"

	"github.com/mnemo-dev/mnemo/memory"
)

// Wire is every field of every host's hook payload that Mnemo reads: one
// decode, whatever the dialect. Fields that two dialects type differently
// are raw.
type Wire struct {
	// Claude Code, Codex CLI, Gemini CLI, OpenCode's plugin, Copilot CLI's
	// "VS Code compatible" dialect.
	SessionID            string          `json:"session_id"`
	HookEventName        string          `json:"hook_event_name"`
	TranscriptPath       string          `json:"transcript_path"`
	Cwd                  string          `json:"cwd"`
	PromptID             string          `json:"prompt_id"`
	PermissionMode       string          `json:"permission_mode"`
	AgentID              string          `json:"agent_id"`
	AgentType            string          `json:"agent_type"`
	Source               string          `json:"source"`
	Model                string          `json:"model"`
	Prompt               string          `json:"prompt"`
	ToolName             string          `json:"tool_name"`
	ToolInput            json.RawMessage `json:"tool_input"`
	ToolResponse         json.RawMessage `json:"tool_response"`
	ToolUseID            string          `json:"tool_use_id"`
	DurationMS           int64           `json:"duration_ms"`
	Error                json.RawMessage `json:"error"`
	IsInterrupt          bool            `json:"is_interrupt"`
	StopHookActive       bool            `json:"stop_hook_active"`
	LastAssistantMessage string          `json:"last_assistant_message"`
	Reason               string          `json:"reason"`

	// Codex CLI.
	TurnID string `json:"turn_id"`
	// Gemini CLI (ISO 8601), VS Code (ISO 8601), Copilot CLI (ms or ISO).
	Timestamp json.RawMessage `json:"timestamp"`
	// Gemini CLI's AfterAgent.
	PromptResponse string `json:"prompt_response"`

	// VS Code agent hooks and Copilot CLI's camelCase dialect.
	SessionIDCamel      string          `json:"sessionId"`
	HookEventNameCamel  string          `json:"hookEventName"`
	TranscriptPathCamel string          `json:"transcriptPath"`
	ToolNameCamel       string          `json:"toolName"`
	ToolArgs            json.RawMessage `json:"toolArgs"`
	ToolResult          json.RawMessage `json:"toolResult"`
	ToolResultSnake     json.RawMessage `json:"tool_result"`

	// Cursor.
	ConversationID string          `json:"conversation_id"`
	GenerationID   string          `json:"generation_id"`
	WorkspaceRoots []string        `json:"workspace_roots"`
	CursorVersion  string          `json:"cursor_version"`
	Command        string          `json:"command"`
	Output         string          `json:"output"`
	FilePath       string          `json:"file_path"`
	Edits          json.RawMessage `json:"edits"`
	ResultJSON     json.RawMessage `json:"result_json"`
	ToolOutput     json.RawMessage `json:"tool_output"`
	Text           string          `json:"text"`
	Status         string          `json:"status"`
	ErrorMessage   string          `json:"error_message"` // postToolUseFailure's

	// Windsurf.
	TrajectoryID    string          `json:"trajectory_id"`
	ExecutionID     string          `json:"execution_id"`
	AgentActionName string          `json:"agent_action_name"`
	ToolInfo        json.RawMessage `json:"tool_info"`
}

// dialectOf names the host whose dialect a payload is in. A payload that
// carries another host's marks is that host's, whatever the hook was
// installed for: Cursor and VS Code run the hooks of Claude Code's
// settings with their own payloads, and VS Code runs Copilot CLI's
// hook files. Otherwise the installed host (hint) is believed.
func (w *Wire) dialectOf(hint string) string {
	switch {
	case w.TrajectoryID != "" || w.AgentActionName != "":
		return Windsurf
	case w.ConversationID != "" || w.CursorVersion != "" || w.GenerationID != "" || len(w.WorkspaceRoots) > 0:
		return Cursor
	case w.HookEventNameCamel != "":
		return VSCode
	case w.SessionIDCamel != "" || w.ToolNameCamel != "":
		if hint == VSCode {
			return VSCode
		}
		return Copilot
	case hint == VSCode && w.SessionID != "" && w.HookEventName != "":
		// VS Code names its session and event in camelCase; snake_case
		// ones at a hook of VS Code's .github/hooks file are Copilot
		// CLI's "VS Code compatible" dialect: Copilot CLI reads that
		// folder too.
		return Copilot
	}
	return hint
}

// Normalize turns a payload of any dialect into Claude Code's: the host's
// event name (payload first, then the command line's) and its stage,
// resolved here once for all who read the payload after, a session id
// namespaced by host (Claude Code's stays bare, as it always was), the
// tool in Claude Code's vocabulary (tools.go), and a de-duplication key
// when the payload names its event (dedupeKey).
func (w *Wire) Normalize(hint, argEvent string) *Payload {
	host := w.dialectOf(hint)
	p := &Payload{
		SessionID:      firstOf(w.SessionID, w.SessionIDCamel, w.ConversationID, w.TrajectoryID),
		TranscriptPath: firstOf(w.TranscriptPath, w.TranscriptPathCamel),
		Cwd:            w.Cwd,
		HookEventName:  firstOf(w.HookEventName, w.HookEventNameCamel, w.AgentActionName, argEvent),
		PromptID:       w.PromptID,
		PermissionMode: w.PermissionMode,
		AgentID:        w.AgentID,
		AgentType:      w.AgentType,
		Source:         w.Source,
		Model:          w.Model,
		Prompt:         w.Prompt,
		ToolName:       firstOf(w.ToolName, w.ToolNameCamel),
		ToolInput:      firstRaw(w.ToolInput, w.ToolArgs),
		ToolResponse:   firstRaw(w.ToolResponse, w.ToolResult, w.ToolResultSnake, w.ToolOutput),
		ToolUseID:      w.ToolUseID,
		DurationMS:     w.DurationMS,
		Error:          firstOf(errorText(w.Error), w.ErrorMessage),
		IsInterrupt:    w.IsInterrupt,

		StopHookActive:       w.StopHookActive,
		LastAssistantMessage: firstOf(w.LastAssistantMessage, w.PromptResponse),
		Reason:               w.Reason,
		Host:                 host,
	}
	if p.Cwd == "" && len(w.WorkspaceRoots) > 0 {
		p.Cwd = w.WorkspaceRoots[0]
	}
	switch host {
	case Cursor:
		w.cursor(p)
	case Windsurf:
		w.windsurf(p)
	case Gemini:
		if p.HookEventName == "AfterAgent" {
			// AfterAgent carries the turn's prompt, and every text the
			// model wrote in the turn joined by " \n": those are the
			// turn's texts, the answer is the last.
			p.LastUserMessage = w.Prompt
			p.Prompt = ""
			for _, t := range strings.Split(p.LastAssistantMessage, " \n") {
				if t = strings.TrimSpace(t); t != "" {
					p.Texts = append(p.Texts, memory.TurnText{Text: t})
				}
			}
			if n := len(p.Texts); n > 0 {
				p.LastAssistantMessage = p.Texts[n-1].Text
			}
		}
	}
	normalizeTool(host, p)
	if host != ClaudeCode && p.SessionID != "" {
		p.SessionID = host + ":" + p.SessionID
	}
	p.Stage, _ = StageOf(host, p.HookEventName)
	p.EventKey = w.dedupeKey(host, p)
	return p
}

// cursor fills in what Cursor's per-kind events carry in fields of their
// own: afterShellExecution's command and output, afterFileEdit's file and
// edits, afterMCPExecution's JSON input and result, and the answer
// afterAgentResponse or stop has.
func (w *Wire) cursor(p *Payload) {
	switch p.HookEventName {
	case "afterShellExecution":
		p.ToolName = "Bash"
		p.ToolInput = RawJSON(map[string]string{"command": w.Command})
		p.ToolResponse = RawJSON(map[string]any{"stdout": w.Output, "exitUnknown": true})
	case "afterFileEdit":
		p.ToolName = "MultiEdit"
		var edits []map[string]any
		_ = json.Unmarshal(w.Edits, &edits)
		p.ToolInput = RawJSON(map[string]any{"file_path": w.FilePath, "edits": edits})
	case "afterMCPExecution":
		// tool_input is a JSON text there, and result_json too.
		p.ToolInput = unquoteJSON(p.ToolInput)
		p.ToolResponse = unquoteJSON(w.ResultJSON)
	case "stop":
		p.LastAssistantMessage = firstOf(p.LastAssistantMessage, w.Text)
	}
}

// windsurf reads Cascade's tool_info, whose fields depend on the action:
// a command's output and exit code become its response, as a read's
// content does.
func (w *Wire) windsurf(p *Payload) {
	var info struct {
		UserPrompt       string          `json:"user_prompt"`
		FilePath         string          `json:"file_path"`
		Content          *string         `json:"content"`
		Edits            json.RawMessage `json:"edits"`
		CommandLine      string          `json:"command_line"`
		Cwd              string          `json:"cwd"`
		ExitCode         *int            `json:"exit_code"`
		Output           *string         `json:"output"`
		MCPServerName    string          `json:"mcp_server_name"`
		MCPToolName      string          `json:"mcp_tool_name"`
		MCPToolArguments json.RawMessage `json:"mcp_tool_arguments"`
		MCPResult        json.RawMessage `json:"mcp_result"`
		Response         string          `json:"response"`
	}
	_ = json.Unmarshal(w.ToolInfo, &info)
	if p.Cwd == "" {
		p.Cwd = info.Cwd
	}
	p.ToolUseID = firstOf(p.ToolUseID, w.ExecutionID)
	switch p.HookEventName {
	case "pre_user_prompt":
		p.Prompt = info.UserPrompt
	case "post_read_code":
		p.ToolName = "Read"
		p.ToolInput = RawJSON(map[string]string{"file_path": info.FilePath})
		if info.Content != nil {
			p.ToolResponse = RawJSON(*info.Content)
		}
	case "post_write_code":
		p.ToolName = "MultiEdit"
		var edits []map[string]any
		_ = json.Unmarshal(info.Edits, &edits)
		p.ToolInput = RawJSON(map[string]any{"file_path": info.FilePath, "edits": edits})
	case "post_run_command":
		p.ToolName = "Bash"
		p.ToolInput = RawJSON(map[string]string{"command": info.CommandLine})
		if info.Output != nil || info.ExitCode != nil {
			out := map[string]any{"stdout": ""}
			if info.Output != nil {
				out["stdout"] = *info.Output
			}
			if info.ExitCode != nil {
				out["exitCode"] = *info.ExitCode
				if *info.ExitCode != 0 {
					out["isError"] = true
				}
			}
			p.ToolResponse = RawJSON(out)
		}
	case "post_mcp_tool_use":
		p.ToolName = "mcp__" + firstOf(info.MCPServerName, "windsurf") + "__" + info.MCPToolName
		p.ToolInput = info.MCPToolArguments
		p.ToolResponse = info.MCPResult
	case "post_cascade_response":
		p.LastAssistantMessage = info.Response
	}
}

// cursorChange names an edit or a command of a Cursor payload, in either
// family's words once normalized: the file and each replacement of an
// edit, the command and its output; "" for any other event.
func cursorChange(p *Payload) string {
	if p.Stage.Event != EventPostToolUse {
		return ""
	}
	var in struct {
		FilePath  string `json:"file_path"`
		OldString string `json:"old_string"`
		NewString string `json:"new_string"`
		Edits     []struct {
			OldString string `json:"old_string"`
			NewString string `json:"new_string"`
		} `json:"edits"`
		Command string `json:"command"`
	}
	if json.Unmarshal(p.ToolInput, &in) != nil {
		return ""
	}
	switch p.ToolName {
	case "Edit", "MultiEdit":
		parts := []string{"edit", in.FilePath}
		if in.OldString != "" || in.NewString != "" {
			parts = append(parts, in.OldString, in.NewString)
		}
		for _, e := range in.Edits {
			parts = append(parts, e.OldString, e.NewString)
		}
		return strings.Join(parts, "\x00")
	case "Bash":
		var out struct {
			Stdout string `json:"stdout"`
		}
		_ = json.Unmarshal(p.ToolResponse, &out)
		return strings.Join([]string{"run", in.Command, strings.TrimSpace(out.Stdout)}, "\x00")
	}
	return ""
}

// dedupeKey returns the event key of a payload that names its event, so
// that the same event delivered twice is stored once: Cursor and VS Code
// run both their own hook files and Claude Code's settings, and VS Code
// also Copilot CLI's, all with one payload. An event is named by its tool
// use id, Cursor's generation, Windsurf's execution, or the time the host
// stamped on it, together with what it carries; "" for a payload that
// names nothing (two such events may well be two: the same prompt typed
// twice), which then gets a fresh key. Claude Code's own events keep
// fresh keys, as they always had.
func (w *Wire) dedupeKey(host string, p *Payload) string {
	if host == ClaudeCode {
		return ""
	}
	var mark string
	switch {
	case host == Cursor && w.GenerationID != "" && cursorChange(p) != "":
		// Cursor builds between the two families send one edit or
		// command as both postToolUse (with its tool use id) and
		// afterFileEdit or afterShellExecution (without): named by what
		// it changed or ran in its generation, not by the family, it is
		// stored once.
		h := sha256.New()
		for _, s := range []string{host, p.SessionID, p.Stage.Event, "gen:" + w.GenerationID, cursorChange(p)} {
			h.Write([]byte(s))
			h.Write([]byte{0})
		}
		return "d-" + hex.EncodeToString(h.Sum(nil)[:16])
	case p.ToolUseID != "":
		mark = "tool:" + p.ToolUseID
	case w.GenerationID != "":
		mark = "gen:" + w.GenerationID
	case len(bytes.TrimSpace(w.Timestamp)) > 0 && string(w.Timestamp) != "null":
		mark = "time:" + timeMark(w.Timestamp)
	default:
		return ""
	}
	h := sha256.New()
	for _, s := range []string{host, p.SessionID, p.Stage.Event, mark, p.ToolName, p.Prompt} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	h.Write(p.ToolInput)
	h.Write([]byte{0})
	h.Write(p.ToolResponse)
	return "d-" + hex.EncodeToString(h.Sum(nil)[:16])
}
