package backfill

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mnemo-dev/mnemo/adapters/hosts"
)

// Codex CLI keeps each session as a rollout: one JSON line per record,
// $CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<session id>.jsonl. A
// record is {"timestamp", "type", "payload"}; the types read here:
//
//   - session_meta: the session's id and cwd (the first line);
//   - turn_context: a turn's cwd;
//   - event_msg task_started / task_complete: a turn's start and end
//     (task_complete carries last_agent_message, Stop's answer);
//   - event_msg user_message (older CLIs) and item_completed of a
//     UserMessage item (0.169): the prompts UserPromptSubmit saw;
//   - response_item function_call / custom_tool_call / local_shell_call
//     and their *_output: the tool runs PostToolUse saw.
//
// Rollouts written before records were wrapped in {"type", "payload"}
// (Codex before mid-2025) have no session_meta record: they are not read,
// and the back-fill counts them as having no prompt.

// codexSessionsRoot is $CODEX_HOME/sessions, else ~/.codex/sessions.
func codexSessionsRoot() (string, error) {
	if d := os.Getenv("CODEX_HOME"); d != "" {
		return filepath.Join(d, "sessions"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("transcripts: %w", err)
	}
	return filepath.Join(home, ".codex", "sessions"), nil
}

// codexLine is the part of a rollout record the back-fill reads.
type codexLine struct {
	Timestamp time.Time       `json:"timestamp"`
	Type      string          `json:"type"`
	Payload   json.RawMessage `json:"payload"`
}

// codexPayload is every payload field read, of every record type.
type codexPayload struct {
	Type string `json:"type"`
	// session_meta, turn_context
	ID  string `json:"id"`
	Cwd string `json:"cwd"`
	// event_msg
	TurnID           string          `json:"turn_id"`
	Message          string          `json:"message"`
	LastAgentMessage *string         `json:"last_agent_message"`
	Item             json.RawMessage `json:"item"`
	// response_item
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Input     string          `json:"input"`
	CallID    string          `json:"call_id"`
	Output    json.RawMessage `json:"output"`
	Action    json.RawMessage `json:"action"`
}

// codexMeta reads a rollout's first line: the session's id and cwd. ok is
// false when the file does not start with a session_meta record.
func codexMeta(path string) (id, cwd string, ok bool, err error) {
	err = headLines(path, 1, func(line []byte) bool {
		var l codexLine
		var p codexPayload
		if json.Unmarshal(line, &l) == nil && l.Type == "session_meta" && json.Unmarshal(l.Payload, &p) == nil && p.ID != "" {
			id, cwd, ok = p.ID, p.Cwd, true
		}
		return true
	})
	return id, cwd, ok, err
}

// findCodexRollouts lists the rollouts under root (rollout-*.jsonl in any
// folder below it), oldest first. A file that does not start with a
// session_meta record is listed with no session id.
func findCodexRollouts(root string) ([]Transcript, error) {
	var out []Transcript
	err := walkFiles(root, "rollout-", []string{".jsonl"}, func(path string, fi os.FileInfo) error {
		id, cwd, ok, err := codexMeta(path)
		if err != nil {
			return nil // unreadable now: not a session to list
		}
		f := Transcript{Path: path, ModTime: fi.ModTime(), Size: fi.Size(), Cwd: cwd}
		if ok {
			f.SessionID = hosts.Codex + ":" + id
		}
		out = append(out, f)
		return nil
	})
	sortTranscripts(out)
	return out, err
}

// backfillCodex rebuilds the hook calls of one Codex session from its
// rollout, as Codex 0.169's hooks gave them: SessionStart before the
// first prompt, UserPromptSubmit for each prompt, PostToolUse for each
// shell command (as Bash {command}, its response the command's output
// alone, with no exit code: Codex's hook is given none), apply_patch
// (its patch and Codex's report) and MCP tool run once its output is
// recorded, Stop at each completed turn with its last answer, and
// SessionEnd ("other") after the last line.
func backfillCodex(f Transcript, o Options, emit func(Call) error) (Counts, error) {
	var counts Counts
	file, err := os.Open(f.Path)
	if err != nil {
		return counts, fmt.Errorf("read transcript: %w", err)
	}
	defer file.Close()
	c := &codexBackfill{
		hostReplay: hostReplay{host: hosts.Codex, path: f.Path, o: o, emit: emit, counts: &counts},
		calls:      map[string]codexCall{},
	}
	r := bufio.NewReaderSize(file, 64<<10)
	for {
		line, rerr := readLine(r)
		if len(line) > 0 {
			if err := c.line(line); err != nil {
				return counts, err
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return counts, fmt.Errorf("read transcript: %w", rerr)
		}
	}
	if !c.started {
		return counts, nil
	}
	if err := c.send(&hosts.Wire{HookEventName: hosts.EventSessionEnd, Reason: "other"}, c.last); err != nil {
		return counts, err
	}
	counts.Sessions = 1
	return counts, nil
}

// codexCall is a tool call awaiting its output: the hook's tool name and
// input.
type codexCall struct {
	tool  string
	input json.RawMessage
	// shell: the response is the command's output without Codex's header.
	shell bool
}

type codexBackfill struct {
	hostReplay
	turn    string               // the open turn's id
	prompts map[string]bool      // the open turn's prompts already sent
	calls   map[string]codexCall // by call_id
	last    string               // the name of the last event sent, for SessionEnd's key
}

func (c *codexBackfill) line(raw []byte) error {
	var l codexLine
	var p codexPayload
	if json.Unmarshal(raw, &l) != nil || json.Unmarshal(l.Payload, &p) != nil {
		return nil
	}
	if !l.Timestamp.IsZero() {
		c.at = l.Timestamp
	}
	switch l.Type {
	case "session_meta":
		if c.sid == "" {
			c.sid, c.cwd = p.ID, p.Cwd
		}
	case "turn_context":
		if p.Cwd != "" {
			c.cwd = p.Cwd
		}
	case "event_msg":
		return c.event(p)
	case "response_item":
		return c.item(p)
	}
	return nil
}

// event reads an event_msg record: turns and prompts.
func (c *codexBackfill) event(p codexPayload) error {
	switch p.Type {
	case "task_started":
		c.turn, c.prompts = p.TurnID, map[string]bool{}
	case "user_message":
		return c.prompt(p.Message, "")
	case "item_completed":
		var it struct {
			Type    string `json:"type"`
			ID      string `json:"id"`
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		}
		if json.Unmarshal(p.Item, &it) != nil || it.Type != "UserMessage" {
			return nil
		}
		var parts []string
		for _, b := range it.Content {
			if b.Type == "text" {
				parts = append(parts, b.Text)
			}
		}
		return c.prompt(strings.Join(parts, "\n"), it.ID)
	case "task_complete":
		if !c.started || p.TurnID == "" {
			return nil
		}
		answer := ""
		if p.LastAgentMessage != nil {
			answer = *p.LastAgentMessage
		}
		c.last = p.TurnID
		return c.send(&hosts.Wire{HookEventName: hosts.EventStop, LastAssistantMessage: answer}, "turn:"+p.TurnID)
	}
	return nil
}

// prompt sends a user prompt once per turn (a CLI that records it both
// as an event and as an item gives it twice).
func (c *codexBackfill) prompt(text, id string) error {
	if c.sid == "" || strings.TrimSpace(text) == "" {
		return nil
	}
	if c.prompts == nil {
		c.prompts = map[string]bool{}
	}
	if c.prompts[text] {
		return nil
	}
	c.prompts[text] = true
	if id == "" {
		id = fmt.Sprintf("turn:%s:prompt:%d", c.turn, len(c.prompts))
	}
	if err := c.start(hosts.EventSessionStart, "startup"); err != nil {
		return err
	}
	c.last = id
	return c.send(&hosts.Wire{HookEventName: hosts.EventUserPromptSubmit, Prompt: text}, id)
}

// item reads a response_item record: tool calls and their outputs.
func (c *codexBackfill) item(p codexPayload) error {
	switch p.Type {
	case "function_call":
		if call, ok := codexTool(p.Name, json.RawMessage(p.Arguments)); ok && p.CallID != "" {
			c.calls[p.CallID] = call
		}
	case "custom_tool_call":
		if p.Name == "apply_patch" && p.CallID != "" {
			c.calls[p.CallID] = codexCall{tool: "apply_patch", input: hosts.RawJSON(map[string]string{"command": p.Input})}
		}
	case "local_shell_call":
		var a struct {
			Command []string `json:"command"`
		}
		if json.Unmarshal(p.Action, &a) == nil && len(a.Command) > 0 && p.CallID != "" {
			words := make([]any, len(a.Command))
			for i, w := range a.Command {
				words[i] = w
			}
			c.calls[p.CallID] = codexCall{tool: "Bash", input: hosts.RawJSON(map[string]string{"command": hosts.ArgvCommand(words)}), shell: true}
		}
	case "function_call_output", "custom_tool_call_output", "local_shell_call_output":
		call, ok := c.calls[p.CallID]
		if !ok || !c.started {
			return nil
		}
		delete(c.calls, p.CallID)
		out := codexOutput(p.Output)
		if call.shell {
			out = codexShellOutput(out)
		}
		c.last = p.CallID
		return c.send(&hosts.Wire{
			HookEventName: hosts.EventPostToolUse,
			ToolName:      call.tool,
			ToolInput:     call.input,
			ToolResponse:  hosts.RawJSON(out),
			ToolUseID:     p.CallID,
		}, p.CallID)
	}
	return nil
}

// codexTool maps a function call of the model onto the tool its hook
// names: Codex's shell tools (exec_command {cmd}, shell {command: argv},
// shell_command {command}) are Bash {command}, apply_patch keeps its name
// with the patch as command, an MCP tool (mcp__server__tool) keeps its
// name and arguments. Codex runs no hook for its other tools
// (update_plan, view_image…).
func codexTool(name string, args json.RawMessage) (codexCall, bool) {
	var in map[string]any
	if json.Unmarshal(args, &in) != nil || in == nil {
		in = map[string]any{}
	}
	switch name {
	case "exec_command", "shell", "shell_command", "container.exec":
		var cmd string
		switch v := firstValue(in, "cmd", "command").(type) {
		case string:
			cmd = v
		case []any:
			cmd = hosts.ArgvCommand(v)
		}
		if cmd == "" {
			return codexCall{}, false
		}
		return codexCall{tool: "Bash", input: hosts.RawJSON(map[string]string{"command": cmd}), shell: true}, true
	case "apply_patch":
		patch, _ := firstValue(in, "input", "patch", "command").(string)
		if patch == "" {
			return codexCall{}, false
		}
		return codexCall{tool: "apply_patch", input: hosts.RawJSON(map[string]string{"command": patch})}, true
	}
	if strings.HasPrefix(name, "mcp__") {
		return codexCall{tool: name, input: hosts.RawJSON(in)}, true
	}
	return codexCall{}, false
}

func firstValue(in map[string]any, keys ...string) any {
	for _, k := range keys {
		if v, ok := in[k]; ok && v != nil {
			return v
		}
	}
	return nil
}

// codexOutput is the text of a tool call's recorded output: a string, an
// object's "output" or "content" text (older CLIs), or content blocks'
// text joined.
func codexOutput(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		// Older CLIs recorded a shell's output as a JSON string of
		// {"output": …, "metadata": {"exit_code": …}}.
		var o struct {
			Output *string `json:"output"`
		}
		if strings.HasPrefix(s, "{") && json.Unmarshal([]byte(s), &o) == nil && o.Output != nil {
			return *o.Output
		}
		return s
	}
	var o struct {
		Output  *string         `json:"output"`
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(raw, &o) == nil {
		if o.Output != nil {
			return *o.Output
		}
		if len(o.Content) > 0 {
			return hosts.BlockText(o.Content)
		}
	}
	return hosts.BlockText(raw)
}

// codexShellOutput is the output of a shell command as Codex's hook gets
// it, without the header Codex writes for the model ("Chunk ID: …\nWall
// time: …\nProcess exited with code N\n…\nOutput:\n").
func codexShellOutput(s string) string {
	if i := strings.Index(s, "Output:\n"); i >= 0 && (strings.Contains(s[:i], "exited with code") || strings.HasPrefix(s, "Exit code:")) {
		return s[i+len("Output:\n"):]
	}
	return s
}
