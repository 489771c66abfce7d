package store_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/store"
)

// Sessions of several coding agents in one project make one memory: each
// sees the others' work at its start, and search can keep one agent's.
// The host an observation was made under survives a restart.
func TestOneMemoryAcrossHosts(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "db")
	m := MustOpen(t, store.Options{Dir: dir})
	work := func(csid, host, file string) {
		t.Helper()
		if _, err := m.SessionStart(ctx, memory.SessionStartParams{ContentSessionID: csid, Cwd: "/src/shop", Platform: host}); err != nil {
			t.Fatal(err)
		}
		if _, err := m.UserPromptSubmit(ctx, memory.UserPromptParams{ContentSessionID: csid, Cwd: "/src/shop", Prompt: "fix " + file, Platform: host}); err != nil {
			t.Fatal(err)
		}
		in, _ := json.Marshal(map[string]string{"file_path": "/src/shop/" + file, "old_string": "a := 1", "new_string": "a := 2"})
		if _, err := m.PostToolUse(ctx, memory.ToolUseParams{ContentSessionID: csid, Cwd: "/src/shop", ToolName: "Edit", ToolInput: in, Platform: host}); err != nil {
			t.Fatal(err)
		}
	}
	work("4f1c", "claude-code", "cart/tax.go")
	work("codex:9a2e", "codex", "cart/total.go")
	waitIdle(t, m)

	hosts := func(m *store.Memory, host string) []string {
		t.Helper()
		res, err := m.Search(ctx, memory.SearchParams{Host: host})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, h := range res.Hits {
			got = append(got, h.Host+" "+strings.Join(h.Files, ","))
		}
		return got
	}
	for _, tc := range []struct{ host, want string }{
		{"", "codex cart/total.go|claude-code cart/tax.go"},
		{"claude-code", "claude-code cart/tax.go"},
		{"codex", "codex cart/total.go"},
		{"gemini", ""},
	} {
		if got := strings.Join(hosts(m, tc.host), "|"); got != tc.want {
			t.Errorf("search host %q: got %q, want %q", tc.host, got, tc.want)
		}
	}

	// A Gemini session of the same project starts with both.
	res, err := m.SessionStart(ctx, memory.SessionStartParams{ContentSessionID: "gemini:77", Cwd: "/src/shop", Platform: "gemini"})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"cart/tax.go", "cart/total.go"} {
		if !strings.Contains(res.Context, f) {
			t.Errorf("the gemini session's context lacks %s:\n%s", f, res.Context)
		}
	}

	// After a restart (a snapshot written at close), the hosts are there.
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	m2 := MustOpen(t, store.Options{Dir: dir})
	waitIdle(t, m2)
	if got := strings.Join(hosts(m2, "codex"), "|"); got != "codex cart/total.go" {
		t.Errorf("after a restart, search host codex: %q", got)
	}
}

// A start delivered twice with one event key (a host that runs its own
// hooks and Claude Code's) gives its context once; a host that shows no
// context gets none built; a prompt whose host shows no recall is stored
// and recalls nothing.
func TestStartOnceAndNoContext(t *testing.T) {
	ctx := context.Background()
	m := MustOpen(t, store.Options{InMemory: true})
	if _, err := m.Save(ctx, memory.SaveParams{Project: "shop", Text: "tax rounding uses banker's rounding", Type: "decision"}); err != nil {
		t.Fatal(err)
	}
	start := memory.SessionStartParams{ContentSessionID: "vscode:1", Cwd: "/src/shop", Platform: "vscode", EventKey: "d-start"}
	first, err := m.SessionStart(ctx, start)
	if err != nil {
		t.Fatal(err)
	}
	again, err := m.SessionStart(ctx, start)
	if err != nil {
		t.Fatal(err)
	}
	if first.Context == "" || again.Context != "" || again.SessionID != first.SessionID {
		t.Errorf("a start repeated with its key: first %d bytes of context (session %d), again %d bytes (session %d); want some, then none, one session",
			len(first.Context), first.SessionID, len(again.Context), again.SessionID)
	}

	quiet, err := m.SessionStart(ctx, memory.SessionStartParams{ContentSessionID: "copilot:2", Cwd: "/src/shop", Platform: "copilot", NoContext: true})
	if err != nil {
		t.Fatal(err)
	}
	if quiet.Context != "" || quiet.SessionID == 0 {
		t.Errorf("noContext: %d bytes of context, session %d; want none, a session", len(quiet.Context), quiet.SessionID)
	}
	p, err := m.UserPromptSubmit(ctx, memory.UserPromptParams{ContentSessionID: "copilot:2", Cwd: "/src/shop", Prompt: "why banker's rounding for tax?", Platform: "copilot", NoRecall: true})
	if err != nil {
		t.Fatal(err)
	}
	if p.Context != "" || p.PromptNumber != 1 {
		t.Errorf("noRecall: prompt %d with %d bytes of recall; want prompt 1, none", p.PromptNumber, len(p.Context))
	}
	// The same prompt where the host shows recall finds the decision.
	shown, err := m.UserPromptSubmit(ctx, memory.UserPromptParams{ContentSessionID: "codex:3", Cwd: "/src/shop", Prompt: "why banker's rounding for tax?", Platform: "codex"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(shown.Context, "banker's rounding") {
		t.Errorf("with recall: %q; want the decision", shown.Context)
	}
	if s := mustSession(t, m, "copilot:2"); s.Platform != "copilot" {
		t.Errorf("platform %q, want copilot", s.Platform)
	}
}
