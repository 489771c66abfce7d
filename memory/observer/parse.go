package observer

import (
	"html"
	"regexp"
	"slices"
	"strings"

	"github.com/mnemo-dev/mnemo/memory"
)

// Reply is a model's answer, parsed.
type Reply struct {
	// Observations holds every usable <observation> block, in order.
	Observations []memory.Observation
	// Summary is the first usable <summary> block; nil when there is none.
	Summary *memory.Summary
	// SkipReason is the reason of a <skip_summary reason="…"/>, or "no
	// reason given"; empty when the model did not skip.
	SkipReason string
}

// Parse reads the <observation> and <summary> blocks of a model's answer,
// tolerantly: text around the blocks and a code fence around the whole
// answer are ignored; tags may be in any case and carry attributes; a block
// or field left unclosed ends where the next one starts; list fields take
// <fact>, <concept> and <file> items, or lines and commas when the items
// have no tags; entities and CDATA are decoded.
//
// An observation needs a title, a narrative or a fact: one with only a
// subtitle or concepts is dropped. Its type is normalized (aliases like "bug
// fix"); a missing or unknown type becomes "change" when it names modified
// files and "discovery" otherwise, because types are a closed vocabulary
// that searches filter by. Concepts are cut at the first colon ("gotcha:
// WASM quirk" is "gotcha"), and a concept equal to the type is dropped. A
// missing title is taken from the subtitle, the narrative or the first
// fact. A summary needs one of request, investigated, learned, completed
// or next_steps: "<summary>plain text</summary>" is not one.
func Parse(text string) Reply {
	text = stripFence(text)
	var r Reply
	for _, body := range blocks(text, "observation") {
		if o, ok := parseObservation(body); ok {
			r.Observations = append(r.Observations, o)
		}
	}
	for _, body := range blocks(text, "summary") {
		if s, ok := parseSummary(body); ok {
			r.Summary = &s
			break
		}
	}
	if r.Summary == nil {
		if m := skipRE.FindStringSubmatch(text); m != nil {
			r.SkipReason = strings.TrimSpace(html.UnescapeString(m[1] + m[2]))
			if r.SkipReason == "" {
				r.SkipReason = "no reason given"
			}
		}
	}
	return r
}

var (
	skipRE  = regexp.MustCompile(`(?is)<skip_summary(?:\s+reason\s*=\s*(?:"([^"]*)"|'([^']*)'))?[^>]*>`)
	fenceRE = regexp.MustCompile("(?s)^```[A-Za-z]*[ \t]*\r?\n(.*?)\r?\n?```$")
	cdataRE = regexp.MustCompile(`(?s)<!\[CDATA\[(.*?)\]\]>`)
	// bulletRE matches the list marks of items written as lines.
	bulletRE = regexp.MustCompile(`^(?:[-*•]|\d+[.)])\s+`)
)

// fields are the tags that can appear inside a block; an unclosed field
// ends where the next of them starts.
var fields = []string{
	"type", "title", "subtitle", "facts", "fact", "narrative", "concepts", "concept",
	"files_read", "files_modified", "file", "request", "investigated", "learned",
	"completed", "next_steps", "notes", "observation", "summary", "skip_summary",
}

// stripFence removes one code fence around the whole answer; fences inside
// it stay.
func stripFence(s string) string {
	s = strings.TrimSpace(s)
	if m := fenceRE.FindStringSubmatch(s); m != nil {
		return m[1]
	}
	return s
}

// openTag finds the next <name …> at or after from, in any case. It returns
// the index of '<' and of the byte after '>', or -1, and whether the tag
// closes itself (<name/>).
func openTag(s, name string, from int) (start, end int, selfClosing bool) {
	for i := from; i < len(s); i++ {
		if s[i] != '<' {
			continue
		}
		if end, self, ok := tagAt(s, i, name); ok {
			return i, end, self
		}
	}
	return -1, -1, false
}

// tagAt reports whether <name …> opens at s[i].
func tagAt(s string, i int, name string) (end int, selfClosing, ok bool) {
	j := i + 1 + len(name)
	if j >= len(s) || s[i] != '<' || !strings.EqualFold(s[i+1:j], name) {
		return 0, false, false
	}
	if c := s[j]; c != '>' && c != '/' && c != ' ' && c != '\t' && c != '\n' && c != '\r' {
		return 0, false, false // a longer name: <observations>, <files_read> for <file>
	}
	k := strings.IndexByte(s[j:], '>')
	if k < 0 {
		return len(s), false, true
	}
	end = j + k + 1
	return end, s[end-2] == '/', true
}

