package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mnemo-dev/mnemo/vector"
)

// The evaluation set and its scoring, as vector/eval_test.go has them (test
// helpers of package vector cannot be imported, so they are repeated here).

// evalObservation is one line of observations.jsonl.
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

// evalQuery is one line of queries.jsonl.
type evalQuery struct {
	Query    string   `json:"query"`
	Project  string   `json:"project"`
	Kind     string   `json:"kind"`
	Relevant []string `json:"relevant"`
}

// evalSet is the dataset with the string ids mapped to uint64 document ids.
type evalSet struct {
	docs    []vector.Doc
	queries []evalQuery
	ids     map[string]uint64
}

// relevant returns the document ids labelled relevant for q.
func (s *evalSet) relevant(q evalQuery) map[uint64]bool {
	rel := make(map[uint64]bool, len(q.Relevant))
	for _, r := range q.Relevant {
		rel[s.ids[r]] = true
	}
	return rel
}

func readJSONLines[T any](path string) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
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
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		out = append(out, v)
	}
	return out, sc.Err()
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

// loadEvalSet reads observations.jsonl and queries.jsonl from dir.
func loadEvalSet(dir string) (*evalSet, error) {
	s := &evalSet{ids: make(map[string]uint64)}
	obs, err := readJSONLines[evalObservation](filepath.Join(dir, "observations.jsonl"))
	if err != nil {
		return nil, fmt.Errorf("load eval set: %w", err)
	}
	if s.queries, err = readJSONLines[evalQuery](filepath.Join(dir, "queries.jsonl")); err != nil {
		return nil, fmt.Errorf("load eval set: %w", err)
	}
	base := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	for i, o := range obs {
		id := uint64(i + 1)
		if _, dup := s.ids[o.ID]; dup {
			return nil, fmt.Errorf("load eval set: duplicate observation id %s", o.ID)
		}
		s.ids[o.ID] = id
		s.docs = append(s.docs, observationDoc(id, o, base.Add(time.Duration(i)*time.Hour)))
	}
	for _, q := range s.queries {
		for _, r := range q.Relevant {
			if _, ok := s.ids[r]; !ok {
				return nil, fmt.Errorf("load eval set: query %q: unknown relevant id %s", q.Query, r)
			}
		}
	}
	return s, nil
}

// kinds are the query kinds of the set, in the order the tables show them.
var kinds = []string{"paraphrase", "identifier", "path", "error"}

// metrics accumulates recall@1/5/10 and MRR over queries.
type metrics struct {
	n                int
	r1, r5, r10, mrr float64
	perKind          map[string]*metrics
}

// add scores one query's ranking against its relevant ids.
func (m *metrics) add(kind string, ranked []uint64, relevant map[uint64]bool) {
	for _, into := range []*metrics{m, m.kind(kind)} {
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

func (m *metrics) recall1() float64  { return m.r1 / float64(m.n) }
func (m *metrics) recall5() float64  { return m.r5 / float64(m.n) }
func (m *metrics) recall10() float64 { return m.r10 / float64(m.n) }
func (m *metrics) meanRR() float64   { return m.mrr / float64(m.n) }

// grepRank is the baseline of vector/eval_test.go: documents that contain
// query words (any case, as substrings), ranked by how many distinct words
// they contain.
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
