package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/store"
)

// A ranking is the files of each hit of one search, best first, with the
// project the hit belongs to.
type ranking []rankedHit

type rankedHit struct {
	project string
	files   []string
	score   float64
}

// Metrics accumulates recall@1/5/10 and MRR over queries that have an
// answer, and, over queries that have none, how often the search returned
// nothing at all (quiet) or still put something first (noise).
type Metrics struct {
	n, r1, r5, r10, mrr float64
	none, quiet         float64
}

// Add scores one query.
func (m *Metrics) Add(q Query, r ranking) {
	if q.Kind == "none" {
		m.none++
		if len(r) == 0 {
			m.quiet++
		}
		return
	}
	m.n++
	for i, h := range r {
		if i >= 10 {
			break
		}
		if !answers(q, h) {
			continue
		}
		m.mrr += 1 / float64(i+1)
		if i < 1 {
			m.r1++
		}
		if i < 5 {
			m.r5++
		}
		m.r10++
		break
	}
}

// answers reports whether a hit names a file the query is about, in the
// query's project.
func answers(q Query, h rankedHit) bool {
	if h.project != q.Project {
		return false
	}
	for _, f := range h.files {
		for _, want := range q.Relevant {
			if f == want || strings.HasSuffix(f, "/"+want) || strings.HasSuffix(want, "/"+f) {
				return true
			}
		}
	}
	return false
}

// The figures.
func (m *Metrics) Queries() int      { return int(m.n) }
func (m *Metrics) Recall1() float64  { return m.r1 / max(1, m.n) }
func (m *Metrics) Recall5() float64  { return m.r5 / max(1, m.n) }
func (m *Metrics) Recall10() float64 { return m.r10 / max(1, m.n) }
func (m *Metrics) MRR() float64      { return m.mrr / max(1, m.n) }

// Quiet is the share of unanswerable queries that returned no hit.
func (m *Metrics) Quiet() float64 { return m.quiet / max(1, m.none) }

// searcher runs one query and returns its ranking.
type searcher func(ctx context.Context, q Query) (ranking, error)

// memorySearch searches mem in one mode, over every project, as `mnemo
// search` does.
func memorySearch(mem *store.Memory, mode string) searcher {
	return func(ctx context.Context, q Query) (ranking, error) {
		res, err := mem.Search(ctx, memory.SearchParams{Query: q.Query, Mode: mode, Limit: 10})
		if err != nil {
			return nil, err
		}
		r := make(ranking, 0, len(res.Hits))
		for _, h := range res.Hits {
			r = append(r, rankedHit{project: h.Project, files: h.Files, score: h.Score})
		}
		return r, nil
	}
}

// grepEvent is one raw tool event as grep sees it: its text, lowercased,
// and the files of its project whose path it holds.
type grepEvent struct {
	project string
	text    string
	files   []string
}

// Grep is the baseline: a person grepping the raw events for the words of
// the query (any case, as substrings), the events holding the most
// distinct words first, each naming the project files whose paths appear
// in it.
type Grep struct{ events []grepEvent }

// NewGrep indexes the tool events of a set.
func NewGrep(s *Set) *Grep {
	g := &Grep{}
	for _, p := range s.Projects {
		known := projectFiles(p)
		for i, pl := range p.Payloads {
			if pl.ToolName == "" {
				continue
			}
			text := string(p.Raw[i])
			ev := grepEvent{project: p.Name, text: strings.ToLower(text)}
			for _, f := range known {
				if strings.Contains(text, f) {
					ev.files = append(ev.files, f)
				}
			}
			g.events = append(g.events, ev)
		}
	}
	return g
}

// Search ranks the events for a query.
func (g *Grep) Search(_ context.Context, q Query) (ranking, error) {
	words := grepWords(q.Query)
	type scored struct {
		i, n int
	}
	var hits []scored
	for i, ev := range g.events {
		n := 0
		for _, w := range words {
			if strings.Contains(ev.text, w) {
				n++
			}
		}
		if n > 0 {
			hits = append(hits, scored{i, n})
		}
	}
	// The most words first; among equals, the latest event.
	slices.SortStableFunc(hits, func(a, b scored) int { return cmp.Or(cmp.Compare(b.n, a.n), cmp.Compare(b.i, a.i)) })
	r := make(ranking, 0, 10)
	for _, h := range hits[:min(10, len(hits))] {
		ev := g.events[h.i]
		r = append(r, rankedHit{project: ev.project, files: ev.files, score: float64(h.n)})
	}
	return r, nil
}

// grepWords are the words of a query a person would grep for.
func grepWords(query string) []string {
	var words []string
	for _, w := range strings.Fields(strings.ToLower(query)) {
		w = strings.Trim(w, `.,;:!?"'()[]{}`)
		if len(w) > 2 && !grepStop[w] && !slices.Contains(words, w) {
			words = append(words, w)
		}
	}
	return words
}

var grepStop = map[string]bool{"the": true, "and": true, "for": true, "with": true, "was": true,
	"are": true, "why": true, "how": true, "what": true, "when": true, "where": true, "our": true,
	"that": true, "this": true, "from": true, "into": true, "does": true, "did": true, "not": true,
	"can't": true, "their": true, "they": true, "have": true, "has": true, "were": true, "which": true,
	"who": true, "we": true, "you": true, "there": true, "again": true}

// projectFiles lists the project-relative paths of the files the
// project's tool events name in their inputs and file lists.
func projectFiles(p Project) []string {
	seen := map[string]bool{}
	var out []string
	add := func(path string) {
		path = strings.TrimSpace(path)
		if path == "" {
			return
		}
		rel := memory.RelPath(p.Cwd, path)
		if rel == "." || strings.HasPrefix(rel, "/") || seen[rel] {
			return
		}
		seen[rel] = true
		out = append(out, rel)
	}
	for _, pl := range p.Payloads {
		var in struct {
			FilePath string `json:"file_path"`
			Path     string `json:"path"`
		}
		_ = json.Unmarshal(pl.ToolInput, &in)
		add(in.FilePath)
		var out struct {
			Filenames []string `json:"filenames"`
		}
		_ = json.Unmarshal(pl.ToolResponse, &out)
		for _, f := range out.Filenames {
			add(f)
		}
	}
	return out
}

// evaluate runs every query of the set through search and scores it, by
// kind and overall.
func evaluate(ctx context.Context, s *Set, search searcher) (map[string]*Metrics, error) {
	out := map[string]*Metrics{"all": {}}
	for _, k := range Kinds {
		out[k] = &Metrics{}
	}
	for _, q := range s.Queries {
		r, err := search(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("query %s: %w", q.ID, err)
		}
		out[q.Kind].Add(q, r)
		out["all"].Add(q, r)
	}
	return out, nil
}
