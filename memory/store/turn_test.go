package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/store"
)

// transcriptOf writes a Claude Code transcript: a prompt, then for each
// step an assistant text, a tool call (a step "tool:<id>") or its result
// ("result:<id>").
func transcriptOf(t *testing.T, prompt string, steps ...string) string {
	t.Helper()
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	lines := []string{fmt.Sprintf(`{"type":"user","isSidechain":false,"message":{"role":"user","content":%s}}`, q(prompt))}
	for _, s := range steps {
		switch {
		case strings.HasPrefix(s, "tool:"):
			lines = append(lines, fmt.Sprintf(`{"type":"assistant","isSidechain":false,"message":{"role":"assistant","content":[{"type":"tool_use","id":%s,"name":"Edit","input":{}}]}}`, q(s[5:])))
		case strings.HasPrefix(s, "result:"):
			lines = append(lines, fmt.Sprintf(`{"type":"user","isSidechain":false,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":%s,"content":"ok"}]}}`, q(s[7:])))
		default:
			lines = append(lines, fmt.Sprintf(`{"type":"assistant","isSidechain":false,"message":{"role":"assistant","content":[{"type":"text","text":%s}]}}`, q(s)))
		}
	}
	path := filepath.Join(t.TempDir(), "session.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func claudePrompt(t *testing.T, m *store.Memory, csid, prompt string) {
	t.Helper()
	if _, err := m.UserPromptSubmit(context.Background(), memory.UserPromptParams{ContentSessionID: csid, Cwd: "/src/shop", Prompt: prompt, Platform: "claude-code"}); err != nil {
		t.Fatal(err)
	}
}

func editWithID(t *testing.T, m *store.Memory, csid, id, file string) {
	t.Helper()
	if _, err := m.PostToolUse(context.Background(), memory.ToolUseParams{ContentSessionID: csid, Cwd: "/src/shop", ToolName: "Edit", ToolUseID: id,
		ToolInput:    json.RawMessage(fmt.Sprintf(`{"file_path":"/src/shop/%s","old_string":"a","new_string":"b"}`, file)),
		ToolResponse: json.RawMessage(fmt.Sprintf(`{"filePath":"/src/shop/%s"}`, file))}); err != nil {
		t.Fatal(err)
	}
}

func recordTitled(obs []memory.Observation, part string) *memory.Observation {
	i := slices.IndexFunc(obs, func(o memory.Observation) bool { return strings.Contains(o.Title, part) })
	if i < 0 {
		return nil
	}
	return &obs[i]
}

// At a live Claude Code turn's end the daemon reads the turn's texts from
// the transcript (the hook sends only its path): the text before a tool
// call becomes that call's record's why, searchable; the answer the hook
// sent ends the texts when the transcript has not caught up; what is
// private is stripped and secrets redacted before anything is queued.
func TestStopReadsTheTurnFromTheTranscript(t *testing.T) {
	m := MustOpen(t, store.Options{InMemory: true})
	ctx := context.Background()
	const secret = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"
	claudePrompt(t, m, "cc-why", "creates sometimes make two VMs")
	editWithID(t, m, "cc-why", "t1", "api/client.go")
	path := transcriptOf(t, "creates sometimes make two VMs",
		"The client retries POSTs on timeouts; the API takes an Idempotency-Key header, so I'll send one per create. <private>token "+secret+"</private>",
		"tool:t1", "result:t1")
	answer := "Creates made two VMs because the retry wrapper re-sent the POST after a client-side timeout while the first request had succeeded; creates now carry an Idempotency-Key header, reused by the retries, so the API returns the first VM instead of making another one."
	if _, err := m.Stop(ctx, memory.StopParams{ContentSessionID: "cc-why", Cwd: "/src/shop", TranscriptPath: path, LastAssistantMessage: answer}); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, m)
	obs := all(t, m, "shop")
	edit := recordTitled(obs, "api/client.go")
	if edit == nil || !strings.Contains(edit.Why, "Idempotency-Key header") || strings.Contains(edit.Why, "token") {
		t.Fatalf("the edit's why = %+v", edit)
	}
	finding := recordTitled(obs, "Creates made two VMs because")
	if finding == nil || finding.Type != memory.TypeDiscovery || finding.Tool != "" {
		t.Fatalf("no record of the answer the hook sent: %+v", obs)
	}
	res, err := m.Search(ctx, memory.SearchParams{Query: "send one per create", Mode: memory.ModeKeyword})
	if err != nil || len(res.Hits) == 0 || res.Hits[0].ID != edit.ID {
		t.Errorf("search by the why = %+v, %v; want #%d first", res.Hits, err, edit.ID)
	}
	export := exportText(t, m)
	for _, leak := range []string{secret, "token "} {
		if strings.Contains(export, leak) {
			t.Errorf("the store holds %q", leak)
		}
	}
}

