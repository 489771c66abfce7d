package hook_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mnemo-dev/mnemo/adapters/hosts"
	"github.com/mnemo-dev/mnemo/adapters/hosts/hook"
	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/local"
)

// One piece of work, a test that fails, the file read, the fix, the test
// passing, as each host reports it: the tool events in its own dialect,
// with its tool names and argument shapes. Through the hook's translation
// and the local memory agent, every host's session must give the
// observations Claude Code's gives: the same types, titles and files. That
// is what lets search, context and the eval treat every host alike.
func TestEveryHostRemembersAlike(t *testing.T) {
	const (
		dir     = "/home/dev/src/calc"
		file    = dir + "/calc.py"
		source  = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
		failure = "Traceback (most recent call last):\n  File \"test_calc.py\", line 4, in <module>\n    assert add(2, 3) == 5\nAssertionError: add(2, 3) should be 5, got -1"
	)
	type step struct {
		event string
		body  map[string]any
	}
	// Each host's four tool events: the failing run, the read, the edit,
	// the passing run.
	sessions := map[string]func(session string) []step{
		hosts.ClaudeCode: func(s string) []step {
			c := map[string]any{"session_id": s, "cwd": dir}
			return []step{
				{"PostToolUseFailure", with(c, "hook_event_name", "PostToolUseFailure", "tool_name", "Bash", "tool_use_id", "t1",
					"tool_input", map[string]any{"command": "python3 test_calc.py"}, "error", "Exit code 1\n"+failure)},
				{"PostToolUse", with(c, "hook_event_name", "PostToolUse", "tool_name", "Read", "tool_use_id", "t2",
					"tool_input", map[string]any{"file_path": file},
					"tool_response", map[string]any{"type": "text", "file": map[string]any{"filePath": file, "content": source, "numLines": 6, "startLine": 1, "totalLines": 6}})},
				{"PostToolUse", with(c, "hook_event_name", "PostToolUse", "tool_name", "Edit", "tool_use_id", "t3",
					"tool_input", map[string]any{"file_path": file, "old_string": "    return a - b", "new_string": "    return a + b"},
					"tool_response", map[string]any{"filePath": file, "oldString": "    return a - b", "newString": "    return a + b"})},
				{"PostToolUse", with(c, "hook_event_name", "PostToolUse", "tool_name", "Bash", "tool_use_id", "t4",
					"tool_input", map[string]any{"command": "python3 test_calc.py"},
					"tool_response", map[string]any{"stdout": "ok", "stderr": "", "interrupted": false})},
			}
		},
		hosts.Gemini: func(s string) []step {
			c := map[string]any{"session_id": s, "cwd": dir, "hook_event_name": "AfterTool"}
			return []step{
				{"AfterTool", with(c, "timestamp", "2026-11-25T10:00:01Z", "tool_name", "run_shell_command", "tool_input", map[string]any{"command": "python3 test_calc.py", "description": "Run the tests"},
					"tool_response", map[string]any{"llmContent": "<untrusted_context>\nOutput: " + failure + "\nExit Code: 1\nProcess Group PGID: 7764\n</untrusted_context>", "returnDisplay": failure})},
				{"AfterTool", with(c, "timestamp", "2026-11-25T10:00:02Z", "tool_name", "read_file", "tool_input", map[string]any{"file_path": file},
					"tool_response", map[string]any{"llmContent": source, "returnDisplay": ""})},
				{"AfterTool", with(c, "timestamp", "2026-11-25T10:00:03Z", "tool_name", "replace", "tool_input", map[string]any{"file_path": file, "instruction": "add must add", "old_string": "    return a - b", "new_string": "    return a + b"},
					"tool_response", map[string]any{"llmContent": "Successfully modified file: " + file + " (1 replacements).", "returnDisplay": ""})},
				{"AfterTool", with(c, "timestamp", "2026-11-25T10:00:04Z", "tool_name", "run_shell_command", "tool_input", map[string]any{"command": "python3 test_calc.py"},
					"tool_response", map[string]any{"llmContent": "<untrusted_context>\nOutput: ok\nExit Code: 0\n</untrusted_context>", "returnDisplay": "ok"})},
			}
		},
		hosts.OpenCode: func(s string) []step {
			c := map[string]any{"session_id": s, "cwd": dir, "hook_event_name": "PostToolUse"}
			return []step{
				{"PostToolUse", with(c, "tool_use_id", "call_1", "tool_name", "bash", "tool_input", map[string]any{"command": "python3 test_calc.py", "description": "Run the tests"},
					"tool_response", map[string]any{"title": "python3 test_calc.py", "output": failure, "metadata": map[string]any{"exit": 1}})},
				{"PostToolUse", with(c, "tool_use_id", "call_2", "tool_name", "read", "tool_input", map[string]any{"filePath": file},
					"tool_response", map[string]any{"title": "calc.py", "output": source, "metadata": map[string]any{}})},
				{"PostToolUse", with(c, "tool_use_id", "call_3", "tool_name", "edit", "tool_input", map[string]any{"filePath": file, "oldString": "    return a - b", "newString": "    return a + b"},
					"tool_response", map[string]any{"title": "calc.py", "output": "Edit applied successfully.", "metadata": map[string]any{}})},
				{"PostToolUse", with(c, "tool_use_id", "call_4", "tool_name", "bash", "tool_input", map[string]any{"command": "python3 test_calc.py"},
					"tool_response", map[string]any{"title": "python3 test_calc.py", "output": "ok", "metadata": map[string]any{"exit": 0}})},
			}
		},
		// Codex CLI gives a command's output alone (no exit code), and
		// has no read tool: a read is cat, an edit a patch.
		hosts.Codex: func(s string) []step {
			c := map[string]any{"session_id": s, "turn_id": "u1", "cwd": dir, "hook_event_name": "PostToolUse", "model": "gpt-5.5", "permission_mode": "bypassPermissions"}
			return []step{
				{"PostToolUse", with(c, "tool_use_id", "call_1", "tool_name", "Bash", "tool_input", map[string]any{"command": "python3 test_calc.py"}, "tool_response", failure+"\n")},
				{"PostToolUse", with(c, "tool_use_id", "call_2", "tool_name", "Bash", "tool_input", map[string]any{"command": "cat calc.py"}, "tool_response", source)},
				{"PostToolUse", with(c, "tool_use_id", "call_3", "tool_name", "apply_patch",
					"tool_input", map[string]any{"command": "*** Begin Patch\n*** Update File: calc.py\n@@\n-    return a - b\n+    return a + b\n*** End Patch\n"},
					"tool_response", "Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated the following files:\nM calc.py\n")},
				{"PostToolUse", with(c, "tool_use_id", "call_4", "tool_name", "Bash", "tool_input", map[string]any{"command": "python3 test_calc.py"}, "tool_response", "ok\n")},
			}
		},
		hosts.Copilot: func(s string) []step {
			c := map[string]any{"sessionId": s, "cwd": dir}
			return []step{
				{"postToolUse", with(c, "timestamp", 1764064801000, "toolName", "bash", "toolArgs", map[string]any{"command": "python3 test_calc.py"},
					"toolResult", map[string]any{"resultType": "failure", "textResultForLlm": failure})},
				{"postToolUse", with(c, "timestamp", 1764064802000, "toolName", "view", "toolArgs", map[string]any{"path": file},
					"toolResult", map[string]any{"resultType": "success", "textResultForLlm": source})},
				{"postToolUse", with(c, "timestamp", 1764064803000, "toolName", "edit", "toolArgs", map[string]any{"path": file, "old_str": "    return a - b", "new_str": "    return a + b"},
					"toolResult", map[string]any{"resultType": "success", "textResultForLlm": "File edited."})},
				{"postToolUse", with(c, "timestamp", 1764064804000, "toolName", "bash", "toolArgs", map[string]any{"command": "python3 test_calc.py"},
					"toolResult", map[string]any{"resultType": "success", "textResultForLlm": "ok"})},
			}
		},
	}

	remember := func(host string) []string {
		t.Helper()
		var events []memory.Event
		for i, st := range sessions[host]("s1") {
			raw, _ := json.Marshal(st.body)
			p, err := hook.DecodeHostPayload(raw, host, st.event)
			if err != nil {
				t.Fatalf("%s step %d: %v", host, i, err)
			}
			_, params, err := hook.Translate(p, hook.TranslateOptions{EventKey: "k"})
			if err != nil {
				t.Fatalf("%s step %d: %v", host, i, err)
			}
			tu := params.(*memory.ToolUseParams)
			events = append(events, memory.Event{Kind: memory.EventTool, Cwd: tu.Cwd, Platform: tu.Platform,
				ToolName: tu.ToolName, ToolInput: tu.ToolInput, ToolResponse: tu.ToolResponse, ToolUseID: tu.ToolUseID})
		}
		// The worker runs the agent one event at a time, with the turn's
		// observations so far.
		var turn []memory.Observation
		for _, ev := range events {
			out, err := local.Agent{}.Run(context.Background(), memory.AgentInput{NewID: "m", Request: "make the calc tests pass", Events: []memory.Event{ev}, Turn: turn})
			if err != nil {
				t.Fatal(err)
			}
			turn = append(turn, out.Observations...)
		}
		var got []string
		for _, o := range turn {
			got = append(got, fmt.Sprintf("%s · %s · read %s · modified %s", o.Type, o.Title, strings.Join(o.FilesRead, ","), strings.Join(o.FilesModified, ",")))
		}
		return got
	}
	want := remember(hosts.ClaudeCode)
	t.Logf("Claude Code remembers:\n\t%s", strings.Join(want, "\n\t"))
	if len(want) != 4 {
		t.Fatalf("Claude Code's session made %d observations, want 4:\n%s", len(want), strings.Join(want, "\n"))
	}
	for host := range sessions {
		if host == hosts.ClaudeCode {
			continue
		}
		t.Run(host, func(t *testing.T) {
			got := remember(host)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("%s remembers\n\t%s\nClaude Code\n\t%s", host, strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
			}
		})
	}
}

// with returns a copy of m with the key-value pairs kv set.
func with(m map[string]any, kv ...any) map[string]any {
	out := make(map[string]any, len(m)+len(kv)/2)
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}
