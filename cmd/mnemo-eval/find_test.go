package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"unicode"

	"github.com/mnemo-dev/mnemo/adapters/hosts"
	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/store"
	"github.com/mnemo-dev/mnemo/vector"
)

// What you saw, you can find: every rare token of a raw tool event (an
// identifier, a path, a test name, an error code) searched verbatim in its
// project returns the observation made from that event in the top 5,
// whenever grep over the raw events puts the event in its top 5. Rare
// means that one tool event of its project only holds the token, also
// inside longer words (so grep finds that event alone). The events are
// every event of the replay splits and every payload recorded from the
// real Claude Code CLI.
func TestWhatYouSawYouCanFind(t *testing.T) {
	if testing.Short() {
		t.Skip("replays every event")
	}
	ctx := context.Background()
	sets := []*Set{recordedSet(t)}
	for _, split := range []string{"dev", "test"} {
		s, err := LoadSet(filepath.Join("testdata", "replay", split))
		if err != nil {
			t.Fatal(err)
		}
		sets = append(sets, s)
	}
	var tried, found int
	var misses []string
	for _, s := range sets {
		mem, err := Replay(ctx, s, vector.NewHashEmbedder())
		if err != nil {
			t.Fatal(err)
		}
		made := toolUseIDs(ctx, t, mem)
		for _, p := range s.Projects {
			project := memory.ProjectOf(p.Cwd)
			for _, rt := range rareTokens(p) {
				if !grepTop5(p, rt) {
					continue
				}
				tried++
				if ok, got := findsEvent(ctx, t, mem, made, project, rt); ok {
					found++
				} else {
					misses = append(misses, fmt.Sprintf("%s/%s %q (event %s): %s", s.Name, p.Name, rt.token, rt.toolUseID, got))
				}
			}
		}
		mem.Close()
	}
	share := float64(found) / float64(max(1, tried))
	t.Logf("%d of %d rare tokens found in the top 5 (%.1f %%)", found, tried, 100*share)
	if tried < 1000 {
		t.Errorf("only %d rare tokens tried: the corpus did not load", tried)
	}
	if share < 0.99 {
		slices.Sort(misses)
		t.Errorf("%.1f %% found, want at least 99 %%; the first misses:\n%s", 100*share, strings.Join(misses[:min(30, len(misses))], "\n"))
	}
}

// rareToken is a token that only one tool event of a project holds.
type rareToken struct {
	token     string
	event     int // index into the project's payloads
	toolUseID string
}

// rareTokens lists the tokens of a project's tool events that one event
// only holds, in any case and also inside longer words, in a stable order.
func rareTokens(p Project) []rareToken {
	owner := map[string]int{}
	for i, pl := range p.Payloads {
		if pl.ToolName == "" {
			continue
		}
		for tok := range eventTokens(pl) {
			if _, seen := owner[tok]; seen {
				owner[tok] = -1
			} else {
				owner[tok] = i
			}
		}
	}
	lowered := make([]string, len(p.Raw))
	for i, raw := range p.Raw {
		if p.Payloads[i].ToolName != "" {
			lowered[i] = strings.ToLower(string(raw))
		}
	}
	var out []rareToken
	for tok, ev := range owner {
		if ev < 0 {
			continue
		}
		low, unique := strings.ToLower(tok), true
		for i, text := range lowered {
			if i != ev && strings.Contains(text, low) {
				unique = false
				break
			}
		}
		if unique {
			out = append(out, rareToken{token: tok, event: ev, toolUseID: p.Payloads[ev].ToolUseID})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].token < out[j].token })
	return out
}

// eventTokens are the identifier-like tokens of an event's input, response
// and error: what a person would paste into a search box.
func eventTokens(pl *hosts.Payload) map[string]bool {
	toks := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			for _, tok := range strings.FieldsFunc(v, func(r rune) bool {
				return !(unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("_./-:", r))
			}) {
				tok = strings.Trim(tok, "./-:")
				if len(tok) >= 4 && len(tok) <= 64 && identifierLike(tok) {
					toks[tok] = true
				}
			}
		case map[string]any:
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	for _, raw := range []json.RawMessage{pl.ToolInput, pl.ToolResponse} {
		var v any
		if json.Unmarshal(raw, &v) == nil {
			walk(v)
		}
	}
	walk(pl.Error)
	return toks
}

