package local

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mnemo-dev/mnemo/memory"
)

// editInfo is what an edit event changed: what the event says (the file,
// the replaced pairs or the new text) and what classifyEdit makes of it.
type editInfo struct {
	file     string
	pairs    []editPair
	content  string // Write's or NotebookEdit's whole new text
	original string // the file before the edit, when the response has it
	patch    []string
	created  bool // a new file
	rewrite  bool // Write over an existing file

	code                    bool       // a code file
	added, removed, changed []string   // declarations the edit adds, removes or changes
	newDecls                []codeDecl // the declarations of the new text
	symbols                 []string   // changed, added and removed, or the declaration the edit sits in
	where                   string     // "name in file", or the file
	delta                   string     // what the first pair replaced (see describeDelta)
	replacement             bool
	renameFrom, renameTo    string   // an edit that only renames one identifier
	security                []string // what makes the edit security-relevant
}

// observeEdit describes an edit in three steps: classifyEdit works out
// what it touched, editFacts adds the facts every edit carries, titleEdit
// gives it a type, a title and a narrative.
func observeEdit(n *draft, t *toolEvent, request string, turn []memory.Observation) bool {
	file := t.rel(memory.FirstNonEmpty(t.in.FilePath, t.in.NotebookPath, t.out.FilePath, t.in.Path))
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
	e := classifyEdit(t, file, turn)
	n.symbols = e.symbols
	if len(e.security) > 0 {
		n.tags = append(n.tags, "security")
	}
	if isTestFile(file) {
		n.tags = append(n.tags, "testing")
	}
	editFacts(n, e)
	titleEdit(n, t, e, request, lastFailure(turn))
	return true
}

// classifyEdit reads an edit event: its pairs or its new text, whether it
// creates or rewrites the file, the declarations it adds, removes or
// changes (or the one it sits in), what it replaced, whether it only
// renames, and what makes it security-relevant.
func classifyEdit(t *toolEvent, file string, turn []memory.Observation) editInfo {
	e := editInfo{file: file, content: memory.FirstNonEmpty(t.in.Content, t.in.NewSource)}
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
	e.code = isCode(file)

	// What the edit touched: declarations it adds, removes or changes, or
	// the declaration it sits in.
	var added, removed, changed []string
	if e.code {
		if len(e.pairs) > 0 {
			added, removed, changed, e.newDecls = pairDecls(e.pairs)
		} else {
			e.newDecls = declsOf(e.content, 24)
			if e.rewrite && e.original != "" {
				added, removed, changed = declDiff(declsOf(e.original, 48), e.newDecls)
			} else {
				added = declNames(e.newDecls)
			}
		}
	}
	e.added, e.removed, e.changed = memory.Dedupe(added, 8), memory.Dedupe(removed, 8), memory.Dedupe(changed, 8)
	e.symbols = append(e.symbols, e.changed...)
	e.symbols = append(e.symbols, e.added...)
	e.symbols = append(e.symbols, e.removed...)
	if e.code && len(e.symbols) == 0 && len(e.pairs) > 0 {
		// Pairs inside bodies: the declarations they sit in. The patch's
		// context lines stand for the file only for the first pair.
		var in []string
		for i, p := range e.pairs {
			var patch []string
			if i == 0 {
				patch = e.patch
			}
			if s := enclosingDecl(e.original, p.OldString, patch); s != "" {
				in = append(in, s)
			}
		}
		if in = memory.Dedupe(in, 8); len(in) > 0 {
			e.symbols = in
			e.changed = in
		}
	}
	e.where = file
	if len(e.changed) > 0 {
		e.where = nameList(e.changed, 2) + " in " + file
	}
	if len(e.pairs) > 0 {
		e.delta, e.replacement = describeDelta(e.pairs[0].OldString, e.pairs[0].NewString)
	}
	if e.code {
		e.renameFrom, e.renameTo = renameOf(e.pairs)
	}
	e.security = securityTerms(file, e)
	return e
}

