//go:build e2e

package e2e_test

// Mnemo with the real Codex CLI. These tests run once bin/mnemo and
// bin/mnemo-hook exist (or MNEMO_BIN / MNEMO_HOOK_BIN name them) and skip
// until then. What they assume of Mnemo's command line is kept in the
// variables below:
//
//   - `mnemo install codex` writes $CODEX_HOME/hooks.json with, for each of
//     codexStages, a command hook running `<abs mnemo-hook> --host codex
//     <Event>`. Where this mnemo has no `install codex` yet, the test writes
//     that file itself (and says so in its log);
//   - Codex runs a hooks.json hook only once it is trusted; the test trusts
//     whatever Mnemo's hooks.json holds that config.toml does not trust yet,
//     as the TUI's "Trust all" does (hooktrust_test.go), and logs it;
//   - `mnemo context`, run in the project, prints what SessionStart would
//     inject; `mnemo sessions` lists the sessions; `mnemo daemon stop` stops
//     the daemon; logs go to $MNEMO_HOME/logs/.

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/adapters/claudecode/e2e/harness"
	"github.com/mnemo-dev/mnemo/adapters/hosts"
	"github.com/mnemo-dev/mnemo/memory"
)

var (
	// mnemoInstallCodexArgs installs the hooks into $CODEX_HOME/hooks.json.
	mnemoInstallCodexArgs = []string{"install", "codex"}
	// mnemoInstallClaudeArgs installs the hooks into $HOME/.claude/settings.json.
	mnemoInstallClaudeArgs = []string{"install", "claude-code", "--scope", "user"}
	mnemoSessionsArgs      = []string{"sessions"}
	// codexStages are the Codex events Mnemo's hooks run on.
	codexStages = []string{"SessionStart", "UserPromptSubmit", "PostToolUse", "Stop"}
	// hookTimeout is the timeout (seconds) of the hooks.json the test writes
	// when mnemo cannot.
	hookTimeout = 30
	// memoryWait bounds the wait for a session's events to become context.
	memoryWait = 30 * time.Second
)

// mnemo runs the mnemo command line in the project, with the CLIs'
// environment (same HOME, CODEX_HOME and MNEMO_HOME), and returns its
// combined output.
func (h *world) mnemo(ctx context.Context, bin string, args ...string) (string, error) {
	return harness.Command(ctx, h.Project, h.env(), bin, args...)
}

