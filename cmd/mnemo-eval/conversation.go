package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/store"
	"github.com/mnemo-dev/mnemo/vector"
)

// The conversation evaluation (testdata/conversation, README.md there):
// sessions whose result is text — a finding in the agent's reply, a
// decision stated in a prompt, the reason the agent gave before a tool
// call — each followed by unrelated sessions of the same project, and
// tasks: the prompt of a new session that needs what an earlier session
// settled without naming it, and the words that carry it.

// A ConversationSet is one split of the conversation evaluation.
type ConversationSet struct {
	Name     string
	Projects []Project
	Tasks    []Task
}

// A Task is the first prompt of a new session in a project and what it
// needs: every group of Needs must be carried by one of its words (any
// case), for the session to get what an earlier one settled.
type Task struct {
	ID      string     `json:"id"`
	Project string     `json:"project"`
	Kind    string     `json:"kind"` // finding, decision or why
	Prompt  string     `json:"prompt"`
	Needs   [][]string `json:"needs"`
}

// TaskKinds are the kinds of task, in the order tables show them.
var TaskKinds = []string{"finding", "decision", "why"}

// carries reports whether text holds one word of every group of needs.
func (t *Task) carries(text string) bool {
	low := strings.ToLower(strings.Join(strings.Fields(text), " "))
	for _, group := range t.Needs {
		if !slices.ContainsFunc(group, func(w string) bool { return strings.Contains(low, strings.ToLower(w)) }) {
			return false
		}
	}
	return len(t.Needs) > 0
}

