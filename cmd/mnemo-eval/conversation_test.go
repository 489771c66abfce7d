package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mnemo-dev/mnemo/adapters/hosts/backfill"
	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/store"
	"github.com/mnemo-dev/mnemo/vector"
)

// The conversation's records are the same whether a session was captured
// live (the hooks' payloads, the daemon reading each turn's texts from
// the transcript at the turn's end, the hook's last_assistant_message
// where the transcript lagged) or back-filled later from its transcript
// alone: every record of the dev split's sessions, with its why, and
// every turn's summary.
func TestConversationBackfillEqualsLive(t *testing.T) {
	ctx := context.Background()
	s, err := LoadConversation(filepath.Join("testdata", "conversation", "dev"))
	if err != nil {
		t.Fatal(err)
	}
	live, err := replayProjects(ctx, s.Projects, vector.NewHashEmbedder())
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()

	back := MustOpenMemory(t)
	dir := t.TempDir()
	var sessions []string
	for _, p := range s.Projects {
		for i := 0; i <= len(p.Payloads); i++ {
			for _, tl := range p.Transcript[i] {
				path := filepath.Join(dir, tl.SessionID+".jsonl")
				if !slices.Contains(sessions, path) {
					sessions = append(sessions, path)
				}
				if err := appendLine(path, tl.Raw); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	for _, path := range sessions {
		sid := strings.TrimSuffix(filepath.Base(path), ".jsonl")
		if _, err := backfill.ClaudeCode(sid, path, backfill.Options{}, func(c backfill.Call) error {
			return call(ctx, back, c.Method, c.Params)
		}); err != nil {
			t.Fatalf("back-fill %s: %v", sid, err)
		}
	}
	if err := back.WaitIdle(ctx); err != nil {
		t.Fatal(err)
	}
	got, want := recordsOf(ctx, t, back), recordsOf(ctx, t, live)
	if len(want) < 50 {
		t.Fatalf("only %d records live: the split did not replay", len(want))
	}
	for i := range max(len(got), len(want)) {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			t.Errorf("record %d differs:\nback-filled %s\nlive        %s", i, g, w)
		}
	}
	withWhy := 0
	for _, r := range want {
		if strings.Contains(r, "why=\"") && !strings.Contains(r, "why=\"\"") {
			withWhy++
		}
	}
	// The dev split's agent wrote a text right before a tool call 8 times.
	if withWhy != 8 {
		t.Errorf("%d records have a why, want 8", withWhy)
	}
}

// MustOpenMemory opens an empty in-memory store with the hashing embedder.
func MustOpenMemory(tb testing.TB) *store.Memory {
	tb.Helper()
	m, err := store.Open(context.Background(), store.Options{InMemory: true, Embedder: vector.NewHashEmbedder(), NoSync: true})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { m.Close() })
	return m
}

// recordsOf lists what a memory holds of its sessions, one line a record
// and a summary, in the order of their sessions and turns: what each says,
// not when it was made.
func recordsOf(ctx context.Context, t *testing.T, m *store.Memory) []string {
	t.Helper()
	sessions, err := m.Sessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(sessions, func(a, b memory.Session) int { return strings.Compare(a.ContentSessionID, b.ContentSessionID) })
	var out []string
	for _, sess := range sessions {
		res, err := m.SessionRecords(ctx, memory.SessionParams{ContentSessionID: sess.ContentSessionID})
		if err != nil {
			t.Fatal(err)
		}
		var ids []uint64
		for _, h := range res.Observations {
			ids = append(ids, h.ID)
		}
		if len(ids) > 0 {
			full, err := m.Get(ctx, memory.IDsParams{IDs: ids})
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range full.Observations {
				out = append(out, fmt.Sprintf("%s/%d %s %q facts=%q narrative=%q why=%q request=%q files=%q/%q evidence=%q tool=%s",
					o.ContentSessionID, o.PromptNumber, o.Type, o.Title, o.Facts, o.Narrative, o.Why, o.Request, o.FilesRead, o.FilesModified, o.Evidence, o.ToolUseID))
			}
		}
		for _, sum := range res.Summaries {
			out = append(out, fmt.Sprintf("%s/%d summary request=%q learned=%q completed=%q next=%q notes=%q",
				sess.ContentSessionID, sum.PromptNumber, sum.Request, sum.Learned, sum.Completed, sum.NextSteps, sum.Notes))
		}
	}
	return out
}

// The tools that show single outcomes refuse every held-out split, the
// second conversation split as the first, and load every split.
func TestHeldOutSplitsRefused(t *testing.T) {
	for _, split := range []string{"test", "test2"} {
		err := run(context.Background(), []string{"-splits", "", "-public", "", "-embedder", "hash", "-tasks", "-conversation", split}, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "held-out "+split+" split") {
			t.Errorf("-tasks on %s: %v, want the held-out refusal", split, err)
		}
	}
	for _, split := range []string{"dev", "test", "test2"} {
		s, err := LoadConversation(filepath.Join("testdata", "conversation", split))
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Tasks) == 0 || len(s.Projects) == 0 {
			t.Errorf("%s: %d tasks, %d projects", split, len(s.Tasks), len(s.Projects))
		}
	}
}