// closeTag finds the next </name> at or after from, in any case.
func closeTag(s, name string, from int) (start, end int) {
	for i := from; i+len(name)+2 < len(s); i++ {
		if s[i] != '<' || s[i+1] != '/' || !strings.EqualFold(s[i+2:i+2+len(name)], name) {
			continue
		}
		j := i + 2 + len(name)
		for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
			j++
		}
		if j < len(s) && s[j] == '>' {
			return i, j + 1
		}
	}
	return -1, -1
}

// blocks returns the bodies of every <name>…</name> in s. A block with no
// closing tag ends where the next observation or summary starts. Each part
// of s is scanned a bounded number of times, so a long answer full of
// unclosed tags parses in linear time.
func blocks(s, name string) []string {
	bounds := opens(s, "observation", "summary")
	var out []string
	for i, start := range bounds {
		end, self, ok := tagAt(s, start, name)
		if !ok || self {
			continue
		}
		limit := len(s)
		if i+1 < len(bounds) {
			limit = bounds[i+1]
		}
		if end > limit {
			continue // <observation <summary>: the tag never closed
		}
		stop, _ := closeTag(s[:limit], name, end)
		if stop < 0 {
			stop = limit
		}
		out = append(out, s[end:stop])
	}
	return out
}

// opens lists, in order, where the named tags open in s.
func opens(s string, names ...string) []int {
	var out []int
	for _, n := range names {
		for from := 0; ; {
			start, end, _ := openTag(s, n, from)
			if start < 0 {
				break
			}
			out = append(out, start)
			from = end
		}
	}
	slices.Sort(out)
	return out
}

// field returns the raw body of the first <name> in s and whether there
// was one. An unclosed field ends where the next known tag starts.
func field(s, name string) (string, bool) {
	start, end, self := openTag(s, name, 0)
	if start < 0 {
		return "", false
	}
	if self {
		return "", true
	}
	stop, _ := closeTag(s, name, end)
	if stop < 0 {
		stop = nextKnown(s, end)
	}
	return s[end:stop], true
}

// nextKnown is the index of the next known opening or closing tag at or
// after from, or len(s).
func nextKnown(s string, from int) int {
	for i := from; i < len(s); i++ {
		if s[i] != '<' {
			continue
		}
		rest := s[i+1:]
		rest = strings.TrimPrefix(rest, "/")
		for _, f := range fields {
			if len(rest) > len(f) && strings.EqualFold(rest[:len(f)], f) {
				if c := rest[len(f)]; c == '>' || c == ' ' || c == '/' || c == '\n' || c == '\t' {
					return i
				}
			}
		}
	}
	return len(s)
}

// text decodes a field's body: CDATA unwrapped, entities decoded, spaces
// trimmed.
func text(raw string) string {
	var cdata []string
	raw = cdataRE.ReplaceAllStringFunc(raw, func(m string) string {
		cdata = append(cdata, cdataRE.FindStringSubmatch(m)[1])
		return "\x00"
	})
	raw = html.UnescapeString(raw)
	for _, c := range cdata {
		raw = strings.Replace(raw, "\x00", c, 1)
	}
	return strings.TrimSpace(raw)
}

// line is text on one line, its runs of spaces collapsed.
func line(raw string) string { return strings.Join(strings.Fields(text(raw)), " ") }

// list reads a list field: its <item> children, or, when it has none, its
// lines and commas (for files) without bullet marks. Items outside any
// container count too.
func list(s, container, item string, commas bool) []string {
	body, ok := field(s, container)
	if !ok {
		body = s
	}
	var out []string
	items := opens(body, item)
	for i, start := range items {
		end, self, _ := tagAt(body, start, item)
		if self {
			continue
		}
		limit := len(body)
		if i+1 < len(items) {
			limit = items[i+1]
		}
		if end > limit {
			continue
		}
		stop, _ := closeTag(body[:limit], item, end)
		if stop < 0 {
			stop = nextKnown(body[:limit], end)
		}
		if v := line(body[end:stop]); v != "" {
			out = append(out, v)
		}
	}
	if len(out) > 0 || !ok {
		return dedupe(out)
	}
	for _, ln := range strings.Split(text(body), "\n") {
		parts := []string{ln}
		if commas {
			parts = strings.Split(ln, ",")
		}
		for _, p := range parts {
			if p = bulletRE.ReplaceAllString(strings.TrimSpace(p), ""); p != "" {
				out = append(out, strings.Join(strings.Fields(p), " "))
			}
		}
	}
	return dedupe(out)
}

