package local

import (
	"slices"
	"strings"

	"github.com/mnemo-dev/mnemo/memory"
)

// A codeDecl is a function, type, class… declared in a piece of code, with the
// first sentence of its doc comment.
type codeDecl struct {
	name, kind, doc string
	indent          int
	line            int
}

var declKeywords = wordSet("func", "function", "def", "class", "interface", "type", "struct", "enum", "trait", "fn", "impl", "module", "const", "let", "var", "fun", "record", "protocol", "object", "namespace", "macro_rules!")

var declModifiers = wordSet("export", "default", "pub", "pub(crate)", "pub(super)", "async", "static", "public", "private", "protected", "abstract", "final", "override", "open", "internal", "sealed", "data", "inline", "extern", "unsafe", "declare", "readonly", "virtual", "synchronized", "partial", "suspend")

// parseDecl reads a declaration from one line of code, any common
// language: Go, TypeScript/JavaScript, Python, Rust, Java/Kotlin/C#, Ruby.
func parseDecl(line string) (name, kind string, indent int, ok bool) {
	s := strings.TrimLeft(line, " \t")
	indent = len(line) - len(s)
	modifiers := 0
	for {
		w, rest, _ := strings.Cut(s, " ")
		if declModifiers[w] {
			s = strings.TrimLeft(rest, " \t")
			modifiers++
			continue
		}
		break
	}
	w, rest, found := strings.Cut(s, " ")
	if !found {
		return "", "", 0, false
	}
	rest = strings.TrimLeft(rest, " \t")
	switch {
	case declKeywords[w] || w == "function*":
		kind = w
	case modifiers > 0:
		// Java, C#, Kotlin members: "public int total(".
		name = leadingIdent(rest)
		if name != "" && strings.HasPrefix(strings.TrimLeft(rest[len(name):], " "), "(") && isIdent(strings.Trim(w, "<>[]?")) {
			return name, "method", indent, true
		}
		return "", "", 0, false
	default:
		return "", "", 0, false
	}
	if (kind == "const" || kind == "let" || kind == "var") && indent > 0 {
		return "", "", 0, false // locals
	}
	recv := ""
	if kind == "func" && strings.HasPrefix(rest, "(") {
		// A Go method: func (c *Cart) Total() → Cart.Total.
		end := strings.IndexByte(rest, ')')
		if end < 0 {
			return "", "", 0, false
		}
		fields := strings.Fields(strings.Trim(rest[1:end], " "))
		if len(fields) > 0 {
			recv = strings.TrimLeft(fields[len(fields)-1], "*")
			if i := strings.IndexByte(recv, '['); i >= 0 {
				recv = recv[:i]
			}
		}
		rest = strings.TrimLeft(rest[end+1:], " ")
	}
	rest = strings.TrimPrefix(rest, "*")
	name = leadingIdent(rest)
	if name == "" || keywordsNotNames[name] {
		return "", "", 0, false
	}
	if kind == "impl" {
		// impl Trait for Type: the type.
		if _, after, ok := strings.Cut(rest, " for "); ok {
			if n := leadingIdent(strings.TrimLeft(after, " ")); n != "" {
				name = n
			}
		}
	}
	if recv != "" && isIdent(recv) {
		name = recv + "." + name
	}
	return name, kind, indent, true
}

var keywordsNotNames = wordSet("if", "for", "while", "return", "func", "function", "new", "as", "in", "of", "is", "not", "and", "or", "the", "a", "an", "to")

func leadingIdent(s string) string {
	i := 0
	for i < len(s) && isIdentByte(s[i]) {
		i++
	}
	if i == 0 || '0' <= s[0] && s[0] <= '9' {
		return ""
	}
	return s[:i]
}

