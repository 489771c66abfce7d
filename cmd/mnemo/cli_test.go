package main_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// mnemoFails runs mnemo, expects a failure, and returns its stderr and
// stdout.
func mnemoFails(t *testing.T, env *testEnv, args ...string) (string, string) {
	t.Helper()
	cmd := exec.Command(mnemoBin, args...)
	cmd.Env = env.environ()
	cmd.Dir = env.project
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err == nil {
		t.Fatalf("mnemo %s succeeded, want a failure:\n%s", strings.Join(args, " "), out.String())
	}
	return errb.String(), out.String()
}

// The command line end to end: install into Claude Code's settings next to
// the user's own, remember through the hook, find it with search, get and
// timeline, export it, and uninstall leaving the user's settings as they
// were.
func TestCommandLine(t *testing.T) {
	env := newTestEnv(t)
	t.Cleanup(func() { stopDaemon(t, env) })
	settings := filepath.Join(env.userHome, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(settings), 0o755)
	user := `{"model": "opus", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}}`
	os.WriteFile(settings, []byte(user), 0o644)

	out := mnemo(t, env, "install", "claude-code", "--hook", hookBin)
	if !strings.Contains(out, "installed") {
		t.Fatalf("install: %s", out)
	}
	if out := mnemo(t, env, "install", "claude-code", "--hook", hookBin); !strings.Contains(out, "nothing changed") {
		t.Fatalf("second install changed something: %s", out)
	}
	var s struct {
		Model string                       `json:"model"`
		Hooks map[string][]json.RawMessage `json:"hooks"`
	}
	b, _ := os.ReadFile(settings)
	if err := json.Unmarshal(b, &s); err != nil || s.Model != "opus" || len(s.Hooks["Stop"]) != 2 || len(s.Hooks["SessionStart"]) != 1 {
		t.Fatalf("settings after install:\n%s", b)
	}

	runHook(env, "UserPromptSubmit", map[string]any{"session_id": "cc-cli", "cwd": env.project, "prompt": "make the exporter stream rows"})
	runHook(env, "PostToolUse", toolPayload(env, "cc-cli", "export/csv_writer.go"))
	waitObservations(t, env, 1, 20*time.Second)

	out = mnemo(t, env, "search", "csv_writer")
	if !strings.Contains(out, "export/csv_writer.go") {
		t.Fatalf("search: %s", out)
	}
	var hits struct {
		Hits []struct {
			ID uint64 `json:"id"`
		} `json:"hits"`
	}
	json.Unmarshal([]byte(mnemo(t, env, "search", "--json", "--file", "csv_writer")), &hits)
	if len(hits.Hits) != 1 {
		t.Fatalf("search --json --file: %+v", hits)
	}
	id := strconv.FormatUint(hits.Hits[0].ID, 10)
	if out := mnemo(t, env, "get", id); !strings.Contains(out, "Request: make the exporter stream rows") {
		t.Fatalf("get %s: %s", id, out)
	}
	if out := mnemo(t, env, "timeline", id); !strings.Contains(out, "> #"+id) {
		t.Fatalf("timeline %s: %s", id, out)
	}
	if errOut, _ := mnemoFails(t, env, "get", "nine"); !strings.Contains(errOut, `"nine" is not an observation id`) {
		t.Fatalf("get nine: %s", errOut)
	}
	if out := mnemo(t, env, "get", "999999"); !strings.Contains(out, "no such observation") {
		t.Fatalf("get 999999: %s", out)
	}
	export := filepath.Join(env.root, "export.jsonl")
	if out := mnemo(t, env, "export", export); !strings.Contains(out, "records written") {
		t.Fatalf("export: %s", out)
	}
	if b, _ := os.ReadFile(export); !bytes.Contains(b, []byte("csv_writer.go")) {
		t.Fatalf("the export lacks the observation:\n%s", b)
	}
	if out := mnemo(t, env, "sessions"); !strings.Contains(out, "cc-cli") {
		t.Fatalf("sessions: %s", out)
	}
	if out := mnemo(t, env, "doctor"); !strings.Contains(out, "invariants   ok") {
		t.Fatalf("doctor: %s", out)
	}

	mnemo(t, env, "uninstall", "claude-code")
	b, _ = os.ReadFile(settings)
	var after, before any
	json.Unmarshal(b, &after)
	json.Unmarshal([]byte(user), &before)
	if !reflect.DeepEqual(after, before) {
		t.Fatalf("uninstall left:\n%s\nwant the user's settings:\n%s", b, user)
	}
}

