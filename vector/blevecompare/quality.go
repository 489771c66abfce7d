package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/mnemo-dev/mnemo/vector"
)

// ranker returns the ids of the best 10 documents for a query of the
// evaluation set.
type ranker struct {
	name string
	rank func(q evalQuery) ([]uint64, error)
}

// measureQuality ranks every query of the evaluation set with grep, Mnemo's
// keyword index and each bleve setup, and writes the recall and MRR tables;
// with misses, also the queries each ranking answers below rank 5.
func measureQuality(ctx context.Context, w io.Writer, s *evalSet, misses bool) error {
	ix := vector.NewIndex(vector.NewHashEmbedder())
	if err := ix.Add(ctx, s.docs...); err != nil {
		return fmt.Errorf("quality: %w", err)
	}
	rankers := []ranker{
		{"grep", func(q evalQuery) ([]uint64, error) { return grepRank(s, q), nil }},
		{"ours (vector.Keyword)", func(q evalQuery) ([]uint64, error) {
			hits, err := ix.Search(ctx, vector.Query{Text: q.Query, Project: q.Project, Limit: 10, Mode: vector.Keyword})
			ids := make([]uint64, len(hits))
			for i, h := range hits {
				ids[i] = h.ID
			}
			return ids, err
		}},
	}
	for _, b := range qualitySetups {
		idx, err := b.openMemory()
		if err != nil {
			return fmt.Errorf("quality: %s: %w", b.name, err)
		}
		defer idx.Close()
		if err := b.indexDocs(idx, s.docs, 0); err != nil {
			return fmt.Errorf("quality: %s: %w", b.name, err)
		}
		rankers = append(rankers, ranker{b.name, func(q evalQuery) ([]uint64, error) {
			return b.search(idx, q.Query, q.Project, 10)
		}})
	}

	results := make([]*metrics, len(rankers))
	missed := make([][]string, len(rankers))
	for i, r := range rankers {
		results[i] = &metrics{}
		for _, q := range s.queries {
			ids, err := r.rank(q)
			if err != nil {
				return fmt.Errorf("quality: %s %q: %w", r.name, q.Query, err)
			}
			rel := s.relevant(q)
			results[i].add(q.Kind, ids, rel)
			if first := slices.IndexFunc(ids, func(id uint64) bool { return rel[id] }); first < 0 || first >= 5 {
				missed[i] = append(missed[i], fmt.Sprintf("%s %q: first relevant at %d", q.Kind, q.Query, first+1))
			}
		}
	}

	fmt.Fprintf(w, "### Quality on the evaluation set (%d observations, %d queries)\n\n", len(s.docs), len(s.queries))
	fmt.Fprintln(w, "| ranking | R@1 | R@5 | R@10 | MRR | "+strings.Join(kinds, " R@5 | ")+" R@5 |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|"+strings.Repeat("---:|", len(kinds)))
	for i, r := range rankers {
		m := results[i]
		fmt.Fprintf(w, "| %s | %.3f | %.3f | %.3f | %.3f |", r.name, m.recall1(), m.recall5(), m.recall10(), m.meanRR())
		for _, k := range kinds {
			fmt.Fprintf(w, " %.3f |", m.perKind[k].recall5())
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| ranking | "+strings.Join(kinds, " MRR | ")+" MRR |")
	fmt.Fprintln(w, "|---|"+strings.Repeat("---:|", len(kinds)))
	for i, r := range rankers {
		fmt.Fprintf(w, "| %s |", r.name)
		for _, k := range kinds {
			fmt.Fprintf(w, " %.3f |", results[i].perKind[k].meanRR())
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
	if misses {
		for i, r := range rankers {
			fmt.Fprintf(w, "%s: %d queries with no relevant hit in the top 5 (0: none in the top 10)\n\n", r.name, len(missed[i]))
			for _, m := range missed[i] {
				fmt.Fprintf(w, "- %s\n", m)
			}
			fmt.Fprintln(w)
		}
	}
	return nil
}
