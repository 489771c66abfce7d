// Package evalset loads the retrieval evaluation set (vector/testdata/eval)
// and scores rankings against its labels: recall@1/5/10 and MRR, overall and
// by kind of query, next to a grep baseline. It also grows the set into
// large stores for benchmarks. The vector tests and the bleve comparison
// (vector/blevecompare) share it, so that both score the same way.
package evalset

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mnemo-dev/mnemo/vector"
)

// Observation is one line of observations.jsonl.
type Observation struct {
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

// Query is one line of queries.jsonl.
type Query struct {
	Query    string   `json:"query"`
	Project  string   `json:"project"`
	Kind     string   `json:"kind"`
	Relevant []string `json:"relevant"`
}

// Kinds are the kinds of query of the set, in the order tables show them.
var Kinds = []string{"paraphrase", "identifier", "path", "error"}

// Set is the evaluation set, its observations numbered from 1 as documents.
type Set struct {
	Obs     []Observation
	Docs    []vector.Doc // Docs[i] is Obs[i], with ID i+1
	Queries []Query
	IDs     map[string]uint64 // observation id → document ID
}

// Load reads the set in dir and checks its labels.
func Load(dir string) (*Set, error) {
	s := &Set{IDs: make(map[string]uint64)}
	var err error
	if s.Obs, err = readJSONLines[Observation](filepath.Join(dir, "observations.jsonl")); err != nil {
		return nil, err
	}
	if s.Queries, err = readJSONLines[Query](filepath.Join(dir, "queries.jsonl")); err != nil {
		return nil, err
	}
	base := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	for i, o := range s.Obs {
		id := uint64(i + 1)
		if _, dup := s.IDs[o.ID]; dup {
			return nil, fmt.Errorf("eval set: duplicate observation id %s", o.ID)
		}
		s.IDs[o.ID] = id
		s.Docs = append(s.Docs, doc(id, o, base.Add(time.Duration(i)*time.Hour)))
	}
	for _, q := range s.Queries {
		for _, r := range q.Relevant {
			if _, ok := s.IDs[r]; !ok {
				return nil, fmt.Errorf("eval set: query %q: unknown relevant id %s", q.Query, r)
			}
		}
	}
	return s, nil
}

// Relevant returns the document IDs labelled relevant to q.
func (s *Set) Relevant(q Query) map[uint64]bool {
	m := make(map[uint64]bool, len(q.Relevant))
	for _, r := range q.Relevant {
		m[s.IDs[r]] = true
	}
	return m
}

func readJSONLines[T any](path string) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("eval set: %w", err)
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for line := 1; sc.Scan(); line++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			return nil, fmt.Errorf("eval set: %s:%d: %w", path, line, err)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("eval set: %s: %w", path, err)
	}
	return out, nil
}

// doc is the document memory/store would index for o.
func doc(id uint64, o Observation, t time.Time) vector.Doc {
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

// Metrics accumulates recall@1/5/10 and MRR over queries, overall and by
// kind. The zero value is ready to use.
type Metrics struct {
	n                int
	r1, r5, r10, mrr float64
	perKind          map[string]*Metrics
	// Misses lists the queries whose first relevant hit is not in the top
	// 5, with its rank (0: not found).
	Misses []string
}

// Add scores one query's ranking against its relevant IDs.
func (m *Metrics) Add(kind string, ranked []uint64, relevant map[uint64]bool, query string) {
	for _, into := range []*Metrics{m, m.Kind(kind)} {
		into.n++
		first := 0
		for i, id := range ranked {
			if !relevant[id] {
				continue
			}
			if first == 0 {
				first = i + 1
			}
			share := 1 / float64(len(relevant))
			if i < 1 {
				into.r1 += share
			}
			if i < 5 {
				into.r5 += share
			}
			if i < 10 {
				into.r10 += share
			}
		}
		if first > 0 {
			into.mrr += 1 / float64(first)
		}
		if into == m && (first == 0 || first > 5) {
			m.Misses = append(m.Misses, fmt.Sprintf("%s %q: first relevant at %d", kind, query, first))
		}
	}
}

// Kind returns the metrics of one kind of query.
func (m *Metrics) Kind(k string) *Metrics {
	if m.perKind == nil {
		m.perKind = make(map[string]*Metrics)
	}
	if m.perKind[k] == nil {
		m.perKind[k] = &Metrics{}
	}
	return m.perKind[k]
}

// Queries returns the number of queries scored.
func (m *Metrics) Queries() int { return m.n }

// Recall1, Recall5 and Recall10 return the mean share of each query's
// relevant documents found in the first 1, 5 and 10 hits; MRR the mean
// reciprocal rank of the first relevant hit.
func (m *Metrics) Recall1() float64  { return m.r1 / float64(max(1, m.n)) }
func (m *Metrics) Recall5() float64  { return m.r5 / float64(max(1, m.n)) }
func (m *Metrics) Recall10() float64 { return m.r10 / float64(max(1, m.n)) }
func (m *Metrics) MRR() float64      { return m.mrr / float64(max(1, m.n)) }

// Row formats the four figures after name, as a line of a text table.
func (m *Metrics) Row(name string) string {
	return fmt.Sprintf("%-8s %5.3f %5.3f %5.3f %5.3f", name, m.Recall1(), m.Recall5(), m.Recall10(), m.MRR())
}

// Grep is the baseline ranking: the documents that contain words of the
// query (any case, as substrings), ranked by how many distinct words they
// contain; the first 10.
func (s *Set) Grep(q Query) []uint64 {
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
	for _, d := range s.Docs {
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

// Corpus makes n realistic memories from the set, without vectors: each is
// an observation of the set, in one of 10 projects (ProjectName), a minute
// after the one before, with a fact of its own naming made-up functions and
// files, so that the vocabulary grows with n as a real store's does.
func (s *Set) Corpus(n int) []vector.Doc {
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	rng := rand.New(rand.NewPCG(uint64(n), 7))
	docs := make([]vector.Doc, n)
	for i := range docs {
		base := s.Docs[i%len(s.Docs)]
		d := base
		d.ID = uint64(i + 1)
		d.Project = ProjectName(i)
		d.Time = t0.Add(time.Duration(i) * time.Minute)
		fn := fmt.Sprintf("handle%sRequest%d", []string{"Login", "Invoice", "Refund", "Upload", "Export"}[rng.IntN(5)], rng.IntN(n))
		file := fmt.Sprintf("internal/pkg%d/file%d.go", rng.IntN(200), rng.IntN(n))
		d.Text += fmt.Sprintf("\n%s in %s returned error E%04d after %d ms.", fn, file, rng.IntN(10000), rng.IntN(5000))
		d.Files = append(slices.Clone(base.Files), file)
		docs[i] = d
	}
	return docs
}

// ProjectName is the project of the i-th memory of a Corpus.
func ProjectName(i int) string { return fmt.Sprintf("project-%d", i%10) }

// Embed sets the Vector of every doc to its embedding by e of its title and
// text, on all CPUs.
func Embed(ctx context.Context, e vector.Embedder, docs []vector.Doc) error {
	workers := runtime.GOMAXPROCS(0)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(docs); i += workers {
				v, err := e.Embed(ctx, docs[i].Title+"\n"+docs[i].Text)
				if err != nil {
					errs[w] = fmt.Errorf("embed doc %d: %w", docs[i].ID, err)
					return
				}
				docs[i].Vector = v
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
