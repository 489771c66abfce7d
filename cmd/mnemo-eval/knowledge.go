package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/vector"
)

// The knowledge evaluation (testdata/knowledge, README.md there):
// multi-session histories where a fact learned early is needed later —
// how to run the tests, the fix of a recurring error, a decision in force
// — and facts that were replaced. Each case is a new session of its
// project: its SessionStart context must carry what the case needs, and
// for a replaced fact none of the phrases that state the old one.

// A KnowledgeSet is one split of the knowledge evaluation.
type KnowledgeSet struct {
	Name     string
	Projects []Project
	Cases    []KnowledgeCase
}

// A KnowledgeCase is what a new session of a project needs from its
// context: one phrase of every group of Needs; and, for a replaced fact,
// none of the phrases of Absent.
type KnowledgeCase struct {
	ID      string     `json:"id"`
	Project string     `json:"project"`
	Kind    string     `json:"kind"` // command, fix, decision or replaced
	Needs   [][]string `json:"needs"`
	Absent  [][]string `json:"absent,omitempty"`
}

// KnowledgeKinds are the kinds of case, in the order tables show them.
var KnowledgeKinds = []string{"command", "fix", "decision", "replaced"}

// holdsAll reports whether text holds one phrase of every group (any
// case, spaces squashed).
func holdsAll(text string, groups [][]string) bool {
	low := squashed(text)
	for _, g := range groups {
		if !slices.ContainsFunc(g, func(w string) bool { return strings.Contains(low, squashed(w)) }) {
			return false
		}
	}
	return len(groups) > 0
}

// holdsAny reports whether text holds any phrase of groups, as words: a
// phrase within a longer word ("npm test passes" in "pnpm test passes")
// is not held.
func holdsAny(text string, groups [][]string) bool {
	low := squashed(text)
	for _, g := range groups {
		if slices.ContainsFunc(g, func(w string) bool { return holdsWords(low, squashed(w)) }) {
			return true
		}
	}
	return false
}

func holdsWords(text, phrase string) bool {
	word := func(b byte) bool { return b == '_' || '0' <= b && b <= '9' || 'a' <= b && b <= 'z' }
	for i := 0; phrase != ""; {
		j := strings.Index(text[i:], phrase)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(phrase)
		if (start == 0 || !word(text[start-1]) || !word(phrase[0])) && (end == len(text) || !word(text[end]) || !word(phrase[len(phrase)-1])) {
			return true
		}
		i = start + 1
	}
	return false
}

func squashed(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }

