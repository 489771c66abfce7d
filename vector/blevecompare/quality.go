package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/mnemo-dev/mnemo/vector"
	"github.com/mnemo-dev/mnemo/vector/internal/evalset"
)

// ranker returns the ids of the best 10 documents for a query of the
// evaluation set.
type ranker struct {
	name string
	rank func(q evalset.Query) ([]uint64, error)
}

// measureQuality ranks every query of the evaluation set with grep, Mnemo's
// keyword index and each bleve setup, and writes the recall and MRR tables;
// with misses, also the queries each ranking answers below rank 5.
func measureQuality(ctx context.Context, w io.Writer, s *evalset.Set, misses bool) error {
	ix := vector.NewIndex(vector.NewHashEmbedder())
	if err := ix.Add(ctx, s.Docs...); err != nil {
		return fmt.Errorf("quality: %w", err)
	}
	rankers := []ranker{
		{"grep", func(q evalset.Query) ([]uint64, error) { return s.Grep(q), nil }},
		{"ours (vector.Keyword)", func(q evalset.Query) ([]uint64, error) {
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
		if err := b.indexDocs(idx, s.Docs, 0); err != nil {
			return fmt.Errorf("quality: %s: %w", b.name, err)
		}
		rankers = append(rankers, ranker{b.name, func(q evalset.Query) ([]uint64, error) {
			return b.search(idx, q.Query, q.Project, 10)
		}})
	}

	results := make([]*evalset.Metrics, len(rankers))
	for i, r := range rankers {
		results[i] = &evalset.Metrics{}
		for _, q := range s.Queries {
			ids, err := r.rank(q)
			if err != nil {
				return fmt.Errorf("quality: %s %q: %w", r.name, q.Query, err)
			}
			results[i].Add(q.Kind, ids, s.Relevant(q), q.Query)
		}
	}

	fmt.Fprintf(w, "### Quality on the evaluation set (%d observations, %d queries)\n\n", len(s.Docs), len(s.Queries))
	fmt.Fprintln(w, "| ranking | R@1 | R@5 | R@10 | MRR | "+strings.Join(evalset.Kinds, " R@5 | ")+" R@5 |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|"+strings.Repeat("---:|", len(evalset.Kinds)))
	for i, r := range rankers {
		m := results[i]
		fmt.Fprintf(w, "| %s | %.3f | %.3f | %.3f | %.3f |", r.name, m.Recall1(), m.Recall5(), m.Recall10(), m.MRR())
		for _, k := range evalset.Kinds {
			fmt.Fprintf(w, " %.3f |", m.Kind(k).Recall5())
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| ranking | "+strings.Join(evalset.Kinds, " MRR | ")+" MRR |")
	fmt.Fprintln(w, "|---|"+strings.Repeat("---:|", len(evalset.Kinds)))
	for i, r := range rankers {
		fmt.Fprintf(w, "| %s |", r.name)
		for _, k := range evalset.Kinds {
			fmt.Fprintf(w, " %.3f |", results[i].Kind(k).MRR())
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
	if misses {
		for i, r := range rankers {
			fmt.Fprintf(w, "%s: %d queries with no relevant hit in the top 5 (0: none in the top 10)\n\n", r.name, len(results[i].Misses))
			for _, m := range results[i].Misses {
				fmt.Fprintf(w, "- %s\n", m)
			}
			fmt.Fprintln(w)
		}
	}
	return nil
}
