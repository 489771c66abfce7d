package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/store"
	"github.com/mnemo-dev/mnemo/vector"
)

// A prompt that is entirely private stores nothing for its turn: not the
// prompt, not its tool observations, not its summary.
func TestFullyPrivatePromptStoresNothingForItsTurn(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	m := MustOpen(t, store.Options{Dir: dir})
	ctx := context.Background()
	r := mustPrompt(t, m, "cc-priv", "<private>the launch code is PRIVMARK-1234</private>")
	if !r.Private || r.PromptNumber != 1 {
		t.Fatalf("prompt result = %+v, want private prompt 1", r)
	}
	q := mustTool(t, m, "cc-priv", "Read", `{"file_path":"/src/shop/secret-plan.md"}`, `{"type":"text","file":{"filePath":"/src/shop/secret-plan.md","content":"PRIVMARK-1234"}}`)
	if q.Queued || q.Skipped == "" {
		t.Fatalf("tool event of a private turn = %+v, want skipped", q)
	}
	if s, err := m.Stop(ctx, memory.StopParams{ContentSessionID: "cc-priv", LastAssistantMessage: "done with PRIVMARK-1234"}); err != nil || s.Queued {
		t.Fatalf("stop of a private turn = %+v, %v; want skipped", s, err)
	}
	// The next, ordinary turn is remembered.
	mustPrompt(t, m, "cc-priv", "now fix the cart total")
	mustTool(t, m, "cc-priv", "Read", readInput, readResponse)
	waitIdle(t, m)
	sess := mustSession(t, m, "cc-priv")
	prompts, _ := m.Prompts(ctx, sess.ID)
	if len(prompts) != 1 || prompts[0].Number != 2 {
		t.Fatalf("prompts = %+v, want only prompt 2", prompts)
	}
	if obs := observationsOf(t, m, sess.ID); len(obs) != 1 || obs[0].PromptNumber != 2 {
		t.Fatalf("observations = %+v, want only prompt 2's", obs)
	}
	if sums, _ := m.Summaries(ctx, sess.ID); len(sums) != 0 {
		t.Fatalf("summaries = %+v, want none", sums)
	}
	m.Close()
	assertNotOnDisk(t, filepath.Dir(dir), "PRIVMARK-1234")
}

// Tags are stripped and secrets redacted before anything is stored.
func TestPrivacyAtEntryAndBeforeStorage(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	m := MustOpen(t, store.Options{Dir: dir})
	ctx := context.Background()
	mustPrompt(t, m, "cc-p2", "deploy it <private>password hunter2-PRIVMARK</private> please")
	mustTool(t, m, "cc-p2", "Bash",
		`{"command":"curl -H 'Authorization: Bearer abcdefghijklmnopqrstuvwxyz0123456789' https://api.example.com","description":"call the API"}`,
		`{"stdout":"key AKIAIOSFODNN7EXAMPLE ok <system-reminder>SYSMARK</system-reminder>","stderr":"","interrupted":false}`)
	if _, err := m.Stop(ctx, memory.StopParams{ContentSessionID: "cc-p2", LastAssistantMessage: "used sk-ant-api03-Zq9XbT4kL2mN8pR6sV1wY3uA5cE7gI0jK-_hO2dF4hJ6lN8pQ0rS2tU4vW6xY8zA0bC2dE4fG6hI8jK0lM2nO4pQ6rS8tUAA"}); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, m)
	sess := mustSession(t, m, "cc-p2")
	prompts, _ := m.Prompts(ctx, sess.ID)
	if len(prompts) != 1 || strings.Contains(prompts[0].Text, "hunter2") || !strings.Contains(prompts[0].Text, "deploy it") {
		t.Fatalf("stored prompt = %+v", prompts)
	}
	m.Close()
	for _, secret := range []string{"PRIVMARK", "SYSMARK", "AKIAIOSFODNN7EXAMPLE", "abcdefghijklmnopqrstuvwxyz0123456789", "Zq9XbT4kL2mN8pR6sV1wY3uA5cE7gI0jK"} {
		assertNotOnDisk(t, filepath.Dir(dir), secret)
	}
}

// assertNotOnDisk fails when any file under dir holds marker, after the
// store has been closed (and so flushed): in its bytes, or inside one of
// the value frames it holds, inflated (the store compresses values itself,
// so the bytes alone prove nothing).
func assertNotOnDisk(t *testing.T, dir, marker string) {
	t.Helper()
	for _, path := range filesWith(t, dir, marker) {
		t.Errorf("%q found in %s", marker, path)
	}
}

