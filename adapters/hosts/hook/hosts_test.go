package hook_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/mnemo-dev/mnemo/adapters/hosts"
	"github.com/mnemo-dev/mnemo/adapters/hosts/hook"
	"github.com/mnemo-dev/mnemo/memory"
)

// The documented payloads of every host are in
// adapters/<host>/testdata/documented, their sources in each folder's
// README.md.

// hostPayload reads a documented payload, <host>/<file>.
func hostPayload(t testing.TB, file string) []byte {
	t.Helper()
	host, name, _ := strings.Cut(file, "/")
	data, err := os.ReadFile(hostData(host, "documented", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// runHostHook runs Run in-process as `mnemo-hook --host host event`
// (host "" is Claude Code's, as installed in its settings), and returns
// its stdout.
func runHostHook(t *testing.T, home, host, event string, payload []byte) string {
	t.Helper()
	args := []string{event}
	if host != "" {
		args = []string{"--host", host, event}
	}
	cfg := hook.Config{Home: home, Stdin: bytes.NewReader(payload)}
	var stdout, stderr bytes.Buffer
	cfg.Stdout, cfg.Stderr = &stdout, &stderr
	cfg.Host, cfg.Event, cfg.ArgsErr = hook.ParseArgs(args)
	if cfg.ArgsErr != nil {
		t.Fatalf("ParseArgs(%q): %v", args, cfg.ArgsErr)
	}
	if code := hook.Run(context.Background(), cfg); code != 0 {
		t.Errorf("Run = %d, want 0", code)
	}
	if stderr.Len() > 0 {
		t.Errorf("stderr: %s", stderr.String())
	}
	if log := hookLog(t, home); log != "" {
		t.Errorf("hook.log: %s", log)
	}
	return stdout.String()
}

// Values of a want map that are not plain JSON values.
type (
	// absent: the field is not there.
	absent struct{}
	// textHas: the field is a string that holds this text.
	textHas string
)

// wantFields checks the fields of got that want names: a map's fields one
// by one (others may be there too), any other value equal once both are
// JSON.
func wantFields(t *testing.T, path string, got map[string]any, want map[string]any) {
	t.Helper()
	for k, w := range want {
		g, ok := got[k]
		name := path + "." + k
		switch w := w.(type) {
		case absent:
			if ok {
				t.Errorf("%s = %v, want it absent", name, g)
			}
		case textHas:
			if s, isText := g.(string); !isText || !strings.Contains(s, string(w)) {
				t.Errorf("%s = %#v, want a text holding %q", name, g, string(w))
			}
		case map[string]any:
			m, isMap := g.(map[string]any)
			if !isMap {
				t.Errorf("%s = %#v, want an object", name, g)
				continue
			}
			wantFields(t, name, m, w)
		default:
			var wj any
			b, _ := json.Marshal(w)
			_ = json.Unmarshal(b, &wj)
			if !ok || !reflect.DeepEqual(g, wj) {
				t.Errorf("%s = %#v, want %#v", name, g, wj)
			}
		}
	}
}

var dedupeKeyRE = regexp.MustCompile(`^d-[0-9a-f]{32}$`)

// The answers the hook prints with the stand-in's context, in each
// host's shape.
func hookSpecific(event, context string) string {
	return answerJSON(hosts.Output{HookSpecificOutput: &hosts.HookSpecificOutput{HookEventName: event, AdditionalContext: context}})
}

func cursorContext(context string) string {
	return answerJSON(map[string]string{"additional_context": context})
}

// answerJSON encodes an answer as the hook does: one line, HTML as is.
func answerJSON(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return b.String()
}

const (
	emptyAnswer    = "{}\n"
	continueAnswer = "{\"continue\":true}\n"
)

// A hostCase is one documented payload and what the hook must make of it.
type hostCase struct {
	file   string         // <host>/<file> of the documented payloads
	host   string         // the host the hook is installed for (--host)
	event  string         // the event on the command line
	method string         // the daemon call, "" for an event not handled
	params map[string]any // what the call must carry (wantFields)
	keyed  bool           // the event key is a de-duplication key (the payload names its event)
	answer string         // the hook's stdout
}

// The projects and sessions of the payloads.
const (
	cursorCwd     = "/home/dev/src/shop-api"
	cursorSession = "cursor:b61d7a2e-4c0f-4e1b-9d3a-7f25c8e0a914"
	cursorOld     = "cursor:e3a95c10-27d4-4b8f-a1c6-09f4d2b7e5a3"
	vscodeCwd     = "/home/dev/src/inventory"
	vscodeSession = "vscode:6c1f0e9a-2b47-4d8e-95a3-f07b1c2d4e68"
	copilotCwd    = "/home/dev/src/ledger-cli"
	copilotCamel  = "copilot:1e5b9c3a-7d2f-4a86-b0e4-c9f1a3d5e7b2"
	copilotPascal = "copilot:8f3d1b6e-4a2c-4e97-a5d0-b1c3e5f7a9d4"
	windsurfCwd   = "/home/dev/src/weather-cli"
	windsurfTraj  = "windsurf:a4c2e6f8-1b3d-4f5a-8c7e-9d0b2f4a6c81"
	geminiCwd     = "/home/dev/src/notes-api"
	geminiSession = "gemini:3b7e1d9f-5a2c-4c8e-b6d0-f4a2c8e1b3d7"
	opencodeCwd   = "/home/dev/src/todo-web"
	opencodeSess  = "opencode:ses_4b2f9c1a7e3dFf0qZ8kLm2Np"
)

// in is a call's fields for a session of a host in a folder.
func in(session, platform, cwd string, kv ...any) map[string]any {
	m := map[string]any{"contentSessionId": session}
	if platform != "" {
		m["platform"] = platform
	}
	if cwd != "" {
		m["cwd"] = cwd
	}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

func hostCases(t *testing.T) []hostCase {
	hookCwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	C, V, P, W, G, O := cursorCwd, vscodeCwd, copilotCwd, windsurfCwd, geminiCwd, opencodeCwd
	cur := func(kv ...any) map[string]any { return in(cursorSession, "cursor", C, kv...) }
	vsc := func(kv ...any) map[string]any { return in(vscodeSession, "vscode", V, kv...) }
	cam := func(kv ...any) map[string]any { return in(copilotCamel, "copilot", P, kv...) }
	pas := func(kv ...any) map[string]any { return in(copilotPascal, "copilot", P, kv...) }
	win := func(cwd string, kv ...any) map[string]any { return in(windsurfTraj, "windsurf", cwd, kv...) }
	gem := func(kv ...any) map[string]any { return in(geminiSession, "gemini", G, kv...) }
	opc := func(kv ...any) map[string]any { return in(opencodeSess, "opencode", O, kv...) }
	const (
		start  = memory.MethodSessionStart
		prompt = memory.MethodUserPromptSubmit
		tool   = memory.MethodPostToolUse
		stop   = memory.MethodStop
		end    = memory.MethodSessionEnd
	)
	failure := func(msg string) map[string]any {
		return map[string]any{"error": msg, "isError": true, "interrupted": false}
	}
	return []hostCase{
		// Cursor, a current build: postToolUse for every tool.
		{"cursor/01-sessionStart.json", "cursor", "sessionStart", start,
			cur("noContext", absent{}), true, cursorContext(standInContext)},
		{"cursor/02-beforeSubmitPrompt.json", "cursor", "beforeSubmitPrompt", prompt,
			cur("prompt", "The cart total ignores discount codes. Find out why and fix it.", "noRecall", true), true, continueAnswer},
		{"cursor/03-postToolUse-read.json", "cursor", "postToolUse", tool,
			cur("toolName", "Read", "toolUseId", "toolu_01Kc8QeR3vUq2m",
				"toolInput", map[string]any{"file_path": C + "/src/cart.ts"},
				"toolResponse", textHas("export function cartTotal")), true, emptyAnswer},
		{"cursor/04-postToolUse-shell.json", "cursor", "postToolUse", tool,
			cur("toolName", "Bash", "toolInput", map[string]any{"command": "npm test -- src/cart.test.ts"},
				"toolResponse", map[string]any{"stdout": textHas("Tests: 1 failed"), "exitUnknown": true}), true, emptyAnswer},
		{"cursor/05-postToolUse-edit.json", "cursor", "postToolUse", tool,
			cur("toolName", "Edit", "toolInput", map[string]any{"file_path": C + "/src/cart.ts",
				"old_string": "  return sum;", "new_string": "  return code ? applyDiscount(sum, code) : sum;"}), true, emptyAnswer},
		{"cursor/06-postToolUse-write.json", "cursor", "postToolUse", tool,
			cur("toolName", "Write", "toolInput", map[string]any{"file_path": C + "/src/discount.ts",
				"content": textHas("export function applyDiscount")}), true, emptyAnswer},
		{"cursor/07-postToolUse-mcp.json", "cursor", "postToolUse", tool,
			cur("toolName", "MCP:linear:get_issue", "toolInput", map[string]any{"id": "SHOP-142"},
				"toolResponse", map[string]any{"title": "Discount codes are not applied at checkout"}), true, emptyAnswer},
		{"cursor/08-postToolUseFailure-shell.json", "cursor", "postToolUseFailure", tool,
			cur("toolName", "Bash", "toolInput", map[string]any{"command": "npm run lint -- src/discount.ts"},
				"toolResponse", failure("Command timed out after 30000ms")), true, emptyAnswer},
		{"cursor/09-stop.json", "cursor", "stop", stop,
			in(cursorSession, "", "", "transcriptPath", textHas("/agent-transcripts/"), "lastAssistantMessage", absent{}), true, emptyAnswer},
		{"cursor/10-sessionEnd.json", "cursor", "sessionEnd", end,
			in(cursorSession, "", "", "reason", "completed"), true, emptyAnswer},
		// Cursor, an older build: the per-kind events, no sessionStart.
		{"cursor/11-beforeSubmitPrompt-old.json", "cursor", "beforeSubmitPrompt", prompt,
			in(cursorOld, "cursor", C, "prompt", "Shipping is charged twice for bundles. Fix it."), true, continueAnswer},
		{"cursor/12-afterShellExecution.json", "cursor", "afterShellExecution", tool,
			in(cursorOld, "cursor", C, "toolName", "Bash", "toolInput", map[string]any{"command": "npm test -- src/shipping.test.ts"},
				"toolResponse", map[string]any{"stdout": textHas("5 passed")}), true, emptyAnswer},
		{"cursor/13-afterFileEdit.json", "cursor", "afterFileEdit", tool,
			in(cursorOld, "cursor", C, "toolName", "MultiEdit", "toolInput", map[string]any{"file_path": C + "/src/shipping.ts",
				"edits": []any{map[string]any{"old_string": "  return items.map(shippingFor).reduce(add, 0);", "new_string": "  return shippingFor(bundleOf(items));"}}}), true, emptyAnswer},
		{"cursor/14-afterMCPExecution.json", "cursor", "afterMCPExecution", tool,
			in(cursorOld, "cursor", C, "toolName", "get_issue", "toolInput", map[string]any{"id": "SHOP-151"},
				"toolResponse", map[string]any{"title": "Bundles pay shipping per item"}), true, emptyAnswer},
		{"cursor/15-afterAgentResponse.json", "cursor", "afterAgentResponse", "", nil, false, ""},
		{"cursor/16-stop-old.json", "cursor", "stop", stop, in(cursorOld, "", ""), true, emptyAnswer},
		{"cursor/17-sessionStart-next.json", "cursor", "sessionStart", start,
			in("cursor:9c2f4b71-e8a3-4d05-b7c9-31d6a0f58e22", "cursor", C), true, cursorContext(standInContext)},

		// VS Code agent hooks.
		{"vscode/01-SessionStart.json", "vscode", "SessionStart", start,
			vsc("source", "new", "noContext", absent{}), true, hookSpecific("SessionStart", standInContext)},
		{"vscode/02-UserPromptSubmit.json", "vscode", "UserPromptSubmit", prompt,
			vsc("prompt", textHas("Stock counts go negative"), "noRecall", true), true, emptyAnswer},
		{"vscode/03-PostToolUse-read.json", "vscode", "PostToolUse", tool,
			vsc("toolName", "Read", "toolUseId", "call_Xq7mR2vT9bK4", "toolInput", map[string]any{"file_path": V + "/inventory/orders.py"},
				"toolResponse", textHas("def cancel(order):")), true, emptyAnswer},
		{"vscode/04-PostToolUse-shell.json", "vscode", "PostToolUse", tool,
			vsc("toolName", "Bash", "toolInput", map[string]any{"command": "pytest tests/test_orders.py"},
				"toolResponse", map[string]any{"stdout": textHas("1 failed, 11 passed"), "exitUnknown": true}), true, emptyAnswer},
		{"vscode/05-PostToolUse-edit.json", "vscode", "PostToolUse", tool,
			vsc("toolName", "Edit", "toolInput", map[string]any{"file_path": V + "/inventory/orders.py",
				"old_string": "        stock[line.sku] -= line.qty", "new_string": "        stock[line.sku] += line.qty"}), true, emptyAnswer},
		{"vscode/06-PostToolUse-create.json", "vscode", "PostToolUse", tool,
			vsc("toolName", "Write", "toolInput", map[string]any{"file_path": V + "/tests/test_cancel.py", "content": textHas("def test_cancel_twice_is_noop")}), true, emptyAnswer},
		{"vscode/07-PostToolUse-editFiles.json", "vscode", "PostToolUse", tool,
			vsc("toolName", "Edit", "toolUseId", "tool-123", "toolInput", map[string]any{"file_path": V + "/inventory/stock.py"}), true, emptyAnswer},
		{"vscode/08-PostToolUse-runTerminalCommand.json", "vscode", "PostToolUse", tool,
			vsc("toolName", "Bash", "toolInput", map[string]any{"command": "pytest tests/"}, "toolResponse", map[string]any{"stdout": "12 passed in 0.44s\n", "exitUnknown": true}), true, emptyAnswer},
		{"vscode/09-Stop.json", "vscode", "Stop", stop,
			in(vscodeSession, "", "", "transcriptPath", textHas("GitHub.copilot-chat")), true, emptyAnswer},
		{"vscode/10-SessionStart-next.json", "vscode", "SessionStart", start,
			in("vscode:0d9e8f7a-6b5c-4d3e-a2f1-0e9d8c7b6a54", "vscode", V), true, hookSpecific("SessionStart", standInContext)},

		// Copilot CLI, camelCase: no event name in the payload.
		{"copilot/camel-01-sessionStart.json", "copilot", "sessionStart", start,
			cam("source", "new", "noContext", true), true, emptyAnswer},
		{"copilot/camel-02-userPromptSubmitted.json", "copilot", "userPromptSubmitted", prompt,
			cam("prompt", textHas("Balances drift by a cent"), "noRecall", true), true, emptyAnswer},
		{"copilot/camel-03-postToolUse-view.json", "copilot", "postToolUse", tool,
			cam("toolName", "Read", "toolInput", map[string]any{"file_path": P + "/ledger/import.go"},
				"toolResponse", textHas("func parseAmount")), true, emptyAnswer},
		{"copilot/camel-04-postToolUse-bash.json", "copilot", "postToolUse", tool,
			cam("toolName", "Bash", "toolInput", map[string]any{"command": "go test ./ledger/"},
				"toolResponse", map[string]any{"stdout": textHas("--- FAIL: TestImportCents"), "isError": true}), true, emptyAnswer},
		{"copilot/camel-05-postToolUse-edit.json", "copilot", "postToolUse", tool,
			cam("toolName", "Edit", "toolInput", map[string]any{"file_path": P + "/ledger/import.go",
				"old_string": "return int64(f * 100)", "new_string": "return int64(math.Round(f * 100))"},
				"toolResponse", textHas("updated with changes")), true, emptyAnswer},
		{"copilot/camel-06-postToolUse-create.json", "copilot", "postToolUse", tool,
			cam("toolName", "Write", "toolInput", map[string]any{"file_path": P + "/ledger/round_test.go", "content": textHas("TestParseAmountRounds")}), true, emptyAnswer},
		{"copilot/camel-07-postToolUseFailure-bash.json", "copilot", "postToolUseFailure", tool,
			cam("toolName", "Bash", "toolInput", map[string]any{"command": "golangci-lint run ./ledger/"},
				"toolResponse", failure("bash: golangci-lint: command not found")), true, emptyAnswer},
		{"copilot/camel-08-agentStop.json", "copilot", "agentStop", stop,
			in(copilotCamel, "", "", "transcriptPath", textHas("/.copilot/session-state/")), true, emptyAnswer},
		{"copilot/camel-09-sessionEnd.json", "copilot", "sessionEnd", end,
			in(copilotCamel, "", "", "reason", "user_exit"), true, emptyAnswer},
		// Copilot CLI, "VS Code compatible" PascalCase.
		{"copilot/pascal-01-SessionStart.json", "copilot", "SessionStart", start,
			pas("source", "new", "noContext", true), true, emptyAnswer},
		{"copilot/pascal-02-UserPromptSubmit.json", "copilot", "UserPromptSubmit", prompt,
			pas("prompt", "The monthly report lists March twice. Fix it.", "noRecall", true), true, emptyAnswer},
		{"copilot/pascal-03-PostToolUse-view.json", "copilot", "PostToolUse", tool,
			pas("toolName", "Read", "toolInput", map[string]any{"file_path": P + "/report/months.go"},
				"toolResponse", textHas("func monthsBetween")), true, emptyAnswer},
		{"copilot/pascal-04-PostToolUse-bash.json", "copilot", "PostToolUse", tool,
			pas("toolName", "Bash", "toolInput", map[string]any{"command": "go test ./report/"},
				"toolResponse", map[string]any{"stdout": textHas("ok  \tledger-cli/report"), "isError": absent{}}), true, emptyAnswer},
		{"copilot/pascal-05-PostToolUse-edit.json", "copilot", "PostToolUse", tool,
			pas("toolName", "Edit", "toolInput", map[string]any{"file_path": P + "/report/months.go",
				"old_string": "for m := a; !m.After(b); m = m.AddDate(0, 0, 30) {", "new_string": "for m := a; !m.After(b); m = m.AddDate(0, 1, 0) {"}), true, emptyAnswer},
		{"copilot/pascal-06-PostToolUse-create.json", "copilot", "PostToolUse", tool,
			pas("toolName", "Write", "toolInput", map[string]any{"file_path": P + "/report/months_test.go", "content": textHas("TestMonthsBetweenMarch")}), true, emptyAnswer},
		{"copilot/pascal-07-PostToolUseFailure-bash.json", "copilot", "PostToolUseFailure", tool,
			pas("toolName", "Bash", "toolResponse", failure("Command timed out after 30s")), true, emptyAnswer},
		{"copilot/pascal-08-Stop.json", "copilot", "Stop", stop,
			in(copilotPascal, "", "", "transcriptPath", textHas("/.copilot/session-state/")), true, emptyAnswer},
		{"copilot/pascal-09-SessionEnd.json", "copilot", "SessionEnd", end,
			in(copilotPascal, "", "", "reason", "complete"), true, emptyAnswer},

		// Windsurf: no answer at all; only a command carries its cwd.
		{"windsurf/01-pre_user_prompt.json", "windsurf", "pre_user_prompt", prompt,
			win(hookCwd, "prompt", textHas("--metric"), "noRecall", true), true, ""},
		{"windsurf/02-post_read_code.json", "windsurf", "post_read_code", tool,
			win(hookCwd, "toolName", "Read", "toolUseId", "exec-02-a4c2e6f8", "toolInput", map[string]any{"file_path": W + "/weather/units.py"},
				"toolResponse", textHas("def to_display")), true, ""},
		{"windsurf/03-post_run_command.json", "windsurf", "post_run_command", tool,
			win(W, "toolName", "Bash", "toolInput", map[string]any{"command": "pytest tests/test_units.py"},
				"toolResponse", map[string]any{"stdout": textHas("1 failed, 4 passed"), "exitCode": 1, "isError": true}), true, ""},
		{"windsurf/04-post_write_code.json", "windsurf", "post_write_code", tool,
			win(hookCwd, "toolName", "MultiEdit", "toolInput", map[string]any{"file_path": W + "/weather/units.py",
				"edits": []any{map[string]any{"old_string": "    return temp_c * 9 / 5 + 32", "new_string": "    return temp_c if metric else temp_c * 9 / 5 + 32"}}}), true, ""},
		{"windsurf/05-post_run_command-pass.json", "windsurf", "post_run_command", tool,
			win(W, "toolName", "Bash", "toolResponse", map[string]any{"stdout": "5 passed in 0.11s\n", "exitCode": 0, "isError": absent{}}), true, ""},
		{"windsurf/06-post_mcp_tool_use.json", "windsurf", "post_mcp_tool_use", tool,
			win(hookCwd, "toolName", "mcp__github__create_issue", "toolInput", map[string]any{"title": "Document --metric"},
				"toolResponse", map[string]any{"number": 31}), true, ""},
		{"windsurf/07-post_cascade_response.json", "windsurf", "post_cascade_response", stop,
			in(windsurfTraj, "", "", "lastAssistantMessage", textHas("it now honours --metric")), true, ""},

		// Gemini CLI.
		{"gemini/01-SessionStart.json", "gemini", "SessionStart", start,
			gem("source", "startup"), true, hookSpecific("SessionStart", standInContext)},
		{"gemini/02-BeforeAgent.json", "gemini", "BeforeAgent", prompt,
			gem("prompt", textHas("uppercase tags"), "noRecall", absent{}), true, hookSpecific("BeforeAgent", standInRecall)},
		{"gemini/03-AfterTool-read.json", "gemini", "AfterTool", tool,
			gem("toolName", "Read", "toolInput", map[string]any{"file_path": G + "/notes/search.go"}, "toolResponse", textHas("func ByTag")), true, emptyAnswer},
		{"gemini/04-AfterTool-shell.json", "gemini", "AfterTool", tool,
			gem("toolName", "Bash", "toolInput", map[string]any{"command": "go test ./notes/"},
				"toolResponse", map[string]any{"stdout": textHas("--- FAIL: TestByTagCase"), "exitCode": 1, "isError": true}), true, emptyAnswer},
		{"gemini/05-AfterTool-edit.json", "gemini", "AfterTool", tool,
			gem("toolName", "Edit", "toolInput", map[string]any{"file_path": G + "/notes/search.go",
				"new_string": "func ByTag(tag string) []Note { return index[strings.ToLower(tag)] }"},
				"toolResponse", textHas("Successfully modified file")), true, emptyAnswer},
		{"gemini/06-AfterTool-write.json", "gemini", "AfterTool", tool,
			gem("toolName", "Write", "toolInput", map[string]any{"file_path": G + "/notes/tags.go", "content": textHas("func normTag")}), true, emptyAnswer},
		{"gemini/07-AfterTool-mcp.json", "gemini", "AfterTool", tool,
			gem("toolName", "mcp__github__add_issue_comment", "toolInput", map[string]any{"issue_number": 12},
				"toolResponse", textHas(`"html_url"`)), true, emptyAnswer},
		{"gemini/08-AfterAgent.json", "gemini", "AfterAgent", stop,
			in(geminiSession, "", "", "lastUserMessage", textHas("uppercase tags"), "lastAssistantMessage", textHas("folds the tag first")), true, emptyAnswer},
		{"gemini/09-SessionEnd.json", "gemini", "SessionEnd", end, in(geminiSession, "", "", "reason", "exit"), true, emptyAnswer},
		{"gemini/10-SessionStart-next.json", "gemini", "SessionStart", start,
			in("gemini:7d1f3b5e-9c2a-4e6b-8d0f-a2c4e6f8b0d3", "gemini", G), true, hookSpecific("SessionStart", standInContext)},

		// OpenCode through Mnemo's plugin: Claude Code's envelope, whose
		// events name themselves only by their tool call.
		{"opencode/01-SessionStart.json", "opencode", "SessionStart", start, opc(), false, hookSpecific("SessionStart", standInContext)},
		{"opencode/02-UserPromptSubmit.json", "opencode", "UserPromptSubmit", prompt,
			opc("noRecall", absent{}), false, hookSpecific("UserPromptSubmit", standInRecall)},
		{"opencode/03-PostToolUse-read.json", "opencode", "PostToolUse", tool,
			opc("toolName", "Read", "toolUseId", "call_01JR5Q8X2M", "toolInput", map[string]any{"file_path": O + "/src/store.ts"},
				"toolResponse", textHas("export function save")), true, emptyAnswer},
		{"opencode/04-PostToolUse-bash.json", "opencode", "PostToolUse", tool,
			opc("toolName", "Bash", "toolResponse", map[string]any{"stdout": textHas("Tests  1 failed"), "exitCode": 1, "isError": true}), true, emptyAnswer},
		{"opencode/05-PostToolUse-edit.json", "opencode", "PostToolUse", tool,
			opc("toolName", "Edit", "toolInput", map[string]any{"file_path": O + "/src/store.ts",
				"old_string": "JSON.stringify(todos.filter(t => !t.done))", "new_string": "JSON.stringify(todos)"}), true, emptyAnswer},
		{"opencode/06-PostToolUse-write.json", "opencode", "PostToolUse", tool,
			opc("toolName", "Write", "toolInput", map[string]any{"file_path": O + "/src/persist.ts", "content": "export const STORAGE_KEY = 'todos';\n"}), true, emptyAnswer},
		{"opencode/07-Stop.json", "opencode", "Stop", stop,
			in(opencodeSess, "", "", "lastAssistantMessage", textHas("keeps them now")), false, emptyAnswer},
		{"opencode/08-SessionEnd.json", "opencode", "SessionEnd", end, in(opencodeSess, "", "", "reason", "other"), false, emptyAnswer},
		{"opencode/09-SessionStart-next.json", "opencode", "SessionStart", start,
			in("opencode:ses_4b2fa07c3d1eQw9Rt5Yu7Io1", "opencode", O), false, hookSpecific("SessionStart", standInContext)},

		// Codex CLI: Claude Code's format and answers.
		{"codex/01-SessionStart.json", "codex", "SessionStart", start,
			in("codex:0199b2c4-6e8a-7c1e-9f3b-5d7a9c1e3f50", "codex", "/home/dev/src/billing-api", "source", "startup"), false, hookSpecific("SessionStart", standInContext)},
		{"codex/02-UserPromptSubmit.json", "codex", "UserPromptSubmit", prompt,
			in("codex:0199b2c4-6e8a-7c1e-9f3b-5d7a9c1e3f50", "codex", "/home/dev/src/billing-api", "prompt", "Why are invoice totals off by a cent?"), false, hookSpecific("UserPromptSubmit", standInRecall)},
	}
}

// TestHostPayloads runs every documented payload through the hook, as its
// host's hooks run it, against a stand-in daemon: the daemon call, the
// namespaced session id, platform and cwd, the tool in Claude Code's
// vocabulary, the event key, and the answer in the host's shape, given the
// stand-in's context.
func TestHostPayloads(t *testing.T) {
	cases := hostCases(t)
	files, err := filepath.Glob(hostData("*", "documented", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(cases) {
		t.Errorf("%d payload files, %d cases: every file needs a case", len(files), len(cases))
	}
	for _, c := range cases {
		t.Run(strings.TrimSuffix(c.file, ".json"), func(t *testing.T) {
			home := testHome(t)
			d := startStandIn(t, home)
			stdout := runHostHook(t, home, c.host, c.event, hostPayload(t, c.file))
			if stdout != c.answer {
				t.Errorf("stdout = %q, want %q", stdout, c.answer)
			}
			calls := d.Calls()
			if c.method == "" {
				if len(calls) != 0 {
					t.Errorf("an event Mnemo does not hook reached the daemon: %v", calls)
				}
				return
			}
			if len(calls) != 1 || calls[0].Method != c.method {
				t.Fatalf("daemon calls %v, want one %s", calls, c.method)
			}
			p := calls[0].Params
			wantFields(t, "params", p, c.params)
			key, _ := p["eventKey"].(string)
			if c.keyed && !dedupeKeyRE.MatchString(key) {
				t.Errorf("eventKey %q is not a de-duplication key", key)
			}
			if !c.keyed && !eventKeyRE.MatchString(key) {
				t.Errorf("eventKey %q is not a fresh key", key)
			}
		})
	}
}

// TestHostPayloadKeys: the same payload gives the same event key every
// time (so that a second delivery is recognised), and two payloads of one
// session never share one.
func TestHostPayloadKeys(t *testing.T) {
	home := testHome(t)
	d := startStandIn(t, home)
	seen := map[string]string{}
	for _, c := range hostCases(t) {
		if !c.keyed {
			continue
		}
		payload := hostPayload(t, c.file)
		runHostHook(t, home, c.host, c.event, payload)
		runHostHook(t, home, c.host, c.event, payload)
		calls := d.Calls()
		a, b := calls[len(calls)-2].Params["eventKey"], calls[len(calls)-1].Params["eventKey"]
		if a != b {
			t.Errorf("%s: keys %v and %v for one payload", c.file, a, b)
		}
		k := a.(string)
		if other, ok := seen[k]; ok {
			t.Errorf("%s and %s share the event key %s", other, c.file, k)
		}
		seen[k] = c.file
	}
}

// TestHostDialectDetection delivers payloads to a hook installed for
// another host: Cursor and VS Code run the hooks of Claude Code's settings
// with their own payloads, VS Code runs Copilot CLI's hook files, and the
// hook of one host may be pointed at another's events. The call (event
// key included, so that the daemon sees the same event twice) and the
// answer are those of the payload's own host.
func TestHostDialectDetection(t *testing.T) {
	for _, c := range []struct {
		file, ownHost, ownEvent, host, event string
	}{
		// Cursor runs ~/.claude/settings.json's hooks, under Claude Code's
		// event names, with Cursor's payloads.
		{"cursor/01-sessionStart.json", "cursor", "sessionStart", "", "SessionStart"},
		{"cursor/02-beforeSubmitPrompt.json", "cursor", "beforeSubmitPrompt", "", "UserPromptSubmit"},
		{"cursor/05-postToolUse-edit.json", "cursor", "postToolUse", "", "PostToolUse"},
		{"cursor/08-postToolUseFailure-shell.json", "cursor", "postToolUseFailure", "", "PostToolUseFailure"},
		{"cursor/09-stop.json", "cursor", "stop", "", "Stop"},
		{"cursor/10-sessionEnd.json", "cursor", "sessionEnd", "", "SessionEnd"},
		// VS Code runs them too, and Copilot CLI's hook files, whose
		// camelCase events it renames to its own.
		{"vscode/01-SessionStart.json", "vscode", "SessionStart", "", "SessionStart"},
		{"vscode/02-UserPromptSubmit.json", "vscode", "UserPromptSubmit", "", "UserPromptSubmit"},
		{"vscode/05-PostToolUse-edit.json", "vscode", "PostToolUse", "", "PostToolUse"},
		{"vscode/09-Stop.json", "vscode", "Stop", "", "Stop"},
		{"vscode/01-SessionStart.json", "vscode", "SessionStart", "copilot", "sessionStart"},
		{"vscode/02-UserPromptSubmit.json", "vscode", "UserPromptSubmit", "copilot", "userPromptSubmitted"},
		{"vscode/03-PostToolUse-read.json", "vscode", "PostToolUse", "copilot", "postToolUse"},
		{"vscode/09-Stop.json", "vscode", "Stop", "copilot", "agentStop"},
		// A payload's marks win over whatever hook runs it.
		{"windsurf/03-post_run_command.json", "windsurf", "post_run_command", "", "PostToolUse"},
		{"cursor/13-afterFileEdit.json", "cursor", "afterFileEdit", "gemini", "AfterTool"},
		{"copilot/camel-04-postToolUse-bash.json", "copilot", "postToolUse", "", "postToolUse"},
	} {
		name := c.file + "@" + c.host
		if c.host == "" {
			name = c.file + "@claude-code"
		}
		t.Run(name, func(t *testing.T) {
			payload := hostPayload(t, c.file)
			home := testHome(t)
			d := startStandIn(t, home)
			want := runHostHook(t, home, c.ownHost, c.ownEvent, payload)
			got := runHostHook(t, home, c.host, c.event, payload)
			if got != want {
				t.Errorf("installed as %q: stdout %q, want %q (as %s's)", c.host, got, want, c.ownHost)
			}
			calls := d.Calls()
			if len(calls) != 2 {
				t.Fatalf("daemon calls %v, want 2", calls)
			}
			// The journal stamps each call with the time of its event.
			delete(calls[0].Params, "at")
			delete(calls[1].Params, "at")
			if !reflect.DeepEqual(calls[0], calls[1]) {
				t.Errorf("installed as %q the call is\n%v\nwant, as %s's,\n%v", c.host, calls[1], c.ownHost, calls[0])
			}
			if plat, _ := calls[1].Params["platform"].(string); plat != "" && plat != c.ownHost {
				t.Errorf("platform %q, want %q", plat, c.ownHost)
			}
		})
	}
}

// TestHostCopilotPayloadAtVSCodeHook: a payload without VS Code's event
// name but with Copilot CLI's camelCase session id, delivered to a hook
// installed for VS Code, is VS Code's (VS Code runs Copilot CLI's hook
// files); at Copilot CLI's own hook it is Copilot's.
func TestHostCopilotPayloadAtVSCodeHook(t *testing.T) {
	payload := hostPayload(t, "copilot/camel-03-postToolUse-view.json")
	home := testHome(t)
	d := startStandIn(t, home)
	runHostHook(t, home, "vscode", "PostToolUse", payload)
	runHostHook(t, home, "copilot", "postToolUse", payload)
	calls := d.Calls()
	if len(calls) != 2 {
		t.Fatalf("daemon calls %v, want 2", calls)
	}
	for i, host := range []string{"vscode", "copilot"} {
		wantFields(t, host, calls[i].Params, map[string]any{
			"contentSessionId": host + ":1e5b9c3a-7d2f-4a86-b0e4-c9f1a3d5e7b2",
			"platform":         host,
			"toolName":         "Read",
			"toolInput":        map[string]any{"file_path": copilotCwd + "/ledger/import.go"},
		})
	}
}

// TestHostAnswerWithoutContext: with no daemon to ask, every stage of
// every host gets the host's empty answer: {} (Cursor's prompt stage
// {"continue":true}), nothing for Windsurf and for an event not hooked.
func TestHostAnswerWithoutContext(t *testing.T) {
	for _, c := range hostCases(t) {
		t.Run(strings.TrimSuffix(c.file, ".json"), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			hook.Run(context.Background(), hook.Config{
				Host: c.host, Event: c.event, Stdin: bytes.NewReader(hostPayload(t, c.file)), Stdout: &stdout, Stderr: &stderr,
			})
			want := emptyAnswer
			switch {
			case c.answer == "" || c.answer == continueAnswer:
				want = c.answer
			}
			if stdout.String() != want {
				t.Errorf("stdout = %q, want %q", stdout.String(), want)
			}
		})
	}
}

func TestParseArgs(t *testing.T) {
	for _, c := range []struct {
		args        []string
		host, event string
		err         string
	}{
		{nil, "claude-code", "", ""},
		{[]string{"SessionStart"}, "claude-code", "SessionStart", ""},
		{[]string{"--host", "cursor", "postToolUse"}, "cursor", "postToolUse", ""},
		{[]string{"--host=vscode", "PostToolUse"}, "vscode", "PostToolUse", ""},
		{[]string{"-host", "windsurf", "post_run_command"}, "windsurf", "post_run_command", ""},
		{[]string{"agentStop", "--host", "copilot"}, "copilot", "agentStop", ""},
		{[]string{"--host", "gemini"}, "gemini", "", ""},
		{[]string{"--host", "opencode", "Stop"}, "opencode", "Stop", ""},
		{[]string{"--host", "codex", "Stop"}, "codex", "Stop", ""},
		{[]string{"--host", "claude-code", "Stop"}, "claude-code", "Stop", ""},
		{[]string{"--host"}, "claude-code", "", "--host needs a value"},
		{[]string{"--host", "cline", "PostToolUse"}, "claude-code", "PostToolUse", `unknown host "cline"`},
		{[]string{"--host="}, "claude-code", "", `unknown host ""`},
		{[]string{"--verbose", "Stop"}, "claude-code", "", `unknown flag "--verbose"`},
		{[]string{"Stop", "SessionEnd"}, "claude-code", "Stop", `unexpected argument "SessionEnd"`},
	} {
		host, event, err := hook.ParseArgs(c.args)
		if host != c.host || event != c.event {
			t.Errorf("ParseArgs(%q) = %q, %q, want %q, %q", c.args, host, event, c.host, c.event)
		}
		switch {
		case c.err == "" && err != nil:
			t.Errorf("ParseArgs(%q): %v", c.args, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("ParseArgs(%q) error %v, want %q", c.args, err, c.err)
		}
	}
}
