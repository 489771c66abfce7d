package memory

import (
	"slices"
	"strconv"
	"strings"
)

// The text rules of a record, shared by the agents that write records and
// the engine that writes its own (a saved note's title, a row of the
// context): titles and snippets clipped to a number of runes with the cut
// marked, the first line or the first non-blank of several texts, lists
// of files and concepts without repeats.

// Count is n and its noun, one for 1 and many otherwise: "1 prompt",
// "2 summaries".
func Count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// FirstNonEmpty returns the first of ss that is not blank, trimmed.
func FirstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s = strings.TrimSpace(s); s != "" {
			return s
		}
	}
	return ""
}

// FirstLine returns the first line of s, trimmed.
func FirstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return strings.TrimSpace(s[:i])
	}
	return s
}

// Clip cuts s to at most n runes, marking the cut.
func Clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return strings.TrimSpace(string(r[:n-1])) + "…"
}

// Dedupe keeps the first n distinct non-empty items, in order.
func Dedupe(items []string, n int) []string {
	var out []string
	var seen map[string]bool
	if len(items) > 16 {
		seen = make(map[string]bool, len(items))
	}
	for _, it := range items {
		if it == "" || seen[it] || seen == nil && slices.Contains(out, it) {
			continue
		}
		if seen != nil {
			seen[it] = true
		}
		out = append(out, it)
		if len(out) == n {
			break
		}
	}
	return out
}