func onDisk(t *testing.T, dir, marker string) bool { return len(filesWith(t, dir, marker)) > 0 }

func filesWith(t *testing.T, dir, marker string) []string {
	t.Helper()
	var found []string
	err := filepath.Walk(dir, func(path string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if holds(b, marker) {
			found = append(found, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// holds reports whether the bytes of a file hold s, as they are or inside
// a value frame.
func holds(b []byte, s string) bool {
	if strings.Contains(string(b), s) {
		return true
	}
	for _, f := range store.Frames(b) {
		if strings.Contains(string(f), s) {
			return true
		}
	}
	return false
}

func TestSkipListedToolsAreNotStored(t *testing.T) {
	m := MustOpen(t, store.Options{InMemory: true})
	mustPrompt(t, m, "cc-skip", "plan")
	for _, tool := range []string{"TodoWrite", "AskUserQuestion", "ListMcpResourcesTool", "SlashCommand", "Skill"} {
		if r := mustTool(t, m, "cc-skip", tool, `{}`, `{}`); r.Queued || !strings.Contains(r.Skipped, tool) {
			t.Errorf("%s: %+v, want skipped", tool, r)
		}
	}
}

// An event key makes a call idempotent: a replay (the hook's spool) stores
// nothing twice.
func TestEventKeyMakesCallsIdempotent(t *testing.T) {
	m := MustOpen(t, store.Options{InMemory: true})
	ctx := context.Background()
	p := memory.UserPromptParams{ContentSessionID: "cc-key", Cwd: "/src/shop", Prompt: "hello", EventKey: "k1"}
	a, _ := m.UserPromptSubmit(ctx, p)
	b, _ := m.UserPromptSubmit(ctx, p)
	if !reflect.DeepEqual(a, b) || a.PromptNumber != 1 {
		t.Fatalf("replayed prompt = %+v then %+v, want the same prompt 1", a, b)
	}
	tp := memory.ToolUseParams{ContentSessionID: "cc-key", Cwd: "/src/shop", ToolName: "Read", ToolInput: json.RawMessage(readInput), EventKey: "k2"}
	first, _ := m.PostToolUse(ctx, tp)
	again, _ := m.PostToolUse(ctx, tp)
	if !first.Queued || again.Queued || again.EventID != first.EventID {
		t.Fatalf("replayed tool event = %+v then %+v", first, again)
	}
	waitIdle(t, m)
	if c, _ := m.Counts(ctx); c.Prompts != 1 || c.Observations != 1 {
		t.Fatalf("counts = %+v, want one prompt and one observation", c)
	}
}

// A hook's event key is forgotten after 30 days; a back-fill's is kept for
// good, so that a back-fill resumed or topped up later stores nothing twice.
func TestBackfillKeysAreKeptForGood(t *testing.T) {
	m := MustOpen(t, store.Options{InMemory: true})
	ctx := context.Background()
	for _, k := range []string{"hook-key", memory.BackfillKeyPrefix + "0123"} {
		p := memory.UserPromptParams{ContentSessionID: "cc-ttl", Cwd: "/src/shop", Prompt: "hello " + k, EventKey: k}
		if _, err := m.UserPromptSubmit(ctx, p); err != nil {
			t.Fatal(err)
		}
		expires, ok, err := store.EventKeyExpires(m, k)
		switch {
		case err != nil || !ok:
			t.Fatalf("%s: not stored (%v)", k, err)
		case k == "hook-key" && (expires == 0 || time.Until(time.Unix(int64(expires), 0)) < 29*24*time.Hour):
			t.Errorf("%s expires at %d, want in 30 days", k, expires)
		case k != "hook-key" && expires != 0:
			t.Errorf("%s expires at %d, want never", k, expires)
		}
	}
}

func TestBadInputNamesTheField(t *testing.T) {
	m := MustOpen(t, store.Options{InMemory: true})
	ctx := context.Background()
	cases := []struct {
		name  string
		call  func() error
		field string
	}{
		{"prompt without session", func() error { _, err := m.UserPromptSubmit(ctx, memory.UserPromptParams{Prompt: "x"}); return err }, "contentSessionId"},
		{"tool without name", func() error {
			_, err := m.PostToolUse(ctx, memory.ToolUseParams{ContentSessionID: "s"})
			return err
		}, "toolName"},
		{"search limit", func() error { _, err := m.Search(ctx, memory.SearchParams{Limit: 5000}); return err }, "limit"},
		{"get nothing", func() error { _, err := m.Get(ctx, memory.IDsParams{}); return err }, "ids"},
		{"timeline anchor", func() error {
			_, err := m.Timeline(ctx, memory.TimelineParams{Anchor: json.RawMessage(`"yesterday"`)})
			return err
		}, "anchor"},
		{"save without text", func() error { _, err := m.Save(ctx, memory.SaveParams{Project: "p"}); return err }, "text"},
		{"tool from nowhere", func() error {
			_, err := m.PostToolUse(ctx, memory.ToolUseParams{ContentSessionID: "s", ToolName: "Edit", Source: "elsewhere"})
			return err
		}, "source"},
		{"anchor without file", func() error {
			_, err := m.Save(ctx, memory.SaveParams{Project: "p", Text: "x", Anchor: &memory.Anchor{StartLine: 1, EndLine: 1}})
			return err
		}, "anchor.file"},
		{"anchor ending before it starts", func() error {
			_, err := m.Save(ctx, memory.SaveParams{Project: "p", Text: "x", Anchor: &memory.Anchor{File: "a.go", StartLine: 9, EndLine: 3}})
			return err
		}, "anchor"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if err == nil || !strings.Contains(err.Error(), tc.field) {
				t.Fatalf("err = %v, want one naming %q", err, tc.field)
			}
		})
	}
}

// A session's turn goes from events to observations and a summary that a
// later session's context shows (without the failing run that the same
// command passing superseded).
func TestTurnBecomesObservationsSummaryAndContext(t *testing.T) {
	m := MustOpen(t, store.Options{InMemory: true})
	ctx := context.Background()
	mustPrompt(t, m, "cc-turn", "the cart total is wrong for discounts, fix it")
	mustTool(t, m, "cc-turn", "Read", readInput, readResponse)
	mustTool(t, m, "cc-turn", "Bash", `{"command":"go test ./cart/"}`, `{"error":"Exit code 1\n--- FAIL: TestTotalWithDiscount\n    total_test.go:31: got 90, want 81","isError":true}`)
	mustTool(t, m, "cc-turn", "Edit", `{"file_path":"/src/shop/cart/total.go","old_string":"total - discount","new_string":"total * (1 - rate)"}`, `{"filePath":"/src/shop/cart/total.go"}`)
	mustTool(t, m, "cc-turn", "Bash", `{"command":"go test ./cart/"}`, `{"stdout":"ok  shop/cart 0.01s","stderr":"","interrupted":false}`)
	if _, err := m.Stop(ctx, memory.StopParams{ContentSessionID: "cc-turn", LastAssistantMessage: "Fixed the discount: rates now multiply the total."}); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, m)
	sess := mustSession(t, m, "cc-turn")
	obs := observationsOf(t, m, sess.ID)
	var titles []string
	for _, o := range obs {
		titles = append(titles, o.Type+": "+o.Title)
		if o.Request == "" {
			t.Errorf("observation %q lost the request of its turn", o.Title)
		}
	}
	want := []string{"discovery: Read cart/total.go", "discovery: TestTotalWithDiscount fails: got 90, want 81", "bugfix: Fixed cart/total.go: total - discount → total * (1 - rate)", "bugfix: go test ./cart/ passes after fixing cart/total.go"}
	if strings.Join(titles, "\n") != strings.Join(want, "\n") {
		t.Fatalf("observations:\n%s\nwant:\n%s", strings.Join(titles, "\n"), strings.Join(want, "\n"))
	}
	sums, _ := m.Summaries(ctx, sess.ID)
	if len(sums) != 1 || !strings.Contains(strings.Join(sums[0].FilesModified, ","), "cart/total.go") || sums[0].Request == "" {
		t.Fatalf("summaries = %+v, want one naming cart/total.go", sums)
	}
	res, err := m.SessionStart(ctx, memory.SessionStartParams{ContentSessionID: "cc-next", Cwd: "/src/shop", Source: "startup"})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"<mnemo-context", "</mnemo-context>", "Fixed cart/total.go", "Files modified: cart/total.go"} {
		if !strings.Contains(res.Context, s) {
			t.Errorf("context lacks %q:\n%s", s, res.Context)
		}
	}
	// The failing run is superseded by the same command passing: the
	// context leaves it out and the audit says so. The read is not given:
	// the agent can read the file again.
	if len(res.ObservationIDs) != 2 || res.Bytes != len(res.Context) || strings.Contains(res.Context, "TestTotalWithDiscount fails") || strings.Contains(res.Context, "Read cart/total.go") {
		t.Fatalf("context cites %v (%d bytes):\n%s", res.ObservationIDs, res.Bytes, res.Context)
	}
	inj, err := m.Injections(ctx, 1)
	if err != nil || len(inj) != 1 || inj[0].ContentSessionID != "cc-next" || len(inj[0].Items) != 2 ||
		len(inj[0].Left) != 1 || !strings.Contains(inj[0].Left[0].Reason, "superseded by #4") {
		t.Fatalf("injection audit = %+v, %v", inj, err)
	}
}

func TestContextStaysWithinBudget(t *testing.T) {
	m := MustOpen(t, store.Options{InMemory: true, ContextBytes: 2048})
	ctx := context.Background()
	for i := range 200 {
		if _, err := m.Save(ctx, memory.SaveParams{Project: "big", Text: strings.Repeat("a long note about billing ", 4) + string(rune('A'+i%26)) + time.Duration(i).String()}); err != nil {
			t.Fatal(err)
		}
	}
	res, err := m.Context(ctx, memory.ContextParams{Project: "big"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Bytes > 2048 || len(res.ObservationIDs) == 0 {
		t.Fatalf("context is %d bytes with %d observations, budget 2048", res.Bytes, len(res.ObservationIDs))
	}
}

// The index's default and largest number of hits are the search
// contract's: a search without a limit finds as many hits whether the
// engine passes the default on or leaves it to the index.
func TestTheIndexLimitsAreTheContracts(t *testing.T) {
	if vector.DefaultLimit != memory.DefaultLimit || vector.MaxLimit != memory.MaxLimit {
		t.Errorf("vector's limits (default %d, at most %d) are not memory's (%d, %d)",
			vector.DefaultLimit, vector.MaxLimit, memory.DefaultLimit, memory.MaxLimit)
	}
}

func TestSearchTimelineGetForget(t *testing.T) {
	now := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { now = now.Add(time.Minute); return now }
	m := MustOpen(t, store.Options{InMemory: true, Now: clock})
	ctx := context.Background()
	var ids []uint64
	notes := []struct{ project, text, typ, file string }{
		{"shop", "cart totals round half-even", "decision", "cart/total.go"},
		{"shop", "checkout retries payment twice", "feature", "checkout/pay.go"},
		{"blog", "render markdown tables", "feature", "render/table.go"},
		{"shop", "fixed tax rounding in cart", "bugfix", "cart/tax.go"},
	}
	for _, n := range notes {
		r, err := m.Save(ctx, memory.SaveParams{Project: n.project, Text: n.text, Type: n.typ, Files: []string{n.file}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	search := func(p memory.SearchParams) []uint64 {
		t.Helper()
		res, err := m.Search(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		var got []uint64
		for _, h := range res.Hits {
			got = append(got, h.ID)
		}
		return got
	}
	for _, tc := range []struct {
		name string
		p    memory.SearchParams
		want []uint64
	}{
		{"newest first", memory.SearchParams{Project: "shop"}, []uint64{ids[3], ids[1], ids[0]}},
		{"type", memory.SearchParams{Types: []string{"feature"}}, []uint64{ids[2], ids[1]}},
		{"file fragment", memory.SearchParams{Files: []string{"cart/"}}, []uint64{ids[3], ids[0]}},
		{"since", memory.SearchParams{Since: time.Date(2026, 11, 1, 9, 2, 30, 0, time.UTC)}, []uint64{ids[3], ids[2]}},
		{"limit", memory.SearchParams{Limit: 1}, []uint64{ids[3]}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := search(tc.p); !equalIDs(got, tc.want) {
				t.Fatalf("hits = %v, want %v", got, tc.want)
			}
		})
	}
	if got := search(memory.SearchParams{Query: "tax rounding cart"}); len(got) == 0 || got[0] != ids[3] {
		t.Fatalf("query hits = %v, want %d first", got, ids[3])
	}
	if got := search(memory.SearchParams{Query: "kubernetes certificates rotation"}); len(got) != 0 {
		t.Fatalf("a query nothing answers returns %v, want nothing", got)
	}
	if got := search(memory.SearchParams{Query: "tax rounding tables", Project: "blog"}); len(got) != 1 || got[0] != ids[2] {
		t.Fatalf("a query keeps the project filter: hits = %v", got)
	}
	tl, err := m.Timeline(ctx, memory.TimelineParams{Anchor: json.RawMessage(`` + jsonNum(ids[1])), Before: 1, After: 1})
	if err != nil {
		t.Fatal(err)
	}
	var got []uint64
	for _, o := range tl.Observations {
		got = append(got, o.ID)
	}
	if !equalIDs(got, []uint64{ids[0], ids[1], ids[3]}) {
		t.Fatalf("timeline = %v, want %v (the anchor's project, oldest first)", got, []uint64{ids[0], ids[1], ids[3]})
	}
	fr, err := m.Forget(ctx, memory.IDsParams{IDs: []uint64{ids[0], 999}})
	if err != nil || !equalIDs(fr.Deleted, ids[:1]) || !equalIDs(fr.Missing, []uint64{999}) {
		t.Fatalf("forget = %+v, %v", fr, err)
	}
	gr, _ := m.Get(ctx, memory.IDsParams{IDs: []uint64{ids[0], ids[1]}})
	if len(gr.Observations) != 1 || !equalIDs(gr.Missing, ids[:1]) {
		t.Fatalf("get after forget = %+v", gr)
	}
	if got := search(memory.SearchParams{Files: []string{"cart/total.go"}}); len(got) != 0 {
		t.Fatalf("a forgotten observation is still found by file: %v", got)
	}
	if res, _ := m.Doctor(ctx); len(res.Problems) != 0 {
		t.Fatalf("doctor after forget: %v", res.Problems)
	}
}

func jsonNum(n uint64) string { b, _ := json.Marshal(n); return string(b) }

func equalIDs(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestProjectOf(t *testing.T) {
	root := t.TempDir()
	repo := filepath.Join(root, "shop")
	os.MkdirAll(filepath.Join(repo, ".git", "worktrees", "feature-x"), 0o755)
	os.MkdirAll(filepath.Join(repo, "cart", "deep"), 0o755)
	wt := filepath.Join(root, "shop-feature-x")
	os.MkdirAll(filepath.Join(wt, "sub"), 0o755)
	os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: "+filepath.Join(repo, ".git", "worktrees", "feature-x")+"\n"), 0o644)
	plain := filepath.Join(root, "notes")
	os.MkdirAll(plain, 0o755)
	for _, tc := range []struct{ cwd, want string }{
		{repo, "shop"},
		{filepath.Join(repo, "cart", "deep"), "shop"},
		{filepath.Join(wt, "sub"), "shop"},
		{plain, "notes"},
	} {
		if got := memory.ProjectOf(tc.cwd); got != tc.want {
			t.Errorf("ProjectOf(%s) = %q, want %q", tc.cwd, got, tc.want)
		}
	}
}

func TestSchemaFromTheFutureIsRefused(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	st, err := store.OpenDatabase(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SetSchemaVersion(store.SchemaVersion + 1); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if _, err := store.OpenDatabase(dir); err == nil || !strings.Contains(err.Error(), "upgrade Mnemo") {
		t.Fatalf("open = %v, want a refusal that says to upgrade", err)
	}
}

func TestSecondOpenOfADirectoryIsLocked(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	MustOpen(t, store.Options{Dir: dir})
	_, err := store.Open(context.Background(), store.Options{Dir: dir})
	if err == nil || !strings.Contains(err.Error(), "in use by another process") {
		t.Fatalf("second open = %v, want ErrLocked", err)
	}
}

// Forgotten text leaves no trace in any file of the data directory.
func TestForgetLeavesNoTraceOnDisk(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	m := MustOpen(t, store.Options{Dir: dir})
	ctx := context.Background()
	keep, _ := m.Save(ctx, memory.SaveParams{Project: "shop", Text: "keep this KEEPMARK-77"})
	gone, _ := m.Save(ctx, memory.SaveParams{Project: "shop", Text: "forget this FORGETMARK-91", Files: []string{"cart/secret.go"}})
	// More writes after it, so the forgotten record is not only in the
	// newest memtable.
	for i := range 50 {
		m.Save(ctx, memory.SaveParams{Project: "shop", Text: fmt.Sprintf("filler note %d", i)})
	}
	store.Sync(m)
	if !onDisk(t, filepath.Dir(dir), "FORGETMARK-91") {
		t.Fatal("the marker is not on disk before forget: this test would prove nothing")
	}
	if r, err := m.Forget(ctx, memory.IDsParams{IDs: []uint64{gone.ID}}); err != nil || len(r.Deleted) != 1 {
		t.Fatalf("forget = %+v, %v", r, err)
	}
	if got, _ := m.Get(ctx, memory.IDsParams{IDs: []uint64{keep.ID}}); len(got.Observations) != 1 {
		t.Fatal("a kept observation was lost")
	}
	m.Close()
	assertNotOnDisk(t, filepath.Dir(dir), "FORGETMARK-91")
}

// An export imported into another memory gives the same memories; a second
// import of the same file changes nothing.
func TestExportImportRoundTrip(t *testing.T) {
	src := MustOpen(t, store.Options{InMemory: true})
	ctx := context.Background()
	mustPrompt(t, src, "cc-exp", "tidy the cart")
	mustTool(t, src, "cc-exp", "Read", readInput, readResponse)
	src.Stop(ctx, memory.StopParams{ContentSessionID: "cc-exp", LastAssistantMessage: "tidied"})
	src.Save(ctx, memory.SaveParams{Project: "shop", Text: "a saved note about taxes"})
	waitIdle(t, src)
	var buf strings.Builder
	n, err := src.Export(ctx, &buf, true)
	if err != nil || n == 0 {
		t.Fatalf("export = %d, %v", n, err)
	}
	dst := MustOpen(t, store.Options{InMemory: true})
	res, err := dst.Import(ctx, strings.NewReader(buf.String()), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Sessions != 1 || res.Prompts != 1 || res.Observations != 2 || res.Summaries != 1 {
		t.Fatalf("import = %+v", res)
	}
	again, err := dst.Import(ctx, strings.NewReader(buf.String()), nil)
	// 2 observations, the session, its prompt and its summary.
	if err != nil || again != (memory.ImportResult{Duplicates: 5}) {
		t.Fatalf("second import = %+v, %v; want only duplicates", again, err)
	}
	hits, _ := dst.Search(ctx, memory.SearchParams{Query: "taxes"})
	if len(hits.Hits) == 0 || hits.Hits[0].Title != "a saved note about taxes" {
		t.Fatalf("search after import = %+v", hits.Hits)
	}
	if s := mustSession(t, dst, "cc-exp"); s.MemorySessionID == "" || s.PromptCounter != 1 {
		t.Fatalf("imported session = %+v", s)
	}
	if res, _ := dst.Doctor(ctx); len(res.Problems) != 0 {
		t.Fatalf("doctor after import: %v", res.Problems)
	}
	_, err = dst.Import(ctx, strings.NewReader(`{"kind":"observation","observation":{"project":"x"}}`+"\n"), nil)
	if err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Fatalf("bad line: %v, want an error naming line 1", err)
	}
}

// With a tight budget the context keeps what is worth re-reading (fixes,
// decisions, saved notes, files modified last time) over plain reads, and
// the audit says why each observation went in.
func TestContextPrefersUsefulObservations(t *testing.T) {
	now := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { now = now.Add(time.Minute); return now }
	m := MustOpen(t, store.Options{InMemory: true, Now: clock, ContextBytes: 900})
	ctx := context.Background()
	fix, _ := m.Save(ctx, memory.SaveParams{Project: "shop", Type: "bugfix", Title: "Fixed the tax rounding in cart/tax.go", Text: "tax rounding fix", Files: []string{"cart/tax.go"}})
	var reads []uint64
	for i := range 30 {
		r, _ := m.Save(ctx, memory.SaveParams{Project: "shop", Type: "discovery", Title: fmt.Sprintf("Read docs/page%02d.md", i), Text: fmt.Sprintf("read page %d", i)})
		reads = append(reads, r.ID)
	}
	res, err := m.SessionStart(ctx, memory.SessionStartParams{ContentSessionID: "cc-useful", Cwd: "/src/shop"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Bytes > 900 {
		t.Fatalf("context is %d bytes, budget 900", res.Bytes)
	}
	if !slices.Contains(res.ObservationIDs, fix.ID) {
		t.Fatalf("the older fix #%d was crowded out by reads: %v\n%s", fix.ID, res.ObservationIDs, res.Context)
	}
	if slices.Contains(res.ObservationIDs, reads[0]) {
		t.Fatalf("the oldest read #%d went in before newer ones", reads[0])
	}
	inj, _ := m.Injections(ctx, 1)
	for _, it := range inj[0].Items {
		if it.Reason == "" {
			t.Fatalf("injection item without a reason: %+v", inj[0].Items)
		}
	}
}

// A memory saved from a selection keeps where it came from: the file,
// relative to the project, and the range; the file is among its files.
func TestSaveKeepsTheAnchorOfASelection(t *testing.T) {
	m := MustOpen(t, store.Options{InMemory: true})
	ctx := context.Background()
	r, err := m.Save(ctx, memory.SaveParams{
		Cwd: "/src/shop", Text: "retry with backoff, never more than 3 times",
		Anchor: &memory.Anchor{File: "/src/shop/cart/retry.go", StartLine: 12, StartColumn: 2, EndLine: 18, EndColumn: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := m.Get(ctx, memory.IDsParams{IDs: []uint64{r.ID}})
	if err != nil || len(got.Observations) != 1 {
		t.Fatalf("get #%d: %v", r.ID, err)
	}
	o := got.Observations[0]
	want := memory.Anchor{File: "cart/retry.go", StartLine: 12, StartColumn: 2, EndLine: 18, EndColumn: 1}
	if o.Anchor == nil || *o.Anchor != want || o.Anchor.String() != "cart/retry.go:12-18" {
		t.Fatalf("anchor = %+v, want %+v", o.Anchor, want)
	}
	if len(o.FilesModified) != 1 || o.FilesModified[0] != "cart/retry.go" || o.Source != memory.SourceSaved {
		t.Fatalf("files %q, source %q", o.FilesModified, o.Source)
	}
	// The same text from another place is another memory.
	r2, err := m.Save(ctx, memory.SaveParams{
		Cwd: "/src/shop", Text: "retry with backoff, never more than 3 times",
		Anchor: &memory.Anchor{File: "/src/shop/cart/pay.go", StartLine: 3, EndLine: 4},
	})
	if err != nil || r2.ID == r.ID {
		t.Fatalf("second save: #%d, %v; want a memory of its own", r2.ID, err)
	}
}

// A memory a person saves is kept as theirs; one longer than a memory
// keeps is cut, and the result says so; whoever else is named is refused.
func TestSaveSaysWhoSavedAndWhatWasCut(t *testing.T) {
	m := MustOpen(t, store.Options{InMemory: true})
	ctx := context.Background()
	r, err := m.Save(ctx, memory.SaveParams{Project: "shop", Text: strings.Repeat("x", memory.MaxMessageBytes+10), By: memory.SavedByPerson})
	if err != nil || !r.Truncated {
		t.Fatalf("save of %d bytes: %+v, %v; want it cut", memory.MaxMessageBytes+10, r, err)
	}
	got, err := m.Get(ctx, memory.IDsParams{IDs: []uint64{r.ID}})
	if err != nil || len(got.Observations) != 1 {
		t.Fatalf("get #%d: %v", r.ID, err)
	}
	if o := got.Observations[0]; o.SavedBy != memory.SavedByPerson || !strings.Contains(o.Markdown(), " · saved by a person") {
		t.Fatalf("saved by %q:\n%s", o.SavedBy, o.Markdown())
	}
	r, err = m.Save(ctx, memory.SaveParams{Project: "shop", Text: strings.Repeat("y", memory.MaxMessageBytes)})
	if err != nil || r.Truncated {
		t.Fatalf("save of exactly the most a memory keeps: %+v, %v", r, err)
	}
	if _, err := m.Save(ctx, memory.SaveParams{Project: "shop", Text: "z", By: "robot"}); !errors.Is(err, memory.ErrInvalid) {
		t.Fatalf("save by a robot: %v, want invalid", err)
	}
}

// A search says whether more hits match than its limit let through, and
// its total is what it returned.
func TestSearchSaysWhetherMoreMatch(t *testing.T) {
	m := MustOpen(t, store.Options{InMemory: true})
	ctx := context.Background()
	for _, text := range []string{"the invoice rounds half-even", "the invoice total is in cents", "an invoice has lines"} {
		if _, err := m.Save(ctx, memory.SaveParams{Project: "shop", Text: text}); err != nil {
			t.Fatal(err)
		}
	}
	waitIdle(t, m)
	for _, tc := range []struct {
		limit int
		more  bool
	}{{1, true}, {2, true}, {3, false}, {20, false}} {
		r, err := m.Search(ctx, memory.SearchParams{Query: "invoice", Limit: tc.limit})
		if err != nil || len(r.Hits) != min(tc.limit, 3) || r.Total != len(r.Hits) || r.More != tc.more || r.Closest {
			t.Errorf("limit %d: %d hits, total %d, more %t, closest %t, %v; want more %t", tc.limit, len(r.Hits), r.Total, r.More, r.Closest, err, tc.more)
		}
	}
}

// Observations made before evidence was kept cannot get it (their events
// are gone); doctor notes how many there are, leaving out saved notes,
// which have no event.
func TestDoctorNotesObservationsMadeBeforeEvidence(t *testing.T) {
	m := MustOpen(t, store.Options{InMemory: true})
	ctx := context.Background()
	mustPrompt(t, m, "cc-ev", "read the cart")
	mustTool(t, m, "cc-ev", "Read", readInput, readResponse)
	m.Save(ctx, memory.SaveParams{Project: "shop", Text: "a saved note"})
	waitIdle(t, m)
	if res, err := m.Doctor(ctx); err != nil || len(res.Notes) != 0 {
		t.Fatalf("fresh memory: notes %q (%v), want none", res.Notes, err)
	}
	old := `{"kind":"session","session":{"id":1,"contentSessionId":"old","project":"shop","platform":"claude-code","status":"completed"}}
{"kind":"observation","observation":{"sessionId":1,"project":"shop","type":"discovery","title":"Read cart/old.go","tool":"Read","filesRead":["cart/old.go"]}}
`
	if _, err := m.Import(ctx, strings.NewReader(old), nil); err != nil {
		t.Fatal(err)
	}
	res, err := m.Doctor(ctx)
	want := "1 of 2 observations of tool runs were made before observations kept their evidence; their raw events are gone, so search finds them by their notes only"
	if err != nil || len(res.Notes) != 1 || res.Notes[0] != want {
		t.Fatalf("after an old import: notes %q (%v), want %q", res.Notes, err, want)
	}
}

// Footprint counts every live key in exactly one family: an observation
// with its vector and index entries, the session and prompt it belongs to.
func TestFootprintCountsEachRecordInItsFamily(t *testing.T) {
	m := MustOpen(t, store.Options{InMemory: true})
	ctx := context.Background()
	mustPrompt(t, m, "cc-fp", "read the cart")
	mustTool(t, m, "cc-fp", "Read", readInput, readResponse)
	waitIdle(t, m)
	fams, err := m.Footprint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, f := range fams {
		got[f.Name] = f.Keys
		if f.Keys > 0 && f.KeyBytes+f.ValueBytes == 0 {
			t.Errorf("%s: %d keys of no bytes", f.Name, f.Keys)
		}
	}
	for name, want := range map[string]int{"observations": 1, "vectors": 1, "sessions": 1, "prompts": 1, "queued events": 0, "index: observations by file": 1} {
		if got[name] != want {
			t.Errorf("%s: %d keys, want %d (all: %v)", name, got[name], want, got)
		}
	}
}

// A tool event whose output is over memory.MaxToolJSONBytes is queued
// with its output cut to it, its shape, its start and its end kept.
func TestPostToolUseKeepsABigOutputCut(t *testing.T) {
	m := MustOpen(t, store.Options{InMemory: true, Agent: blockedAgent{}})
	out := "START " + strings.Repeat("line of build output\n", 100_000) + " END"
	resp, _ := json.Marshal(map[string]any{"stdout": out, "exitCode": 2})
	if _, err := m.PostToolUse(context.Background(), memory.ToolUseParams{ContentSessionID: "big", Cwd: "/src/shop", ToolName: "Bash",
		ToolInput: json.RawMessage(`{"command":"make"}`), ToolResponse: resp}); err != nil {
		t.Fatal(err)
	}
	evs, err := store.Queued(m, 10)
	if err != nil || len(evs) != 1 {
		t.Fatalf("queued %v, %v", evs, err)
	}
	got := evs[0].ToolResponse
	if len(got) > memory.MaxToolJSONBytes {
		t.Errorf("kept %d bytes, over %d", len(got), memory.MaxToolJSONBytes)
	}
	var v struct {
		Stdout   string `json:"stdout"`
		ExitCode int    `json:"exitCode"`
	}
	if err := json.Unmarshal(got, &v); err != nil || v.ExitCode != 2 {
		t.Fatalf("the output lost its shape: %v: %.100s", err, got)
	}
	if !strings.HasPrefix(v.Stdout, "START line") || !strings.HasSuffix(v.Stdout, "output\n END") || !strings.Contains(v.Stdout, "bytes cut") {
		t.Errorf("the output lost its start, end or note: %.60q … %.60q", v.Stdout, v.Stdout[len(v.Stdout)-60:])
	}
}
