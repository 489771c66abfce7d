//go:build e2e

package e2e_test

// The tests of OpenCode with Mnemo: its plugin installed for the user, its
// real hook and daemon. They run once bin/mnemo and bin/mnemo-hook exist
// (or MNEMO_BIN / MNEMO_HOOK_BIN name them) and skip until then. What they
// assume of Mnemo's command line is kept in the variables below:
//
//   - `mnemo install opencode --scope user` copies the plugin to
//     $XDG_CONFIG_HOME/opencode/plugins/mnemo.js with the hook's absolute
//     path written in; until that command exists the test installs the
//     plugin itself with OpenCode's installer (what the command is to call);
//   - `mnemo context`, run in the project, prints what SessionStart would
//     inject; `mnemo search --json QUERY` the hits;
//   - `mnemo daemon stop` stops the daemon the hooks started;
//   - logs go to $MNEMO_HOME/logs/, hook.log records each delivered event
//     at debug level.

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/adapters/claudecode/e2e/harness"
	"github.com/mnemo-dev/mnemo/adapters/hosts"
	"github.com/mnemo-dev/mnemo/adapters/hosts/install"
	"github.com/mnemo-dev/mnemo/adapters/opencode"
)

var (
	// mnemoInstallArgs installs the plugin for the user.
	mnemoInstallArgs = []string{"install", "opencode", "--scope", "user"}
	// memoryWait bounds the wait for session 1's events to become context.
	memoryWait = 30 * time.Second
)

// mnemo runs the mnemo command line in the project, with the CLI's
// environment (same HOME, XDG folders and MNEMO_HOME).
func (h *world) mnemo(ctx context.Context, bin string, args ...string) (string, error) {
	return harness.Command(ctx, h.Project, h.env(), bin, args...)
}

// installMnemo installs Mnemo's plugin for the user and checks that the
// installed copy names hookBin. It stops the daemon and saves Mnemo's logs
// at the end of the test.
func (h *world) installMnemo(t *testing.T, mnemoBin, hookBin string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	harness.StopDaemonAtEnd(t, h.MnemoHome, mnemoBin, h.mnemo)

	path := filepath.Join(h.config, "opencode", "plugins", opencode.PluginName)
	t.Setenv("XDG_CONFIG_HOME", h.config)
	in, _ := install.For(hosts.OpenCode)
	if got, err := in.HooksPath(install.ScopeUser, "", h.Home); err != nil || got != path {
		t.Fatalf("OpenCode's plugin path (user) = %q, %v; want %s", got, err, path)
	}
	help, _ := h.mnemo(ctx, mnemoBin, "install", "--help")
	if strings.Contains(help, "opencode") {
		if out, err := h.mnemo(ctx, mnemoBin, mnemoInstallArgs...); err != nil {
			t.Fatalf("mnemo %s: %v\n%s", strings.Join(mnemoInstallArgs, " "), err, out)
		}
	} else {
		t.Logf("mnemo has no `install opencode` yet: installing the plugin with OpenCode's installer (%s, %s)", path, hookBin)
		if _, err := in.Install(path, install.Options{HookPath: hookBin}); err != nil {
			t.Fatal(err)
		}
	}
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the installed plugin: %v", err)
	}
	want, _ := json.Marshal(hookBin)
	if !strings.Contains(string(src), "const INSTALLED_HOOK_BIN = "+string(want)+";") {
		t.Fatalf("the installed plugin does not name %s:\n%.600s", hookBin, src)
	}
}

// delivered is one event hook.log records as delivered to the daemon.
type delivered struct {
	Event, Session, Tool string
	Took                 time.Duration
}

var deliveredLine = regexp.MustCompile(`msg=(?:delivered|journaled) event=(\S+) session=(\S+) host=(\S+)(?: tool=(\S+))?.* took=(\S+)`)

// deliveredEvents reads hook.log's delivered events of one session
// (host-namespaced id), in order.
func deliveredEvents(t *testing.T, mnemoHome, session string) []delivered {
	t.Helper()
	var out []delivered
	for _, m := range deliveredLine.FindAllStringSubmatch(harness.Logs(t, mnemoHome)["hook.log"], -1) {
		if m[2] != session {
			continue
		}
		if m[3] != "opencode" {
			t.Errorf("hook.log: an event of session %s delivered for host %s", session, m[3])
		}
		took, err := time.ParseDuration(m[5])
		if err != nil {
			t.Errorf("hook.log: took=%s: %v", m[5], err)
		}
		out = append(out, delivered{Event: m[1], Session: m[2], Tool: m[4], Took: took})
	}
	return out
}