// identifierLike: an underscore, a capital inside, letters with digits, a
// dot or slash inside, or a word of capitals.
func identifierLike(tok string) bool {
	var upper, lower, digit int
	for i, r := range tok {
		switch {
		case r == '_' || i > 0 && (r == '.' || r == '/'):
			return upper+lower > 0 || strings.IndexFunc(tok, unicode.IsLetter) >= 0
		case unicode.IsUpper(r):
			if i > 0 && lower > 0 {
				return true
			}
			upper++
		case unicode.IsLower(r):
			lower++
		case unicode.IsDigit(r):
			digit++
		}
	}
	return (upper+lower > 0 && digit > 0) || upper >= 4 && lower == 0
}

// grepTop5 reports whether grep for the token (any case) puts its event
// among the first five of the project's tool events that hold it, the
// latest first.
func grepTop5(p Project, rt rareToken) bool {
	low := strings.ToLower(rt.token)
	n := 0
	for i := len(p.Raw) - 1; i >= 0; i-- {
		if p.Payloads[i].ToolName == "" || !strings.Contains(strings.ToLower(string(p.Raw[i])), low) {
			continue
		}
		if i == rt.event {
			return n < 5
		}
		n++
	}
	return false
}

// findsEvent searches the token in the project and reports whether a top-5
// hit is the observation made from the token's event, or, when that
// observation was merged into an equal one, an observation that holds the
// token. Otherwise it describes what came back.
func findsEvent(ctx context.Context, t *testing.T, mem *store.Memory, made map[string]bool, project string, rt rareToken) (bool, string) {
	res, err := mem.Search(ctx, memory.SearchParams{Query: rt.token, Project: project, Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]uint64, 0, len(res.Hits))
	for _, h := range res.Hits {
		ids = append(ids, h.ID)
	}
	if len(ids) == 0 {
		return false, "no hits"
	}
	obs, err := mem.Get(ctx, memory.IDsParams{IDs: ids})
	if err != nil {
		t.Fatal(err)
	}
	var titles []string
	for _, o := range obs.Observations {
		if o.ToolUseID == rt.toolUseID {
			return true, ""
		}
		titles = append(titles, o.Title)
	}
	// The event's own observation may have been merged into an equal one of
	// its session: then a hit that holds the token is that observation.
	if !made[rt.toolUseID] {
		for _, o := range obs.Observations {
			if holds(o, rt.token) {
				return true, ""
			}
		}
		return false, "(no observation of its own) " + strings.Join(titles, " | ")
	}
	return false, strings.Join(titles, " | ")
}

// toolUseIDs lists the tool runs the memory made observations of.
func toolUseIDs(ctx context.Context, t *testing.T, mem *store.Memory) map[string]bool {
	all, err := mem.Search(ctx, memory.SearchParams{Limit: memory.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for batch := range slices.Chunk(all.Hits, 100) {
		ids := make([]uint64, len(batch))
		for i, h := range batch {
			ids[i] = h.ID
		}
		obs, err := mem.Get(ctx, memory.IDsParams{IDs: ids})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range obs.Observations {
			out[o.ToolUseID] = true
		}
	}
	return out
}

// holds reports whether an observation's stored text holds the token.
func holds(o memory.Observation, token string) bool {
	text := strings.Join(append(append([]string{o.Title, o.Subtitle, o.Narrative, o.Evidence, o.Request}, o.Facts...), o.Files()...), "\n")
	return strings.Contains(strings.ToLower(text), strings.ToLower(token))
}

// recordedSet is the payloads recorded from the real Claude Code CLI, one
// project per recorded session.
func recordedSet(t *testing.T) *Set {
	s := &Set{Name: "recorded"}
	dirs, err := filepath.Glob(filepath.Join("..", "..", "memory", "local", "testdata", "recorded", "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no recorded sessions: %v", err)
	}
	for _, dir := range dirs {
		files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		sort.Strings(files)
		p := Project{Name: filepath.Base(dir)}
		for _, f := range files {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var pl hosts.Payload
			if err := json.Unmarshal(raw, &pl); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if p.Cwd == "" {
				p.Cwd = pl.Cwd
			}
			p.Payloads = append(p.Payloads, &pl)
			p.Raw = append(p.Raw, raw)
		}
		s.Projects = append(s.Projects, p)
	}
	return s
}
