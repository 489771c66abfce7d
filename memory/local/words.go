package local

import (
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unicode"

	"github.com/mnemo-dev/mnemo/memory"
)

var codeExts = wordSet(".go", ".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".py", ".rs", ".java", ".kt", ".kts", ".rb", ".php", ".cs", ".swift", ".scala", ".c", ".h", ".cc", ".cpp", ".hpp", ".m", ".ex", ".exs", ".erl", ".hs", ".lua", ".sh", ".bash", ".zsh", ".vue", ".svelte", ".dart", ".clj", ".ml", ".jl", ".r", ".groovy", ".fs", ".zig", ".nim", ".pl")

var languages = map[string]string{
	".go": "go", ".ts": "typescript", ".tsx": "typescript", ".js": "javascript", ".jsx": "javascript",
	".mjs": "javascript", ".cjs": "javascript", ".py": "python", ".rs": "rust", ".java": "java", ".kt": "kotlin",
	".rb": "ruby", ".php": "php", ".cs": "csharp", ".swift": "swift", ".c": "c", ".h": "c", ".cc": "cpp",
	".cpp": "cpp", ".hpp": "cpp", ".sh": "shell", ".md": "docs", ".sql": "sql", ".vue": "vue", ".svelte": "svelte",
}

func isCode(file string) bool { return codeExts[strings.ToLower(path.Ext(file))] }

func isTestFile(file string) bool {
	base := strings.ToLower(path.Base(file))
	return strings.HasSuffix(base, "_test.go") || strings.Contains(base, ".test.") || strings.Contains(base, ".spec.") ||
		strings.HasPrefix(base, "test_") && strings.HasSuffix(base, ".py") || strings.HasSuffix(base, "_test.py") ||
		strings.HasSuffix(base, "_spec.rb") || strings.HasSuffix(base, "test.java") || strings.HasSuffix(base, "tests.cs") ||
		strings.Contains(file, "__tests__/")
}

func fileTags(file string) []string {
	var tags []string
	if l := languages[strings.ToLower(path.Ext(file))]; l != "" {
		tags = append(tags, l)
	}
	if isTestFile(file) {
		tags = append(tags, "testing")
	}
	return tags
}

// Concepts derives topic words from file paths: directory and file stem
// names, minus noise.
func Concepts(files ...string) []string {
	var out []string
	for _, f := range files {
		for _, part := range strings.Split(filepath.ToSlash(f), "/") {
			if i := strings.IndexByte(part, '.'); i > 0 {
				part = part[:i]
			}
			part = strings.ToLower(strings.TrimFunc(part, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }))
			if len(part) < 3 || noiseDirs[part] {
				continue
			}
			out = append(out, part)
		}
	}
	return out
}

var noiseDirs = wordSet("src", "lib", "internal", "pkg", "cmd", "app", "home", "tmp", "work", "users", "root", "index", "main", "test", "tests", "dist", "build", "node_modules", "vendor")

// identWords splits identifiers into lower-case topic words:
// "TestInvoiceTotalHalfEven" → invoice, total, half, even.
func identWords(s string) []string {
	var out []string
	var word []rune
	flush := func() {
		if len(word) >= 3 {
			w := strings.ToLower(string(word))
			if !stopWords[w] {
				out = append(out, w)
			}
		}
		word = word[:0]
	}
	runes := []rune(s)
	for i, r := range runes {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if len(word) > 0 && unicode.IsUpper(r) {
				prev := word[len(word)-1]
				nextLower := i+1 < len(runes) && unicode.IsLower(runes[i+1])
				if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
					flush()
				}
			}
			word = append(word, r)
		default:
			flush()
		}
	}
	flush()
	return out
}

