package observer_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/observer"
)

// The unit tests of the claude agent run this test binary as a stand-in
// for the CLI (the e2e tests run the real one): with OBSERVER_FAKE_CLAUDE
// set, TestMain speaks the CLI's stream-json and its session rules instead
// of running tests.
func TestMain(m *testing.M) {
	if mode, ok := os.LookupEnv("OBSERVER_FAKE_CLAUDE"); ok {
		os.Exit(fakeClaude(mode))
	}
	os.Exit(m.Run())
}

// fakeClaude answers like `claude -p --input-format stream-json
// --output-format stream-json --verbose`: per input line an init line, a
// thinking line, a text line (modelAnswer) and a result with usage. It
// keeps sessions as files under $CLAUDE_CONFIG_DIR/projects: --session-id
// of an existing one and --resume of a missing one fail as the CLI does.
func fakeClaude(mode string) int {
	var id string
	resume := false
	args := os.Args[1:]
	for i := 0; i+1 < len(args); i++ {
		switch args[i] {
		case "--session-id":
			id = args[i+1]
		case "--resume":
			id, resume = args[i+1], true
		}
	}
	if slices.Contains(args, "--version") {
		fmt.Println("2.1.330 (Claude Code)")
		return 0
	}
	out := json.NewEncoder(os.Stdout)
	if dump := os.Getenv("FAKE_DUMP"); dump != "" {
		data, _ := json.Marshal(map[string]any{"args": args, "env": os.Environ()})
		_ = os.WriteFile(dump, data, 0o600)
	}
	sessions := filepath.Join(os.Getenv("CLAUDE_CONFIG_DIR"), "projects")
	_ = os.MkdirAll(sessions, 0o700)
	file := filepath.Join(sessions, id+".jsonl")
	if _, err := os.Stat(file); resume && err != nil {
		msg := "No conversation found with session ID: " + id
		_ = out.Encode(map[string]any{"type": "result", "subtype": "error_during_execution", "is_error": true, "session_id": id, "errors": []string{msg}})
		fmt.Fprintln(os.Stderr, msg)
		return 1
	} else if !resume && err == nil {
		fmt.Fprintf(os.Stderr, "Error: Session ID %s is already in use.\n", id)
		return 1
	}
	switch mode {
	case "hang":
		time.Sleep(time.Minute)
		return 0
	case "auth":
		_ = out.Encode(map[string]any{"type": "result", "subtype": "success", "is_error": true, "session_id": id,
			"result": "Invalid API key · Please run /login", "api_error_status": 401,
			"usage": map[string]int{"input_tokens": 0, "output_tokens": 0}})
		return 1
	case "retry-401", "retry-529":
		status, msg := 401, "authentication_failed"
		if mode == "retry-529" {
			status, msg = 529, "overloaded_error"
		}
		for attempt := 1; attempt <= 10; attempt++ { // the CLI retries for minutes
			_ = out.Encode(map[string]any{"type": "system", "subtype": "api_retry", "attempt": attempt, "max_retries": 10,
				"retry_delay_ms": 500, "error_status": status, "error": msg, "session_id": id})
			time.Sleep(100 * time.Millisecond * time.Duration(attempt*attempt))
		}
		return 1
	case "wrong-id":
		id = "11111111-2222-4333-8444-555555555555"
	}
	f, err := os.OpenFile(file, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer f.Close()
	past, _ := os.ReadFile(file)
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	// n counts the conversation's messages, earlier runs included.
	for n := strings.Count(string(past), "\n"); sc.Scan(); n++ {
		var in struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		}
		if err := json.Unmarshal(sc.Bytes(), &in); err != nil {
			fmt.Fprintln(os.Stderr, "bad input line:", err)
			return 1
		}
		fmt.Fprintln(f, sc.Text())
		answer := modelAnswer(n, in.Message.Content)
		_ = out.Encode(map[string]any{"type": "system", "subtype": "init", "session_id": id, "tools": []string{}})
		_ = out.Encode(map[string]any{"type": "assistant", "session_id": id, "parent_tool_use_id": nil, "uuid": fmt.Sprintf("thinking-%d", n),
			"message": map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "thinking", "thinking": "hmm"}}}})
		_ = out.Encode(map[string]any{"type": "assistant", "session_id": id, "parent_tool_use_id": nil, "uuid": fmt.Sprintf("text-%d", n),
			"message": map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "text", "text": answer}}}})
		_ = out.Encode(map[string]any{"type": "result", "subtype": "success", "is_error": false, "session_id": id, "result": answer,
			"usage": map[string]int{"input_tokens": 900, "output_tokens": 20, "cache_creation_input_tokens": 50, "cache_read_input_tokens": 30}})
	}
	return 0
}

