package main_test

import (
	"bufio"
	"bytes"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// The docs keep themselves true: README.md and docs/*.md name files of the
// repository, link to each other, and the code cites docs/architecture.md
// by section. These tests fail naming each path, link or citation that
// points nowhere.

// repoRoot is the repository's top level, seen from cmd/mnemo.
const repoRoot = "../.."

// topLevel are the folders of the repository whose paths the docs name.
var topLevel = []string{"cmd", "rpc", "memory", "vector", "adapters", "docs"}

// docFiles returns README.md and every docs/*.md, relative to the root.
func docFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md"}
	md, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range md {
		files = append(files, path.Join("docs", filepath.Base(f)))
	}
	return files
}

func readDoc(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// proseLines returns the lines of a markdown text outside fenced code
// blocks, with their line numbers.
func proseLines(text string) (lines []string, numbers []int) {
	fenced := false
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			lines = append(lines, line)
			numbers = append(numbers, n)
		}
	}
	return lines, numbers
}

// codeSpans returns the contents of a line's inline code spans, opened
// and closed by one backtick or by two.
func codeSpans(line string) []string {
	var spans []string
	for {
		i := strings.IndexByte(line, '`')
		if i < 0 {
			return spans
		}
		ticks := 1
		for i+ticks < len(line) && line[i+ticks] == '`' {
			ticks++
		}
		fence := strings.Repeat("`", ticks)
		rest := line[i+ticks:]
		j := strings.Index(rest, fence)
		if j < 0 {
			return spans
		}
		spans = append(spans, strings.TrimSpace(rest[:j]))
		line = rest[j+ticks:]
	}
}

var (
	pathChars  = regexp.MustCompile(`^[A-Za-z0-9._/-]+$`)
	lineSuffix = regexp.MustCompile(`:[0-9]+(-[0-9]+)?$`)
)

// repoPath reports whether an inline code span is a path of the
// repository, and returns it cleaned. The rule: the whole span is a path
// (letters, digits, '.', '_', '-', '/'; no spaces, no placeholders such as
// <host> or *), optionally after "./" and before ":LINE" or "/", and its
// first element is one of topLevel. Commands (`go run ./cmd/mnemo-bench`),
// Go names (`memory.Session`) and method names (`mnemo/search`) are not.
func repoPath(span string) (string, bool) {
	p := strings.TrimPrefix(span, "./")
	p = lineSuffix.ReplaceAllString(p, "")
	p = strings.TrimSuffix(p, "/")
	if p == "" || !pathChars.MatchString(p) || strings.Contains(p, "//") || strings.Contains(p, "..") {
		return "", false
	}
	first, _, _ := strings.Cut(p, "/")
	return p, slices.Contains(topLevel, first)
}

func exists(rel string) bool {
	_, err := os.Stat(filepath.Join(repoRoot, filepath.FromSlash(rel)))
	return err == nil
}

// TestDocsPaths checks that every repository path the docs name in
// inline code exists: `memory/store`, `cmd/mnemo-hook/main.go`,
// `adapters/vscode/extension/`, `vector/index.go:579`.
func TestDocsPaths(t *testing.T) {
	checked := 0
	for _, name := range docFiles(t) {
		lines, numbers := proseLines(readDoc(t, name))
		for i, line := range lines {
			for _, span := range codeSpans(line) {
				p, ok := repoPath(span)
				if !ok {
					continue
				}
				checked++
				if !exists(p) {
					t.Errorf("%s:%d names `%s`, which does not exist", name, numbers[i], span)
				}
			}
		}
	}
	if checked < 50 {
		t.Errorf("only %d paths found in the docs: the scan is broken", checked)
	}
}

