package vector

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

const (
	// snippetLen is the length of a snippet in bytes, before ellipses.
	snippetLen = 180
	// snippetLead is how much text a snippet shows before its first match.
	snippetLead = 40
)

// snippet returns a short window of text around the query terms that weigh
// most, or the beginning of text (of title when text is empty) when no term
// matches. weight gives a term's IDF.
func snippet(text, title string, qterms []string, weight func(term string) float64) string {
	if strings.TrimSpace(text) == "" {
		text = title
	}
	type match struct {
		start, end int
		term       int
	}
	want := make(map[string]int, len(qterms)) // term → index into termWeight
	var termWeight []float64
	for _, t := range qterms {
		if _, ok := want[t]; ok {
			continue
		}
		want[t] = len(termWeight)
		termWeight = append(termWeight, weight(t))
	}
	var matches []match
	if len(want) > 0 {
		var tok tokenizer
		tok.each(text, func(term []byte, start, end int) {
			if i, ok := want[string(term)]; ok {
				matches = append(matches, match{start, end, i})
			}
		})
	}

	from := 0
	if len(matches) > 0 {
		// The window starting at the match that covers the most weight of
		// distinct terms wins.
		best, bestW := 0, -1.0
		seen := make([]bool, len(termWeight))
		for i, m := range matches {
			clear(seen)
			w := 0.0
			for _, n := range matches[i:] {
				if n.end > m.start+snippetLen-snippetLead {
					break
				}
				if !seen[n.term] {
					seen[n.term] = true
					w += termWeight[n.term]
				}
			}
			if w > bestW {
				best, bestW = m.start, w
			}
		}
		from = max(0, best-snippetLead)
	}
	return cutSnippet(text, from)
}

// cutSnippet returns about snippetLen bytes of text from byte from, moved to
// word boundaries, with whitespace collapsed and ellipses where text was cut.
func cutSnippet(text string, from int) string {
	if from > 0 {
		// Start at the beginning of a word.
		for from < len(text) && !utf8.RuneStart(text[from]) {
			from++
		}
		if i := strings.LastIndexFunc(text[:from], unicode.IsSpace); i >= 0 && from-i < 20 {
			from = i + 1
		} else if i < 0 && from < 20 {
			from = 0
		}
	}
	to := min(len(text), from+snippetLen)
	if to < len(text) {
		for to > from && !utf8.RuneStart(text[to]) {
			to--
		}
		if i := strings.LastIndexFunc(text[from:to], unicode.IsSpace); i > snippetLen/2 {
			to = from + i
		}
	}
	s := strings.Join(strings.Fields(text[from:to]), " ")
	if from > 0 && strings.TrimSpace(text[:from]) != "" {
		s = "…" + s
	}
	if to < len(text) && strings.TrimSpace(text[to:]) != "" {
		s += "…"
	}
	return s
}
