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

// What a turn that touched no file said is about the work it follows: a
// follow-up question's answer, and a follow-up prompt kept as a record,
// get the files the session's last turn changed (or those of the
// session's files they name); a turn that worked on files of its own, a
// decision, and a session with no earlier changes get none.
func TestAFollowUpIsTiedToTheWorkItFollows(t *testing.T) {
	m := MustOpen(t, store.Options{InMemory: true})
	ctx := context.Background()
	stop := func(csid, answer string) {
		t.Helper()
		if _, err := m.Stop(ctx, memory.StopParams{ContentSessionID: csid, Cwd: "/src/shop", LastAssistantMessage: answer}); err != nil {
			t.Fatal(err)
		}
	}
	mustPrompt(t, m, "s1", "go test -race fails in the ratelimit package, fix it properly")
	mustTool(t, m, "s1", "Edit", `{"file_path":"/src/shop/internal/ratelimit/limiter.go","old_string":"a","new_string":"b"}`, `{"filePath":"/src/shop/internal/ratelimit/limiter.go"}`)
	mustTool(t, m, "s1", "Edit", `{"file_path":"/src/shop/internal/ratelimit/limiter_test.go","old_string":"a","new_string":"b"}`, `{"filePath":"/src/shop/internal/ratelimit/limiter_test.go"}`)
	stop("s1", "Switched the limiter to an RWMutex with a double-checked insert.")
	// A follow-up that runs a benchmark and explains.
	mustPrompt(t, m, "s1", "what does that cost us on the hot path compared to the old version?")
	mustTool(t, m, "s1", "Bash", `{"command":"go test -run ^$ -bench BenchmarkAllow ./internal/ratelimit/"}`, `{"stdout":"BenchmarkAllow-8 131 ns/op","stderr":"","interrupted":false}`)
	stop("s1", "About +10% per Allow call under parallel load (118ns to 131ns), no allocations. The old number was only fast because it was racy; at our request rates this is noise, so I would keep the lock as it is.")
	// A follow-up in words alone, naming the test file.
	mustPrompt(t, m, "s1", "and why did limiter_test.go need the parallel subtest at all?")
	stop("s1", "")
	// A choice stated later stays its own.
	mustPrompt(t, m, "s1", "From now on we use golangci-lint instead of go vet alone in CI.")
	stop("s1", "")
	// A chat in a session that changed nothing.
	mustPrompt(t, m, "s2", "what is the difference between a mutex and a channel in Go?")
	stop("s2", "")
	waitIdle(t, m)
	res, err := m.Search(ctx, memory.SearchParams{Project: "shop", Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]string{}
	for _, h := range res.Hits {
		files[h.Title] = h.Files
	}
	want := map[string][]string{
		"The old number was only fast because it was racy; at our request rates this is noise, so I would keep the lock as it is.": {"internal/ratelimit/limiter.go", "internal/ratelimit/limiter_test.go"},
		"and why did limiter_test.go need the parallel subtest at all?":                                                            {"internal/ratelimit/limiter_test.go"},
		"what is the difference between a mutex and a channel in Go?":                                                              nil,
	}
	for title, w := range want {
		got, ok := files[title]
		if !ok {
			t.Errorf("no record %q among %v", title, files)
			continue
		}
		if strings.Join(got, ",") != strings.Join(w, ",") {
			t.Errorf("%q: files %v, want %v", title, got, w)
		}
	}
	for title, f := range files {
		if strings.HasPrefix(title, "Decision:") && len(f) > 0 {
			t.Errorf("the decision %q got files %v", title, f)
		}
	}
}