func (h *world) mustMnemo(t *testing.T, bin string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := h.mnemo(ctx, bin, args...)
	if err != nil {
		t.Fatalf("mnemo %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// stopMnemoAtEnd stops the daemon the hooks started when the test ends, and
// keeps Mnemo's logs among the artifacts.
func (h *world) stopMnemoAtEnd(t *testing.T, mnemoBin string) {
	harness.StopDaemonAtEnd(t, h.MnemoHome, mnemoBin, h.mnemo)
}

// installMnemoCodex puts mnemo on the CLIs' PATH, installs Mnemo's Codex
// hooks (`mnemo install codex`, else a hooks.json of the contract's shape),
// checks them and makes Codex trust them.
func (h *world) installMnemoCodex(t *testing.T, mnemoBin, hookBin string) {
	t.Helper()
	h.path = append(h.path, filepath.Dir(mnemoBin))
	h.stopMnemoAtEnd(t, mnemoBin)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := h.mnemo(ctx, mnemoBin, mnemoInstallCodexArgs...)
	if _, statErr := os.Stat(h.hooksPath()); err != nil || statErr != nil {
		t.Logf("NOTE mnemo %s did not install the hooks (%v, %v): the test writes %s itself\n%s",
			strings.Join(mnemoInstallCodexArgs, " "), err, statErr, h.hooksPath(), out)
		h.writeMnemoHooks(t, hookBin)
	} else {
		t.Logf("mnemo %s:\n%s", strings.Join(mnemoInstallCodexArgs, " "), out)
	}

	data, err := os.ReadFile(h.hooksPath())
	if err != nil {
		t.Fatal(err)
	}
	h.save("hooks.json", data)
	var file hooksFile
	if err := json.Unmarshal(data, &file); err != nil {
		t.Fatalf("hooks.json: %v\n%s", err, data)
	}
	for _, stage := range codexStages {
		found := false
		for _, g := range file.Hooks[stage] {
			for _, hk := range g.Hooks {
				f := strings.Fields(hk.Command)
				found = found || hk.Type == "command" && len(f) > 0 && strings.Trim(f[0], `"'`) == hookBin && f[len(f)-1] == stage
			}
		}
		if !found {
			t.Errorf("hooks.json has no %s hook running %s … %s:\n%s", stage, hookBin, stage, data)
		}
	}
	if added := trustHooks(t, h.configPath(), h.hooksPath()); len(added) > 0 {
		t.Logf("NOTE Codex did not trust Mnemo's hooks yet: the test trusted %d of them in config.toml, as the TUI's \"Trust all\" would", len(added))
	}
}

// writeMnemoHooks writes $CODEX_HOME/hooks.json as `mnemo install codex`
// is to: `<abs mnemo-hook> --host codex <Event>` for each of codexStages.
func (h *world) writeMnemoHooks(t *testing.T, hookBin string) {
	t.Helper()
	file := hooksFile{Hooks: map[string][]hookGroup{}}
	for _, stage := range codexStages {
		file.Hooks[stage] = []hookGroup{{Hooks: []hookHandler{{
			Type: "command", Command: hookBin + " --host codex " + stage, Timeout: &hookTimeout}}}}
	}
	data, err := json.MarshalIndent(file, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(h.hooksPath(), append(data, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
}

// waitForContext polls `mnemo context` until it names want.
func (h *world) waitForContext(t *testing.T, mnemoBin, want string) string {
	t.Helper()
	return harness.WaitForContext(t, memoryWait, want, mnemoBin, h.mnemo)
}

// mnemoContext extracts a <mnemo-context> block.
var mnemoContext = regexp.MustCompile(`(?s)<mnemo-context[^>]*>.*?</mnemo-context>`)

// recallScript answers session 2's question in one reply.
func recallScript() script {
	return script{Name: "recall", Steps: []step{{Text: "Last time we fixed add and mul in calc.py."}}}
}

// checkRecall runs session 2 and checks that its first model request
// carries a <mnemo-context> that names want, in a developer message before
// the prompt, as SessionStart's hook context. It returns the block.
func (h *world) checkRecall(t *testing.T, want string) (*codexRun, string) {
	t.Helper()
	h.srv.register(recallScript())
	run := h.exec("recall", "SCENARIO:recall what did we change last time?")
	run.mustSucceed(t)
	reqs := h.srv.requests("recall")
	if len(reqs) == 0 {
		t.Fatal("session 2 sent no request to the model")
	}
	first := reqs[0]
	block := ""
	for _, it := range first.req.Input {
		if it.isPrompt() {
			break
		}
		if it.Type == "message" && it.Role == "developer" {
			if b := mnemoContext.FindString(it.Text()); b != "" {
				block = b
				break
			}
		}
	}
	switch {
	case block == "" && mnemoContext.MatchString(first.Text()):
		t.Errorf("session 2's first request has a <mnemo-context>, but not in a developer message before the prompt:\n%s", first.Text())
	case block == "":
		t.Errorf("session 2's first model request has no <mnemo-context>:\n%s", first.Text())
	case !strings.Contains(block, want):
		t.Errorf("session 2's <mnemo-context> does not name %s:\n%s", want, block)
	}
	h.save("recall-context.txt", []byte(block))
	return run, block
}

// TestMnemoRecallAcrossSessions: with Mnemo's hooks installed in Codex,
// session 1 fixes calc.py (shell commands and apply_patch edits); session 2,
// a fresh Codex session in the same project, starts with a <mnemo-context>
// that names calc.py, and the model receives it.
func TestMnemoRecallAcrossSessions(t *testing.T) {
	h := newHarness(t)
	mnemoBin, hookBin := harness.Mnemo(t, h.root)
	h.installMnemoCodex(t, mnemoBin, hookBin)

	first := h.runFixCalc(t)
	thread := first.threadID(t)
	h.checkSession(t, mnemoBin, thread)
	h.save("context-after-session-1.txt", []byte(h.waitForContext(t, mnemoBin, "calc.py")))
	h.checkEdited(t, mnemoBin, "calc.py")

	second, _ := h.checkRecall(t, "calc.py")
	if second.threadID(t) == thread {
		t.Error("session 2 reused session 1's thread")
	}
	h.save("sessions.txt", []byte(h.mustMnemo(t, mnemoBin, mnemoSessionsArgs...)))
	harness.CheckLogs(t, h.MnemoHome, false)
}

// mnemoSession is one session of `mnemo sessions --json`.
type mnemoSession struct {
	ContentSessionID string `json:"contentSessionId"`
	Platform         string `json:"platform"`
	Project          string `json:"project"`
	PromptCounter    int    `json:"promptCounter"`
}

func (h *world) sessions(t *testing.T, mnemoBin string) []mnemoSession {
	t.Helper()
	out := h.mustMnemo(t, mnemoBin, append(slices.Clone(mnemoSessionsArgs), "--json")...)
	var list struct {
		Sessions []mnemoSession `json:"sessions"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("mnemo sessions --json: %v\n%s", err, out)
	}
	return list.Sessions
}

// checkSession fails unless Mnemo recorded the Codex session, with one
// prompt, as codex:<thread> on platform codex.
func (h *world) checkSession(t *testing.T, mnemoBin, thread string) {
	t.Helper()
	want := "codex:" + thread
	list := h.sessions(t, mnemoBin)
	for _, s := range list {
		if s.ContentSessionID == want && s.Platform == "codex" && s.PromptCounter == 1 {
			return
		}
	}
	t.Fatalf("mnemo sessions has no session %s on platform codex with one prompt: did the hooks run? %+v", want, list)
}

// checkEdited fails unless an observation lists file among the files the
// session modified (the apply_patch edits, normalised).
func (h *world) checkEdited(t *testing.T, mnemoBin, file string) {
	t.Helper()
	out := h.mustMnemo(t, mnemoBin, "search", "--json", "--file", file)
	var hits struct {
		Hits []struct {
			ID int64 `json:"id"`
		} `json:"hits"`
	}
	if err := json.Unmarshal([]byte(out), &hits); err != nil {
		t.Fatalf("mnemo search --json: %v\n%s", err, out)
	}
	args := []string{"get", "--json"}
	for _, hit := range hits.Hits {
		args = append(args, strconv.FormatInt(hit.ID, 10))
	}
	if len(args) == 2 {
		t.Fatalf("no observation touches %s", file)
	}
	out = h.mustMnemo(t, mnemoBin, args...)
	var got struct {
		Observations []struct {
			Title         string   `json:"title"`
			Tool          string   `json:"tool"`
			FilesModified []string `json:"filesModified"`
		} `json:"observations"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("mnemo get --json: %v\n%s", err, out)
	}
	for _, o := range got.Observations {
		for _, f := range o.FilesModified {
			if f == file || strings.HasSuffix(f, "/"+file) {
				return
			}
		}
	}
	t.Errorf("no observation lists %s as modified (the apply_patch edits):\n%s", file, out)
}

// recalledID matches one line of a prompt's recall and captures its id.
var recalledID = regexp.MustCompile(`(?m)^- #(\d+) · `)

// TestMnemoPromptRecall: session 1 fixes calc.py. Session 2's SessionStart
// context has room for the last summary only (contextBytes 512), so its
// prompt about the fix gets session 1's observations from Codex's
// UserPromptSubmit hook, as a developer message after the prompt, within
// the prompt recall's budget and without what SessionStart already gave.
func TestMnemoPromptRecall(t *testing.T) {
	h := newHarness(t)
	mnemoBin, hookBin := harness.Mnemo(t, h.root)
	if err := os.WriteFile(filepath.Join(h.MnemoHome, "settings.json"), []byte(`{"contextBytes": 512}`), 0o600); err != nil {
		t.Fatal(err)
	}
	h.extraEnv = append(h.extraEnv, "MNEMO_LOG_LEVEL=debug") // the hook logs what it answered
	h.installMnemoCodex(t, mnemoBin, hookBin)
	h.runFixCalc(t)
	h.waitForContext(t, mnemoBin, "calc.py")

	h.srv.register(script{Name: "prompt-recall", Steps: []step{{Text: "We fixed add and mul in calc.py."}}})
	// The prompt is what a person would type: the script's marker goes in
	// the developer instructions, where the hook does not see it.
	run := h.exec("prompt-recall", "what did we change in calc.py to make sh test.sh pass?",
		"-c", `developer_instructions="SCENARIO:prompt-recall"`)
	run.mustSucceed(t)
	reqs := h.srv.requests("prompt-recall")
	if len(reqs) == 0 {
		t.Fatal("session 2 sent no request to the model")
	}
	var start, recall string
	afterPrompt := false
	for _, it := range reqs[0].req.Input {
		switch {
		case it.isPrompt():
			afterPrompt = true
		case it.Type == "message" && it.Role == "developer" && mnemoContext.MatchString(it.Text()):
			if afterPrompt {
				recall = mnemoContext.FindString(it.Text())
			} else {
				start = mnemoContext.FindString(it.Text())
			}
		}
	}
	h.save("prompt-recall.txt", []byte(start+"\n\n"+recall))
	ids := recalledID.FindAllStringSubmatch(recall, -1)
	switch {
	case start == "":
		t.Errorf("no SessionStart <mnemo-context> before the prompt:\n%s", reqs[0].Text())
	case recall == "":
		t.Fatalf("no prompt recall after the prompt:\n%s", reqs[0].Text())
	case !strings.Contains(recall, `source="prompt"`) || !strings.Contains(recall, "calc.py"):
		t.Errorf("the recall is not a <mnemo-context> of source prompt naming calc.py:\n%s", recall)
	case len(ids) == 0 || len(ids) > memory.MaxPromptContextItems || len(recall) > memory.MaxPromptContextBytes:
		t.Errorf("the recall has %d memories in %d bytes (budget %d, %d bytes):\n%s",
			len(ids), len(recall), memory.MaxPromptContextItems, memory.MaxPromptContextBytes, recall)
	}
	for _, id := range ids {
		if strings.Contains(start, "#"+id[1]+" ") {
			t.Errorf("#%s was recalled though SessionStart's context gave it:\n%s", id[1], start)
		}
	}

	// Every hook run was read as Codex's, the patches as edits, each
	// within its deadline.
	var events, tools []string
	for _, m := range delivered.FindAllStringSubmatch(harness.Logs(t, h.MnemoHome)["hook.log"], -1) {
		event, host, tool, took := m[1], m[2], m[3], m[4]
		events = append(events, event)
		if tool != "" {
			tools = append(tools, tool)
		}
		d, err := time.ParseDuration(took)
		switch {
		case host != "codex":
			t.Errorf("a %s hook ran for host %q", event, host)
		case err != nil || event != "SessionStart" && d >= hosts.EventBudget:
			t.Errorf("a %s hook took %s (budget %v)", event, took, hosts.EventBudget)
		}
		t.Logf("TIMING hook %s: %s", event, took)
	}
	// Codex 0.169.0 also fires SessionEnd (reason "other") as a session
	// closes; mnemo install codex hooks it.
	wantEvents := []string{"SessionStart", "UserPromptSubmit", "PostToolUse", "PostToolUse", "PostToolUse", "PostToolUse",
		"PostToolUse", "Stop", "SessionEnd", "SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"}
	if !slices.Equal(events, wantEvents) {
		t.Errorf("hook.log records the events %v, want %v", events, wantEvents)
	}
	if want := []string{"Bash", "Edit", "Bash", "Edit", "Bash"}; !slices.Equal(tools, want) {
		t.Errorf("hook.log records the tools %v, want %v (apply_patch read as Edit)", tools, want)
	}
	harness.CheckLogs(t, h.MnemoHome, false)
}

// delivered matches the hook log's debug record of a delivered event and
// captures the event, the host, the tool (PostToolUse) and how long the hook
// took.
var delivered = regexp.MustCompile(`(?m)msg=(?:delivered|journaled) event=(\w+) session=\S+ host=(\S+)(?: tool=(\S+))?.* took=(\S+)`)
