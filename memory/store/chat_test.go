package store_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/store"
)

// The prompts of chat turns (no tool call, no answer worth a record) are
// records of their own: search finds each by what was said in it, a
// later prompt's recall may give it, and SessionStart's context gives
// none of them (nor counts them as what was learned), however many
// there are.
func TestChatPromptsAreFoundNotGiven(t *testing.T) {
	m := MustOpen(t, store.Options{InMemory: true})
	ctx := context.Background()
	prompts := []string{
		"Caroline: I went to an LGBTQ support group yesterday and it was so powerful.",
		"Melanie: I ran a charity race for mental health last Saturday, it was really rewarding.",
		"Caroline: I'm researching adoption agencies, it's been a dream to have a family.",
	}
	for _, p := range prompts {
		mustPrompt(t, m, "chat-1", p)
		if _, err := m.Stop(ctx, memory.StopParams{ContentSessionID: "chat-1", Cwd: "/src/shop"}); err != nil {
			t.Fatal(err)
		}
	}
	// A turn of tool work in the same project, for the context to give.
	mustPrompt(t, m, "chat-1", "fix the cart total")
	mustTool(t, m, "chat-1", "Edit", `{"file_path":"/src/shop/cart.go","old_string":"a","new_string":"b"}`, `{"filePath":"/src/shop/cart.go"}`)
	if _, err := m.Stop(ctx, memory.StopParams{ContentSessionID: "chat-1", Cwd: "/src/shop"}); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, m)

	res, err := m.Search(ctx, memory.SearchParams{Query: "charity race", Project: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) == 0 || res.Hits[0].Type != memory.TypePrompt || !strings.Contains(res.Hits[0].Title, "charity race") {
		t.Fatalf("search for what was said: %+v, want the prompt's record first", res.Hits)
	}
	start, err := m.SessionStart(ctx, memory.SessionStartParams{ContentSessionID: "chat-2", Cwd: "/src/shop"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range prompts {
		if strings.Contains(start.Context, p[strings.Index(p, " ")+1:][:30]) {
			t.Errorf("the context gives the prompt %q:\n%s", p, start.Context)
		}
	}
	if !strings.Contains(start.Context, "cart.go") {
		t.Errorf("the context lacks the tool work:\n%s", start.Context)
	}
	up := mustPrompt(t, m, "chat-2", "what did Caroline research about adoption agencies?")
	if !strings.Contains(up.Context, "adoption agencies") {
		t.Errorf("the prompt's recall lacks the earlier chat turn:\n%s", up.Context)
	}
}
