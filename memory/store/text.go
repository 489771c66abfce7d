package store

import (
	"slices"
	"strings"

	"github.com/mnemo-dev/mnemo/memory"
)

// Small text helpers of the engine's own; the local compressor has its
// richer ones.

func required(field, v string) error {
	if strings.TrimSpace(v) == "" {
		return &memory.FieldError{Field: field, Reason: "is required"}
	}
	return nil
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s = strings.TrimSpace(s); s != "" {
			return s
		}
	}
	return ""
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return strings.TrimSpace(s[:i])
	}
	return s
}

// clip cuts s to at most n runes, marking the cut.
func clip(s string, n int) string {
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

// dedupe keeps the first n distinct non-empty items, in order.
func dedupe(items []string, n int) []string {
	var out []string
	for _, it := range items {
		if it == "" || slices.Contains(out, it) {
			continue
		}
		out = append(out, it)
		if len(out) == n {
			break
		}
	}
	return out
}
