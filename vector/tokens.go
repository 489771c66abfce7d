package vector

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Keyword tokens are code-aware. A run of letters and digits joined by
// connectors (_ . / \ - :) is one raw token. A plain word gives one term
// (lowercased, lightly stemmed); a compound gives its whole lowercase form
// and, level by level, its parts: path segments (/ \), dotted parts (. :),
// snake and kebab parts (_ -), then camelCase and letter–digit parts. So
// "src/auth/sessionStore.go" is found by "src/auth/sessionStore.go",
// "sessionStore.go", "sessionStore", "session" and "store"; "E0425",
// "ENOENT", "HTTP" and "503" are kept as they are.

// maxTermLen bounds a term; longer runs (base64, minified code) are skipped.
const maxTermLen = 96

// termFunc receives one term, lowercase, and the byte span [start, end) of
// the raw token it came from. term is only valid during the call.
type termFunc func(term []byte, start, end int)

// tokenizer emits the keyword terms of a text. Its buffers make it cheap to
// reuse; it is not safe for concurrent use.
type tokenizer struct {
	buf   []byte   // the term being emitted
	arena []byte   // terms emitted for the current compound token, back to back
	spans [][2]int // their spans in arena
	track bool     // whether to drop repeats within the current token
	start int
	end   int
	fn    termFunc
}

// each calls fn for every term of text in order.
func (t *tokenizer) each(text string, fn termFunc) {
	t.fn = fn
	i := 0
	for i < len(text) {
		r, size := decodeRune(text, i)
		if !isWordRune(r) {
			i += size
			continue
		}
		start, j := i, i+size
		for j < len(text) {
			r, size := decodeRune(text, j)
			if isWordRune(r) {
				j += size
				continue
			}
			if isConnector(r) {
				k := j + 1
				for k < len(text) && isConnector(rune(text[k])) {
					k++
				}
				if k < len(text) {
					if r2, _ := decodeRune(text, k); isWordRune(r2) {
						j = k
						continue
					}
				}
			}
			break
		}
		t.token(text[start:j], start, j)
		i = j
	}
	t.fn = nil
}

// token emits the terms of one raw token.
func (t *tokenizer) token(raw string, start, end int) {
	if len(raw) > maxTermLen {
		return
	}
	t.start, t.end = start, end
	t.track = false
	if isPlainWord(raw) {
		t.word(raw)
		return
	}
	t.track = true
	t.arena, t.spans = t.arena[:0], t.spans[:0]
	t.emit(raw)
	t.parts(raw, 0)
}