func dedupe(items []string) []string {
	seen := make(map[string]bool, len(items))
	out := items[:0]
	for _, it := range items {
		if !seen[it] {
			seen[it] = true
			out = append(out, it)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func parseObservation(body string) (memory.Observation, bool) {
	get := func(name string) string { v, _ := field(body, name); return v }
	o := memory.Observation{
		Title:         line(get("title")),
		Subtitle:      line(get("subtitle")),
		Narrative:     text(get("narrative")),
		Facts:         list(body, "facts", "fact", false),
		Concepts:      list(body, "concepts", "concept", true),
		FilesRead:     list(body, "files_read", "file", true),
		FilesModified: list(body, "files_modified", "file", true),
	}
	// <file> items outside a container are read by both lists above;
	// without their containers they say nothing about reading or writing.
	if _, ok := field(body, "files_read"); !ok {
		o.FilesRead = nil
	}
	if _, ok := field(body, "files_modified"); !ok {
		o.FilesModified = nil
	}
	if o.Title == "" && o.Narrative == "" && len(o.Facts) == 0 {
		return o, false
	}
	o.Type = normalizeType(line(get("type")), len(o.FilesModified) > 0)
	o.Concepts = cleanConcepts(o.Concepts, o.Type)
	if o.Title == "" {
		o.Title = clipLine(firstNonEmpty(o.Subtitle, firstLine(o.Narrative), firstOf(o.Facts)), 120)
	}
	return o, true
}

func parseSummary(body string) (memory.Summary, bool) {
	get := func(names ...string) string {
		for _, n := range names {
			if v, ok := field(body, n); ok {
				return text(v)
			}
		}
		return ""
	}
	s := memory.Summary{
		Request:      get("request"),
		Investigated: get("investigated"),
		Learned:      get("learned"),
		Completed:    get("completed"),
		NextSteps:    get("next_steps", "next-steps", "nextsteps"),
		Notes:        get("notes"),
	}
	ok := s.Request != "" || s.Investigated != "" || s.Learned != "" || s.Completed != "" || s.NextSteps != ""
	return s, ok
}

// knownTypes maps what models write to the observation types.
var knownTypes = map[string]string{
	memory.TypeBugfix: memory.TypeBugfix, "bug_fix": memory.TypeBugfix, "fix": memory.TypeBugfix, "bug": memory.TypeBugfix,
	memory.TypeFeature: memory.TypeFeature, "feat": memory.TypeFeature, "new_feature": memory.TypeFeature,
	memory.TypeRefactor: memory.TypeRefactor, "refactoring": memory.TypeRefactor,
	memory.TypeChange: memory.TypeChange, "chore": memory.TypeChange, "config": memory.TypeChange, "docs": memory.TypeChange,
	memory.TypeDiscovery: memory.TypeDiscovery, "investigation": memory.TypeDiscovery, "finding": memory.TypeDiscovery,
	memory.TypeDecision: memory.TypeDecision,
	memory.TypeSecurity: memory.TypeSecurity, "security": memory.TypeSecurity, "security_alert": memory.TypeSecurity,
	memory.TypeNote: memory.TypeNote,
}

func normalizeType(t string, modifies bool) string {
	k := strings.Map(func(r rune) rune {
		if r == ' ' || r == '-' {
			return '_'
		}
		return r
	}, strings.ToLower(strings.TrimSpace(t)))
	if v, ok := knownTypes[k]; ok {
		return v
	}
	if modifies {
		return memory.TypeChange
	}
	return memory.TypeDiscovery
}

func cleanConcepts(in []string, typ string) []string {
	var out []string
	for _, c := range in {
		if i := strings.IndexByte(c, ':'); i >= 0 {
			c = c[:i]
		}
		c = strings.ToLower(strings.TrimSpace(c))
		if c != "" && c != typ {
			out = append(out, c)
		}
	}
	out = dedupe(out)
	if len(out) > 8 {
		out = out[:8]
	}
	return out
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s = strings.TrimSpace(s); s != "" {
			return s
		}
	}
	return ""
}

func firstOf(ss []string) string {
	if len(ss) == 0 {
		return ""
	}
	return ss[0]
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return strings.TrimSpace(s[:i])
	}
	return s
}

// clipLine cuts s to at most n runes, marking the cut.
func clipLine(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return strings.TrimSpace(string(r[:n-1])) + "…"
}
