package privacy

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// tagNames are the tags Strip removes with their content, in lower case.
// <mnemo-context> is the anti-recursion tag: Mnemo wraps what it writes
// into CLAUDE.md and injected context in it, so it is never re-ingested;
// <system-reminder> carries CLAUDE.md contents into the transcript;
// <hook_context> is how Gemini CLI puts a hook's context (Mnemo's among
// them, its < and > escaped) in front of the prompt that hooks then see.
var tagNames = [...]string{
	"private",
	"mnemo-context",
	"system-reminder",
	"system_instruction",
	"system-instruction",
	"persisted-output",
	"hook_context",
}

// Strip removes the private tags and their content from s and reports how
// many it removed: <private>, <mnemo-context>, <system-reminder>,
// <system_instruction>, <system-instruction>, <persisted-output> and
// <hook_context>.
//
// Tag names match without regard to ASCII case, and the opening tag may
// carry attributes (<system-reminder origin="x">). The rules:
//
//   - An element, from its opening tag to the matching closing tag, is
//     removed whole. Nested tags of the same name nest: the outermost pair
//     wins. Tags of other names inside an element are its content.
//   - An opening tag that is never closed removes everything to the end of
//     the text: leaking is worse than losing text.
//   - A stray closing tag, and a self-closing tag (<private/>), is removed.
//   - A tag needs its '>' before the next '<': "<private" with no '>' is
//     text, not a tag.
//   - Text joined by a removal is scanned again, so the result never holds
//     one of these tags, even when pieces around a removed element spell one.
//
// n counts the removed elements, stray closing tags and self-closing tags;
// callers log a warning when it exceeds WarnTags.
//
// The whitespace a removal leaves behind is tidied where the cut was made,
// and nowhere else: an element alone on its lines takes its line break
// with it (and never leaves two blank lines in a row, nor blank lines at
// the start or end); between two spaces one is dropped; at the start or
// end of a line the spaces on the inner side go. Two words that the
// removed element separated are kept apart by a space.
//
// Strip runs in time linear in len(s) for every input, and returns s
// itself, without copying, when it removes nothing.
func Strip(s string) (clean string, n int) {
	if !mayHaveTag(s) {
		return s, 0
	}
	st := stripper{s: s, out: make([]byte, 0, len(s))}
	st.run()
	if st.n == 0 {
		return s, 0
	}
	return string(st.out), st.n
}

// A stripper copies s to out, cutting out the tags it finds. It reads the
// tags in out rather than in s, so that text joined by a cut is seen as a
// whole: lts holds every '<' in out not yet followed by a '>' that could
// still begin a tag, and a tag is recognised when its '>' is written.
// The content of an element is skipped in s, never copied.
type stripper struct {
	s   string
	out []byte
	lts []mark
	ws  int // out[ws:] is the trailing run of horizontal whitespace
	n   int
}

// A mark is a run of n '<' written to out from index at, with the
// stripper's ws as it was just before the first: what to restore when the
// tag one of them begins is cut. (Runs keep "<<<<…" to one mark.)
type mark struct{ at, n, ws int }

// tagKind is what the text between a '<' and a '>' is.
type tagKind int

const (
	notTag tagKind = iota
	openTag
	closeTag
	emptyTag // self-closing: <private/>
)

func (st *stripper) run() {
	s := st.s
	for i := 0; i < len(s); {
		if c := s[i]; c != '<' && c != '>' {
			// With no '<' pending, a '>' cannot end a tag: look for '<' alone.
			var j int
			if len(st.lts) == 0 {
				j = strings.IndexByte(s[i:], '<')
			} else {
				j = indexAngle(s[i:])
			}
			if j < 0 {
				st.write(s[i:])
				return
			}
			st.write(s[i : i+j])
			i += j
		}
		if s[i] == '<' {
			st.pushLT()
			i++
			continue
		}
		st.out = append(st.out, '>')
		st.ws = len(st.out)
		i++
		if len(st.lts) == 0 {
			continue
		}
		top := st.lts[len(st.lts)-1]
		kind, name := parseTag(st.out[top.at+top.n-1:])
		switch kind {
		case notTag:
			// This '>' ends every pending '<': none can begin a tag now.
			st.lts = st.lts[:0]
		case openTag:
			i = st.cut(closeOf(s, i, name))
		default:
			i = st.cut(i)
		}
	}
}

// write appends t, which holds no '<' or '>', to out.
func (st *stripper) write(t string) {
	k := len(t)
	for k > 0 && isHWS(t[k-1]) {
		k--
	}
	if k > 0 {
		st.ws = len(st.out) + k
	}
	st.out = append(st.out, t...)
}