var stopWords = wordSet("the", "and", "for", "with", "from", "into", "this", "that", "when", "then", "than", "have", "has",
	"should", "would", "could", "will", "make", "also", "just", "some", "more", "only", "their", "there", "these",
	"those", "what", "which", "while", "where", "about", "after", "before", "over", "under", "using", "used", "use",
	"all", "new", "get", "set", "not", "are", "was", "were", "been", "being", "its", "our", "your", "you", "can",
	"test", "tests", "func", "function", "return", "const", "var", "let", "def", "class", "type", "int", "int64",
	"float64", "string", "bool", "true", "false", "null", "nil", "none", "self", "err", "ctx", "instead", "rather",
	"decided", "decide", "let's", "we'll", "go", "want", "need", "please", "now", "any", "each", "every", "keep")

// topicWords picks the content words of a sentence.
func topicWords(text string, n int) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && r != '-' }) {
		w = strings.Trim(w, "-")
		if len(w) >= 4 && !stopWords[w] {
			out = append(out, w)
		}
	}
	return memory.Dedupe(out, n)
}

// identifiersIn returns the identifiers of a search pattern.
func identifiersIn(pattern string, n int) []string {
	var out []string
	for _, f := range strings.FieldsFunc(pattern, func(r rune) bool { return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_') }) {
		if len(f) >= 3 && !stopWords[strings.ToLower(f)] {
			out = append(out, f)
		}
	}
	return memory.Dedupe(out, n)
}

func isIdentByte(c byte) bool {
	return c == '_' || c == '$' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c >= 0x80
}

func isIdent(s string) bool {
	if s == "" || '0' <= s[0] && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isIdentByte(s[i]) {
			return false
		}
	}
	return true
}

func wordSet(items ...string) map[string]bool {
	m := make(map[string]bool, len(items))
	for _, it := range items {
		m[it] = true
	}
	return m
}

func countOf(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	switch {
	case strings.HasSuffix(what, "ch"), strings.HasSuffix(what, "s"):
		return fmt.Sprintf("%d %ses", n, what)
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// nameList renders up to n names: "a", "a and b", "a, b and 3 more".
func nameList(names []string, n int) string { return listMore(names, n, len(names)) }

// listMore renders up to n of items, saying how many of total are left.
func listMore(items []string, n, total int) string {
	shown := firstN(items, n)
	more := total - len(shown)
	switch {
	case len(shown) == 0:
		return ""
	case more > 0:
		return strings.Join(shown, ", ") + fmt.Sprintf(" and %d more", more)
	case len(shown) == 1:
		return shown[0]
	}
	return strings.Join(shown[:len(shown)-1], ", ") + " and " + shown[len(shown)-1]
}

func changeList(added, removed []string) string {
	var parts []string
	if len(added) > 0 {
		parts = append(parts, "adds "+nameList(added, 4))
	}
	if len(removed) > 0 {
		parts = append(parts, "removes "+nameList(removed, 4))
	}
	return strings.Join(parts, "; ")
}

func firstN[T any](s []T, n int) []T {
	if len(s) > n {
		return s[:n]
	}
	return s
}

func inQuotes(s string) string { return `"` + memory.Clip(oneLine(s), 60) + `"` }

// squash collapses runs of white space into one space.
func squash(s string) string {
	if !strings.ContainsAny(s, "\t\n\r") && !strings.Contains(s, "  ") {
		return strings.TrimSpace(s)
	}
	return strings.Join(strings.Fields(s), " ")
}

func oneLine(s string) string {
	if !strings.ContainsAny(s, "\n\r\t") {
		return s
	}
	return squash(s)
}

func asSentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" || strings.HasSuffix(s, ".") || strings.HasSuffix(s, "!") || strings.HasSuffix(s, "?") {
		return s
	}
	return s + "."
}

func lineCount(s string) int {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return 0
	}
	return strings.Count(s, "\n") + 1
}

// firstMeaningfulLine is the first line of text with letters or digits in
// it, clipped.
func firstMeaningfulLine(s string) string {
	for line := range strings.Lines(headTail(s)) {
		line = strings.TrimSpace(line)
		if strings.IndexFunc(line, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0 {
			return memory.Clip(squash(line), 120)
		}
	}
	return ""
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