// separator levels, outermost first; the last level splits camelCase.
var separatorLevels = []string{`/\`, ".:", "_-"}

// parts emits the parts of s at separator level and below.
func (t *tokenizer) parts(s string, level int) {
	if level == len(separatorLevels) {
		t.camelParts(s)
		return
	}
	seps := separatorLevels[level]
	if !strings.ContainsAny(s, seps) {
		t.parts(s, level+1)
		return
	}
	for len(s) > 0 {
		i := strings.IndexAny(s, seps)
		p := s
		if i >= 0 {
			p, s = s[:i], s[i+1:]
		} else {
			s = ""
		}
		if p = strings.Trim(p, connectors); p == "" {
			continue
		}
		if isPlainWord(p) {
			t.word(p)
			continue
		}
		t.emit(p)
		t.parts(p, level+1)
	}
}

// camelParts emits the camelCase and letter–digit parts of s, which has no
// separators.
func (t *tokenizer) camelParts(s string) {
	from := 0
	prev := rune(-1)
	for i, r := range s {
		if i > from && camelBoundary(prev, r, s[i+utf8.RuneLen(r):]) {
			t.word(s[from:i])
			from = i
		}
		prev = r
	}
	if from > 0 {
		t.word(s[from:])
	}
}

// camelBoundary reports whether a new part starts at r, given the rune before
// it and the text after it: aB, a1, 1a, and the B of ABc (HTTPServer), but not
// the s of a plural acronym (URLs).
func camelBoundary(prev, r rune, rest string) bool {
	switch {
	case unicode.IsDigit(prev) != unicode.IsDigit(r):
		return true
	case unicode.IsUpper(r) && unicode.IsLower(prev):
		return true
	case unicode.IsUpper(r) && unicode.IsUpper(prev):
		next, _ := utf8.DecodeRuneInString(rest)
		if !unicode.IsLower(next) {
			return false
		}
		return !(next == 's' && len(rest) == 1) // URLs
	}
	return false
}

// word emits a plain word: lowercase, stemmed when it is an ordinary word,
// dropped when it is a stop word or a single letter.
func (t *tokenizer) word(w string) {
	if len(w) == 0 || len(w) == 1 && !('0' <= w[0] && w[0] <= '9') {
		return
	}
	if w[0] >= utf8.RuneSelf && utf8.RuneCountInString(w) < 2 && !isDigits(w) {
		return
	}
	ordinary := isLowerWord(w) || isCapitalizedWord(w)
	t.buf = appendLower(t.buf[:0], w)
	if ordinary {
		if stopWords[string(t.buf)] {
			return
		}
		t.buf = stemBytes(t.buf)
	}
	t.send()
}

// emit passes on the lowercase form of s.
func (t *tokenizer) emit(s string) {
	t.buf = appendLower(t.buf[:0], s)
	t.send()
}

// send passes t.buf on, once per raw token for compounds.
func (t *tokenizer) send() {
	if t.track {
		for _, sp := range t.spans {
			if string(t.arena[sp[0]:sp[1]]) == string(t.buf) {
				return
			}
		}
		t.spans = append(t.spans, [2]int{len(t.arena), len(t.arena) + len(t.buf)})
		t.arena = append(t.arena, t.buf...)
	}
	t.fn(t.buf, t.start, t.end)
}

// terms returns the terms of text, in order, repeated as they occur.
func (t *tokenizer) terms(text string) []string {
	var out []string
	t.each(text, func(term []byte, _, _ int) { out = append(out, string(term)) })
	return out
}

func decodeRune(s string, i int) (rune, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(s[i:])
}

func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

// connectors join the parts of a compound token.
const connectors = `_./\-:`

func isConnector(r rune) bool {
	switch r {
	case '_', '.', '/', '\\', '-', ':':
		return true
	}
	return false
}

// isPlainWord reports whether s is all digits, or all letters written in
// lowercase, UPPERCASE or Capitalized.
func isPlainWord(s string) bool {
	return isDigits(s) || isLowerWord(s) || isCapitalizedWord(s) || isUpperWord(s)
}

func isDigits(s string) bool {
	if ascii, ok := asciiClass(s); ok {
		return ascii == classDigits
	}
	for _, r := range s {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return s != ""
}

func isLowerWord(s string) bool {
	if ascii, ok := asciiClass(s); ok {
		return ascii == classLower
	}
	for _, r := range s {
		if !unicode.IsLetter(r) || unicode.IsUpper(r) {
			return false
		}
	}
	return s != ""
}

func isUpperWord(s string) bool {
	if ascii, ok := asciiClass(s); ok {
		return ascii == classUpper
	}
	for _, r := range s {
		if !unicode.IsLetter(r) || unicode.IsLower(r) {
			return false
		}
	}
	return s != ""
}

func isCapitalizedWord(s string) bool {
	r, size := utf8.DecodeRuneInString(s)
	return unicode.IsUpper(r) && size < len(s) && isLowerWord(s[size:])
}

// ASCII classes of a string, for the fast path of the word tests.
const (
	classMixed = iota
	classLower
	classUpper
	classDigits
)

// asciiClass tells whether s is all lowercase letters, all uppercase letters
// or all digits; ok is false when s is empty or not ASCII.
func asciiClass(s string) (class int, ok bool) {
	if s == "" {
		return classMixed, false
	}
	var lower, upper, digit, other bool
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= utf8.RuneSelf:
			return classMixed, false
		case 'a' <= c && c <= 'z':
			lower = true
		case 'A' <= c && c <= 'Z':
			upper = true
		case '0' <= c && c <= '9':
			digit = true
		default:
			other = true
		}
	}
	switch {
	case other:
		return classMixed, true
	case lower && !upper && !digit:
		return classLower, true
	case upper && !lower && !digit:
		return classUpper, true
	case digit && !lower && !upper:
		return classDigits, true
	}
	return classMixed, true
}

// appendLower appends the lowercase form of s to b.
func appendLower(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			return append(b, strings.ToLower(s[i:])...)
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b = append(b, c)
	}
	return b
}

// stem strips common English inflections from a lowercase word, so that
// test, tests, tested and testing meet, and so do cache, caches and caching.
// It is deliberately light: a wrong merge costs more than a missed one.
func stem(w string) string { return string(stemBytes([]byte(w))) }

func stemBytes(w []byte) []byte {
	n := len(w)
	if n <= 3 {
		return w
	}
	for _, c := range w {
		if c >= utf8.RuneSelf {
			return w // only ASCII words are stemmed
		}
	}
	has := func(suffix string) bool {
		return len(w) >= len(suffix) && string(w[len(w)-len(suffix):]) == suffix
	}
	switch {
	case has("ies") && n > 4:
		w = append(w[:n-3], 'y')
	case has("sses") || has("xes") || has("ches") || has("shes") || has("zzes"):
		w = w[:n-2]
	case has("ss") || has("us") || has("is"):
	case has("s"):
		w = w[:n-1]
	}
	n = len(w)
	switch {
	case has("ing") && n >= 6:
		w = undouble(w[:n-3])
	case has("ed") && n >= 5:
		w = undouble(w[:n-2])
	}
	if n = len(w); n > 4 && w[n-1] == 'e' && w[n-2] != 'e' {
		w = w[:n-1]
	}
	return w
}

// undouble drops the last of a doubled final consonant (logg → log), keeping
// ll, ss and zz and short stems.
func undouble(w []byte) []byte {
	n := len(w)
	if n >= 4 && w[n-1] == w[n-2] && !strings.ContainsRune("aeioulsz", rune(w[n-1])) {
		return w[:n-1]
	}
	return w
}

// stopWords are English function words dropped from keyword terms and from
// the hashing embedder's features.
var stopWords = func() map[string]bool {
	m := make(map[string]bool)
	for _, w := range strings.Fields(`a an the and or but if of to in on at by for with from as
		is are was were be been being it its this that these those i we you he she they them
		our your my me us do does did done so not no can could should would will shall may
		might must into over under than then there here what which who whom when where why how
		all any each some such only own same too very just also about after before up down out
		off again further once has have had having am`) {
		m[w] = true
	}
	return m
}()

// EachTerm calls fn for every keyword term of text, in order, with the byte
// span [start, end) of the raw token it came from: the terms the keyword
// index ranks by. term is only valid during the call.
func EachTerm(text string, fn func(term []byte, start, end int)) {
	var t tokenizer
	t.each(text, fn)
}
