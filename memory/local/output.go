package local

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mnemo-dev/mnemo/memory"
)

// lines returns the non-empty lines of the head and tail of out, trimmed
// of trailing space and colour codes.
func outputLines(out string) []string {
	out = headTail(out)
	if strings.IndexByte(out, 0x1b) >= 0 {
		out = ansiRE.ReplaceAllString(out, "")
	}
	lines := make([]string, 0, 32)
	for l := range strings.Lines(out) {
		l = strings.TrimRight(l, " \t\r\n")
		if strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

var ansiRE = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]`)

// headTail keeps the first and last maxScan/2 bytes of a long text.
func headTail(s string) string {
	if len(s) <= maxScan {
		return s
	}
	h, t := s[:maxScan/2], s[len(s)-maxScan/2:]
	for len(h) > 0 && !utf8.RuneStart(h[len(h)-1]) {
		h = h[:len(h)-1]
	}
	for len(t) > 0 && !utf8.RuneStart(t[0]) {
		t = t[1:]
	}
	return h + "\n" + t
}

var (
	goAssertRE  = regexp.MustCompile(`^\s+[\w.\-/]+\.go:\d+: \S`)
	positionRE  = regexp.MustCompile(`^\.{0,2}/?[\w.\-/\\]+\.\w+(?::\d+(?::\d+)?:|\(\d+,\d+\):)`)
	exceptionRE = regexp.MustCompile(`^(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception|Failure)\b(?::|$)`)
	stripPosRE  = regexp.MustCompile(`^\.{0,2}/?[\w.\-/\\]+\.\w+(?::\d+(?::\d+)?|\(\d+,\d+\)):\s*`)
)

// errorScore rates how telling a line of failure output is: an assertion
// with its file:line, a panic, a compiler error, an exception… down to any
// line (1). Noise (exit status lines) scores 0.
func errorScore(line string) int {
	l := strings.TrimSpace(line)
	if l == "" {
		return 0
	}
	low := strings.ToLower(l)
	switch {
	case strings.HasPrefix(low, "exit code") || strings.HasPrefix(low, "exit status") || l == "FAIL" || l == "FAILED" || strings.HasPrefix(low, "error: process completed"):
		return 0
	case strings.HasPrefix(l, "FAIL\t") || strings.HasPrefix(l, "FAIL ") && !strings.Contains(l, " - "):
		return 5
	case strings.HasPrefix(l, "--- FAIL") || strings.HasPrefix(l, "Traceback") || strings.HasPrefix(l, "=== RUN") || strings.HasPrefix(l, "●"):
		return 8
	case goAssertRE.MatchString(line):
		return 100
	case strings.HasPrefix(l, "panic: ") || strings.Contains(l, "panicked at"):
		return 95
	case strings.HasPrefix(l, "FAILED ") && strings.Contains(l, " - "):
		return 92
	case strings.HasPrefix(l, "E ") && len(l) > 2 && strings.TrimSpace(l[1:]) != "":
		return 90
	case positionRE.MatchString(l) && !strings.Contains(low, "warning"):
		return 85
	case exceptionRE.MatchString(l):
		return 80
	case strings.HasPrefix(low, "error") || strings.HasPrefix(low, "fatal") || strings.HasPrefix(low, "assertionerror"):
		return 70
	case strings.Contains(low, "error") || strings.Contains(low, "not found") || strings.Contains(low, "cannot ") || strings.Contains(low, "denied") || strings.Contains(low, "no such file") || strings.Contains(low, "undefined") || strings.Contains(low, "failed") || strings.Contains(low, "expected"):
		return 50
	}
	return 1
}

// errorLine picks the most telling line of a failed command's output (see
// errorScore), in a form fit for a fact.
func errorLine(out string) string {
	lines := outputLines(out)
	best, bestScore := -1, 0
	for i, l := range lines {
		if s := errorScore(l); s > bestScore {
			best, bestScore = i, s
		}
	}
	if bestScore < 90 {
		// Jest and friends: "Expected: 81" / "Received: 90".
		var exp, got string
		for _, l := range lines {
			t := strings.TrimSpace(l)
			if v, ok := strings.CutPrefix(t, "Expected:"); ok && exp == "" {
				exp = strings.TrimSpace(v)
			} else if v, ok := strings.CutPrefix(t, "Received:"); ok && got == "" {
				got = strings.TrimSpace(v)
			}
		}
		if exp != "" && got != "" {
			return memory.Clip("expected "+exp+", received "+got, 160)
		}
	}
	if best < 0 {
		return ""
	}
	l := strings.TrimSpace(lines[best])
	switch {
	case strings.HasPrefix(l, "FAILED ") && strings.Contains(l, " - "):
		_, l, _ = strings.Cut(l, " - ")
	case strings.HasPrefix(l, "E "):
		l = strings.TrimSpace(l[1:])
	case strings.Contains(l, "panicked at") && strings.HasSuffix(l, ":") && best+1 < len(lines):
		l += " " + strings.TrimSpace(lines[best+1])
	}
	return memory.Clip(squash(l), 160)
}

// stripPosition drops a leading "file.go:12:3: " from an error line.
func stripPosition(msg string) string {
	if loc := stripPosRE.FindStringIndex(msg); loc != nil && loc[1] < len(msg) {
		return msg[loc[1]:]
	}
	return msg
}

// failingTests reads the names of failed tests from go test, pytest,
// jest/vitest and cargo output.
func failingTests(out string) []string {
	var names []string
	for _, l := range outputLines(out) {
		t := strings.TrimSpace(l)
		var name string
		switch {
		case strings.HasPrefix(t, "--- FAIL: "):
			name, _, _ = strings.Cut(strings.TrimPrefix(t, "--- FAIL: "), " ")
		case strings.HasPrefix(t, "FAILED ") && strings.Contains(t, "::"):
			id, _, _ := strings.Cut(strings.TrimPrefix(t, "FAILED "), " ")
			name = id[strings.LastIndex(id, "::")+2:]
		case strings.HasPrefix(t, "● ") && !strings.Contains(t, "Test suite failed"):
			parts := strings.Split(strings.TrimPrefix(t, "● "), "›")
			name = strings.TrimSpace(parts[len(parts)-1])
		case strings.HasPrefix(t, "✕ ") || strings.HasPrefix(t, "× ") || strings.HasPrefix(t, "✗ "):
			_, name, _ = strings.Cut(t, " ")
			if i := strings.LastIndex(name, " ("); i > 0 && strings.HasSuffix(name, "ms)") {
				name = name[:i]
			}
			parts := strings.Split(name, ">")
			name = strings.TrimSpace(parts[len(parts)-1])
		case strings.HasPrefix(t, "test ") && strings.HasSuffix(t, "... FAILED"):
			name = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(t, "test "), "... FAILED"))
		}
		if name != "" {
			names = append(names, memory.Clip(name, 80))
		}
	}
	names = memory.Dedupe(names, 20)
	// A Go subtest's parent fails with it: keep the specific name.
	out2 := names[:0]
	for _, n := range names {
		if !slices.ContainsFunc(names, func(m string) bool { return strings.HasPrefix(m, n+"/") }) {
			out2 = append(out2, n)
		}
	}
	return out2
}

var (
	pytestSummaryRE = regexp.MustCompile(`^=+ (.*\b(?:passed|failed|error)\b.*) =+$`)
	pytestQuietRE   = regexp.MustCompile(`^\d+ passed\b.* in [\d.]+s`)
)

// resultLine finds the summary line of a passing run: go test's "ok",
// pytest's "N passed", jest's "Tests:", cargo's "test result".
func resultLine(out string) string {
	var okLines []string
	best := ""
	for _, l := range outputLines(out) {
		t := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(t, "ok ") || strings.HasPrefix(t, "ok\t"):
			okLines = append(okLines, squash(t))
		case pytestSummaryRE.MatchString(t):
			best = pytestSummaryRE.FindStringSubmatch(t)[1]
		case pytestQuietRE.MatchString(t):
			best = t
		case strings.HasPrefix(t, "Tests:") || strings.HasPrefix(t, "Tests ") && strings.Contains(t, "passed") || strings.HasPrefix(t, "test result:") || strings.HasPrefix(t, "Ran ") && strings.Contains(t, " test"):
			best = t
		}
	}
	switch {
	case best != "":
		return memory.Clip(squash(best), 120)
	case len(okLines) == 1:
		return memory.Clip(okLines[0], 120)
	case len(okLines) > 1:
		return fmt.Sprintf("%d packages ok", len(okLines))
	}
	return ""
}
