package local

import (
	"fmt"
	"slices"
	"strings"
)

// describeDelta says what an edit replaced, as "old → new" on the changed
// tokens (or the whole short lines when the tokens alone would not read),
// or what it added or removed. replacement is false for pure insertions
// and deletions and for multi-line changes.
func describeDelta(old, new string) (delta string, replacement bool) {
	old, new = strings.TrimSpace(old), strings.TrimSpace(new)
	if old == new {
		return "", false
	}
	if old == "" {
		return "added " + inQuotes(firstMeaningfulLine(new)) + moreLines(new), false
	}
	if new == "" {
		return "removed " + inQuotes(firstMeaningfulLine(old)) + moreLines(old), false
	}
	// Narrow to the lines that differ, then to the tokens that differ.
	ol, nl := strings.Split(old, "\n"), strings.Split(new, "\n")
	for len(ol) > 0 && len(nl) > 0 && strings.TrimSpace(ol[0]) == strings.TrimSpace(nl[0]) {
		ol, nl = ol[1:], nl[1:]
	}
	for len(ol) > 0 && len(nl) > 0 && strings.TrimSpace(ol[len(ol)-1]) == strings.TrimSpace(nl[len(nl)-1]) {
		ol, nl = ol[:len(ol)-1], nl[:len(nl)-1]
	}
	switch {
	case len(ol) == 0 && len(nl) > 0:
		s := strings.Join(nl, "\n")
		return "added " + inQuotes(firstMeaningfulLine(s)) + moreLines(s), false
	case len(nl) == 0 && len(ol) > 0:
		s := strings.Join(ol, "\n")
		return "removed " + inQuotes(firstMeaningfulLine(s)) + moreLines(s), false
	case len(ol) == 1 && len(nl) == 1:
		lo, ln := squash(ol[0]), squash(nl[0])
		a, b := tokenDiff(lo, ln)
		switch {
		case a == "" && b != "" && len(b) <= 50:
			return "added " + inQuotes(b), false
		case b == "" && a != "" && len(a) <= 50:
			return "removed " + inQuotes(a), false
		case a != "" && b != "" && (len(lo) > 40 || len(ln) > 40 || wordStart(a) && wordStart(b)) && len(a) <= 50 && len(b) <= 50:
			return a + " → " + b, true
		case len(lo) <= 40 && len(ln) <= 40:
			return lo + " → " + ln, true
		}
	}
	delta = fmt.Sprintf("%s → %d", countOf(len(ol), "line"), len(nl))
	if line := addedLine(ol, nl); line != "" {
		delta += ", adding " + inQuotes(line)
	}
	return delta, false
}

// wordStart reports whether a fragment starts like a word, a number or a
// literal rather than with an operator.
func wordStart(s string) bool {
	return s != "" && (isIdentByte(s[0]) || s[0] == '"' || s[0] == '\'' || s[0] == '`')
}

// addedLine picks the most telling new line of a multi-line change: the
// first one that does not just rework an old line (same first word).
func addedLine(ol, nl []string) string {
	firstWord := func(l string) string { return leadingIdent(strings.TrimSpace(l)) }
	old := make(map[string]bool, len(ol))
	for _, l := range ol {
		old[strings.TrimSpace(l)] = true
		old["word:"+firstWord(l)] = true
	}
	for _, l := range nl {
		t := strings.TrimSpace(l)
		if len(t) < 4 || old[t] || old["word:"+firstWord(l)] || firstWord(l) == "" && !strings.ContainsAny(t, "(=") {
			continue
		}
		return squash(t)
	}
	return ""
}

func moreLines(s string) string {
	if n := lineCount(s); n > 1 {
		return fmt.Sprintf(" (+%d more lines)", n-1)
	}
	return ""
}

// tokenDiff cuts the common prefix and suffix of a and b, widened to whole
// identifiers (dotted names included), and returns what differs.
func tokenDiff(a, b string) (string, string) {
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	// Widen to token boundaries: a cut inside an identifier takes the whole
	// identifier, with its qualifiers ("math.Round"), on both sides.
	inA := func(i int) bool { return i >= p && i < len(a)-s && isIdentByte(a[i]) }
	inB := func(i int) bool { return i >= p && i < len(b)-s && isIdentByte(b[i]) }
	if p > 0 && isIdentByte(a[p-1]) && (inA(p) || inB(p)) {
		for p > 0 && isIdentByte(a[p-1]) {
			p--
		}
	}
	for p > 1 && a[p-1] == '.' && isIdentByte(a[p-2]) && (inA(p) || inB(p)) {
		p--
		for p > 0 && isIdentByte(a[p-1]) {
			p--
		}
	}
	if s > 0 && isIdentByte(a[len(a)-s]) && (inA(len(a)-s-1) || inB(len(b)-s-1)) {
		for s > 0 && isIdentByte(a[len(a)-s]) {
			s--
		}
	}
	return strings.TrimSpace(a[p : len(a)-s]), strings.TrimSpace(b[p : len(b)-s])
}

// renameOf reports an edit that only renames one identifier: every pair
// replaces the same name with the same other name, and nothing else.
func renameOf(pairs []editPair) (from, to string) {
	for _, p := range pairs {
		gone, came := identDiff(p.OldString, p.NewString)
		if len(gone) != 1 || len(came) != 1 {
			return "", ""
		}
		a, b := gone[0], came[0]
		if i := strings.Index(p.OldString, a); i > 0 && strings.ContainsRune("\"'`", rune(p.OldString[i-1])) {
			return "", "" // a string's value, not a name
		}
		if replaceIdent(p.OldString, a, b) != p.NewString {
			return "", ""
		}
		if from != "" && (from != a || to != b) {
			return "", ""
		}
		from, to = a, b
	}
	return from, to
}

// identDiff returns the identifiers only in a and only in b.
func identDiff(a, b string) (gone, came []string) {
	return setDiff(identsOf(a), identsOf(b))
}

// setDiff returns the items of a that b lacks and the items of b that a
// lacks, each in its list's order. The lists hold no repeats.
func setDiff(a, b []string) (onlyA, onlyB []string) {
	inA := make(map[string]bool, len(a))
	for _, x := range a {
		inA[x] = true
	}
	inB := make(map[string]bool, len(b))
	for _, x := range b {
		inB[x] = true
	}
	for _, x := range a {
		if !inB[x] {
			onlyA = append(onlyA, x)
		}
	}
	for _, x := range b {
		if !inA[x] {
			onlyB = append(onlyB, x)
		}
	}
	return onlyA, onlyB
}

// identsOf lists the distinct identifiers of a piece of code (up to 64).
func identsOf(s string) []string {
	var out []string
	for i := 0; i < len(s) && len(out) < 64; {
		if !isIdentByte(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isIdentByte(s[j]) {
			j++
		}
		if w := s[i:j]; !('0' <= w[0] && w[0] <= '9') && !slices.Contains(out, w) {
			out = append(out, w)
		}
		i = j
	}
	return out
}

// replaceIdent replaces whole-word occurrences of a in s with b.
func replaceIdent(s, a, b string) string {
	var out strings.Builder
	for {
		i := strings.Index(s, a)
		if i < 0 {
			out.WriteString(s)
			return out.String()
		}
		end := i + len(a)
		whole := (i == 0 || !isIdentByte(s[i-1])) && (end == len(s) || !isIdentByte(s[end]))
		out.WriteString(s[:i])
		if whole {
			out.WriteString(b)
		} else {
			out.WriteString(a)
		}
		s = s[end:]
	}
}
