//go:build e2e

package e2e_test

// One memory for two agents: a Claude Code session (the real claude CLI,
// scripted by package modelserver as in adapters/claudecode/e2e) fixes
// calc.py; then a Codex session in the same project gets that memory.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mnemo-dev/mnemo/adapters/claudecode/e2e/harness"
	"github.com/mnemo-dev/mnemo/adapters/claudecode/modelserver"
)

// claudeBin returns the Claude Code CLI, or skips.
func claudeBin(t *testing.T, root string) string {
	t.Helper()
	return harness.CLI(t, "Claude Code CLI", "MNEMO_CLAUDE_BIN", filepath.Join(root, ".cache", "claude-code", "node_modules", ".bin", "claude"),
		"adapters/claudecode/e2e/setup.sh", "adapters/codex/e2e/run.sh")
}

// claudeDone is the last reply of Claude's session; its words are Claude's
// alone, so that Codex's context can be seen to come from it.
const claudeDone = "Claude Code fixed add and mul in calc.py; sh test.sh passes."

// claudeFixCalc is the Claude Code session: Read, Edit, Bash (failing),
// Edit, Bash.
func claudeFixCalc(project string) modelserver.Script {
	calc := filepath.Join(project, "calc.py")
	tests := modelserver.ToolUse{Name: "Bash", Input: map[string]any{"command": "sh test.sh", "description": "Run the tests"}}
	return modelserver.Script{Name: "claude-fix-calc", Steps: []modelserver.Step{
		{Text: "Reading calc.py.", ToolUses: []modelserver.ToolUse{{Name: "Read", Input: map[string]any{"file_path": calc}}}},
		{Text: "add subtracts; fixing it.", ToolUses: []modelserver.ToolUse{{Name: "Edit", Input: map[string]any{
			"file_path": calc, "old_string": "    return a - b", "new_string": "    return a + b"}}}},
		{Text: "Running the tests.", ToolUses: []modelserver.ToolUse{tests}},
		{Text: "mul adds; fixing it.", ToolUses: []modelserver.ToolUse{{Name: "Edit", Input: map[string]any{
			"file_path": calc, "old_string": "def mul(a, b):\n    return a + b", "new_string": "def mul(a, b):\n    return a * b"}}}},
		{Text: "Running the tests again.", ToolUses: []modelserver.ToolUse{tests}},
		{Text: claudeDone},
	}}
}

// claudeResult returns the session id of a `claude -p --output-format
// stream-json` run, and fails unless its result line says success.
func claudeResult(t *testing.T, r *codexRun) string {
	t.Helper()
	if r.Exit != 0 {
		t.Fatalf("claude exited %d\nstderr:\n%s\nstdout:\n%s", r.Exit, r.Stderr, r.Stdout)
	}
	sc := bufio.NewScanner(bytes.NewReader(r.Stdout))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var line struct {
			Type      string `json:"type"`
			Subtype   string `json:"subtype"`
			IsError   bool   `json:"is_error"`
			Result    string `json:"result"`
			SessionID string `json:"session_id"`
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil || line.Type != "result" {
			continue
		}
		if line.Subtype != "success" || line.IsError || line.Result != claudeDone || line.SessionID == "" {
			t.Fatalf("claude's result: %s", sc.Bytes())
		}
		return line.SessionID
	}
	t.Fatalf("claude: no result line in stream-json:\n%s", r.Stdout)
	return ""
}

// TestMnemoClaudeThenCodex: with Mnemo's hooks installed in both agents,
// a Claude Code session fixes calc.py; a Codex session in the same project
// then starts with a <mnemo-context> made of that session's memory (it names
// calc.py and Claude's own closing words), and the model receives it.
func TestMnemoClaudeThenCodex(t *testing.T) {
	h := newHarness(t)
	mnemoBin, hookBin := harness.Mnemo(t, h.root)
	claude := claudeBin(t, h.root)
	h.installMnemoCodex(t, mnemoBin, hookBin)
	t.Logf("mnemo %s:\n%s", strings.Join(mnemoInstallClaudeArgs, " "), h.mustMnemo(t, mnemoBin, mnemoInstallClaudeArgs...))

	ctx, cancel := context.WithCancel(context.Background())
	msrv, err := modelserver.Start(ctx, "127.0.0.1:0")
	if err != nil {
		cancel()
		t.Fatalf("start Claude's model server: %v", err)
	}
	t.Cleanup(func() {
		msrv.SaveRequests(t)
		cancel()
		if err := msrv.Close(); err != nil {
			t.Errorf("close Claude's model server: %v", err)
		}
	})
	if err := msrv.Register(claudeFixCalc(h.Project)); err != nil {
		t.Fatal(err)
	}
	claudeEnv := []string{
		"ANTHROPIC_BASE_URL=" + msrv.URL(),
		"ANTHROPIC_API_KEY=dummy",
		"IS_SANDBOX=1", // bypassPermissions is refused to root without it
		"DISABLE_TELEMETRY=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_ERROR_REPORTING=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
	}
	run := h.runBin("claude-fix-calc", claude, claudeEnv, "-p", modelserver.Marker("claude-fix-calc")+" make sh test.sh pass",
		"--permission-mode", "bypassPermissions", "--output-format", "stream-json", "--verbose")
	claudeSession := claudeResult(t, run)
	data, err := os.ReadFile(filepath.Join(h.Project, "calc.py"))
	if err != nil || !strings.Contains(string(data), "return a * b") || !strings.Contains(string(data), "return a + b") {
		t.Fatalf("calc.py after Claude's session (%v):\n%s", err, data)
	}

	// Mnemo's memory holds Claude's session, and only it.
	list := h.sessions(t, mnemoBin)
	if len(list) != 1 || list[0].ContentSessionID != claudeSession || list[0].Platform != "claude-code" {
		t.Fatalf("mnemo sessions after Claude's session: %+v, want only %s on claude-code", list, claudeSession)
	}
	h.save("context-after-claude.txt", []byte(h.waitForContext(t, mnemoBin, "calc.py")))
	h.checkEdited(t, mnemoBin, "calc.py")

	codexRun, block := h.checkRecall(t, "calc.py")
	if !strings.Contains(block, "Claude Code fixed add and mul") {
		t.Errorf("Codex's <mnemo-context> lacks the Claude session's summary (%q):\n%s", claudeDone, block)
	}
	h.checkSession(t, mnemoBin, codexRun.threadID(t))
	harness.CheckLogs(t, h.MnemoHome, false)
}
