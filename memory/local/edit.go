package local

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mnemo-dev/mnemo/memory"
)

// editInfo is what an edit event changed.
type editInfo struct {
	file     string
	pairs    []editPair
	content  string // Write's or NotebookEdit's whole new text
	original string // the file before the edit, when the response has it
	patch    []string
	created  bool // a new file
	rewrite  bool // Write over an existing file
}

func observeEdit(n *draft, t *toolEvent, request string, turn []memory.Observation) bool {
	file := t.rel(firstNonEmpty(t.in.FilePath, t.in.NotebookPath, t.out.FilePath, t.in.Path))
	if file == "" {
		return false
	}
	n.tags = fileTags(file)
	if t.out.IsError || t.out.Error != "" {
		n.Type = memory.TypeDiscovery
		n.FilesRead = []string{file}
		msg := errorLine(t.output())
		n.Title = "Could not edit " + file
		n.Subtitle = msg
		n.fact("error: %s", msg)
		return true
	}
	n.FilesModified = []string{file}
	e := editInfo{file: file, content: firstNonEmpty(t.in.Content, t.in.NewSource)}
	if t.in.OldString != "" || t.in.NewString != "" {
		e.pairs = append(e.pairs, editPair{t.in.OldString, t.in.NewString, t.in.ReplaceAll})
	}
	e.pairs = append(e.pairs, t.in.Edits...)
	if t.out.OriginalFile != nil {
		e.original = *t.out.OriginalFile
	}
	for _, h := range t.out.StructuredPatch {
		e.patch = append(e.patch, h.Lines...)
	}
	switch {
	case t.ToolName == "Save":
		e.created = !seenFile(turn, file)
	case t.out.Type == "create":
		e.created = true
	case t.out.Type == "update" || (t.ToolName == "Write" && len(e.pairs) == 0):
		e.rewrite = true
	}
	code := isCode(file)

	// What the edit touched: declarations it adds, removes or changes, or
	// the declaration it sits in.
	var added, removed, changed []string
	var newDecls []codeDecl
	if code {
		if len(e.pairs) > 0 {
			for _, p := range e.pairs {
				a, r, c := declDiff(declsOf(p.OldString, 12), declsOf(p.NewString, 12))
				added, removed, changed = append(added, a...), append(removed, r...), append(changed, c...)
				newDecls = append(newDecls, declsOf(p.NewString, 12)...)
			}
		} else {
			newDecls = declsOf(e.content, 24)
			if e.rewrite && e.original != "" {
				added, removed, changed = declDiff(declsOf(e.original, 48), newDecls)
			} else {
				added = declNames(newDecls)
			}
		}
	}
	added, removed, changed = dedupe(added, 8), dedupe(removed, 8), dedupe(changed, 8)
	var symbols []string
	symbols = append(symbols, changed...)
	symbols = append(symbols, added...)
	symbols = append(symbols, removed...)
	if code && len(symbols) == 0 && len(e.pairs) > 0 {
		if s := enclosingDecl(e.original, e.pairs[0].OldString, e.patch); s != "" {
			symbols = []string{s}
			changed = symbols
		}
	}
	n.symbols = symbols
	where := file
	if len(changed) > 0 {
		where = nameList(changed, 2) + " in " + file
	}
	delta, replacement := "", false
	if len(e.pairs) > 0 {
		delta, replacement = describeDelta(e.pairs[0].OldString, e.pairs[0].NewString)
	}
	var renameFrom, renameTo string
	if code {
		renameFrom, renameTo = renameOf(e.pairs)
	}
	security := securityTerms(file, e)
	if len(security) > 0 {
		n.tags = append(n.tags, "security")
	}
	if isTestFile(file) {
		n.tags = append(n.tags, "testing")
	}
	failure := lastFailure(turn)

	// Facts every edit carries.
	if len(symbols) > 0 {
		n.fact("symbols: %s", strings.Join(firstN(symbols, 8), ", "))
	}
	if e.original != "" && len(changed) > 0 {
		// What the changed code was documented to do.
		var docs []codeDecl
		for _, d := range declsOf(e.original, 64) {
			if slices.Contains(changed, d.name) {
				docs = append(docs, d)
			}
		}
		for _, d := range docFacts(docs, 2) {
			n.fact("doc: %s", d)
		}
	}
	if len(e.pairs) > 1 {
		n.fact("%s", countOf(len(e.pairs), "edit"))
	}
	if delta != "" {
		n.fact("change: %s", delta)
	}
	if e.created || e.rewrite {
		if lines := lineCount(e.content); lines > 0 {
			n.fact("%s: %s", file, countOf(lines, "line"))
		}
	}
	n.Subtitle = delta

	switch {
	case e.created:
		n.Type = memory.TypeFeature
		switch {
		case t.ToolName == "Save":
			n.Title = "Saved new file " + file
		case isTestFile(file) && len(testCases(e.content)) > 0:
			cases := testCases(e.content)
			n.Title = "Added " + countOf(len(cases), "test") + " in " + file
			for _, c := range firstN(cases, 5) {
				n.fact("test: %s", c)
			}
			n.Subtitle = listMore(cases, 2, len(cases))
		case isTestFile(file) && len(added) > 0:
			n.Title = "Added tests in " + file + ": " + nameList(added, 3)
		case len(added) > 0:
			n.Title = "Created " + file + " with " + nameList(added, 3)
		default:
			n.Title = "Created " + file
		}
		docs := docFacts(newDecls, 2)
		for _, d := range docs {
			n.fact("doc: %s", d)
		}
		switch {
		case len(docs) > 0:
			n.Subtitle = docs[0]
		case !code && n.Subtitle == "":
			n.Subtitle = firstMeaningfulLine(e.content)
		}
		if len(added) > 0 {
			n.Narrative = fmt.Sprintf("New file %s declaring %s.", file, nameList(added, 4))
			if len(docs) > 0 {
				n.Narrative += " " + asSentence(docs[0])
			}
		}
	case failure != nil:
		n.Type = memory.TypeBugfix
		cause := failure.cause()
		switch {
		case replacement && utf8.RuneCountInString(delta) <= 60:
			n.Title = "Fixed " + where + ": " + delta
		case cause != "":
			n.Title = "Fixed " + where + " after " + cause + " failed"
		default:
			n.Title = "Fixed " + where
		}
		if cause != "" {
			n.fact("fixes: %s", cause)
		}
		var b strings.Builder
		b.WriteString(cause)
		if b.Len() == 0 {
			b.WriteString(failure.command())
		}
		b.WriteString(" failed")
		if msg := failure.errorMessage(); msg != "" {
			fmt.Fprintf(&b, " (%s)", msg)
		}
		fmt.Fprintf(&b, "; changed %s", where)
		if delta != "" {
			fmt.Fprintf(&b, ": %s", delta)
		}
		b.WriteString(".")
		n.Narrative = b.String()
	case renameFrom != "":
		n.Type = memory.TypeRefactor
		n.Title = "Renamed " + renameFrom + " to " + renameTo + " in " + file
		n.symbols = append(n.symbols, renameFrom, renameTo)
		n.fact("renamed: %s → %s", renameFrom, renameTo)
		n.tags = append(n.tags, "rename")
	case !e.rewrite && hasPhrase(strings.ToLower(request), refactorPhrases):
		n.Type = memory.TypeRefactor
		n.Title = "Refactored " + where
		if replacement && utf8.RuneCountInString(delta) <= 60 {
			n.Title += ": " + delta
		}
	case !e.rewrite && hasPhrase(strings.ToLower(request), fixPhrases):
		n.Type = memory.TypeBugfix
		n.Title = "Fixed " + where
		if replacement && utf8.RuneCountInString(delta) <= 60 {
			n.Title += ": " + delta
		}
	case len(security) > 0:
		n.Type = memory.TypeSecurity
		n.Title = changeTitle(t.ToolName, file, where, delta, replacement, e, added, removed, changed)
		n.fact("security-relevant: %s", strings.Join(security, ", "))
		n.Narrative = fmt.Sprintf("A security-relevant change (%s) to %s", strings.Join(security, ", "), where)
		if delta != "" {
			n.Narrative += ": " + delta
		}
		n.Narrative = asSentence(n.Narrative)
	case len(added) > 0 && len(removed) == 0 && !e.rewrite:
		n.Type = memory.TypeFeature
		n.Title = "Added " + nameList(added, 3) + " to " + file
		if docs := docFacts(newDecls, 2); len(docs) > 0 {
			n.Subtitle = docs[0]
			for _, d := range docs {
				n.fact("doc: %s", d)
			}
		}
	default:
		n.Type = memory.TypeChange
		n.Title = changeTitle(t.ToolName, file, where, delta, replacement, e, added, removed, changed)
		if e.rewrite && len(added)+len(removed) > 0 {
			n.Subtitle = changeList(added, removed)
		}
	}
	return true
}