// Bad settings are refused with a message naming the file; invalid
// settings JSON for Claude Code is refused untouched.
func TestBadSettingsAreNamed(t *testing.T) {
	env := newTestEnv(t)
	os.MkdirAll(env.home, 0o700)
	os.WriteFile(filepath.Join(env.home, "settings.json"), []byte(`{"agent": "gpt-9"}`), 0o600)
	_, out := mnemoFails(t, env, "doctor")
	if !strings.Contains(out, `agent "gpt-9"`) || !strings.Contains(out, "settings.json") {
		t.Fatalf("doctor with a bad agent: %s", out)
	}
	settings := filepath.Join(env.userHome, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(settings), 0o755)
	broken := []byte(`{"hooks": {`)
	os.WriteFile(settings, broken, 0o644)
	errOut, _ := mnemoFails(t, env, "install", "claude-code", "--hook", hookBin)
	if !strings.Contains(errOut, settings) {
		t.Fatalf("install into broken settings: %s", errOut)
	}
	if b, _ := os.ReadFile(settings); !bytes.Equal(b, broken) {
		t.Fatalf("broken settings were touched: %s", b)
	}
}

// The promptRecall setting is on by default; settings.json turns it off,
// MNEMO_PROMPT_RECALL wins over the file, and doctor says which is in force
// and where it came from.
func TestPromptRecallSetting(t *testing.T) {
	env := newTestEnv(t)
	os.MkdirAll(env.home, 0o700)
	t.Cleanup(func() { stopDaemon(t, env) })
	doctor := func(extra ...string) (string, error) {
		cmd := exec.Command(mnemoBin, "doctor")
		cmd.Env = env.environ(extra...)
		cmd.Dir = env.project
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	settingLine := regexp.MustCompile(`(?m)^\s*promptRecall\s+(\S+)\s+\((.*)\)$`)
	for _, tt := range []struct {
		name, settings, env string
		want, from          string
	}{
		{"default", "", "", "true", "default"},
		{"settings file", `{"promptRecall": false}`, "", "false", "settings.json"},
		{"environment over the file", `{"promptRecall": false}`, "MNEMO_PROMPT_RECALL=1", "true", "MNEMO_PROMPT_RECALL"},
		{"environment off", "", "MNEMO_PROMPT_RECALL=0", "false", "MNEMO_PROMPT_RECALL"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			os.Remove(filepath.Join(env.home, "settings.json"))
			if tt.settings != "" {
				os.WriteFile(filepath.Join(env.home, "settings.json"), []byte(tt.settings), 0o600)
			}
			var extra []string
			if tt.env != "" {
				extra = append(extra, tt.env)
			}
			out, _ := doctor(extra...)
			m := settingLine.FindStringSubmatch(out)
			if m == nil || m[1] != tt.want || !strings.Contains(m[2], tt.from) {
				t.Fatalf("doctor shows %q, want promptRecall %s from %s:\n%s", m, tt.want, tt.from, out)
			}
		})
	}
	os.Remove(filepath.Join(env.home, "settings.json"))
	out, err := doctor("MNEMO_PROMPT_RECALL=maybe")
	if err == nil || !strings.Contains(out, `MNEMO_PROMPT_RECALL="maybe"`) {
		t.Fatalf("doctor with MNEMO_PROMPT_RECALL=maybe: %v\n%s", err, out)
	}
}