// declsOf lists up to max declarations of a piece of code with their doc
// comments (the comment block above, or a Python docstring below).
func declsOf(code string, max int) []codeDecl {
	if code == "" {
		return nil
	}
	if len(code) > maxScan {
		code = code[:maxScan]
	}
	var (
		out []codeDecl
		doc []string
		no  int
	)
	lines := strings.Split(code, "\n")
	for i, line := range lines {
		no++
		t := strings.TrimSpace(line)
		if c, ok := commentText(t); ok {
			if c != "" && !strings.HasPrefix(c, "go:") && !strings.HasPrefix(c, "nolint") && !strings.HasPrefix(c, "eslint") && !strings.HasPrefix(c, "!") {
				doc = append(doc, c)
			}
			continue
		}
		if t == "" || strings.HasPrefix(t, "@") || strings.HasPrefix(t, "#[") {
			if t == "" {
				doc = doc[:0]
			}
			continue // decorators and attributes belong to the next line
		}
		name, kind, indent, ok := parseDecl(line)
		if ok {
			d := codeDecl{name: name, kind: kind, indent: indent, line: no}
			text := strings.Join(doc, " ")
			if text == "" && (kind == "def" || kind == "class") && i+1 < len(lines) {
				next := strings.TrimSpace(lines[i+1])
				for _, q := range []string{`"""`, `'''`} {
					if strings.HasPrefix(next, q) {
						text = strings.Trim(strings.TrimPrefix(next, q), `"' `)
					}
				}
			}
			d.doc = firstSentence(text)
			out = append(out, d)
			if len(out) == max {
				break
			}
		}
		doc = doc[:0]
	}
	return out
}

// commentText returns the text of a comment line, without its markers.
func commentText(t string) (string, bool) {
	for _, p := range []string{"///", "//", "/**", "/*", "*/", "* ", "#", "--", ";;"} {
		if strings.HasPrefix(t, p) {
			if p == "#" && (strings.HasPrefix(t, "#[") || strings.HasPrefix(t, "#!") || strings.HasPrefix(t, "#include") || strings.HasPrefix(t, "#define")) {
				return "", false
			}
			c := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(t, p), "*/"))
			return strings.TrimLeft(c, "*! "), true
		}
	}
	if t == "*" {
		return "", true
	}
	return "", false
}

func firstSentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	if ss := sentences(s); len(ss) > 0 {
		s = ss[0]
	}
	return memory.Clip(s, 140)
}

func declNames(ds []codeDecl) []string {
	out := make([]string, 0, len(ds))
	for _, d := range ds {
		out = append(out, d.name)
	}
	return memory.Dedupe(out, len(out)+1)
}

// declDiff compares the declarations before and after an edit: names only
// after (added), only before (removed) and in both (changed).
func declDiff(before, after []codeDecl) (added, removed, changed []string) {
	b, a := declNames(before), declNames(after)
	for _, n := range a {
		if slices.Contains(b, n) {
			changed = append(changed, n)
		} else {
			added = append(added, n)
		}
	}
	for _, n := range b {
		if !slices.Contains(a, n) {
			removed = append(removed, n)
		}
	}
	return added, removed, changed
}

// enclosingDecl finds the function or type an edit sits in: the nearest
// declaration above old in the original file that is indented less than
// the edited line, or, without the file, in the patch's context lines.
func enclosingDecl(original, old string, patch []string) string {
	var above []string
	editIndent := -1
	if i := strings.Index(original, old); original != "" && old != "" && i >= 0 {
		start := strings.LastIndexByte(original[:i], '\n') + 1
		line := original[start:]
		if j := strings.IndexByte(line, '\n'); j >= 0 {
			line = line[:j]
		}
		editIndent = len(line) - len(strings.TrimLeft(line, " \t"))
		before := original[:start]
		if len(before) > maxScan {
			before = before[len(before)-maxScan:]
		}
		above = strings.Split(before, "\n")
	} else if len(patch) > 0 {
		for _, l := range patch {
			if strings.HasPrefix(l, "-") || strings.HasPrefix(l, "+") {
				body := l[1:]
				editIndent = len(body) - len(strings.TrimLeft(body, " \t"))
				break
			}
			if len(l) > 0 {
				above = append(above, l[1:])
			}
		}
	}
	if editIndent <= 0 {
		return ""
	}
	for i := len(above) - 1; i >= 0 && i >= len(above)-400; i-- {
		name, kind, indent, ok := parseDecl(above[i])
		if ok && indent < editIndent && kind != "const" && kind != "let" && kind != "var" {
			return name
		}
	}
	return ""
}

// docFacts renders the doc comments of declarations: "roundCents rounds
// half away from zero." or, when the doc does not start with the name,
// "retry: retries with backoff.".
func docFacts(ds []codeDecl, n int) []string {
	var out []string
	for _, d := range ds {
		if d.doc == "" {
			continue
		}
		short := d.name[strings.LastIndexByte(d.name, '.')+1:]
		doc := d.doc
		if !strings.HasPrefix(doc, short) && !strings.HasPrefix(doc, d.name) {
			doc = d.name + ": " + doc
		}
		out = append(out, doc)
		if len(out) == n {
			break
		}
	}
	return out
}