// fakeAgent makes a claude agent that runs the fake CLI in mode.
func fakeAgent(t *testing.T, base, mode string, o observer.Options) *observer.Claude {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	o.Binary = self
	o.WorkDir = filepath.Join(base, "claude-cwd")
	o.ConfigDir = filepath.Join(base, "claude-config")
	o.Env = append(o.Env, "OBSERVER_FAKE_CLAUDE="+mode, "PATH="+os.Getenv("PATH"), "HOME="+os.Getenv("HOME"),
		"CLAUDECODE=1", "CLAUDE_CODE_SESSION_ID=user-session", "CLAUDE_PROJECT_DIR=/src/user-project", "CLAUDE_CONFIG_DIR=/users/own/.claude")
	a, err := observer.NewClaude(o)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func toolInput(id, resume string) memory.AgentInput {
	return memory.AgentInput{
		Session: memory.Session{ContentSessionID: "cc-unit"}, NewID: id, ResumeID: resume, Request: "Fix rounding",
		Events: []memory.Event{{Kind: memory.EventTool, ToolName: "Read", Cwd: cwd,
			ToolInput: json.RawMessage(`{"file_path":"` + cwd + `/billing/rounding.go"}`)}},
	}
}

const (
	idA = "3d6a1c52-7b0e-4f4e-9c1d-0a6b2f1e9d01"
	idB = "3d6a1c52-7b0e-4f4e-9c1d-0a6b2f1e9d02"
)

func TestClaudeRun(t *testing.T) {
	base := isolate(t)
	agents := filepath.Join(base, "agents")
	dump := filepath.Join(base, "dump.json")
	a := fakeAgent(t, base, "ok", observer.Options{AgentsDir: agents, Env: []string{"FAKE_DUMP=" + dump}, ExtraSystemPrompt: "EXTRA-MARKER"})

	out, err := a.Run(context.Background(), toolInput(idA, ""))
	if err != nil {
		t.Fatal(err)
	}
	if out.MemorySessionID != idA || out.AssistantUUID != "text-0" {
		t.Fatalf("memory session %q, assistant uuid %q; want %s and the text message's uuid (not the thinking one)", out.MemorySessionID, out.AssistantUUID, idA)
	}
	if got := titles(out.Observations); !slices.Equal(got, []string{"Model note 0 on Read"}) {
		t.Fatalf("observations %q", got)
	}
	if o := out.Observations[0]; !slices.Equal(o.FilesRead, []string{"billing/rounding.go"}) || o.Tool != "Read" || o.Request != "Fix rounding" {
		t.Fatalf("observation %+v", o)
	}
	var seen struct {
		Args []string `json:"args"`
		Env  []string `json:"env"`
	}
	data, err := os.ReadFile(dump)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &seen); err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(seen.Args, "\x00")
	for _, want := range []string{"-p", "--input-format\x00stream-json", "--output-format\x00stream-json", "--verbose",
		"--tools\x00\x00", "--session-id\x00" + idA, "--model\x00haiku", "--disable-slash-commands", "--strict-mcp-config"} {
		if !strings.Contains(joined, want) {
			t.Errorf("args %q lack %q", seen.Args, strings.ReplaceAll(want, "\x00", " "))
		}
	}
	if i := slices.Index(seen.Args, "--system-prompt"); i < 0 || !strings.HasSuffix(seen.Args[i+1], "EXTRA-MARKER") {
		t.Errorf("no system prompt ending with the extra text in %q", seen.Args)
	}
	env := map[string]string{}
	for _, kv := range seen.Env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	if env["CLAUDE_CONFIG_DIR"] != filepath.Join(base, "claude-config") || env["MNEMO_OBSERVER"] != "1" ||
		env["CLAUDE_CODE_DISABLE_AUTO_MEMORY"] != "1" {
		t.Errorf("env: CLAUDE_CONFIG_DIR=%q MNEMO_OBSERVER=%q CLAUDE_CODE_DISABLE_AUTO_MEMORY=%q",
			env["CLAUDE_CONFIG_DIR"], env["MNEMO_OBSERVER"], env["CLAUDE_CODE_DISABLE_AUTO_MEMORY"])
	}
	for _, k := range []string{"CLAUDECODE", "CLAUDE_CODE_SESSION_ID", "CLAUDE_PROJECT_DIR"} {
		if v, ok := env[k]; ok {
			t.Errorf("the user's session variable %s=%s reached the observer", k, v)
		}
	}
	if today, sess := a.Spent("cc-unit"); today != 1000 || sess != 1000 {
		t.Errorf("spent %d today, %d in the session; want 1000 (input, output and cache tokens)", today, sess)
	}

	// The resume continues the same id and appends to the same log.
	out, err = a.Run(context.Background(), toolInput("", idA))
	if err != nil || out.MemorySessionID != idA {
		t.Fatalf("resume: %+v, %v", out, err)
	}
	log := readLog(t, agents, idA)
	for _, want := range []string{" exec ", "--session-id " + idA, "--resume " + idA, " stdin {\"type\":\"user\"", " stdout {", " exit 0 after "} {
		if !strings.Contains(log, want) {
			t.Errorf("stream.log lacks %q:\n%s", want, log)
		}
	}
	if n := strings.Count(log, " exec "); n != 2 {
		t.Errorf("stream.log has %d runs, want 2 (appended)", n)
	}
	if strings.Contains(log, "Mnemo's memory observer") {
		t.Error("stream.log carries the whole system prompt")
	}
}