// The daemon reads a transcript only at a live turn end of a Claude Code
// session that is not private: not for history brought in after the fact
// (a back-fill sends the texts itself), not for another host's session.
func TestStopReadsNoTranscriptItShouldNot(t *testing.T) {
	now := time.Now()
	m := MustOpen(t, store.Options{InMemory: true, Now: func() time.Time { return now }})
	ctx := context.Background()
	path := transcriptOf(t, "p", "The cache key ignores the locale, so I'll add the locale to it rather than flush the cache.", "tool:t1", "result:t1")
	cases := []struct {
		csid, platform string
		at             time.Time
		prompt         string
	}{
		{"cc-past", "claude-code", now.Add(-time.Hour), "fix the cache"},
		{"codex-1", "codex", time.Time{}, "fix the cache"},
		{"cc-private", "claude-code", time.Time{}, "<private>fix the cache</private>"},
	}
	for _, tc := range cases {
		if _, err := m.UserPromptSubmit(ctx, memory.UserPromptParams{ContentSessionID: tc.csid, Cwd: "/src/shop", Prompt: tc.prompt, Platform: tc.platform, At: tc.at}); err != nil {
			t.Fatal(err)
		}
		if _, err := m.Stop(ctx, memory.StopParams{ContentSessionID: tc.csid, TranscriptPath: path, At: tc.at}); err != nil {
			t.Fatal(err)
		}
	}
	waitIdle(t, m)
	for _, o := range all(t, m, "shop") {
		if o.Type == memory.TypePrompt && o.Title == "fix the cache" {
			continue // the turn's prompt, kept as a record: not the transcript's
		}
		t.Errorf("a record of a transcript that was not to be read: %s: %q", o.ContentSessionID, o.Title)
	}
}

// A pasted spec of tens of KB is kept once, with the session's prompts;
// each record of its turn keeps an excerpt of it.
func TestARecordKeepsAnExcerptOfALongPrompt(t *testing.T) {
	m := MustOpen(t, store.Options{InMemory: true})
	spec := "Implement the spec below.\n" + strings.Repeat("The exporter writes one line per invoice with its totals. ", 800)
	mustPrompt(t, m, "cc-spec", spec)
	editWithID(t, m, "cc-spec", "t1", "export/a.go")
	editWithID(t, m, "cc-spec", "t2", "export/b.go")
	waitIdle(t, m)
	prompts, err := m.Prompts(context.Background(), mustSession(t, m, "cc-spec").ID)
	if err != nil || len(prompts) != 1 || prompts[0].Text != spec {
		t.Fatalf("the prompt was not kept whole: %d prompts, %v", len(prompts), err)
	}
	for _, o := range all(t, m, "shop") {
		if len(o.Request) > memory.MaxRequestExcerpt+len("\n…[truncated]") || !strings.HasPrefix(o.Request, "Implement the spec below.") {
			t.Errorf("%q keeps %d bytes of the prompt", o.Title, len(o.Request))
		}
	}
}

