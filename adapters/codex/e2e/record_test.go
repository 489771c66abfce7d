//go:build e2e

package e2e_test

// The hook contract of the real CLI, recorded: what Codex sends each hook
// (compared with, and with -update written to, ../testdata/payloads) and
// which answers it accepts.

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/mnemo-dev/mnemo/adapters/claudecode/e2e/harness"
)

var updatePayloads = flag.Bool("update", false, "rewrite ../testdata/payloads from TestCodexHookPayloads's recording")

// recorderEvents are the events the recorder hook is installed for.
var recorderEvents = []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"}

// recorderScript keeps each payload as RECORD_DIR/<ns>-<event>.json and
// prints $RECORD_ANSWER_<event>, or {} when it is unset.
const recorderScript = `#!/bin/sh
set -eu
f="$RECORD_DIR/$(date +%s%N)-$1.json"
cat > "$f"
eval "answer=\${RECORD_ANSWER_$1-\{\}}"
printf '%s\n' "$answer"
`

// installRecorder writes the recorder and a user hooks.json that runs it
// for recorderEvents, trusts it, and returns the folder the payloads go to.
func (h *world) installRecorder(t *testing.T) string {
	t.Helper()
	dir := h.writeRecorder(t, h.hooksPath())
	trustHooks(t, h.configPath(), h.hooksPath())
	return dir
}

// writeRecorder writes the recorder and a hooks.json at hooksPath that runs
// it for recorderEvents, and returns the folder the payloads go to.
func (h *world) writeRecorder(t *testing.T, hooksPath string) string {
	t.Helper()
	dir := harness.Mkdir(t, h.Base, "payloads")
	script := filepath.Join(h.Base, "record.sh")
	if err := os.WriteFile(script, []byte(recorderScript), 0o755); err != nil {
		t.Fatal(err)
	}
	file := hooksFile{Hooks: map[string][]hookGroup{}}
	all := "*"
	timeout := 30
	for _, ev := range recorderEvents {
		g := hookGroup{Hooks: []hookHandler{{Type: "command", Command: script + " " + ev, Timeout: &timeout}}}
		if ev == "PreToolUse" || ev == "PostToolUse" {
			g.Matcher = &all
		}
		file.Hooks[ev] = []hookGroup{g}
	}
	data, err := json.MarshalIndent(file, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(hooksPath), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hooksPath, data, 0o600); err != nil {
		t.Fatal(err)
	}
	h.extraEnv = append(h.extraEnv, "RECORD_DIR="+dir)
	return dir
}

// recordedPayload is one payload the recorder kept.
type recordedPayload struct {
	Event string
	Raw   []byte
	Data  map[string]any
}

func readRecorded(t *testing.T, dir string) []recordedPayload {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(names) // <ns>-<event>.json: in the order they ran
	var out []recordedPayload
	for _, name := range names {
		raw, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		p := recordedPayload{Raw: raw}
		if err := json.Unmarshal(raw, &p.Data); err != nil {
			t.Fatalf("%s: %v\n%s", name, err, raw)
		}
		base := strings.TrimSuffix(filepath.Base(name), ".json")
		p.Event = base[strings.IndexByte(base, '-')+1:]
		out = append(out, p)
	}
	return out
}

func (p recordedPayload) str(key string) string {
	s, _ := p.Data[key].(string)
	return s
}

// scrub replaces the harness's absolute paths by placeholders.
func (h *world) scrub(data []byte) []byte {
	for _, r := range []struct{ path, name string }{
		{h.Project, "$PROJECT"}, {h.codexHome, "$CODEX_HOME"}, {h.Home, "$HOME"}, {h.Tmp, "$TMPDIR"},
	} {
		data = bytes.ReplaceAll(data, []byte(r.path), []byte(r.name))
	}
	return data
}

