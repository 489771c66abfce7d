package hook_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mnemo-dev/mnemo/adapters/hosts"
	"github.com/mnemo-dev/mnemo/adapters/hosts/hook"
	"github.com/mnemo-dev/mnemo/memory"
)

var update = flag.Bool("update", false, "rewrite the golden files of adapters/claudecode/testdata/golden")

// testEventKey stands for the random key Run makes.
const testEventKey = "00112233445566778899aabbccddeeff"

// golden is what a payload translates to: the call, or the error.
type golden struct {
	Method string `json:"method,omitempty"`
	Params any    `json:"params,omitempty"`
	Error  string `json:"error,omitempty"`
}

// TestTranslateGolden feeds every real payload recorded from Claude Code
// 2.1.330 (adapters/claudecode/testdata/payloads, scrubbed) to Translate
// and compares the call with adapters/claudecode/testdata/golden/<payload>.
// -update rewrites the golden files.
func TestTranslateGolden(t *testing.T) {
	t.Setenv("MNEMO_SKIP_TOOLS", "")
	names, err := filepath.Glob(claudeData("payloads", "*.json"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no payloads: %v", err)
	}
	for _, path := range names {
		name := filepath.Base(path)
		t.Run(strings.TrimSuffix(name, ".json"), func(t *testing.T) {
			var p hosts.Payload
			if err := json.Unmarshal(readPayloadFile(t, name), &p); err != nil {
				t.Fatal(err)
			}
			method, params, err := hook.Translate(&p, hook.TranslateOptions{EventKey: testEventKey})
			got := golden{Method: method, Params: params}
			if err != nil {
				got = golden{Error: err.Error()}
			}
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			enc.SetIndent("", "  ")
			if err := enc.Encode(got); err != nil {
				t.Fatal(err)
			}
			out := buf.Bytes()
			goldenPath := claudeData("golden", name)
			if *update {
				if err := os.MkdirAll(filepath.Dir(goldenPath), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(goldenPath, out, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(goldenPath)
			if err != nil {
				t.Fatalf("%v (run go test -run TestTranslateGolden -update)", err)
			}
			if !bytes.Equal(out, want) {
				t.Errorf("%s differs from %s (-want +got):\n%s", name, goldenPath, lineDiff(string(want), string(out)))
			}
		})
	}
}

// lineDiff is a minimal line diff: the lines only one side has.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			b.WriteString("- " + wl + "\n+ " + gl + "\n")
		}
	}
	return b.String()
}

// TestTranslate checks the mapping's rules one by one: privacy at the
// edge, skipped tools, failures, a Stop that leaves the transcript to the
// daemon.
func TestTranslate(t *testing.T) {
	transcript, err := filepath.Abs(claudeData("transcript.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	const secret = "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdefGHIJ"
	tests := []struct {
		name     string
		payload  string
		skipEnv  string
		pauseEnv string         // MNEMO_PAUSE
		want     map[string]any // params fields, compared as JSON
		absent   []string       // text that must not be in the params
		wantErr  error
		wantMeth string
	}{
		{
			name:     "prompt with a private part is stripped",
			payload:  `{"session_id":"s1","cwd":"/p","hook_event_name":"UserPromptSubmit","prompt":"fix the bug <private>my password is hunter2</private> in calc.go"}`,
			wantMeth: memory.MethodUserPromptSubmit,
			want:     map[string]any{"contentSessionId": "s1", "cwd": "/p", "prompt": "fix the bug in calc.go", "platform": "claude-code", "eventKey": testEventKey},
			absent:   []string{"hunter2"},
		},
		{
			name:     "entirely private prompt becomes the empty private marker",
			payload:  `{"session_id":"s1","cwd":"/p","hook_event_name":"UserPromptSubmit","prompt":"  <private>rotate the prod key AKIAIOSFODNN7EXAMPLE</private>\n"}`,
			wantMeth: memory.MethodUserPromptSubmit,
			want:     map[string]any{"prompt": hook.PrivateMarker},
			absent:   []string{"rotate", "AKIA"},
		},
		{
			name:     "mnemo's own context is not sent back",
			payload:  `{"session_id":"s1","cwd":"/p","hook_event_name":"UserPromptSubmit","prompt":"<mnemo-context>old memory</mnemo-context>continue"}`,
			wantMeth: memory.MethodUserPromptSubmit,
			want:     map[string]any{"prompt": "continue"},
			absent:   []string{"old memory"},
		},
		{
			name:     "secrets in tool input and output are redacted",
			payload:  `{"session_id":"s1","cwd":"/p","hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"t1","tool_input":{"command":"curl -H 'x-api-key: ` + secret + `' https://api.example"},"tool_response":{"stdout":"ANTHROPIC_API_KEY=` + secret + `\n<system-reminder>internal</system-reminder>ok","stderr":""}}`,
			wantMeth: memory.MethodPostToolUse,
			want:     map[string]any{"toolName": "Bash", "toolUseId": "t1"},
			absent:   []string{secret, "internal"},
		},
		{
			name:     "a failed tool records the error, exit code included",
			payload:  string(readPayloadFile(t, "p-fail-json-004-PostToolUseFailure.json")),
			wantMeth: memory.MethodPostToolUse,
			want: map[string]any{
				"toolName":     "Bash",
				"toolInput":    map[string]any{"command": "echo failing >&2; exit 3", "description": "Fail on purpose"},
				"toolResponse": map[string]any{"error": "Exit code 3\nfailing", "isError": true, "interrupted": false},
			},
		},
		{
			name:    "a default skipped tool is dropped",
			payload: `{"session_id":"s1","cwd":"/p","hook_event_name":"PostToolUse","tool_name":"TodoWrite","tool_input":{"todos":[]}}`,
			wantErr: hook.ErrSkippedTool,
		},
		{
			name:    "MNEMO_SKIP_TOOLS adds to the skip list",
			payload: `{"session_id":"s1","cwd":"/p","hook_event_name":"PostToolUse","tool_name":"mcp__db__query","tool_input":{}}`,
			skipEnv: "Glob, mcp__db__query",
			wantErr: hook.ErrSkippedTool,
		},
		{
			name:     "MNEMO_SKIP_TOOLS keeps the defaults' neighbours recorded",
			payload:  `{"session_id":"s1","cwd":"/p","hook_event_name":"PostToolUse","tool_name":"Grep","tool_input":{"pattern":"x"}}`,
			skipEnv:  "Glob",
			wantMeth: memory.MethodPostToolUse,
			want:     map[string]any{"toolName": "Grep", "toolInput": map[string]any{"pattern": "x"}},
		},
		{
			name:     "Stop leaves the transcript to the daemon",
			payload:  `{"session_id":"s1","cwd":"/p","hook_event_name":"Stop","transcript_path":` + jsonString(transcript) + `}`,
			wantMeth: memory.MethodStop,
			want: map[string]any{
				"contentSessionId":     "s1",
				"lastUserMessage":      nil,
				"lastAssistantMessage": nil,
				"texts":                nil,
				"transcriptPath":       transcript,
			},
			absent: []string{"SCENARIO", "Done: scenario"},
		},
		{
			name:     "Stop sends last_assistant_message cleaned",
			payload:  `{"session_id":"s1","cwd":"/p","hook_event_name":"Stop","transcript_path":` + jsonString(transcript) + `,"last_assistant_message":"Fixed. <private>token ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789</private>Tests pass."}`,
			wantMeth: memory.MethodStop,
			want:     map[string]any{"lastUserMessage": nil, "lastAssistantMessage": "Fixed. Tests pass."},
			absent:   []string{"ghp_"},
		},
		{
			name:    "no session id",
			payload: `{"cwd":"/p","hook_event_name":"SessionEnd","reason":"other"}`,
			wantErr: hook.ErrInvalidPayload,
		},
		{
			name:    "no tool name",
			payload: `{"session_id":"s1","hook_event_name":"PostToolUse"}`,
			wantErr: hook.ErrInvalidPayload,
		},
		{
			name:     "MNEMO_PAUSE=capture: the start stores nothing and gets its context",
			payload:  `{"session_id":"s1","cwd":"/p","hook_event_name":"SessionStart","source":"startup"}`,
			pauseEnv: "capture",
			wantMeth: memory.MethodSessionStart,
			want:     map[string]any{"noCapture": true, "noContext": nil},
		},
		{
			name:     "MNEMO_PAUSE=capture: the prompt is not stored and gets its recall",
			payload:  `{"session_id":"s1","cwd":"/p","hook_event_name":"UserPromptSubmit","prompt":"why?"}`,
			pauseEnv: "capture",
			wantMeth: memory.MethodUserPromptSubmit,
			want:     map[string]any{"noCapture": true, "noRecall": nil},
		},
		{
			name:     "MNEMO_PAUSE=capture: no tool use is sent",
			payload:  `{"session_id":"s1","cwd":"/p","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`,
			pauseEnv: "capture",
			wantErr:  hook.ErrPaused,
		},
		{
			name:     "MNEMO_PAUSE=capture: no stop is sent",
			payload:  `{"session_id":"s1","cwd":"/p","hook_event_name":"Stop"}`,
			pauseEnv: " Capture ",
			wantErr:  hook.ErrPaused,
		},
		{
			name:     "MNEMO_PAUSE=capture: no session end is sent",
			payload:  `{"session_id":"s1","cwd":"/p","hook_event_name":"SessionEnd","reason":"exit"}`,
			pauseEnv: "capture",
			wantErr:  hook.ErrPaused,
		},
		{
			name:     "MNEMO_PAUSE=inject: the start gets no context and is recorded",
			payload:  `{"session_id":"s1","cwd":"/p","hook_event_name":"SessionStart","source":"startup"}`,
			pauseEnv: "inject",
			wantMeth: memory.MethodSessionStart,
			want:     map[string]any{"noContext": true, "noCapture": nil},
		},
		{
			name:     "MNEMO_PAUSE=inject: the prompt gets no recall",
			payload:  `{"session_id":"s1","cwd":"/p","hook_event_name":"UserPromptSubmit","prompt":"why?"}`,
			pauseEnv: "inject",
			wantMeth: memory.MethodUserPromptSubmit,
			want:     map[string]any{"noRecall": true, "noCapture": nil},
		},
		{
			name:     "MNEMO_PAUSE=inject: tool uses are recorded",
			payload:  `{"session_id":"s1","cwd":"/p","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`,
			pauseEnv: "inject",
			wantMeth: memory.MethodPostToolUse,
			want:     map[string]any{"toolName": "Bash"},
		},
		{
			name:     "MNEMO_PAUSE=all: nothing is sent",
			payload:  `{"session_id":"s1","cwd":"/p","hook_event_name":"SessionStart","source":"startup"}`,
			pauseEnv: "all",
			wantErr:  hook.ErrPaused,
		},
		{
			name:     "an unreadable MNEMO_PAUSE pauses everything",
			payload:  `{"session_id":"s1","cwd":"/p","hook_event_name":"UserPromptSubmit","prompt":"why?"}`,
			pauseEnv: "sometimes",
			wantErr:  hook.ErrPaused,
		},
		{
			name:    "unhandled event",
			payload: string(readPayloadFile(t, "tmux-manual-005-Notification.json")),
			wantErr: hook.ErrUnhandledEvent,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("MNEMO_SKIP_TOOLS", tt.skipEnv)
			t.Setenv(memory.PauseEnv, tt.pauseEnv)
			var p hosts.Payload
			if err := json.Unmarshal([]byte(tt.payload), &p); err != nil {
				t.Fatal(err)
			}
			method, params, err := hook.Translate(&p, hook.TranslateOptions{
				EventKey:  testEventKey,
				SkipTools: hook.SkipTools(),
				Pause:     hook.SessionPause(nil),
			})
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if method != tt.wantMeth {
				t.Errorf("method = %q, want %q", method, tt.wantMeth)
			}
			raw, err := json.Marshal(params)
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			if err := json.Unmarshal(raw, &got); err != nil {
				t.Fatal(err)
			}
			for k, want := range tt.want {
				if !jsonEqual(got[k], want) {
					t.Errorf("params.%s = %#v, want %#v", k, got[k], want)
				}
			}
			for _, s := range tt.absent {
				if strings.Contains(string(raw), s) {
					t.Errorf("params leak %q: %s", s, raw)
				}
			}
		})
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// jsonEqual reports whether a and b encode to the same JSON value, keys
// in any order.
func jsonEqual(a, b any) bool {
	return bytes.Equal(normalJSON(a), normalJSON(b))
}

func normalJSON(v any) []byte {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var generic any
	if err := json.Unmarshal(raw, &generic); err != nil {
		return nil
	}
	out, _ := json.Marshal(generic)
	return out
}

// An image a tool read (Read of a PNG: base64 in tool_response) never
// leaves the hook: the data becomes a note of its size, the rest of the
// response stays. A task's notification, sent as a prompt, is not one.
func TestTranslateDropsImagesAndNotifications(t *testing.T) {
	data := strings.Repeat("iVBORw0KGgoAAAANSUhEUgAA", 100)
	p := hosts.Payload{SessionID: "s", HookEventName: hosts.EventPostToolUse, ToolName: "Read",
		ToolInput:    json.RawMessage(`{"file_path":"/p/logo.png"}`),
		ToolResponse: json.RawMessage(`{"type":"image","file":{"base64":"` + data + `","type":"image/png","uri":"data:image/png;base64,` + data + `"}}`)}
	_, params, err := hook.Translate(&p, hook.TranslateOptions{EventKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	got := string(params.(*memory.ToolUseParams).ToolResponse)
	want := `{"type":"image","file":{"base64":"[2400 bytes of base64 data]","type":"image/png","uri":"[2422 bytes of base64 data]"}}`
	if got != want {
		t.Errorf("tool response = %s\nwant %s", got, want)
	}

	p = hosts.Payload{SessionID: "s", HookEventName: hosts.EventUserPromptSubmit, Prompt: "<task-notification>\n<task-id>b1</task-id>\n</task-notification>"}
	if _, _, err := hook.Translate(&p, hook.TranslateOptions{EventKey: "k"}); !errors.Is(err, hook.ErrNotPrompt) {
		t.Errorf("a task notification as a prompt: err = %v, want ErrNotPrompt", err)
	}
}
