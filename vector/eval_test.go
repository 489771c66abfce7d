package vector_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/vector"
	"github.com/mnemo-dev/mnemo/vector/internal/evalset"
)

// loadEvalSet loads testdata/eval or fails the test.
func loadEvalSet(tb testing.TB, dir string) *evalset.Set {
	tb.Helper()
	s, err := evalset.Load(dir)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// evalEmbedder is USE-Lite when MNEMO_MODELS has it, else the hashing embedder.
func evalEmbedder(tb testing.TB) vector.Embedder {
	if dir := os.Getenv("MNEMO_MODELS"); dir != "" {
		m, err := vector.OpenUSELite(dir)
		if err == nil {
			return m
		}
		tb.Logf("MNEMO_MODELS=%s has no usable model (%v); using the hashing embedder", dir, err)
	}
	return vector.NewHashEmbedder()
}

// TestRetrievalEval measures retrieval on the hand-labelled set in
// testdata/eval: recall@1/5/10 and MRR for the keyword, vector and hybrid
// rankings and a grep baseline, printed as a table (go test -v). Hybrid
// recall@5 must stay above floors set a little under what was measured, with
// the sentence encoder when MNEMO_MODELS has it, else with the hashing
// embedder.
func TestRetrievalEval(t *testing.T) {
	s := loadEvalSet(t, "testdata/eval")
	emb := evalEmbedder(t)
	if _, ok := emb.(*vector.USELite); ok {
		if testing.Short() {
			t.Skip("-short: embedding the evaluation set with USE-Lite takes a minute or more")
		}
		skipUnderRace(t)
	}
	ctx := context.Background()
	ix := vector.NewIndex(emb)
	start := time.Now()
	if err := ix.Add(ctx, s.Docs...); err != nil {
		t.Fatal(err)
	}
	t.Logf("embedder %s: indexed %d observations in %v; %d queries", emb.ID(), ix.Len(), time.Since(start).Round(time.Millisecond), len(s.Queries))

	results := map[string]*evalset.Metrics{}
	for _, name := range []string{"grep", "keyword", "vector", "hybrid"} {
		results[name] = &evalset.Metrics{}
	}
	for _, q := range s.Queries {
		relevant := s.Relevant(q)
		results["grep"].Add(q.Kind, s.Grep(q), relevant, q.Query)
		for _, mode := range []vector.Mode{vector.Keyword, vector.Vector, vector.Hybrid} {
			hits, err := ix.Search(ctx, vector.Query{Text: q.Query, Project: q.Project, Limit: 10, Mode: mode})
			if err != nil {
				t.Fatalf("%s %q: %v", mode, q.Query, err)
			}
			ids := make([]uint64, len(hits))
			for i, h := range hits {
				ids[i] = h.ID
			}
			results[mode.String()].Add(q.Kind, ids, relevant, q.Query)
		}
	}

	var b strings.Builder
	fmt.Fprintf(&b, "retrieval eval, embedder %s, %d queries\n", emb.ID(), len(s.Queries))
	fmt.Fprintf(&b, "%-8s %5s %5s %5s %5s\n", "ranking", "R@1", "R@5", "R@10", "MRR")
	for _, name := range []string{"grep", "keyword", "vector", "hybrid"} {
		fmt.Fprintln(&b, results[name].Row(name))
	}
	fmt.Fprintf(&b, "recall@5 by kind:%-8s", "")
	for _, k := range evalset.Kinds {
		fmt.Fprintf(&b, " %10s", k)
	}
	fmt.Fprintln(&b)
	for _, name := range []string{"grep", "keyword", "vector", "hybrid"} {
		fmt.Fprintf(&b, "%-25s", name)
		for _, k := range evalset.Kinds {
			fmt.Fprintf(&b, " %10.3f", results[name].Kind(k).Recall5())
		}
		fmt.Fprintln(&b)
	}
	t.Log("\n" + b.String())
	if testing.Verbose() {
		t.Logf("hybrid queries whose first relevant hit is below rank 5:\n%s", strings.Join(results["hybrid"].Misses, "\n"))
	}

	hybrid, grep := results["hybrid"].Recall5(), results["grep"].Recall5()
	floor, margin := useHybridFloor, useHybridMargin
	if _, ok := emb.(*vector.USELite); !ok {
		floor, margin = hashHybridFloor, hashHybridMargin
	}
	if hybrid < floor {
		t.Errorf("hybrid recall@5 = %.3f, want >= %.2f with %s", hybrid, floor, emb.ID())
	}
	if hybrid < grep+margin {
		t.Errorf("hybrid recall@5 = %.3f, want >= grep %.3f + %.2f", hybrid, grep, margin)
	}
}

// Floors of hybrid recall@5, and of its lead over grep, a little under what
// was measured. USE-Lite measured 0.861 (grep 0.769) before the relevance
// floor, 0.847 with it, and 0.831 since hybrid search fuses scores rather
// than ranks (index.go's fuse; the fusion was chosen on the replay,
// conversation and public sets, where it gained 1 to 30 points of MRR, and
// costs this set about one of its 72 questions): its misses are
// paraphrases whose answer no ranking puts in the top 5 (its vector ranking
// alone finds 0.57 of the paraphrase answers). The hashing embedder measured
// 0.775, as much as BM25 alone, before the relevance floor (index.go's
// floorCoverage), which costs this set, written from observations and with
// no unanswerable question, 2.7 points (0.748): a guess that shares one
// common word with the question is no longer shown. The held-out replay
// splits of cmd/mnemo-eval are the measure of recall now; this set guards
// against regressions.
const (
	useHybridFloor   = 0.82
	useHybridMargin  = 0.05
	hashHybridFloor  = 0.74
	hashHybridMargin = -0.03
)
