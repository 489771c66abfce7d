package local

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mnemo-dev/mnemo/memory"
)

// An observation's evidence is a bounded excerpt of the raw event it was
// made from: what a person would search for later and the title cannot
// hold. It is indexed for keyword search in a field of its own and shown in
// full records, never in the compact index or the injected context. The
// event is already stripped of private parts and redacted when it reaches
// the agent, so the evidence is too.
//
// Within maxEvidence bytes, in this order: the command or the search
// pattern; for a change, the identifiers it added and removed and the lines
// it changed; for output, the error, warning and test lines — these lines
// take at most maxEvidenceLines bytes, since keyword search reads words,
// not lines —; then the distinct identifiers, paths and codes of the event
// that are not in it yet, identifier-like ones first, then other words.
const (
	maxEvidence      = 2048
	maxEvidenceLines = 1100
	maxEvidenceLine  = 240
)

// evidence builds the excerpt of one tool event. failure, when not nil, is
// the failed run that an edit fixes: its error lines go into the edit's
// evidence, marked "before:" (the failure the fix came after, where
// "after:" read as a failure after the fix; "before" is no keyword, so
// search ranks as it did), so that searching the error finds the fix.
func evidence(t *toolEvent, failure *memory.Observation) string {
	var e evidenceBuf
	if c := strings.TrimSpace(t.in.Command); c != "" {
		e.line("$ " + oneLine(c))
	}
	for _, p := range []struct{ label, v string }{
		{"pattern", t.in.Pattern}, {"glob", t.in.Glob}, {"query", t.in.Query}, {"url", t.in.URL},
	} {
		if v := strings.TrimSpace(p.v); v != "" {
			e.line(p.label + ": " + oneLine(v))
		}
	}
	oldText, newText := changeOf(t)
	if oldText != "" || newText != "" {
		added, removed := codeDiff(oldText, newText)
		if len(added) > 0 {
			e.line("added: " + strings.Join(added, " "))
		}
		if len(removed) > 0 {
			e.line("removed: " + strings.Join(removed, " "))
		}
		plus, minus := lineDiff(oldText, newText)
		for _, l := range plus {
			e.line("+ " + l)
		}
		for _, l := range minus {
			e.line("- " + l)
		}
	}
	out := t.output()
	if out == "" && oldText == "" && newText == "" {
		// Grep's matching lines; a Write's content is its change, above,
		// whose lines would come again here unmarked.
		out = t.content
	}
	if out != "" {
		lines := outputLines(out)
		if len(lines) <= 12 {
			for _, l := range lines {
				e.line(l)
			}
		} else {
			for _, l := range lines {
				if telling(l) {
					e.line(l)
				}
			}
		}
	}
	if failure != nil {
		budget := e.b.Len() + maxEvidence/3
		for l := range strings.Lines(failure.Evidence) {
			if e.b.Len() > budget {
				break
			}
			if l = strings.TrimSpace(l); strings.HasPrefix(l, "$ ") || telling(l) {
				e.line("before: " + l)
			}
		}
	}
	for _, f := range t.out.Filenames {
		e.term(t.rel(f))
	}
	// What is left of the budget goes to the event's distinct terms.
	// Identifiers of everything the event holds; plain words only of what
	// it did (the command, the change, the output), since the words of a
	// whole file read or edited would match every question about anything.
	for _, s := range []string{t.in.Command, t.in.Pattern, newText, oldText, out, t.out.File.Content, t.in.Description, t.in.Prompt, t.in.URL, original(t)} {
		e.terms(s, true)
	}
	for _, s := range []string{t.in.Command, newText, oldText, t.output()} {
		e.terms(s, false)
	}
	return strings.TrimSpace(e.b.String())
}

// original is the file an edit changed, as it was before, when the
// response carries it: what the edit's author saw around the change.
func original(t *toolEvent) string {
	if t.out.OriginalFile == nil {
		return ""
	}
	return *t.out.OriginalFile
}

// changeOf returns the text an edit replaced and the text it wrote, from
// whichever fields the tool filled: old and new strings, a MultiEdit's
// pairs, a patch's lines, or a new file's content.
func changeOf(t *toolEvent) (oldText, newText string) {
	var o, n strings.Builder
	add := func(old, new string) {
		o.WriteString(old)
		o.WriteByte('\n')
		n.WriteString(new)
		n.WriteByte('\n')
	}
	if t.in.OldString != "" || t.in.NewString != "" {
		add(t.in.OldString, t.in.NewString)
	}
	for _, p := range t.in.Edits {
		add(p.OldString, p.NewString)
	}
	if o.Len() == 0 && n.Len() == 0 {
		for _, h := range t.out.StructuredPatch {
			for _, l := range h.Lines {
				switch {
				case strings.HasPrefix(l, "+"):
					n.WriteString(l[1:])
					n.WriteByte('\n')
				case strings.HasPrefix(l, "-"):
					o.WriteString(l[1:])
					o.WriteByte('\n')
				}
			}
		}
	}
	if o.Len() == 0 && n.Len() == 0 {
		switch {
		case t.in.Content != "":
			n.WriteString(t.in.Content)
		case t.in.NewSource != "":
			n.WriteString(t.in.NewSource)
		}
	}
	return headTail(o.String()), headTail(n.String())
}