// LoadConversation reads a conversation split: <project>.jsonl files in
// the replay format (hook payloads and transcript lines) and tasks.jsonl.
// A task whose prompt already holds what it needs is refused: it would
// measure nothing.
func LoadConversation(dir string) (*ConversationSet, error) {
	projects, tasks, err := loadSplit(dir, "tasks.jsonl", func(t Task, projects []Project) error {
		switch {
		case !slices.Contains(TaskKinds, t.Kind):
			return fmt.Errorf("unknown kind %q", t.Kind)
		case !hasProject(projects, t.Project):
			return fmt.Errorf("no project %q", t.Project)
		case len(t.Needs) == 0 || t.carries(t.Prompt):
			return fmt.Errorf("task %s needs nothing its prompt does not already say", t.ID)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &ConversationSet{Name: filepath.Base(dir), Projects: projects, Tasks: tasks}, nil
}

// conversationResult is what one split gave with one embedder.
type conversationResult struct {
	tasks, context, recall, next int // tasks, and those carried by the context, the recall, either
	contextBytes, recallBytes    int
	recallLines, spoke           int
	search                       map[string]*Metrics // by ranking: keyword, vector, hybrid, grep
	byKind                       map[string][2]int   // next-session: carried, of
	passed                       map[string]bool     // by task id
}

// reportConversation replays a conversation split with one embedder and
// prints its tables: the next session's score (SessionStart's context
// and the task prompt's recall, in a new session of the project), and
// search with each task's prompt beside grep over the raw sessions.
func reportConversation(ctx context.Context, w io.Writer, s *ConversationSet, emb vector.Embedder, show bool) (*conversationResult, error) {
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
	fmt.Fprintf(w, "\n== conversation %s split, %s embedder: %d projects, %d sessions → %d observations, %d summaries (replayed in %s); %d tasks\n",
		s.Name, emb.ID(), len(s.Projects), counts.Sessions, counts.Observations, counts.Summaries, time.Since(start).Round(time.Millisecond), len(s.Tasks))
	if err := printFootprint(ctx, w, mem, counts.Observations); err != nil {
		return nil, err
	}
	r := &conversationResult{search: map[string]*Metrics{}, byKind: map[string][2]int{}, passed: map[string]bool{}}
	// Search first: the next sessions below add sessions and injections.
	rows := []struct {
		name   string
		search func(context.Context, Task) (bool, int, error)
	}{
		{"keyword", taskSearch(mem, memory.ModeKeyword)},
		{"vector", taskSearch(mem, memory.ModeVector)},
		{"hybrid", taskSearch(mem, memory.ModeHybrid)},
		{"grep", newLineGrep(s).search},
	}
	ranks := map[string][]string{} // by task id: each ranking's rank, for -tasks
	for _, row := range rows {
		m := &Metrics{}
		for _, t := range s.Tasks {
			_, rank, err := row.search(ctx, t)
			if err != nil {
				return nil, fmt.Errorf("task %s: %w", t.ID, err)
			}
			ranks[t.ID] = append(ranks[t.ID], fmt.Sprintf("%s %s", row.name, rankWord(rank)))
			m.n++
			if rank > 0 {
				m.mrr += 1 / float64(rank)
				if rank == 1 {
					m.r1++
				}
				if rank <= 5 {
					m.r5++
				}
				if rank <= 10 {
					m.r10++
				}
			}
		}
		r.search[row.name] = m
	}
	cwds := map[string]string{}
	for _, p := range s.Projects {
		cwds[p.Name] = p.Cwd
	}
	for _, t := range s.Tasks {
		csid := "mnemo-eval-next-" + t.ID
		start, err := mem.SessionStart(ctx, memory.SessionStartParams{ContentSessionID: csid, Cwd: cwds[t.Project], Source: "startup", Platform: "claude-code"})
		if err != nil {
			return nil, fmt.Errorf("task %s: session start: %w", t.ID, err)
		}
		up, err := mem.UserPromptSubmit(ctx, memory.UserPromptParams{ContentSessionID: csid, Cwd: cwds[t.Project], Prompt: t.Prompt, Platform: "claude-code"})
		if err != nil {
			return nil, fmt.Errorf("task %s: prompt: %w", t.ID, err)
		}
		inContext, inRecall := t.carries(start.Context), t.carries(up.Context)
		both := t.carries(start.Context + "\n" + up.Context)
		r.tasks++
		r.contextBytes += len(start.Context)
		r.recallBytes += len(up.Context)
		r.recallLines += len(up.ObservationIDs)
		if up.Context != "" {
			r.spoke++
		}
		k := r.byKind[t.Kind]
		k[1]++
		if inContext {
			r.context++
		}
		if inRecall {
			r.recall++
		}
		if both {
			r.next++
			k[0]++
		}
		r.byKind[t.Kind] = k
		r.passed[t.ID] = both
		if show {
			mark := "MISS"
			if both {
				mark = "ok  "
			}
			fmt.Fprintf(w, "\n%s %s [%s] %q needs %v (context %v, recall %v; search: %s)\n", mark, t.ID, t.Kind, t.Prompt, t.Needs, inContext, inRecall, strings.Join(ranks[t.ID], ", "))
			if !both {
				fmt.Fprintf(w, "--- context\n%s--- recall\n%s", start.Context, up.Context)
			}
		}
	}
	share := func(a, b int) string { return fmt.Sprintf("%.3f", float64(a)/float64(max(b, 1))) }
	fmt.Fprintf(w, "   next session (SessionStart's context + the prompt's recall carry what the task needs): %s (%d of %d); the context alone %s, the recall alone %s\n",
		share(r.next, r.tasks), r.next, r.tasks, share(r.context, r.tasks), share(r.recall, r.tasks))
	var kinds []string
	for _, k := range TaskKinds {
		if c := r.byKind[k]; c[1] > 0 {
			kinds = append(kinds, fmt.Sprintf("%s %d/%d", k, c[0], c[1]))
		}
	}
	fmt.Fprintf(w, "   by kind: %s; context %d bytes a session, recall spoke for %s of the prompts, %.1f lines and %d bytes when it did\n",
		strings.Join(kinds, ", "), r.contextBytes/max(r.tasks, 1), share(r.spoke, r.tasks), float64(r.recallLines)/float64(max(r.spoke, 1)), r.recallBytes/max(r.spoke, 1))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "search with the task's prompt\tn\tR@1\tR@5\tR@10\tMRR\t")
	for _, row := range rows {
		m := r.search[row.name]
		fmt.Fprintf(tw, "%s\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t\n", row.name, m.Queries(), m.Recall1(), m.Recall5(), m.Recall10(), m.MRR())
	}
	return r, tw.Flush()
}

// rankWord is a search rank as -tasks prints it: "#3", or "not in the
// top 10".
func rankWord(rank int) string {
	if rank == 0 {
		return "not in the top 10"
	}
	return fmt.Sprintf("#%d", rank)
}

// taskSearch searches mem with a task's prompt, over every project as
// `mnemo search` does, and returns the rank (1-based, 0 when not in the
// top 10) of the first record of the task's project whose full text
// carries what the task needs.
func taskSearch(mem *store.Memory, mode string) func(context.Context, Task) (bool, int, error) {
	return func(ctx context.Context, t Task) (bool, int, error) {
		res, err := mem.Search(ctx, memory.SearchParams{Query: t.Prompt, Mode: mode, Limit: 10})
		if err != nil {
			return false, 0, err
		}
		ids := make([]uint64, 0, len(res.Hits))
		for _, h := range res.Hits {
			ids = append(ids, h.ID)
		}
		if len(ids) == 0 {
			return false, 0, nil
		}
		got, err := mem.Get(ctx, memory.IDsParams{IDs: ids})
		if err != nil {
			return false, 0, err
		}
		for i, o := range got.Observations {
			if o.Project == t.Project && t.carries(recordText(&o)) {
				return true, i + 1, nil
			}
		}
		return false, 0, nil
	}
}

// recordText is everything a record says, as `mnemo get` shows it.
func recordText(o *memory.Observation) string {
	b, _ := json.Marshal(o)
	var fields map[string]any
	_ = json.Unmarshal(b, &fields)
	var parts []string
	for _, k := range []string{"title", "subtitle", "narrative", "why", "request", "evidence"} {
		if s, ok := fields[k].(string); ok {
			parts = append(parts, s)
		}
	}
	return strings.Join(append(parts, o.Facts...), "\n")
}

// lineGrep is the baseline of the conversation split: a person grepping
// the raw sessions (every hook payload and transcript line of the split,
// as search covers every project) for the words of the task's prompt,
// the lines holding the most distinct words first, the latest among
// equals; a line answers when it is of the task's project and carries
// what the task needs.
type lineGrep struct {
	lines    []string // lowercased
	projects []string // the project of each line
}

func newLineGrep(s *ConversationSet) *lineGrep {
	g := &lineGrep{}
	for _, p := range s.Projects {
		add := func(raw []byte) {
			g.lines = append(g.lines, strings.ToLower(string(raw)))
			g.projects = append(g.projects, p.Name)
		}
		for i := 0; i <= len(p.Payloads); i++ {
			for _, tl := range p.Transcript[i] {
				add(tl.Raw)
			}
			if i < len(p.Payloads) {
				add(p.Raw[i])
			}
		}
	}
	return g
}

func (g *lineGrep) search(_ context.Context, t Task) (bool, int, error) {
	words := grepWords(t.Prompt)
	type scored struct{ i, n int }
	var hits []scored
	for i, l := range g.lines {
		n := 0
		for _, w := range words {
			if strings.Contains(l, w) {
				n++
			}
		}
		if n > 0 {
			hits = append(hits, scored{i, n})
		}
	}
	slices.SortStableFunc(hits, func(a, b scored) int { return cmp.Or(cmp.Compare(b.n, a.n), cmp.Compare(b.i, a.i)) })
	for rank, h := range hits[:min(10, len(hits))] {
		if g.projects[h.i] == t.Project && t.carries(g.lines[h.i]) {
			return true, rank + 1, nil
		}
	}
	return false, 0, nil
}