func TestClaudeFailures(t *testing.T) {
	tests := []struct {
		name     string
		mode     string
		in       memory.AgentInput
		binary   string
		timeout  time.Duration
		is       []error
		status   string
		contains string
	}{
		{name: "refused resume", mode: "ok", in: toolInput("", idB), is: []error{memory.ErrResumeRefused}},
		{name: "wrong session id", mode: "wrong-id", in: toolInput(idA, ""), contains: "not \"" + idA + "\""},
		{name: "not logged in", mode: "auth", in: toolInput(idA, ""), is: []error{memory.ErrFallback, observer.ErrUnavailable},
			status: "claude is not logged in: Invalid API key"},
		{name: "key refused while the CLI retries", mode: "retry-401", in: toolInput(idA, ""), is: []error{memory.ErrFallback, observer.ErrUnavailable},
			status: "claude is not logged in: the API answered 401 authentication_failed"},
		{name: "API failing while the CLI retries", mode: "retry-529", in: toolInput(idA, ""),
			contains: "the API keeps failing: 529 overloaded_error (attempt 3)"},
		{name: "no answer in time", mode: "hang", in: toolInput(idA, ""), timeout: 300 * time.Millisecond, contains: "no answer within 300ms"},
		{name: "binary missing", mode: "ok", in: toolInput(idA, ""), binary: "/nonexistent/claude", is: []error{memory.ErrFallback, observer.ErrUnavailable},
			status: "claude binary not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := isolate(t)
			a := fakeAgent(t, base, tt.mode, observer.Options{Timeout: tt.timeout})
			if tt.binary != "" {
				o := observer.Options{Binary: tt.binary, WorkDir: filepath.Join(base, "cwd")}
				var err error
				if a, err = observer.NewClaude(o); err != nil {
					t.Fatal(err)
				}
			}
			began := time.Now()
			_, err := a.Run(context.Background(), tt.in)
			if err == nil {
				t.Fatal("run succeeded")
			}
			for _, target := range tt.is {
				if !errors.Is(err, target) {
					t.Errorf("error %q is not %q", err, target)
				}
			}
			if tt.contains != "" && !strings.Contains(err.Error(), tt.contains) {
				t.Errorf("error %q lacks %q", err, tt.contains)
			}
			if st := a.AgentStatus(); !strings.HasPrefix(st, tt.status) || (tt.status == "" && st != "") {
				t.Errorf("status %q, want %q…", st, tt.status)
			}
			if took := time.Since(began); took > 10*time.Second {
				t.Errorf("took %v", took)
			}
		})
	}
}

