//go:build e2e

package e2e_test

// Mnemo with the real Gemini CLI. The test runs once bin/mnemo and
// bin/mnemo-hook exist (or MNEMO_BIN / MNEMO_HOOK_BIN name them) and skips
// until then. What it assumes of Mnemo's command line:
//
//   - `mnemo install gemini --scope user` merges, into
//     $HOME/.gemini/settings.json, one command hook per Gemini event Mnemo
//     handles, running `<abs mnemo-hook> --host gemini <Event>`, and keeps
//     the file's other settings. When this mnemo has no `install gemini`,
//     the test writes those hooks itself (writeGeminiHooks) and says so;
//   - `mnemo context`, run in the project, prints what SessionStart would
//     inject; `mnemo sessions --json` and `mnemo search --json --host gemini`
//     list the sessions and the observations;
//   - `mnemo daemon stop` stops the daemon the hooks started;
//   - logs go to $MNEMO_HOME/logs/.

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/adapters/claudecode/e2e/harness"
	"github.com/mnemo-dev/mnemo/memory"
)

// memoryWait bounds the wait for session 1's events to become context.
const memoryWait = 30 * time.Second

// mnemo runs the mnemo command line in the project, with the CLI's
// environment (same HOME and MNEMO_HOME), and returns its combined output.
func (h *world) mnemo(ctx context.Context, bin string, args ...string) (string, error) {
	return harness.Command(ctx, h.Project, h.env(), bin, args...)
}

// hookCommand is the command line Mnemo's Gemini hook for event runs.
func hookCommand(hookBin, event string) string { return hookBin + " --host gemini " + event }

