package main

import (
	"cmp"
	"slices"
	"strings"
)

// graded scores rankings the way the public benchmarks' peers publish
// them (basic-memory's LoCoMo, mcp-memory-service's DevBench): a
// question's R@k is the share of its relevant items found among the
// first k of the ranking, averaged over the questions; its reciprocal
// rank is that of the first relevant item within the first 10 (0 when
// none is). A question with nothing relevant to find (LoCoMo's few
// questions without evidence) counts, and scores 0, as the peers count
// it. Quiet counts the questions whose ranking was empty.
type graded struct {
	n, r1, r5, r10, mrr float64
	quiet               float64
}

// add scores one question's ranking of item keys, best first; a key may
// repeat (several records of one session): only its first place counts.
func (g *graded) add(relevant map[string]bool, ranking []string) {
	g.n++
	if len(ranking) == 0 {
		g.quiet++
	}
	if len(relevant) == 0 {
		return
	}
	var found1, found5, found10 float64
	seen := map[string]bool{}
	rank := 0
	for _, k := range ranking {
		if seen[k] {
			continue
		}
		seen[k] = true
		rank++
		if rank > 10 {
			break
		}
		if !relevant[k] {
			continue
		}
		if found10 == 0 {
			g.mrr += 1 / float64(rank)
		}
		found10++
		if rank <= 5 {
			found5++
		}
		if rank <= 1 {
			found1++
		}
	}
	total := float64(len(relevant))
	g.r1 += found1 / total
	g.r5 += found5 / total
	g.r10 += found10 / total
}

func (g *graded) Recall1() float64  { return g.r1 / max(1, g.n) }
func (g *graded) Recall5() float64  { return g.r5 / max(1, g.n) }
func (g *graded) Recall10() float64 { return g.r10 / max(1, g.n) }
func (g *graded) MRR() float64      { return g.mrr / max(1, g.n) }

// Quiet is the share of questions that got no hit at all.
func (g *graded) Quiet() float64 { return g.quiet / max(1, g.n) }

// distinct returns ranking without repeats, in the order of first places.
func distinct(ranking []string) []string {
	out := make([]string, 0, len(ranking))
	seen := map[string]bool{}
	for _, k := range ranking {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// textGrep is the baseline beside every public benchmark: a person
// grepping the raw texts (a conversation's turns, the saved notes) for
// the words of the question (any case, as substrings), the texts holding
// the most distinct words first, the latest among equals.
type textGrep struct {
	texts []string // lowercased
	keys  []string // what each text is: its item key
	scope []string // the project each text belongs to
}

func (g *textGrep) add(scope, key, text string) {
	g.texts = append(g.texts, strings.ToLower(text))
	g.keys = append(g.keys, key)
	g.scope = append(g.scope, scope)
}

// search ranks the texts of one scope for a question and returns the
// keys of the first limit.
func (g *textGrep) search(scope, question string, limit int) []string {
	words := grepWords(question)
	type scored struct{ i, n int }
	var hits []scored
	for i, t := range g.texts {
		if g.scope[i] != scope {
			continue
		}
		n := 0
		for _, w := range words {
			if strings.Contains(t, w) {
				n++
			}
		}
		if n > 0 {
			hits = append(hits, scored{i, n})
		}
	}
	slices.SortStableFunc(hits, func(a, b scored) int { return cmp.Or(cmp.Compare(b.n, a.n), cmp.Compare(b.i, a.i)) })
	out := make([]string, 0, limit)
	for _, h := range hits[:min(limit, len(hits))] {
		out = append(out, g.keys[h.i])
	}
	return out
}
