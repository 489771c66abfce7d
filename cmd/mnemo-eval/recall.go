package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/store"
)

// recallMetrics scores the prompt recall (UserPromptSubmit's context) of
// one kind of question, each asked as the first prompt of a new session in
// its project: with the floor in force, how often the recall names a file
// that answers, how many lines it gives, how many of them answer, and, for
// the questions that have no answer, how often it stays quiet.
type recallMetrics struct {
	n, answered float64 // questions with an answer, and those the recall answered
	spoke       float64 // questions that got a recall
	lines, good float64 // lines recalled, and those that answer
	firstGood   float64 // recalls whose first line answers
	none, quiet float64 // questions without an answer, and those that got nothing
}

func (m *recallMetrics) add(q Query, lines []rankedHit) {
	if len(lines) > 0 {
		m.spoke++
		m.lines += float64(len(lines))
		if answers(q, lines[0]) {
			m.firstGood++
		}
	}
	if q.Kind == "none" {
		m.none++
		if len(lines) == 0 {
			m.quiet++
		}
		return
	}
	m.n++
	hit := false
	for _, l := range lines {
		if answers(q, l) {
			m.good++
			hit = true
		}
	}
	if hit {
		m.answered++
	}
}

// promptRecall asks every question of s as the first prompt of its own
// session and prints the recall's figures by kind.
func promptRecall(ctx context.Context, w io.Writer, s *Set, mem *store.Memory) error {
	cwds := map[string]string{}
	for _, p := range s.Projects {
		cwds[memory.ProjectOf(p.Cwd)] = p.Cwd
	}
	byKind := map[string]*recallMetrics{"all": {}}
	for _, k := range Kinds {
		byKind[k] = &recallMetrics{}
	}
	for _, q := range s.Queries {
		r, err := mem.UserPromptSubmit(ctx, memory.UserPromptParams{
			ContentSessionID: "mnemo-eval-recall-" + q.ID, Cwd: cwds[q.Project], Prompt: q.Query, Platform: "mnemo-eval"})
		if err != nil {
			return fmt.Errorf("prompt %s: %w", q.ID, err)
		}
		var lines []rankedHit
		if len(r.ObservationIDs) > 0 {
			got, err := mem.Get(ctx, memory.IDsParams{IDs: r.ObservationIDs})
			if err != nil {
				return err
			}
			for _, o := range got.Observations {
				lines = append(lines, rankedHit{project: o.Project, files: o.Files()})
			}
		}
		byKind["all"].add(q, lines)
		byKind[q.Kind].add(q, lines)
	}
	fmt.Fprintf(w, "\nprompt recall (UserPromptSubmit's context; each question the first prompt of a new session; the floor in force):\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "kind\tn\tanswered\tspoke\tlines\tlines answering\tfirst line answers\tquiet\t")
	share := func(a, b float64) string {
		if b == 0 {
			return "-"
		}
		return fmt.Sprintf("%.3f", a/b)
	}
	for _, kind := range append([]string{"all"}, Kinds...) {
		m := byKind[kind]
		n := m.n + m.none
		fmt.Fprintf(tw, "%s\t%.0f\t%s\t%s\t%s\t%s\t%s\t%s\t\n", kind, n, share(m.answered, m.n), share(m.spoke, n),
			share(m.lines, m.spoke), share(m.good, m.lines), share(m.firstGood, m.spoke), share(m.quiet, m.none))
	}
	return tw.Flush()
}