// LoadKnowledge reads a knowledge split: <project>.jsonl files in the
// replay format and cases.jsonl.
func LoadKnowledge(dir string) (*KnowledgeSet, error) {
	projects, cases, err := loadSplit(dir, "cases.jsonl", func(c KnowledgeCase, projects []Project) error {
		switch {
		case !slices.Contains(KnowledgeKinds, c.Kind):
			return fmt.Errorf("unknown kind %q", c.Kind)
		case !hasProject(projects, c.Project):
			return fmt.Errorf("no project %q", c.Project)
		case len(c.Needs) == 0:
			return fmt.Errorf("case %s needs nothing", c.ID)
		case c.Kind == "replaced" && len(c.Absent) == 0:
			return fmt.Errorf("replaced case %s names no replaced fact (absent)", c.ID)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &KnowledgeSet{Name: filepath.Base(dir), Projects: projects, Cases: cases}, nil
}

// knowledgeResult is what one split gave, without and with the block.
type knowledgeResult struct {
	cases, replaced int
	carried         [2]int // without, with
	stale           [2]int // replaced facts carried, without and with
	bytes           [2]int // context bytes, summed
	blockBytes      int    // the knowledge block's bytes, summed
	byKind          map[string][2]int
	refresh         []time.Duration
}

// reportKnowledge replays a knowledge split and scores each case's new
// session: its context before the projects' knowledge was derived (the
// context as it was without it), then after.
func reportKnowledge(ctx context.Context, w io.Writer, s *KnowledgeSet, emb vector.Embedder, show bool) (*knowledgeResult, error) {
	start := time.Now()
	mem, err := replayProjects(ctx, s.Projects, emb)
	if err != nil {
		return nil, err
	}
	defer mem.Close()
	counts, err := mem.Counts(ctx)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "\n== knowledge %s split, %s embedder: %d projects, %d sessions → %d observations (replayed in %s); %d cases\n",
		s.Name, emb.ID(), len(s.Projects), counts.Sessions, counts.Observations, time.Since(start).Round(time.Millisecond), len(s.Cases))
	r := &knowledgeResult{byKind: map[string][2]int{}}
	cwds := map[string]string{}
	for _, p := range s.Projects {
		cwds[p.Name] = p.Cwd
	}
	contexts := [2]map[string]string{{}, {}}
	for pass := range 2 {
		if pass == 1 {
			// What the daemon does after each session ends.
			for _, p := range s.Projects {
				t0 := time.Now()
				if _, err := mem.RefreshKnowledge(ctx, memory.ProjectOf(p.Cwd)); err != nil {
					return nil, err
				}
				r.refresh = append(r.refresh, time.Since(t0))
			}
		}
		for _, c := range s.Cases {
			csid := fmt.Sprintf("mnemo-eval-knowledge-%d-%s", pass, c.ID)
			res, err := mem.SessionStart(ctx, memory.SessionStartParams{ContentSessionID: csid, Cwd: cwds[c.Project], Source: "startup", Platform: "claude-code"})
			if err != nil {
				return nil, fmt.Errorf("case %s: session start: %w", c.ID, err)
			}
			contexts[pass][c.ID] = res.Context
		}
	}
	for _, c := range s.Cases {
		r.cases++
		k := r.byKind[c.Kind]
		k[1]++
		for pass := range 2 {
			text := contexts[pass][c.ID]
			r.bytes[pass] += len(text)
			if holdsAll(text, c.Needs) {
				r.carried[pass]++
				if pass == 1 {
					k[0]++
				}
			}
			if c.Kind == "replaced" && holdsAny(text, c.Absent) {
				r.stale[pass]++
			}
		}
		if c.Kind == "replaced" {
			r.replaced++
		}
		if _, block, ok := strings.Cut(contexts[1][c.ID], "## Project knowledge"); ok {
			block, _, _ = strings.Cut(block, "\n## ")
			r.blockBytes += len("## Project knowledge") + len(block)
		}
		r.byKind[c.Kind] = k
		if show {
			mark := "MISS"
			if holdsAll(contexts[1][c.ID], c.Needs) {
				mark = "ok  "
			}
			if c.Kind == "replaced" && holdsAny(contexts[1][c.ID], c.Absent) {
				mark = "STALE"
			}
			fmt.Fprintf(w, "\n%s %s [%s] needs %v absent %v\n", mark, c.ID, c.Kind, c.Needs, c.Absent)
			if mark != "ok  " {
				fmt.Fprintf(w, "--- context\n%s", contexts[1][c.ID])
			}
		}
	}
	share := func(a, b int) string { return fmt.Sprintf("%.3f (%d/%d)", float64(a)/float64(max(b, 1)), a, b) }
	fmt.Fprintf(w, "   carried the needed fact: with project knowledge %s, without %s\n", share(r.carried[1], r.cases), share(r.carried[0], r.cases))
	fmt.Fprintf(w, "   carried a replaced fact: with %s, without %s\n", share(r.stale[1], r.replaced), share(r.stale[0], r.replaced))
	var kinds []string
	for _, k := range KnowledgeKinds {
		if c := r.byKind[k]; c[1] > 0 {
			kinds = append(kinds, fmt.Sprintf("%s %d/%d", k, c[0], c[1]))
		}
	}
	slices.Sort(r.refresh)
	fmt.Fprintf(w, "   by kind (with): %s; context %d bytes a session with the block (%d of them the block), %d without; deriving a project's knowledge: median %s\n",
		strings.Join(kinds, ", "), r.bytes[1]/max(r.cases, 1), r.blockBytes/max(r.cases, 1), r.bytes[0]/max(r.cases, 1), r.refresh[len(r.refresh)/2].Round(time.Microsecond))
	return r, nil
}