// What a session settled in its conversation (no tool call) leads the
// next session's context, with its text, also after an unrelated session;
// a record the context listed by title alone is given by the prompt that
// needs it, with the passage it needs.
func TestTheNextSessionGetsWhatWasSettled(t *testing.T) {
	m := MustOpen(t, store.Options{InMemory: true})
	ctx := context.Background()
	claudePrompt(t, m, "cc-1", "Why do the Monday exports time out?")
	answer := "The root cause is the weekly archive_invoices job: it deletes old invoice_lines in one transaction that holds the table lock for 42 minutes, and the export waits on that lock until the Celery soft time limit kills it."
	if _, err := m.Stop(ctx, memory.StopParams{ContentSessionID: "cc-1", LastAssistantMessage: answer}); err != nil {
		t.Fatal(err)
	}
	claudePrompt(t, m, "cc-1", "ok. Decision: we batch the archive deletes at 5,000 rows per transaction.")
	if _, err := m.Stop(ctx, memory.StopParams{ContentSessionID: "cc-1", LastAssistantMessage: "Noted."}); err != nil {
		t.Fatal(err)
	}
	// An unrelated session with plenty of tool work.
	claudePrompt(t, m, "cc-2", "add a CSV export of customers")
	for i := range 30 {
		editWithID(t, m, "cc-2", fmt.Sprintf("e%d", i), fmt.Sprintf("customers/view%02d.py", i))
		mustTool(t, m, "cc-2", "Read", fmt.Sprintf(`{"file_path":"/src/shop/customers/model%02d.py"}`, i), `{}`)
	}
	if _, err := m.Stop(ctx, memory.StopParams{ContentSessionID: "cc-2", LastAssistantMessage: "Added the CSV export."}); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, m)

	start, err := m.SessionStart(ctx, memory.SessionStartParams{ContentSessionID: "cc-3", Cwd: "/src/shop", Source: "startup"})
	if err != nil {
		t.Fatal(err)
	}
	learned := strings.Index(start.Context, "## What was learned and decided")
	for _, want := range []string{"archive_invoices", "5,000 rows per transaction"} {
		if i := strings.Index(start.Context, want); i < 0 || i < learned || learned > strings.Index(start.Context, "## Last session") {
			t.Errorf("the context does not lead with %q:\n%s", want, start.Context)
		}
	}
	if strings.Contains(start.Context, "Read customers/") {
		t.Errorf("the context gives reads:\n%s", start.Context)
	}

	// A small budget lists the finding by its title alone: the prompt
	// that needs it gets its text.
	small := MustOpen(t, store.Options{InMemory: true, ContextBytes: 900})
	claudePrompt(t, small, "s-1", "Why do the Monday exports time out?")
	long := answer + " Moving the export after the archive job would hide it; batching the deletes fixes it, and it also keeps the write-ahead log small and lets autovacuum run on invoice_lines again."
	if _, err := small.Stop(ctx, memory.StopParams{ContentSessionID: "s-1", LastAssistantMessage: long}); err != nil {
		t.Fatal(err)
	}
	claudePrompt(t, small, "s-x", "rename the helper")
	editWithID(t, small, "s-x", "r1", "util/names.py")
	if _, err := small.Stop(ctx, memory.StopParams{ContentSessionID: "s-x", LastAssistantMessage: "Renamed."}); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, small)
	listed, err := small.SessionStart(ctx, memory.SessionStartParams{ContentSessionID: "s-2", Cwd: "/src/shop", Source: "startup"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(listed.Context, "archive_invoices") || strings.Contains(listed.Context, "42 minutes") {
		t.Fatalf("want the finding listed by its title alone:\n%s", listed.Context)
	}
	up, err := small.UserPromptSubmit(ctx, memory.UserPromptParams{ContentSessionID: "s-2", Cwd: "/src/shop", Prompt: "the archive_invoices job holds a lock: how long does it hold the table lock?", Platform: "claude-code"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(up.Context, "42 minutes") {
		t.Errorf("the recall does not give the finding's text:\n%s", up.Context)
	}
}

// exportText is everything the store holds, as `mnemo export` writes it.
func exportText(t *testing.T, m *store.Memory) string {
	t.Helper()
	var b strings.Builder
	if _, err := m.Export(context.Background(), &b, false); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// A tool call whose why explains it (the reason given just before the
// call, two sentences or more) is what was learned: the next session's
// context leads with it and its why, also after an unrelated session; a
// why that only announces the next step ("Let me look.") is not.
func TestAnExplainedCallIsLearned(t *testing.T) {
	m := MustOpen(t, store.Options{InMemory: true})
	ctx := context.Background()
	claudePrompt(t, m, "cc-1", "one create call made two VMs, fix it")
	editWithID(t, m, "cc-1", "t1", "api/client.go")
	editWithID(t, m, "cc-1", "t2", "api/retry.go")
	why := "The client retries every request on a timeout, POST included. If the first create reached the server and only the response timed out, the retry creates a second VM. The API accepts an Idempotency-Key header for exactly this; I'll send one per create call."
	path := transcriptOf(t, "one create call made two VMs, fix it", why, "tool:t1", "result:t1", "Let me check the retry.", "tool:t2", "result:t2")
	if _, err := m.Stop(ctx, memory.StopParams{ContentSessionID: "cc-1", Cwd: "/src/shop", TranscriptPath: path, LastAssistantMessage: "Done."}); err != nil {
		t.Fatal(err)
	}
	claudePrompt(t, m, "cc-2", "rename the helpers")
	for i := range 20 {
		editWithID(t, m, "cc-2", fmt.Sprintf("r%d", i), fmt.Sprintf("util/names%02d.py", i))
	}
	if _, err := m.Stop(ctx, memory.StopParams{ContentSessionID: "cc-2", Cwd: "/src/shop", LastAssistantMessage: "Renamed."}); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, m)
	start, err := m.SessionStart(ctx, memory.SessionStartParams{ContentSessionID: "cc-3", Cwd: "/src/shop", Source: "startup"})
	if err != nil {
		t.Fatal(err)
	}
	learned, last := strings.Index(start.Context, "## What was learned and decided"), strings.Index(start.Context, "## Last session")
	if i := strings.Index(start.Context, "Idempotency-Key"); learned < 0 || i < learned || i > last {
		t.Errorf("the context does not lead with the explained call:\n%s", start.Context)
	}
	if i := strings.Index(start.Context, "api/retry.go"); i >= learned && i < last {
		t.Errorf("a call whose why only announces it is given as learned:\n%s", start.Context)
	}
}