var mdLink = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)\)`)

// TestDocsLinks checks the docs' relative links: the file must exist, and
// an anchor (#…) must be a heading of the file it points into.
func TestDocsLinks(t *testing.T) {
	anchorsOf := map[string]map[string]bool{}
	anchors := func(rel string) map[string]bool {
		if a, ok := anchorsOf[rel]; ok {
			return a
		}
		a := headingAnchors(readDoc(t, rel))
		anchorsOf[rel] = a
		return a
	}
	checked := 0
	for _, name := range docFiles(t) {
		lines, numbers := proseLines(readDoc(t, name))
		for i, line := range lines {
			for _, m := range mdLink.FindAllStringSubmatch(stripCodeSpans(line), -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				checked++
				file, frag, _ := strings.Cut(target, "#")
				rel := name
				if file != "" {
					rel = path.Join(path.Dir(name), file)
					if strings.HasPrefix(rel, "../") || !exists(rel) {
						t.Errorf("%s:%d links to %s, which does not exist", name, numbers[i], target)
						continue
					}
				}
				if frag != "" && strings.HasSuffix(rel, ".md") && !anchors(rel)[frag] {
					t.Errorf("%s:%d links to %s: %s has no heading #%s", name, numbers[i], target, rel, frag)
				}
			}
		}
	}
	if checked < 10 {
		t.Errorf("only %d links found in the docs: the scan is broken", checked)
	}
}

// stripCodeSpans blanks a line's inline code, where brackets are code.
func stripCodeSpans(line string) string {
	for _, s := range codeSpans(line) {
		line = strings.Replace(line, s, "", 1)
	}
	return line
}

// headingAnchors returns the anchors GitHub gives a markdown text's
// headings: lower case, punctuation dropped, spaces as '-', a repeated one
// numbered (-1, -2…).
func headingAnchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	lines, _ := proseLines(text)
	for _, line := range lines {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(line, "#"))
		a := slug(title)
		if n := seen[a]; n > 0 {
			seen[a]++
			a += "-" + strconv.Itoa(n)
		} else {
			seen[a] = 1
		}
		out[a] = true
	}
	return out
}

func slug(title string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(title) {
		switch {
		case unicode.IsLetter(r), unicode.IsDigit(r), r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

var (
	archCitation = regexp.MustCompile(`architecture\.md §([0-9]+)`)
	archSection  = regexp.MustCompile(`(?m)^## ([0-9]+)\. `)
)

// TestDocsCitations checks what the code cites: every "architecture.md §N"
// in the repository's Go, TypeScript, shell, justfile and markdown names a
// section docs/architecture.md has, and nothing cites a design document
// the repository does not hold.
func TestDocsCitations(t *testing.T) {
	sections := map[string]bool{}
	for _, m := range archSection.FindAllStringSubmatch(readDoc(t, "docs/architecture.md"), -1) {
		sections[m[1]] = true
	}
	if len(sections) < 10 {
		t.Fatalf("docs/architecture.md has %d numbered sections (## N. Title): the scan is broken", len(sections))
	}
	gone := []string{"DESIGN" + " §", "DESIGN" + ".md", "STYLE" + ".md"}
	cited := 0
	err := filepath.WalkDir(repoRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			switch name {
			case ".git", ".cache", "node_modules", "bin", "dist":
				return filepath.SkipDir
			}
			return nil
		}
		switch ext := filepath.Ext(name); {
		case ext == ".go", ext == ".ts", ext == ".sh", ext == ".md", name == "justfile":
		default:
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(repoRoot, p)
		rel = filepath.ToSlash(rel)
		for n, line := range bytes.Split(b, []byte("\n")) {
			for _, m := range archCitation.FindAllSubmatch(line, -1) {
				cited++
				if !sections[string(m[1])] {
					t.Errorf("%s:%d cites docs/architecture.md §%s, which has no such section", rel, n+1, m[1])
				}
			}
			for _, g := range gone {
				if bytes.Contains(line, []byte(g)) {
					t.Errorf("%s:%d cites %s, which is not in the repository: cite docs/architecture.md §N", rel, n+1, strings.TrimSpace(g))
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if cited < 10 {
		t.Errorf("only %d citations of docs/architecture.md found: the scan is broken", cited)
	}
}