// pushLT writes a '<' and marks it. The '<' before it, whose text is now
// fixed up to this one, is forgotten if that text can no longer start a
// tag, which keeps lts short in ordinary text ("a < b && c < d").
func (st *stripper) pushLT() {
	at := len(st.out)
	st.out = append(st.out, '<')
	if k := len(st.lts); k > 0 {
		top := &st.lts[k-1]
		if top.at+top.n == at {
			top.n++ // "<<": the first may still start a tag if the second is cut
			st.ws = len(st.out)
			return
		}
		if !maybeTag(st.out[top.at+top.n : at]) {
			// Its last '<' can no longer start a tag, and stays, so
			// neither can the ones before it.
			st.lts = st.lts[:k-1]
		}
	}
	st.lts = append(st.lts, mark{at: at, n: 1, ws: st.ws})
	st.ws = len(st.out)
}

// cut removes out from the last marked '<' on, along with s up to end, and
// tidies the seam. It returns where reading resumes in s.
func (st *stripper) cut(end int) int {
	k := len(st.lts) - 1
	top := &st.lts[k]
	top.n--
	at := top.at + top.n
	st.out = st.out[:at]
	st.ws = at
	if top.n == 0 {
		st.ws = top.ws
		st.lts = st.lts[:k]
	}
	st.n++
	return st.seam(end)
}

// seam tidies the whitespace around a cut between out and s[i:] and
// returns where reading resumes in s.
func (st *stripper) seam(i int) int {
	s := st.s
	lh := st.ws // out[lh:] is the whitespace left of the cut
	lineStart := lh == 0 || st.out[lh-1] == '\n'
	k := i // s[i:k] is the whitespace right of the cut
	for k < len(s) && isHWS(s[k]) {
		k++
	}
	nl := newlineAt(s, k)
	lineEnd := k == len(s) || nl > 0
	switch {
	case lineStart && lineEnd:
		// The removed text filled its lines: remove them whole.
		st.out = st.out[:lh]
		i = k + nl
		switch {
		case i == len(s):
			// Keep a final line break only if the removed line had one.
			st.trimNewlines(nl > 0)
		default:
			// No blank line at the start, none doubled.
			i = skipNewlines(s, i, len(st.out) > 0 && !endsBlank(st.out))
		}
		return i
	case lineStart:
		return k // keep the indentation, drop the space after the cut
	case lineEnd:
		st.out = st.out[:lh] // no trailing spaces before the line break
		return k
	case lh < len(st.out) && k > i:
		return k // one space between the two sides is enough
	case lh == len(st.out) && k == i && wordEnd(st.out) && wordStart(s[i:]):
		st.write(" ") // never join two words
	}
	return i
}

// trimNewlines removes the line breaks at the end of out, all of them or
// all but the first one.
func (st *stripper) trimNewlines(keepOne bool) {
	start, end := -1, -1 // the first of the trailing line breaks
	for e := len(st.out); e > 0 && st.out[e-1] == '\n'; {
		end, e = e, e-1
		if e > 0 && st.out[e-1] == '\r' {
			e--
		}
		start = e
	}
	switch {
	case start < 0:
	case keepOne:
		st.out = st.out[:end]
	default:
		st.out = st.out[:start]
	}
	k := len(st.out)
	for k > 0 && isHWS(st.out[k-1]) {
		k--
	}
	st.ws = k
}

// closeOf returns the index in s just after the closing tag that matches
// an opening tag of tagNames[name] whose content starts at s[i:], counting
// nested tags of the same name, or len(s) if it is never closed.
func closeOf(s string, i, name int) int {
	depth := 1
	for {
		j := strings.IndexByte(s[i:], '<')
		if j < 0 {
			return len(s)
		}
		p := i + j
		q := indexAngle(s[p+1:])
		if q < 0 {
			return len(s)
		}
		e := p + 1 + q
		if s[e] == '<' {
			i = e
			continue
		}
		i = e + 1
		kind, k := parseTag(s[p:i])
		if k != name {
			continue
		}
		switch kind {
		case openTag:
			depth++
		case closeTag:
			depth--
			if depth == 0 {
				return i
			}
		}
	}
}

// text is what the tag scanners read: s or the stripper's out.
type text interface{ ~string | ~[]byte }

// parseTag reads t, which runs from a '<' to the next '>' with neither in
// between, and returns its kind and the index of its name in tagNames.
func parseTag[T text](t T) (tagKind, int) {
	if len(t) < 3 || t[0] != '<' || t[len(t)-1] != '>' {
		return notTag, -1
	}
	body := t[1 : len(t)-1]
	closing := len(body) > 0 && body[0] == '/'
	if closing {
		body = body[1:]
	}
	k := nameAt(body)
	switch {
	case k < 0:
		return notTag, -1
	case closing:
		return closeTag, k
	case len(body) > len(tagNames[k]) && body[len(body)-1] == '/':
		return emptyTag, k
	}
	return openTag, k
}