// waitDelivered polls hook.log until the session's delivered events
// include every one of want (event or event/tool), and returns them.
func waitDelivered(t *testing.T, mnemoHome, session string, want []string) []delivered {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		got := deliveredEvents(t, mnemoHome, session)
		var names []string
		for _, d := range got {
			names = append(names, d.Event, d.Event+"/"+d.Tool)
		}
		missing := slices.DeleteFunc(slices.Clone(want), func(w string) bool { return slices.Contains(names, w) })
		if len(missing) == 0 {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("hook.log: session %s lacks %v; delivered: %v", session, missing, got)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitForContext polls `mnemo context` until it names want.
func (h *world) waitForContext(t *testing.T, mnemoBin, want string) string {
	t.Helper()
	return harness.WaitForContext(t, memoryWait, want, mnemoBin, h.mnemo)
}

// fixCalcPrompt is session 1's prompt.
const fixCalcPrompt = "make sh test.sh pass"

// runFixCalc is session 1: the model reads calc.py, fixes add, runs sh
// test.sh, which fails on mul, fixes mul and runs it again, which passes.
// It checks the run, the file and the results the model got, and returns
// the run.
func (h *world) runFixCalc(t *testing.T) *cliRun {
	t.Helper()
	calc := filepath.Join(h.Project, "calc.py")
	test := map[string]any{"command": "sh test.sh", "description": "Run the tests"}
	h.srv.Script("fix-calc",
		step{Tool: "read", Args: map[string]any{"filePath": calc}},
		step{Tool: "edit", Args: map[string]any{"filePath": calc, "oldString": "    return a - b", "newString": "    return a + b"}},
		step{Tool: "bash", Args: test},
		step{Tool: "edit", Args: map[string]any{"filePath": calc, "oldString": "def mul(a, b):\n    return a + b", "newString": "def mul(a, b):\n    return a * b"}},
		step{Tool: "bash", Args: test},
		step{Text: "Fixed add and mul in calc.py; sh test.sh passes."},
	)
	run := h.opencode("fix-calc", fixCalcPrompt)
	run.mustSucceed(t)

	var tools []string
	for _, tl := range run.tools() {
		tools = append(tools, tl.Part.Tool+":"+tl.Part.State.Status)
	}
	if want := []string{"read:completed", "edit:completed", "bash:completed", "edit:completed", "bash:completed"}; !slices.Equal(tools, want) {
		t.Fatalf("session 1 ran %v, want %v\nstdout:\n%s", tools, want, run.Stdout)
	}
	if b, _ := os.ReadFile(calc); !strings.Contains(string(b), "return a + b") || !strings.Contains(string(b), "return a * b") {
		t.Fatalf("calc.py is not fixed:\n%s", b)
	}
	reqs := h.srv.Requests("fix-calc")
	if len(reqs) != 6 {
		t.Fatalf("the model got %d requests in session 1, want 6", len(reqs))
	}
	if out, ok := reqs[3].ToolResult(callID("fix-calc", 2)); !ok || !strings.Contains(out, "mul(2, 3) should be 6") {
		t.Fatalf("the first sh test.sh's result the model got (%t): %q", ok, out)
	}
	if out, ok := reqs[5].ToolResult(callID("fix-calc", 4)); !ok || !strings.Contains(out, "all tests passed") {
		t.Fatalf("the second sh test.sh's result the model got (%t): %q", ok, out)
	}
	return run
}

// mnemoContext extracts the <mnemo-context> blocks of a text.
var mnemoContext = regexp.MustCompile(`(?s)<mnemo-context[^>]*>.*?</mnemo-context>`)

// TestMnemoRecallAcrossSessions: with Mnemo's plugin installed, session 1
// fixes calc.py and runs its tests: the plugin hands every event to
// mnemo-hook, which delivers them to the daemon (SessionStart,
// UserPromptSubmit, five PostToolUse in Claude Code's tool names, Stop,
// SessionEnd). Session 2, a fresh session in the same project, starts with
// a <mnemo-context> naming calc.py in the system prompt of its model
// requests; the title generator's request has none.
func TestMnemoRecallAcrossSessions(t *testing.T) {
	h := newHarness(t, true)
	mnemoBin, hookBin := harness.Mnemo(t, h.root)
	h.extraEnv = append(h.extraEnv, "MNEMO_LOG_LEVEL=debug") // hook.log records each delivered event
	h.installMnemo(t, mnemoBin, hookBin)

	first := h.runFixCalc(t)
	session := "opencode:" + first.SessionID
	events := waitDelivered(t, h.MnemoHome, session, []string{
		"SessionStart", "UserPromptSubmit", "PostToolUse/Read", "PostToolUse/Edit", "PostToolUse/Bash", "Stop", "SessionEnd",
	})
	edits := 0
	for _, d := range events {
		t.Logf("TIMING hook %s %s: %v", d.Event, d.Tool, d.Took)
		if d.Event == "PostToolUse" && d.Tool == "Edit" {
			edits++
		}
	}
	if edits != 2 || len(events) != 9 {
		t.Errorf("session 1 delivered %d events (%d edits), want 9 (2 edits): %v", len(events), edits, events)
	}
	h.waitForContext(t, mnemoBin, "calc.py")

	h.srv.Script("recall", step{Text: "Last time we fixed add and mul in calc.py."})
	second := h.opencode("recall", "what did we change last time?")
	second.mustSucceed(t)
	if second.SessionID == first.SessionID {
		t.Error("session 2 reused session 1's id")
	}
	reqs := h.srv.Requests("recall")
	if len(reqs) == 0 {
		t.Fatal("session 2 sent no request to the model")
	}
	blocks := mnemoContext.FindAllString(reqs[0].System(), -1)
	switch {
	case len(blocks) == 0:
		t.Errorf("session 2's first model request has no <mnemo-context> in its system prompt:\n%s", reqs[0].System())
	case !strings.Contains(blocks[0], "calc.py"):
		t.Errorf("session 2's <mnemo-context> does not name calc.py:\n%s", blocks[0])
	}
	for _, r := range h.srv.Requests("") {
		if r.Script == "" && strings.Contains(r.System(), "<mnemo-context") {
			t.Errorf("the title generator's request got Mnemo's context:\n%s", r.System())
		}
	}
	waitDelivered(t, h.MnemoHome, "opencode:"+second.SessionID, []string{"SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"})

	// What session 1 left in memory is OpenCode's, about calc.py.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := h.mnemo(ctx, mnemoBin, "search", "--json", "calc.py")
	if err != nil {
		t.Fatalf("mnemo search: %v\n%s", err, out)
	}
	var res struct {
		Hits []struct {
			Title string   `json:"title"`
			Host  string   `json:"host"`
			Files []string `json:"files"`
		} `json:"hits"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("mnemo search --json: %v\n%s", err, out)
	}
	found := false
	for _, hit := range res.Hits {
		found = found || hit.Host == "opencode" && slices.Contains(hit.Files, "calc.py")
	}
	if !found {
		t.Errorf("no observation of host opencode names calc.py:\n%s", out)
	}
	harness.CheckLogs(t, h.MnemoHome, false)
	if h.dns != nil && len(h.dns.Names()) > 0 {
		t.Errorf("OpenCode with Mnemo looked up %v", h.dns.Names())
	}
}

// TestMnemoPromptRecall: session 1 fixes calc.py. Session 2's SessionStart
// context has room for the last summary only (contextBytes 512), so its
// prompt about the fix gets session 1's observations from the
// UserPromptSubmit hook; the plugin adds that recall to the system prompt
// of the turn's model request, after SessionStart's context.
func TestMnemoPromptRecall(t *testing.T) {
	h := newHarness(t, true)
	mnemoBin, hookBin := harness.Mnemo(t, h.root)
	harness.WriteFile(t, filepath.Join(h.MnemoHome, "settings.json"), `{"contextBytes": 512}`)
	h.extraEnv = append(h.extraEnv, "MNEMO_LOG_LEVEL=debug") // hook.log records each delivered event
	h.installMnemo(t, mnemoBin, hookBin)
	h.runFixCalc(t)
	h.waitForContext(t, mnemoBin, "calc.py")

	const question = "what did we change in calc.py to make sh test.sh pass?"
	h.srv.Script("prompt-recall", step{Text: "We fixed add and mul in calc.py."})
	run := h.opencode("prompt-recall", question)
	run.mustSucceed(t)
	reqs := h.srv.Requests("prompt-recall")
	if len(reqs) == 0 {
		t.Fatal("session 2 sent no request to the model")
	}
	blocks := mnemoContext.FindAllString(reqs[0].System(), -1)
	var recall string
	for _, b := range blocks {
		if strings.Contains(b, `source="prompt"`) {
			recall = b
		}
	}
	switch {
	case recall == "":
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		hits, _ := h.mnemo(ctx, mnemoBin, "search", "--json", question)
		t.Fatalf("session 2's model request has no prompt recall; its <mnemo-context> blocks:\n%s\nmnemo search for the question:\n%s", strings.Join(blocks, "\n"), hits)
	case !strings.Contains(recall, "calc.py"):
		t.Errorf("the prompt's recall names no calc.py memory:\n%s", recall)
	case len(blocks) < 2 || strings.Contains(blocks[0], `source="prompt"`):
		t.Errorf("SessionStart's context does not come first, then the recall:\n%s", strings.Join(blocks, "\n"))
	}
	harness.CheckLogs(t, h.MnemoHome, false)
}