// installMnemo puts mnemo on the CLI's PATH and installs Mnemo's Gemini
// hooks in the user settings, with `mnemo install gemini --scope user` when
// this mnemo has it, then checks the file. It stops the daemon at the end
// of the test and keeps Mnemo's logs among the artifacts.
func (h *world) installMnemo(t *testing.T, mnemoBin, hookBin string) {
	t.Helper()
	h.path = append(h.path, filepath.Dir(mnemoBin))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	harness.StopDaemonAtEnd(t, h.MnemoHome, mnemoBin, h.mnemo)

	help, err := h.mnemo(ctx, mnemoBin, "install", "--help")
	if err != nil {
		t.Fatalf("mnemo install --help: %v\n%s", err, help)
	}
	if regexp.MustCompile(`(?m)^\s+gemini\b`).MatchString(help) {
		args := []string{"install", "gemini", "--scope", "user"}
		if out, err := h.mnemo(ctx, mnemoBin, args...); err != nil {
			t.Fatalf("mnemo %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	} else {
		t.Logf("this mnemo has no `install gemini`: the test writes the hooks into %s itself", h.settingsPath())
		h.writeGeminiHooks(t, hookBin)
	}

	data, err := os.ReadFile(h.settingsPath())
	if err != nil {
		t.Fatalf("settings.json: %v", err)
	}
	h.save("settings.json", data)
	var settings struct {
		Security struct {
			Auth struct {
				SelectedType string `json:"selectedType"`
			} `json:"auth"`
		} `json:"security"`
		Hooks map[string][]struct {
			Matcher string `json:"matcher"`
			Hooks   []struct {
				Type    string `json:"type"`
				Command string `json:"command"`
				Timeout int    `json:"timeout"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(data, &settings); err != nil {
		t.Fatalf("settings.json: %v\n%s", err, data)
	}
	if settings.Security.Auth.SelectedType != "gemini-api-key" {
		t.Errorf("settings.json lost the user's other settings (security.auth.selectedType):\n%s", data)
	}
	for _, ev := range mnemoEvents {
		found := false
		for _, group := range settings.Hooks[ev] {
			for _, hk := range group.Hooks {
				cmd := strings.ReplaceAll(strings.ReplaceAll(hk.Command, `"`, ""), "'", "")
				found = found || hk.Type == "command" && cmd == hookCommand(hookBin, ev) &&
					(ev != "AfterTool" || group.Matcher == "" || group.Matcher == "*")
			}
		}
		if !found {
			t.Errorf("settings.json has no %s hook running %q for every tool:\n%s", ev, hookCommand(hookBin, ev), data)
		}
	}
}

// writeGeminiHooks merges Mnemo's hooks into the user settings, as
// `mnemo install gemini` is to: matcher "" (every source, every tool) and
// a 10 s timeout.
func (h *world) writeGeminiHooks(t *testing.T, hookBin string) {
	t.Helper()
	settings := baseSettings()
	hooks := map[string]any{}
	for _, ev := range mnemoEvents {
		hooks[ev] = []any{map[string]any{"matcher": "", "hooks": []any{map[string]any{
			"name": "mnemo", "type": "command", "command": hookCommand(hookBin, ev), "timeout": 10000,
		}}}}
	}
	settings["hooks"] = hooks
	h.writeJSON(h.settingsPath(), settings)
}

// checkHooksQuiet fails when the CLI reported a hook's failure or output
// on stderr: Mnemo's hooks answer JSON and exit 0.
func checkHooksQuiet(t *testing.T, r *cliRun) {
	t.Helper()
	for _, line := range strings.Split(string(r.Stderr), "\n") {
		if strings.Contains(strings.ToLower(line), "hook") {
			t.Errorf("gemini %s: %s", r.Label, line)
		}
	}
}

// waitForContext polls `mnemo context` until it names want.
func (h *world) waitForContext(t *testing.T, mnemoBin, want string) string {
	t.Helper()
	return harness.WaitForContext(t, memoryWait, want, mnemoBin, h.mnemo)
}

// mnemoJSON runs a mnemo command with --json and decodes its output.
func (h *world) mnemoJSON(t *testing.T, mnemoBin string, v any, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := h.mnemo(ctx, mnemoBin, append(args, "--json")...)
	if err != nil {
		t.Fatalf("mnemo %s --json: %v\n%s", strings.Join(args, " "), err, out)
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("mnemo %s --json: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// mnemoContextOf returns the <mnemo-context> element of a request's text,
// as the model gets it from a hook: Gemini CLI 0.61.0 replaces every < and
// > of a hook's additionalContext with &lt; and &gt; (HookOutput's
// getAdditionalContext), then wraps it in <hook_context>. It returns the
// first hook context that is one such element, and "" when there is none.
func mnemoContextOf(text string) string {
	for _, m := range hookContextRE.FindAllString(text, -1) {
		inner := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(m, "<hook_context>"), "</hook_context>"))
		if strings.HasPrefix(inner, "&lt;mnemo-context") && strings.HasSuffix(inner, "&lt;/mnemo-context&gt;") {
			return inner
		}
	}
	return ""
}

// TestMnemoRecallAcrossSessions: with Mnemo's hooks installed in the
// Gemini CLI, session 1 reads calc.py, fixes it with replace, runs the
// tests with run_shell_command and writes CHANGES.md. Once the daemon has
// made its observations, session 2, a fresh session in the same project,
// sends the model a request whose prompt carries a <mnemo-context> (from
// the SessionStart hook) naming calc.py. Both sessions are stored under the
// gemini host, session 1 completed (SessionEnd reached the daemon), and the
// hooks left no error in the CLI's output or Mnemo's logs.
func TestMnemoRecallAcrossSessions(t *testing.T) {
	h := newHarness(t)
	mnemoBin, hookBin := harness.Mnemo(t, h.root)
	h.installMnemo(t, mnemoBin, hookBin)

	first := h.runFixCalc(t, "fix-calc")
	firstID := first.mustSucceed(t).SessionID
	checkHooksQuiet(t, first)
	h.waitForContext(t, mnemoBin, "calc.py")

	var found memory.SearchResult
	h.mnemoJSON(t, mnemoBin, &found, "search", "--host", "gemini", "--file", "calc.py")
	if len(found.Hits) == 0 {
		t.Errorf("mnemo search --host gemini --file calc.py found nothing")
	}

	h.srv.register(apiScript{Name: "recall", Steps: []apiStep{{Text: "Last time we fixed add and mul in calc.py."}}})
	second := h.geminiP("recall", marker("recall")+" what did we change in calc.py last time?")
	secondID := second.mustSucceed(t).SessionID
	checkHooksQuiet(t, second)
	if secondID == firstID {
		t.Error("session 2 reused session 1's id")
	}
	reqs := h.srv.scripted("recall")
	if len(reqs) == 0 {
		t.Fatal("session 2 sent no request to the model")
	}
	text := reqs[0].userText()
	block := mnemoContextOf(text)
	switch {
	case block == "":
		t.Errorf("session 2's first model request has no <mnemo-context> in a <hook_context>:\n%s", text)
	case !strings.Contains(block, "calc.py"):
		t.Errorf("session 2's <mnemo-context> does not name calc.py:\n%s", block)
	case strings.Count(block, "mnemo-context project=") != 1:
		// Session 1's BeforeAgent prompt began with SessionStart's
		// context; stored with the prompt, it comes back inside the next.
		t.Errorf("session 2's <mnemo-context> quotes an earlier <mnemo-context>: Mnemo re-ingested its own output:\n%s", block)
	}
	h.save("session2-context.txt", []byte(block))

	var sessions memory.SessionsResult
	h.mnemoJSON(t, mnemoBin, &sessions, "sessions")
	byID := map[string]memory.Session{}
	for _, s := range sessions.Sessions {
		byID[s.ContentSessionID] = s
	}
	for _, id := range []string{firstID, secondID} {
		s, ok := byID["gemini:"+id]
		if !ok || s.Platform != "gemini" || s.Project != filepath.Base(h.Project) || s.PromptCounter != 1 {
			t.Errorf("session gemini:%s: %+v (found %t)", id, s, ok)
		}
	}
	// SessionEnd runs in the CLI's exit cleanup; session 1 is over.
	if s := byID["gemini:"+firstID]; s.Status != memory.StatusCompleted {
		t.Errorf("session 1 is %q, want %q", s.Status, memory.StatusCompleted)
	}
	if len(byID) != 2 {
		t.Errorf("mnemo sessions lists %d sessions, want the two gemini sessions: %+v", len(byID), sessions.Sessions)
	}
	harness.CheckLogs(t, h.MnemoHome, true)
}