// nameAt returns the index in tagNames of the name t begins with, followed
// by a boundary or the end of t, ignoring ASCII case; -1 if none.
func nameAt[T text](t T) int {
	if len(t) == 0 || !nameStart(t[0]) {
		return -1
	}
	for k, name := range tagNames {
		if len(t) >= len(name) && hasPrefixFold(t, name) &&
			(len(t) == len(name) || isBoundary(t[len(name)])) {
			return k
		}
	}
	return -1
}

// maybeTag reports whether t, the text after a '<' that holds no '<' or
// '>', could still become the inside of one of our tags as more text is
// appended: "/priv" could, "/private x=1" could, "privacy" cannot.
func maybeTag[T text](t T) bool {
	if len(t) > 0 && t[0] == '/' {
		t = t[1:]
	}
	if len(t) > 0 && !nameStart(t[0]) {
		return false
	}
	for _, name := range tagNames {
		if len(t) <= len(name) {
			if hasPrefixFold(name, t) {
				return true
			}
		} else if hasPrefixFold(t, name) && isBoundary(t[len(name)]) {
			return true
		}
	}
	return false
}

// mayHaveTag reports whether s holds a '<' or "</" followed by one of our
// names and a boundary, '>' or the end of s. Without one, Strip has
// nothing to do: a cut needs a first tag written whole in s.
// MayHaveTag reports whether t may hold one of the tags Strip removes,
// opening or closing: false means Strip would change nothing in it, nor in
// a text it is part of. It is a quick scan for a '<' followed by a tag's
// name; t may be JSON text, where a '<' written as an escape (\u003c) is
// counted as one.
func MayHaveTag[T text](t T) bool {
	for i := 0; i < len(t); i++ {
		switch t[i] {
		case '<':
			if n := t[i+1:]; len(n) > 0 && n[0] == '/' {
				if nameAt(n[1:]) >= 0 {
					return true
				}
			} else if nameAt(n) >= 0 {
				return true
			}
		case '\\':
			if i+5 < len(t) && t[i+1] == 'u' && t[i+2] == '0' && t[i+3] == '0' && t[i+4] == '3' && (t[i+5] == 'c' || t[i+5] == 'C') {
				return true
			}
		}
	}
	return false
}

func mayHaveTag(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != '<' {
			j := strings.IndexByte(s[i:], '<')
			if j < 0 {
				return false
			}
			i += j
		}
		t := s[i+1:]
		if len(t) > 0 && t[0] == '/' {
			t = t[1:]
		}
		if nameAt(t) >= 0 {
			return true
		}
	}
	return false
}

// indexAngle returns the index of the first '<' or '>' in s, or -1.
func indexAngle(s string) int {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '<' || c == '>' {
			return i
		}
	}
	return -1
}

// nameStart reports whether c can begin one of tagNames.
func nameStart(c byte) bool {
	switch lower(c) {
	case 'p', 'm', 's', 'h':
		return true
	}
	return false
}

// hasPrefixFold reports whether t begins with prefix, ignoring ASCII case.
func hasPrefixFold[T, P text](t T, prefix P) bool {
	if len(t) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		if lower(t[i]) != lower(prefix[i]) {
			return false
		}
	}
	return true
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// isBoundary reports whether c may follow a tag name.
func isBoundary(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '\f', '/', '>':
		return true
	}
	return false
}

// isHWS reports whether c is horizontal whitespace.
func isHWS(c byte) bool {
	return c == ' ' || c == '\t' || c == '\v' || c == '\f'
}

// newlineAt returns the length of the line break at s[i:]: 1 for "\n", 2
// for "\r\n", 0 for none.
func newlineAt(s string, i int) int {
	switch {
	case i < len(s) && s[i] == '\n':
		return 1
	case i+1 < len(s) && s[i] == '\r' && s[i+1] == '\n':
		return 2
	}
	return 0
}

// skipNewlines skips the line breaks at s[i:], all of them or all but the
// last one.
func skipNewlines(s string, i int, keepOne bool) int {
	last := -1
	for nl := newlineAt(s, i); nl > 0; nl = newlineAt(s, i) {
		last = i
		i += nl
	}
	if keepOne && last >= 0 {
		return last
	}
	return i
}

// endsBlank reports whether out ends with an empty line.
func endsBlank(out []byte) bool {
	k := len(out)
	if k > 0 && out[k-1] == '\n' {
		k--
		if k > 0 && out[k-1] == '\r' {
			k--
		}
		return k == 0 || out[k-1] == '\n'
	}
	return false
}

// wordEnd and wordStart report whether out ends and s starts with a letter,
// a digit or an underscore.
func wordEnd(out []byte) bool {
	r, _ := utf8.DecodeLastRune(out)
	return isWord(r)
}

func wordStart(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return isWord(r)
}

func isWord(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
}