// codeDiff lists the code tokens of newText that oldText lacks, and the
// other way round, in order of appearance.
func codeDiff(oldText, newText string) (added, removed []string) {
	removed, added = setDiff(codeTokens(oldText, true), codeTokens(newText, true))
	return added, removed
}

// lineDiff lists the trimmed lines of newText that are not lines of
// oldText, and the other way round.
func lineDiff(oldText, newText string) (plus, minus []string) {
	minus, plus = setDiff(distinctLines(oldText), distinctLines(newText))
	return plus, minus
}

// distinctLines lists the trimmed, non-empty lines of s, without repeats.
func distinctLines(s string) []string {
	var list []string
	seen := map[string]bool{}
	for l := range strings.Lines(s) {
		if l = strings.TrimSpace(l); l != "" && !seen[l] {
			seen[l] = true
			list = append(list, l)
		}
	}
	return list
}

// telling reports whether a line of output is worth keeping: an error, a
// warning, a failure, a test's name or outcome.
func telling(l string) bool {
	if errorScore(l) >= 50 {
		return true
	}
	low := strings.ToLower(l)
	for _, w := range []string{"warn", "fail", "panic", "pass", "ok ", "skip", "killed", "timeout", "timed out", "refused", "exception", "traceback", "deprecat", "denied", "invalid", "missing", "unable", "test"} {
		if strings.Contains(low, w) {
			return true
		}
	}
	return false
}

// codeTokens returns the distinct tokens of s in order of appearance: runs
// of letters, digits and the connectors _ . / - :, without the connectors
// at their ends. With identifiersOnly it keeps those that look like code
// (an underscore, a capital after the first letter, a digit with letters,
// a dot or a slash inside, or all capitals), else the plain words of four
// letters or more that are not stop words.
func codeTokens(s string, identifiersOnly bool) []string {
	var out []string
	seen := map[string]bool{}
	eachToken(s, func(tok string, code bool) {
		if code == identifiersOnly && !seen[tok] {
			seen[tok] = true
			out = append(out, tok)
		}
	})
	return out
}

// eachToken calls fn for every token of s that codeTokens keeps, of either
// kind, repeats included, and says whether it looks like code.
func eachToken(s string, fn func(tok string, code bool)) {
	for tok := range strings.FieldsFuncSeq(s, func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("_./-:", r))
	}) {
		tok = strings.Trim(tok, "./-:")
		if len(tok) < 3 || len(tok) > 96 {
			continue
		}
		code := looksLikeCode(tok)
		if !code && (len(tok) < 4 || stopWords[strings.ToLower(tok)] || !hasLetter(tok)) {
			continue
		}
		fn(tok, code)
	}
}

func looksLikeCode(tok string) bool {
	var upper, lower, digit, letter int
	for i, r := range tok {
		switch {
		case r == '_' || (r == '.' || r == '/' || r == ':') && i > 0:
			return hasLetter(tok)
		case unicode.IsUpper(r):
			upper++
			letter++
			if i > 0 && lower > 0 {
				return true // camelCase, PascalCase with a hump
			}
		case unicode.IsLower(r):
			lower++
			letter++
		case unicode.IsDigit(r):
			digit++
		}
	}
	return letter > 0 && digit > 0 || upper >= 2 // WARNING, HTTPServer, OOMKilled
}

func hasLetter(s string) bool { return strings.IndexFunc(s, unicode.IsLetter) >= 0 }

// evidenceBuf collects evidence within maxEvidence bytes and remembers the
// tokens it holds, so that the term list repeats none of them.
type evidenceBuf struct {
	b    strings.Builder
	has  map[string]bool
	full bool
}

// line adds a line, cut to maxEvidenceLine bytes, if it is new and fits.
func (e *evidenceBuf) line(l string) {
	l = strings.TrimSpace(l)
	if l == "" || e.full {
		return
	}
	if len(l) > maxEvidenceLine {
		cut := maxEvidenceLine
		for cut > 0 && !utf8.RuneStart(l[cut]) {
			cut--
		}
		l = l[:cut] + "…"
	}
	if e.has[l] {
		return
	}
	if e.b.Len()+len(l)+1 > maxEvidenceLines {
		return // a shorter line may still fit
	}
	e.remember(l)
	e.has[l] = true
	e.b.WriteString(l)
	e.b.WriteByte('\n')
}

// term adds one token to the term list if it is not held yet and fits.
func (e *evidenceBuf) term(tok string) {
	if tok == "" || e.full || e.has[tok] {
		return
	}
	if e.b.Len()+len(tok)+1 > maxEvidence {
		if e.b.Len() > maxEvidence-8 {
			e.full = true
		}
		return
	}
	if e.has == nil {
		e.has = map[string]bool{}
	}
	e.has[tok] = true
	e.b.WriteString(tok)
	e.b.WriteByte(' ')
}

// terms adds the tokens of s not held yet (see codeTokens).
func (e *evidenceBuf) terms(s string, identifiersOnly bool) {
	if s == "" || e.full {
		return
	}
	for _, tok := range codeTokens(headTail(s), identifiersOnly) {
		e.term(tok)
	}
}

func (e *evidenceBuf) remember(l string) {
	if e.has == nil {
		e.has = map[string]bool{}
	}
	eachToken(l, func(tok string, _ bool) { e.has[tok] = true })
}