// changeTitle titles an edit that is neither a fix nor new work.
func changeTitle(tool, file, where, delta string, replacement bool, e editInfo, added, removed, changed []string) string {
	switch {
	case tool == "Save":
		return "Saved " + file
	case e.rewrite:
		return "Rewrote " + file
	case len(removed) > 0 && len(added) == 0 && len(changed) == 0:
		return "Removed " + nameList(removed, 3) + " from " + file
	case replacement && utf8.RuneCountInString(delta) <= 60:
		return "Changed " + where + ": " + delta
	}
	if len(e.pairs) > 0 && isCode(file) {
		if _, came := identDiff(e.pairs[0].OldString, e.pairs[0].NewString); len(came) > 0 {
			call := came[0]
			if i := strings.Index(e.pairs[0].NewString, call); i >= 0 && strings.HasPrefix(e.pairs[0].NewString[i+len(call):], "(") {
				call += "(…)"
			}
			return "Changed " + where + ": added " + call
		}
	}
	if len(changed) > 0 {
		return "Changed " + where
	}
	return "Edited " + file
}

// testCases reads the test names of a test file: Go's TestX and Python's
// test_x (as declarations), jest/vitest/mocha's it("…") and test("…").
func testCases(code string) []string {
	var out []string
	for _, d := range declsOf(code, 64) {
		if strings.HasPrefix(d.name, "Test") || strings.HasPrefix(d.name, "test_") {
			out = append(out, d.name)
		}
	}
	for line := range strings.Lines(headTail(code)) {
		t := strings.TrimSpace(line)
		for _, p := range []string{"it(", "test(", "it.only(", "test.only(", "it.each", "specify("} {
			if rest, ok := strings.CutPrefix(t, p); ok && len(rest) > 1 && strings.ContainsRune("\"'`", rune(rest[0])) {
				if end := strings.IndexByte(rest[1:], rest[0]); end > 0 {
					out = append(out, rest[1:1+end])
				}
			}
		}
	}
	return dedupe(out, 64)
}

