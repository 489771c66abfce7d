package vector_test

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/vector"
)

// evalObservation is one line of testdata/eval/observations.jsonl.
type evalObservation struct {
	ID            string   `json:"id"`
	Project       string   `json:"project"`
	Type          string   `json:"type"`
	Title         string   `json:"title"`
	Subtitle      string   `json:"subtitle"`
	Facts         []string `json:"facts"`
	Narrative     string   `json:"narrative"`
	Concepts      []string `json:"concepts"`
	FilesRead     []string `json:"filesRead"`
	FilesModified []string `json:"filesModified"`
}

// evalQuery is one line of testdata/eval/queries.jsonl.
type evalQuery struct {
	Query    string   `json:"query"`
	Project  string   `json:"project"`
	Kind     string   `json:"kind"`
	Relevant []string `json:"relevant"`
}

// evalSet is the dataset with the string ids mapped to uint64 document ids.
type evalSet struct {
	obs     []evalObservation
	docs    []vector.Doc
	queries []evalQuery
	ids     map[string]uint64
}

func readJSONLines[T any](tb testing.TB, path string) []T {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for line := 1; sc.Scan(); line++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			tb.Fatalf("%s:%d: %v", path, line, err)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// observationDoc turns an observation into the document the memory package
// would index: the title, the rest of the text, the files touched.
func observationDoc(id uint64, o evalObservation, t time.Time) vector.Doc {
	text := []string{o.Subtitle}
	text = append(text, o.Facts...)
	text = append(text, o.Narrative, strings.Join(o.Concepts, " "))
	files := slices.Clone(o.FilesModified)
	for _, f := range o.FilesRead {
		if !slices.Contains(files, f) {
			files = append(files, f)
		}
	}
	return vector.Doc{
		ID:      id,
		Project: o.Project,
		Type:    o.Type,
		Files:   files,
		Time:    t,
		Title:   o.Title,
		Text:    strings.Join(text, "\n"),
	}
}

func loadEvalSet(tb testing.TB, dir string) *evalSet {
	tb.Helper()
	s := &evalSet{ids: make(map[string]uint64)}
	s.obs = readJSONLines[evalObservation](tb, filepath.Join(dir, "observations.jsonl"))
	s.queries = readJSONLines[evalQuery](tb, filepath.Join(dir, "queries.jsonl"))
	base := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	for i, o := range s.obs {
		id := uint64(i + 1)
		if _, dup := s.ids[o.ID]; dup {
			tb.Fatalf("duplicate observation id %s", o.ID)
		}
		s.ids[o.ID] = id
		s.docs = append(s.docs, observationDoc(id, o, base.Add(time.Duration(i)*time.Hour)))
	}
	for _, q := range s.queries {
		for _, r := range q.Relevant {
			if _, ok := s.ids[r]; !ok {
				tb.Fatalf("query %q: unknown relevant id %s", q.Query, r)
			}
		}
	}
	return s
}

// metrics accumulates recall@1/5/10 and MRR over queries.
type metrics struct {
	n                  int
	r1, r5, r10, mrr   float64
	perKind            map[string]*metrics
	misses             []string
	zeroOverlapMissing int
}

func (m *metrics) add(kind string, ranked []uint64, relevant map[uint64]bool, query string) {
	for _, into := range []*metrics{m, m.kind(kind)} {
		into.n++
		found := 0
		first := 0
		for i, id := range ranked {
			if !relevant[id] {
				continue
			}
			if first == 0 {
				first = i + 1
			}
			found++
			if i < 1 {
				into.r1 += 1 / float64(len(relevant))
			}
			if i < 5 {
				into.r5 += 1 / float64(len(relevant))
			}
			if i < 10 {
				into.r10 += 1 / float64(len(relevant))
			}
		}
		if first > 0 {
			into.mrr += 1 / float64(first)
		}
		if into == m && (first == 0 || first > 5) {
			m.misses = append(m.misses, fmt.Sprintf("%s %q: first relevant at %d", kind, query, first))
		}
	}
}

func (m *metrics) kind(k string) *metrics {
	if m.perKind == nil {
		m.perKind = make(map[string]*metrics)
	}
	if m.perKind[k] == nil {
		m.perKind[k] = &metrics{}
	}
	return m.perKind[k]
}

func (m *metrics) recall5() float64 { return m.r5 / float64(m.n) }

func (m *metrics) row(name string) string {
	n := float64(m.n)
	return fmt.Sprintf("%-8s %5.3f %5.3f %5.3f %5.3f", name, m.r1/n, m.r5/n, m.r10/n, m.mrr/n)
}

// grepRank is the baseline: documents that contain query words (any case, as
// substrings), ranked by how many distinct words they contain.
func grepRank(s *evalSet, q evalQuery) []uint64 {
	var words []string
	for _, w := range strings.Fields(strings.ToLower(q.Query)) {
		w = strings.Trim(w, `.,;:!?"'()[]{}`)
		if len(w) > 2 && !grepStop[w] {
			words = append(words, w)
		}
	}
	type scored struct {
		id uint64
		n  int
	}
	var hits []scored
	for _, d := range s.docs {
		if q.Project != "" && d.Project != q.Project {
			continue
		}
		text := strings.ToLower(d.Title + "\n" + d.Text + "\n" + strings.Join(d.Files, "\n"))
		n := 0
		for _, w := range words {
			if strings.Contains(text, w) {
				n++
			}
		}
		if n > 0 {
			hits = append(hits, scored{d.ID, n})
		}
	}
	slices.SortStableFunc(hits, func(a, b scored) int { return cmp.Compare(b.n, a.n) })
	out := make([]uint64, 0, 10)
	for _, h := range hits[:min(10, len(hits))] {
		out = append(out, h.id)
	}
	return out
}

// grepStop are words a person would not grep for.
var grepStop = map[string]bool{"the": true, "and": true, "for": true, "with": true, "was": true,
	"are": true, "why": true, "how": true, "what": true, "when": true, "where": true, "our": true,
	"that": true, "this": true, "from": true, "into": true, "does": true, "did": true, "not": true,
	"can't": true, "their": true, "they": true, "have": true, "has": true, "were": true}

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
	if _, ok := emb.(*vector.USELite); ok && testing.Short() {
		t.Skip("-short: embedding the evaluation set with USE-Lite takes a minute or more")
	}
	ctx := context.Background()
	ix := vector.NewIndex(emb)
	start := time.Now()
	if err := ix.Add(ctx, s.docs...); err != nil {
		t.Fatal(err)
	}
	t.Logf("embedder %s: indexed %d observations in %v; %d queries", emb.ID(), ix.Len(), time.Since(start).Round(time.Millisecond), len(s.queries))

	results := map[string]*metrics{}
	for _, name := range []string{"grep", "keyword", "vector", "hybrid"} {
		results[name] = &metrics{}
	}
	for _, q := range s.queries {
		relevant := make(map[uint64]bool)
		for _, r := range q.Relevant {
			relevant[s.ids[r]] = true
		}
		results["grep"].add(q.Kind, grepRank(s, q), relevant, q.Query)
		for _, mode := range []vector.Mode{vector.Keyword, vector.Vector, vector.Hybrid} {
			hits, err := ix.Search(ctx, vector.Query{Text: q.Query, Project: q.Project, Limit: 10, Mode: mode})
			if err != nil {
				t.Fatalf("%s %q: %v", mode, q.Query, err)
			}
			ids := make([]uint64, len(hits))
			for i, h := range hits {
				ids[i] = h.ID
			}
			results[mode.String()].add(q.Kind, ids, relevant, q.Query)
		}
	}

	var b strings.Builder
	fmt.Fprintf(&b, "retrieval eval, embedder %s, %d queries\n", emb.ID(), len(s.queries))
	fmt.Fprintf(&b, "%-8s %5s %5s %5s %5s\n", "ranking", "R@1", "R@5", "R@10", "MRR")
	for _, name := range []string{"grep", "keyword", "vector", "hybrid"} {
		fmt.Fprintln(&b, results[name].row(name))
	}
	kinds := []string{"paraphrase", "identifier", "path", "error"}
	fmt.Fprintf(&b, "recall@5 by kind:%-8s", "")
	for _, k := range kinds {
		fmt.Fprintf(&b, " %10s", k)
	}
	fmt.Fprintln(&b)
	for _, name := range []string{"grep", "keyword", "vector", "hybrid"} {
		fmt.Fprintf(&b, "%-25s", name)
		for _, k := range kinds {
			if m := results[name].perKind[k]; m != nil {
				fmt.Fprintf(&b, " %10.3f", m.recall5())
			}
		}
		fmt.Fprintln(&b)
	}
	t.Log("\n" + b.String())
	if testing.Verbose() {
		t.Logf("hybrid queries whose first relevant hit is below rank 5:\n%s", strings.Join(results["hybrid"].misses, "\n"))
	}

	hybrid, grep := results["hybrid"].recall5(), results["grep"].recall5()
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
// was measured. USE-Lite measured 0.861 (grep 0.769): its misses are
// paraphrases whose answer no ranking puts in the top 5 (its vector ranking
// alone finds 0.57 of the paraphrase answers). The hashing embedder measured
// 0.775, as much as BM25 alone, which it may not fall under.
const (
	useHybridFloor   = 0.85
	useHybridMargin  = 0.08
	hashHybridFloor  = 0.75
	hashHybridMargin = 0.0
)