// TestClaudeThroughMemory: under the worker, a refused resume ends in a
// fresh run, and the day's budget hands over to the local agent.
func TestClaudeThroughMemory(t *testing.T) {
	base := isolate(t)
	agents := filepath.Join(base, "agents")
	a := fakeAgent(t, base, "ok", observer.Options{AgentsDir: agents, StateDir: filepath.Join(base, "state"), Budget: observer.Budget{PerDay: 2500}})
	m := openMemory(t, filepath.Join(base, "db"), agents, a)
	s := &session{t: t, m: m, csid: "cc-fake", cwd: cwd}
	s.prompt("Fix rounding.")
	if err := m.ResumeWith(context.Background(), s.csid, idB); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		s.tool("Bash", map[string]any{"command": fmt.Sprintf("go test ./billing/ -run T%d", i)}, map[string]any{"stdout": "ok"})
	}
	m.waitIdle(t, 30*time.Second)
	st := s.state()
	if st.MemorySessionID == idB || st.MemorySessions[0] == idB {
		t.Fatalf("the refused id %s was registered: %+v", idB, st)
	}
	got := titles(s.observations())
	if want := []string{"Model note 0 on Bash", "Model note 1 on Bash", "Model note 2 on Bash"}; len(got) != 4 || !slices.Equal(got[:3], want) || !byModel(got, 3) {
		t.Fatalf("observations %q: want %q, then one by the local agent", got, want)
	}
	if s := a.AgentStatus(); s != "budget spent: 3000 of 2500 tokens today" {
		t.Fatalf("status %q", s)
	}
	if !strings.Contains(readLog(t, agents, idB), "No conversation found with session ID: "+idB) {
		t.Error("the refused run is not in its stream.log")
	}
}

func TestCheckClaude(t *testing.T) {
	base := isolate(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	notClaude := filepath.Join(base, "not-claude")
	if err := os.WriteFile(notClaude, []byte("#!/bin/sh\necho 1.0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	fake := []string{"OBSERVER_FAKE_CLAUDE=ok"}
	tests := []struct {
		name    string
		o       observer.Options
		wantErr error
		text    string
	}{
		{name: "runs, key in the environment", o: observer.Options{Binary: self, Env: append(fake, "ANTHROPIC_API_KEY=k")}},
		{name: "runs, shares the user's configuration", o: observer.Options{Binary: self, Env: fake}},
		{name: "own configuration without a login", o: observer.Options{Binary: self, Env: fake, ConfigDir: filepath.Join(base, "cfg")},
			wantErr: observer.ErrNoCredentials, text: "claude /login"},
		{name: "missing", o: observer.Options{Binary: filepath.Join(base, "nope")}, text: "claude binary not found"},
		{name: "not Claude Code", o: observer.Options{Binary: notClaude}, text: "not a Claude Code version"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.o.WorkDir = filepath.Join(base, "cwd")
			err := observer.Check(context.Background(), observer.KindClaude, tt.o)
			switch {
			case tt.text == "" && err != nil:
				t.Fatalf("check: %v", err)
			case tt.text != "" && (err == nil || !strings.Contains(err.Error(), tt.text)):
				t.Fatalf("check: %v, want an error with %q", err, tt.text)
			case tt.wantErr != nil && !errors.Is(err, tt.wantErr):
				t.Fatalf("check: %v is not %v", err, tt.wantErr)
			}
		})
	}
}