// TestCodexHookPayloads: a recorder hook installed for every event Mnemo
// needs gets, over the fix-calc session, the payloads of
// ../testdata/payloads: the same events with the same fields, tool names and
// value types. SessionStart's and UserPromptSubmit's additionalContext reach
// the model as developer messages, before and after the prompt.
func TestCodexHookPayloads(t *testing.T) {
	h := newHarness(t)
	dir := h.installRecorder(t)
	h.extraEnv = append(h.extraEnv,
		`RECORD_ANSWER_SessionStart={"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"CTX_SESSIONSTART_7F3A"}}`,
		`RECORD_ANSWER_UserPromptSubmit={"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"CTX_USERPROMPT_91C2"}}`)
	run := h.runFixCalc(t)

	got := readRecorded(t, dir)
	var events []string
	for _, p := range got {
		events = append(events, p.Event)
	}
	pair := []string{"PreToolUse", "PostToolUse"}
	want := slices.Concat([]string{"SessionStart", "UserPromptSubmit"}, pair, pair, pair, pair, pair, []string{"Stop"})
	if !slices.Equal(events, want) {
		t.Fatalf("hook events %v, want %v", events, want)
	}
	thread := run.threadID(t)
	for _, p := range got {
		if p.str("session_id") != thread || p.str("cwd") != h.Project || p.str("hook_event_name") != p.Event {
			t.Errorf("%s: session_id %q cwd %q hook_event_name %q, want %q %q %q",
				p.Event, p.str("session_id"), p.str("cwd"), p.str("hook_event_name"), thread, h.Project, p.Event)
		}
	}

	// Name each recording as its testdata file, then compare the shapes.
	named := map[string]recordedPayload{}
	for _, n := range []struct {
		name string
		at   int
		tool string
	}{
		{"SessionStart.json", 0, ""},
		{"UserPromptSubmit.json", 1, ""},
		{"PostToolUse-Bash.json", 3, "Bash"},               // cat calc.py
		{"PreToolUse-apply_patch.json", 4, "apply_patch"},  // fix add
		{"PostToolUse-apply_patch.json", 5, "apply_patch"}, // fix add
		{"PreToolUse-Bash.json", 6, "Bash"},                // sh test.sh
		{"PostToolUse-Bash-failed.json", 7, "Bash"},        // sh test.sh, exit 1
		{"Stop.json", 12, ""},                              // the end of the turn
	} {
		p := got[n.at]
		if p.str("tool_name") != n.tool {
			t.Errorf("%s: tool_name %q, want %q", n.name, p.str("tool_name"), n.tool)
		}
		named[n.name] = p
	}

	// A resumed session: SessionStart again, and a patch that adds a file.
	h.srv.register(script{Name: "add-notes", Steps: []step{
		{Calls: []call{{Patch: "*** Begin Patch\n*** Add File: NOTES.md\n+add and mul are fixed.\n*** End Patch\n"}}},
		{Text: "Wrote NOTES.md."},
	}})
	resumed := h.exec("add-notes", "SCENARIO:add-notes write down what we fixed", "resume", thread)
	resumed.mustSucceed(t)
	if resumed.threadID(t) != thread {
		t.Errorf("the resumed session is thread %s, want %s", resumed.threadID(t), thread)
	}
	more := readRecorded(t, dir)[len(got):]
	events = events[:0]
	for _, p := range more {
		events = append(events, p.Event)
	}
	if want := slices.Concat([]string{"SessionStart", "UserPromptSubmit"}, pair, []string{"Stop"}); !slices.Equal(events, want) {
		t.Fatalf("resumed session's hook events %v, want %v", events, want)
	}
	named["SessionStart-resume.json"] = more[0]
	named["PostToolUse-apply_patch-add.json"] = more[3]
	for _, tc := range []struct {
		name, field, want string
	}{
		{"PostToolUse-Bash.json", "tool_input.command", "cat calc.py"},
		{"PostToolUse-Bash.json", "tool_response", "def mul(a, b):"},
		{"PostToolUse-Bash-failed.json", "tool_response", "mul(2, 3) should be 6"},
		{"PreToolUse-apply_patch.json", "tool_input.command", "*** Update File: calc.py"},
		{"PostToolUse-apply_patch.json", "tool_response", "Success. Updated the following files:\nM calc.py"},
		{"UserPromptSubmit.json", "prompt", "SCENARIO:fix-calc make sh test.sh pass"},
		{"Stop.json", "last_assistant_message", fixCalcDone},
		{"SessionStart.json", "source", "startup"},
		{"SessionStart-resume.json", "source", "resume"},
		{"PostToolUse-apply_patch-add.json", "tool_input.command", "*** Add File: NOTES.md"},
		{"PostToolUse-apply_patch-add.json", "tool_response", "A NOTES.md"},
	} {
		if v := lookup(named[tc.name].Data, tc.field); !strings.Contains(fmt.Sprint(v), tc.want) {
			t.Errorf("%s: %s = %q, want it to contain %q", tc.name, tc.field, v, tc.want)
		}
	}
	for name, p := range named {
		scrubbed := h.scrub(p.Raw)
		h.save("payload-"+name, scrubbed)
		path := filepath.Join("..", "testdata", "payloads", name)
		if *updatePayloads {
			var pretty bytes.Buffer // the CLI's field order, indented
			if err := json.Indent(&pretty, bytes.TrimSpace(scrubbed), "", "  "); err != nil {
				t.Fatal(err)
			}
			pretty.WriteByte('\n')
			if err := os.WriteFile(path, pretty.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%s: %v (run with -update to record it)", name, err)
			continue
		}
		var old map[string]any
		if err := json.Unmarshal(data, &old); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if a, b := shape(old), shape(p.Data); a != b {
			t.Errorf("%s: Codex now sends another shape (run with -update to record it)\n testdata: %s\n recorded: %s", name, a, b)
		}
	}

	// The hooks' context reaches the model.
	first := h.srv.requests("fix-calc")[0].req
	var order []string
	for _, it := range first.Input {
		switch text := it.Text(); {
		case it.Role == "developer" && strings.Contains(text, "CTX_SESSIONSTART_7F3A"):
			order = append(order, "SessionStart context")
		case it.Role == "developer" && strings.Contains(text, "CTX_USERPROMPT_91C2"):
			order = append(order, "UserPromptSubmit context")
		case it.isPrompt():
			order = append(order, "prompt")
		}
	}
	if want := []string{"SessionStart context", "prompt", "UserPromptSubmit context"}; !slices.Equal(order, want) {
		t.Errorf("the first request's developer contexts and prompt are in the order %v, want %v", order, want)
	}
}

// lookup follows a dotted path in decoded JSON.
func lookup(v any, path string) any {
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// shape describes decoded JSON by its keys and value types, recursively.
func shape(v any) string {
	switch v := v.(type) {
	case map[string]any:
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(v)) {
			parts = append(parts, k+":"+shape(v[k]))
		}
		return "{" + strings.Join(parts, ",") + "}"
	case []any:
		return "[]"
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "bool"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

// TestCodexHookAnswers: the answers Mnemo's hook prints are accepted by
// Codex on every event: {} everywhere, and hookSpecificOutput with
// additionalContext at SessionStart and UserPromptSubmit. An answer with an
// unknown field is refused (so "Completed" is not what Codex says of
// anything).
func TestCodexHookAnswers(t *testing.T) {
	h := newHarness(t)
	h.installRecorder(t)
	h.srv.register(script{Name: "answers", Steps: []step{
		{Calls: []call{{Shell: "true"}}},
		{Text: "done"},
	}})
	context := func(ev string) string {
		return fmt.Sprintf(`RECORD_ANSWER_%s={"hookSpecificOutput":{"hookEventName":"%s","additionalContext":"CTX_%s"}}`, ev, ev, ev)
	}
	for _, tc := range []struct {
		label string
		env   []string
		want  []string
	}{
		{"empty-objects", nil, // the recorder prints {} when no answer is set
			[]string{"SessionStart Completed", "UserPromptSubmit Completed", "PreToolUse Completed", "PostToolUse Completed", "Stop Completed"}},
		{"contexts", []string{context("SessionStart"), context("UserPromptSubmit")},
			[]string{"SessionStart Completed", "UserPromptSubmit Completed", "PreToolUse Completed", "PostToolUse Completed", "Stop Completed"}},
		{"unknown-field", []string{`RECORD_ANSWER_SessionStart={"bogus":1}`, `RECORD_ANSWER_Stop={"bogus":1}`},
			[]string{"SessionStart Failed", "UserPromptSubmit Completed", "PreToolUse Completed", "PostToolUse Completed", "Stop Failed"}},
	} {
		t.Run(tc.label, func(t *testing.T) {
			saved := h.extraEnv
			h.extraEnv = append(slices.Clone(saved), tc.env...)
			defer func() { h.extraEnv = saved }()
			before := len(h.srv.requests("answers"))
			// Without --json, codex exec reports each hook run on stderr.
			run := h.run("answers-"+tc.label, "exec", "SCENARIO:answers run true")
			if run.Exit != 0 {
				t.Fatalf("codex exited %d:\n%s", run.Exit, run.Stderr)
			}
			if got := run.hookStatuses(); !slices.Equal(got, tc.want) {
				t.Errorf("hook runs %v, want %v", got, tc.want)
			}
			reqs := h.srv.requests("answers")[before:]
			if len(reqs) != 2 {
				t.Fatalf("the model got %d requests, want 2", len(reqs))
			}
			devs := strings.Join(reqs[0].req.Messages("developer"), "\n")
			for _, ev := range []string{"SessionStart", "UserPromptSubmit"} {
				if sent := strings.Contains(devs, "CTX_"+ev); sent != (tc.label == "contexts") {
					t.Errorf("%s's context sent to the model: %t", ev, sent)
				}
			}
		})
	}
}

// TestCodexProjectHooks: hooks in the project's .codex/hooks.json (what
// `mnemo install codex --scope project` writes) run only when Codex trusts
// both the project (a [projects."<dir>"] table with trust_level "trusted",
// as `codex exec --trust` writes) and the hooks (their hooks.state, keyed by
// the project hooks file's path). Either alone runs nothing.
func TestCodexProjectHooks(t *testing.T) {
	h := newHarness(t)
	hooks := filepath.Join(h.Project, ".codex", "hooks.json")
	dir := h.writeRecorder(t, hooks)
	h.srv.register(script{Name: "project-hooks", Steps: []step{{Text: "done"}}})
	run := func(label string) []string {
		t.Helper()
		r := h.exec(label, "SCENARIO:project-hooks say done")
		r.mustSucceed(t)
		var events []string
		for _, p := range readRecorded(t, dir) {
			events = append(events, p.Event)
		}
		for _, name := range mustGlob(t, filepath.Join(dir, "*.json")) {
			if err := os.Remove(name); err != nil {
				t.Fatal(err)
			}
		}
		return events
	}
	trustProject := fmt.Sprintf("\n[projects.%s]\ntrust_level = \"trusted\"\n", strconv.Quote(h.Project))

	// The hooks trusted, the project not.
	if added := trustHooks(t, h.configPath(), hooks); len(added) != len(recorderEvents) {
		t.Fatalf("trusted %d hooks, want %d", len(added), len(recorderEvents))
	}
	if got := run("hooks-trusted"); len(got) != 0 {
		t.Errorf("hooks of an untrusted project ran: %v", got)
	}
	// Both trusted.
	appendFile(t, h.configPath(), trustProject)
	if got := run("both-trusted"); !slices.Equal(got, []string{"SessionStart", "UserPromptSubmit", "Stop"}) {
		t.Errorf("the project's hooks ran for %v, want SessionStart, UserPromptSubmit and Stop", got)
	}
	// The project trusted, the hooks not: a fresh config.toml.
	h.writeConfig()
	appendFile(t, h.configPath(), trustProject)
	if got := run("project-trusted"); len(got) != 0 {
		t.Errorf("untrusted hooks of a trusted project ran: %v", got)
	}
}

func mustGlob(t *testing.T, pattern string) []string {
	t.Helper()
	names, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatal(err)
	}
	return names
}

func appendFile(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}