// seenFile reports whether an observation of the turn names file.
func seenFile(turn []memory.Observation, file string) bool {
	for i := range turn {
		if slices.Contains(turn[i].FilesRead, file) || slices.Contains(turn[i].FilesModified, file) {
			return true
		}
	}
	return false
}

// securityTerms names what makes an edit security-relevant: words of its
// path, or identifiers of its code.
func securityTerms(file string, e editInfo) []string {
	var out []string
	for _, w := range identWords(strings.ReplaceAll(file, "/", " ")) {
		if securityPathWords[w] {
			out = append(out, w)
		}
	}
	var code strings.Builder
	for _, p := range e.pairs {
		code.WriteString(p.OldString)
		code.WriteByte('\n')
		code.WriteString(p.NewString)
		code.WriteByte('\n')
	}
	code.WriteString(headTail(e.content))
	lower := strings.ToLower(code.String())
	for _, w := range securityCodeWords {
		if strings.Contains(lower, w[0]) {
			out = append(out, w[1])
		}
	}
	return dedupe(out, 4)
}

var securityPathWords = wordSet("auth", "authn", "authz", "authentication", "authorization", "login", "logout", "password", "passwords", "passwd", "token", "tokens", "jwt", "oauth", "oidc", "saml", "sso", "crypto", "secret", "secrets", "permission", "permissions", "acl", "rbac", "csrf", "cors", "tls", "ssl", "cert", "certs", "credential", "credentials", "sanitize", "xss", "vault")

// securityCodeWords are looked for in an edit's code, lower-cased, also
// inside identifiers (hashPassword).
// Each is what to look for and the word to report.
var securityCodeWords = [][2]string{
	{"password", "password"}, {"passwd", "password"}, {"secret", "secret"}, {"bcrypt", "bcrypt"}, {"scrypt", "scrypt"},
	{"argon2", "argon2"}, {"hmac", "hmac"}, {"jwt", "jwt"}, {"csrf", "csrf"}, {"xss", "xss"}, {"oauth", "oauth"},
	{"apikey", "api key"}, {"api_key", "api key"}, {"private_key", "private key"}, {"privatekey", "private key"},
	{"encrypt", "encryption"}, {"decrypt", "encryption"}, {"cipher", "encryption"}, {"permission", "permissions"},
	{"authoriz", "authorization"}, {"authenticat", "authentication"}, {"sanitiz", "sanitizing"}, {"chmod", "permissions"},
	{"setuid", "permissions"}, {"credential", "credentials"},
}