// editFacts adds the facts every edit carries: the symbols it touched,
// what the changed code was documented to do, how many edits, what it
// replaced, and the length of a new or rewritten file.
func editFacts(n *draft, e editInfo) {
	if len(e.symbols) > 0 {
		n.fact("symbols: %s", strings.Join(firstN(e.symbols, 8), ", "))
	}
	if e.original != "" && len(e.changed) > 0 {
		// What the changed code was documented to do.
		var docs []codeDecl
		for _, d := range declsOf(e.original, 64) {
			if slices.Contains(e.changed, d.name) {
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
	if e.delta != "" {
		n.fact("change: %s", e.delta)
	}
	if e.created || e.rewrite {
		if lines := lineCount(e.content); lines > 0 {
			n.fact("%s: %s", e.file, countOf(lines, "line"))
		}
	}
}

// pairDecls compares the declarations of each pair's old and new text:
// the names the pairs add, remove and change, and the new text's
// declarations.
func pairDecls(pairs []editPair) (added, removed, changed []string, newDecls []codeDecl) {
	for _, p := range pairs {
		after := declsOf(p.NewString, 12)
		a, r, c := declDiff(declsOf(p.OldString, 12), after)
		added, removed, changed = append(added, a...), append(removed, r...), append(changed, c...)
		newDecls = append(newDecls, after...)
	}
	return added, removed, changed, newDecls
}

// EditSymbols names what an edit of file touched, as the agent's
// observation of the edit does: the declarations the pairs (old and new
// text) add, change or remove, else those the pairs sit in, found in
// original (the file before the edit). A file that is not code has none.
func EditSymbols(file, original string, pairs [][2]string) []string {
	if !isCode(file) || len(pairs) == 0 {
		return nil
	}
	ps := make([]editPair, len(pairs))
	for i, p := range pairs {
		ps[i] = editPair{OldString: p[0], NewString: p[1]}
	}
	added, removed, changed, _ := pairDecls(ps)
	if out := memory.Dedupe(slices.Concat(changed, added, removed), 8); len(out) > 0 {
		return out
	}
	var in []string
	for _, p := range ps {
		if s := enclosingDecl(original, p.OldString, nil); s != "" {
			in = append(in, s)
		}
	}
	return memory.Dedupe(in, 8)
}

// titleEdit gives an edit its type, title and narrative, first match
// wins: a new file is a feature; an edit after a failing run of the turn
// a bugfix; a rename a refactor; then what the prompt asks for (a
// refactor, a fix); a security-relevant change; new declarations a
// feature; anything else a change. The subtitle is what it replaced,
// unless a case says better.
func titleEdit(n *draft, t *toolEvent, e editInfo, request string, failure *runNote) {
	n.Subtitle = e.delta
	switch {
	case e.created:
		titleNewFile(n, t, e)
	case failure != nil:
		titleFix(n, e, failure)
	case e.renameFrom != "":
		n.Type = memory.TypeRefactor
		n.Title = "Renamed " + e.renameFrom + " to " + e.renameTo + " in " + e.file
		n.symbols = append(n.symbols, e.renameFrom, e.renameTo)
		n.fact("renamed: %s → %s", e.renameFrom, e.renameTo)
		n.tags = append(n.tags, "rename")
	case !e.rewrite && hasPhrase(strings.ToLower(request), refactorPhrases):
		n.Type = memory.TypeRefactor
		n.Title = "Refactored " + e.where
		if e.replacement && utf8.RuneCountInString(e.delta) <= 60 {
			n.Title += ": " + e.delta
		}
	case !e.rewrite && hasPhrase(strings.ToLower(request), fixPhrases):
		n.Type = memory.TypeBugfix
		n.Title = "Fixed " + e.where
		if e.replacement && utf8.RuneCountInString(e.delta) <= 60 {
			n.Title += ": " + e.delta
		}
	case len(e.security) > 0:
		n.Type = memory.TypeSecurity
		n.Title = changeTitle(t.ToolName, e)
		n.fact("security-relevant: %s", strings.Join(e.security, ", "))
		n.Narrative = fmt.Sprintf("A security-relevant change (%s) to %s", strings.Join(e.security, ", "), e.where)
		if e.delta != "" {
			n.Narrative += ": " + e.delta
		}
		n.Narrative = asSentence(n.Narrative)
	case len(e.added) > 0 && len(e.removed) == 0 && !e.rewrite:
		n.Type = memory.TypeFeature
		n.Title = "Added " + nameList(e.added, 3) + " to " + e.file
		if docs := docFacts(e.newDecls, 2); len(docs) > 0 {
			n.Subtitle = docs[0]
			for _, d := range docs {
				n.fact("doc: %s", d)
			}
		}
	default:
		n.Type = memory.TypeChange
		n.Title = changeTitle(t.ToolName, e)
		if e.rewrite && len(e.added)+len(e.removed) > 0 {
			n.Subtitle = changeList(e.added, e.removed)
		}
	}
}

// titleNewFile titles a new file by what it holds (test cases, tests,
// declarations), with the first doc comment of its declarations.
func titleNewFile(n *draft, t *toolEvent, e editInfo) {
	n.Type = memory.TypeFeature
	switch {
	case t.ToolName == "Save":
		n.Title = "Saved new file " + e.file
	case isTestFile(e.file) && len(testCases(e.content)) > 0:
		cases := testCases(e.content)
		n.Title = "Added " + countOf(len(cases), "test") + " in " + e.file
		for _, c := range firstN(cases, 5) {
			n.fact("test: %s", c)
		}
		n.Subtitle = listMore(cases, 2, len(cases))
	case isTestFile(e.file) && len(e.added) > 0:
		n.Title = "Added tests in " + e.file + ": " + nameList(e.added, 3)
	case len(e.added) > 0:
		n.Title = "Created " + e.file + " with " + nameList(e.added, 3)
	default:
		n.Title = "Created " + e.file
	}
	docs := docFacts(e.newDecls, 2)
	for _, d := range docs {
		n.fact("doc: %s", d)
	}
	switch {
	case len(docs) > 0:
		n.Subtitle = docs[0]
	case !e.code && n.Subtitle == "":
		n.Subtitle = firstMeaningfulLine(e.content)
	}
	if len(e.added) > 0 {
		n.Narrative = fmt.Sprintf("New file %s declaring %s.", e.file, nameList(e.added, 4))
		if len(docs) > 0 {
			n.Narrative += " " + asSentence(docs[0])
		}
	}
}

// titleFix titles an edit that follows a failing run of the turn as the
// fix of what failed.
func titleFix(n *draft, e editInfo, failure *runNote) {
	n.Type = memory.TypeBugfix
	cause := failure.cause()
	switch {
	case e.replacement && utf8.RuneCountInString(e.delta) <= 60:
		n.Title = "Fixed " + e.where + ": " + e.delta
	case cause != "":
		n.Title = "Fixed " + e.where + " after " + cause + " failed"
	default:
		n.Title = "Fixed " + e.where
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
	fmt.Fprintf(&b, "; changed %s", e.where)
	if e.delta != "" {
		fmt.Fprintf(&b, ": %s", e.delta)
	}
	b.WriteString(".")
	n.Narrative = b.String()
}

// changeTitle titles an edit that is neither a fix nor new work.
func changeTitle(tool string, e editInfo) string {
	switch {
	case tool == "Save":
		return "Saved " + e.file
	case e.rewrite:
		return "Rewrote " + e.file
	case len(e.removed) > 0 && len(e.added) == 0 && len(e.changed) == 0:
		return "Removed " + nameList(e.removed, 3) + " from " + e.file
	case e.replacement && utf8.RuneCountInString(e.delta) <= 60:
		return "Changed " + e.where + ": " + e.delta
	}
	if len(e.pairs) > 0 && e.code {
		if came := addedNames(e.pairs); len(came) > 0 {
			return "Changed " + e.where + ": added " + nameList(came, 3)
		}
	}
	if len(e.changed) > 0 {
		return "Changed " + e.where
	}
	if len(e.pairs) > 0 && isConfig(e.file) {
		if t := settingsTitle(e.file, e.pairs); t != "" {
			return t
		}
	}
	return "Edited " + e.file
}

// isConfig reports files of settings: YAML, JSON, TOML, INI, .env,
// properties.
func isConfig(file string) bool {
	base := strings.ToLower(path.Base(file))
	if strings.HasPrefix(base, ".env") {
		return true
	}
	switch path.Ext(base) {
	case ".yaml", ".yml", ".json", ".toml", ".ini", ".cfg", ".conf", ".env", ".properties":
		return true
	}
	return false
}

// settingKeyRE reads the key of a settings line: `key:` (YAML),
// `"key":` (JSON), `key =` (TOML, INI, properties), `KEY=` (.env).
var settingKeyRE = regexp.MustCompile(`^\s*(?:-\s+)?(?:export\s+)?(?:"([^"]+)"\s*:|([A-Za-z_][\w.\-]*)\s*(?::(?:\s|$)|=))`)

// settingKeys lists the distinct keys of settings lines, in order.
func settingKeys(lines []string) []string {
	var keys []string
	for _, l := range lines {
		if m := settingKeyRE.FindStringSubmatch(l); m != nil && !slices.Contains(keys, m[1]+m[2]) {
			keys = append(keys, m[1]+m[2])
		}
	}
	return keys
}

// settingsTitle names the settings an edit of a settings file added,
// changed and removed, every one of them (up to three each): "Changed
// timeout and retries, added backoff in config/app.yaml".
func settingsTitle(file string, pairs []editPair) string {
	var added, changed, removed []string
	add := func(list *[]string, keys ...string) {
		for _, k := range keys {
			if !slices.Contains(*list, k) {
				*list = append(*list, k)
			}
		}
	}
	for _, p := range pairs {
		plus, minus := lineDiff(p.OldString, p.NewString)
		oldKeys, newKeys := settingKeys(minus), settingKeys(plus)
		gone, came := setDiff(oldKeys, newKeys)
		add(&removed, gone...)
		add(&added, came...)
		for _, k := range newKeys {
			if slices.Contains(oldKeys, k) {
				add(&changed, k)
			}
		}
	}
	var parts []string
	if len(changed) > 0 {
		parts = append(parts, "changed "+nameList(changed, 3))
	}
	if len(added) > 0 {
		parts = append(parts, "added "+nameList(added, 3))
	}
	if len(removed) > 0 {
		parts = append(parts, "removed "+nameList(removed, 3))
	}
	if len(parts) == 0 {
		return ""
	}
	t := strings.Join(parts, ", ")
	prep := " in "
	switch {
	case len(parts) > 1:
	case len(added) > 0:
		prep = " to "
	case len(removed) > 0:
		prep = " from "
	}
	return strings.ToUpper(t[:1]) + t[1:] + prep + file
}

// addedNames lists the names an edit's code brings in, in order, whole
// when qualified (time.Minute) and with "(…)" after a call: not the words
// of its comments, docstrings and strings, nor the language's keywords and
// constants. Names that look like code come first.
func addedNames(pairs []editPair) []string {
	var code, plain []string
	for _, p := range pairs {
		newCode := codeOnly(p.NewString)
		_, came := setDiff(qualifiedNames(codeOnly(p.OldString)), qualifiedNames(newCode))
		for _, name := range came {
			bare := strings.TrimPrefix(strings.TrimPrefix(name, "self."), "this.")
			if len(bare) < 2 || !hasLetter(bare) || strings.Trim(bare, "_") == "" || notNames[bare] || slices.Contains(code, bare) || slices.Contains(plain, bare) {
				continue
			}
			shown := bare
			if i := strings.Index(newCode, name); i >= 0 && strings.HasPrefix(newCode[i+len(name):], "(") {
				shown += "(…)"
			}
			if looksLikeCode(bare) {
				code = append(code, shown)
			} else {
				plain = append(plain, shown)
			}
		}
	}
	return append(code, plain...)
}

// qualifiedNames lists the distinct identifiers of code, with their
// qualifiers (a.b.c), in order.
func qualifiedNames(code string) []string {
	var out []string
	for _, m := range qualifiedNameRE.FindAllString(code, 256) {
		if !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}

var qualifiedNameRE = regexp.MustCompile(`\b[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*`)

// codeOnly drops comment lines, docstrings, trailing comments and string
// literals.
func codeOnly(s string) string {
	var b strings.Builder
	inDoc := false
	for line := range strings.Lines(s) {
		t := strings.TrimSpace(line)
		if n := strings.Count(t, `"""`) + strings.Count(t, `'''`); n > 0 {
			if n%2 == 1 {
				inDoc = !inDoc
			}
			continue
		}
		if inDoc || t == "" || strings.HasPrefix(t, "//") || strings.HasPrefix(t, "#") || strings.HasPrefix(t, "/*") || strings.HasPrefix(t, "*") || strings.HasPrefix(t, "--") {
			continue
		}
		if i := strings.Index(t, " //"); i >= 0 {
			t = t[:i]
		}
		if i := strings.Index(t, " # "); i >= 0 {
			t = t[:i]
		}
		b.WriteString(stringLiteralRE.ReplaceAllString(t, `""`))
		b.WriteByte('\n')
	}
	return b.String()
}

var stringLiteralRE = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|` + "`[^`]*`")

// notNames are keywords and constants of the common languages.
var notNames = wordSet("if", "else", "for", "while", "return", "func", "function", "def", "fn", "let", "const", "var", "mut", "pub",
	"new", "nil", "null", "None", "True", "False", "true", "false", "self", "this", "await", "async", "import", "from", "export",
	"default", "type", "struct", "class", "interface", "impl", "err", "ok", "in", "of", "is", "not", "and", "or", "as", "go",
	"defer", "case", "switch", "break", "continue", "try", "catch", "except", "raise", "throw", "with", "yield", "lambda", "elif",
	"undefined", "void", "string", "int", "bool", "float64", "int64", "str", "dict", "list", "any", "error", "use", "mod", "crate", "super", "where", "match", "Some", "Ok", "Err")

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
	return memory.Dedupe(out, 64)
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
	// Only the lines an edit changes count: an edit next to a password
	// check is not about passwords.
	var code strings.Builder
	for _, p := range e.pairs {
		plus, minus := lineDiff(p.OldString, p.NewString)
		for _, l := range slices.Concat(plus, minus) {
			code.WriteString(l)
			code.WriteByte('\n')
		}
	}
	code.WriteString(headTail(e.content))
	lower := strings.ToLower(code.String())
	for _, w := range securityCodeWords {
		if strings.Contains(lower, w[0]) {
			out = append(out, w[1])
		}
	}
	return memory.Dedupe(out, 4)
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
