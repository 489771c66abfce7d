package privacy

import "strings"

// Redact replaces what looks like a secret in s with [REDACTED:<kind>] and
// reports how many it replaced. The kinds:
//
//	aws-access-key   AKIA… or ASIA… followed by 16 upper-case letters or digits
//	aws-secret       the value of aws_secret_access_key = …
//	anthropic-key    sk-ant-…
//	openai-key       sk-… (20 or more characters mixing upper case, lower case and digits)
//	github-token     ghp_, gho_, ghu_, ghs_, ghr_ followed by 36 or more letters or digits; github_pat_…
//	slack-token      xoxa-, xoxb-, xoxp-, xoxr-…
//	google-api-key   AIza followed by 35 characters
//	bearer-token     the credentials of Authorization: Bearer …, and of bearer <token>
//	authorization    the credentials of any other Authorization: scheme
//	jwt              three or more base64url segments, the first starting eyJ
//	private-key      a whole -----BEGIN … PRIVATE KEY----- block (to the end of s if it never ends)
//	password, secret, token, api-key
//	                 the value of an assignment to a name ending in password, passwd,
//	                 passphrase, secret, secret_key, token, api_key, api-key or apikey
//	                 (=, :, :=), when it is 8 characters or longer
//
// Only the secret is replaced: the name it is assigned to, the quotes
// around it and the scheme of an Authorization header stay.
//
// Ordinary code does not match: a key must start and end at a word
// boundary; sk- keys must mix cases and digits (so skip-list and
// task-runner stay); git hashes and UUIDs have no prefix to match. An
// assigned value is left alone when it is a placeholder ($VAR, ${VAR},
// <token>, ********), a function call (token = getToken()), a comparison
// (token == x), or, with spaces or a colon around the sign, a name
// without digits (password = userPassword, token: TokenType): the price is
// that "password: correcthorsebattery" stays; "password=correcthorsebattery"
// does not.
//
// Redact runs in time linear in len(s) for every input, and returns s
// itself, without copying, when it replaces nothing.
func Redact(s string) (clean string, n int) {
	r := redactor{s: s}
	for i := 0; i < len(s); {
		// Every key starts at a word boundary: skip inside words early.
		if c := s[i]; !triggers[c] || isLetter(c) && i > 0 && isAlnum(s[i-1]) {
			i++
			continue
		}
		h, ok := r.at(i)
		if !ok {
			i++
			continue
		}
		if r.n == 0 {
			r.b.Grow(len(s))
		}
		r.n++
		r.b.WriteString(s[r.last:h.start])
		r.b.WriteString("[REDACTED:")
		r.b.WriteString(h.kind)
		r.b.WriteString("]")
		r.last = h.end
		i = h.end
	}
	if r.n == 0 {
		return s, 0
	}
	r.b.WriteString(s[r.last:])
	return r.b.String(), r.n
}

// triggers are the bytes at which a secret, or the sign of an assignment,
// can begin.
var triggers = [256]bool{
	'A': true, // AKIA, ASIA, AIza
	's': true, // sk-
	'g': true, // ghp_ and the like, github_pat_
	'x': true, // xoxb- and the like
	'e': true, // eyJ
	'-': true, // -----BEGIN
	'b': true, // bearer
	'B': true, // Bearer
	':': true, // name: value
	'=': true, // name = value
}

// A redactor writes s with its secrets replaced to b, lazily.
//
// Every scan that can run long either ends in a hit, after which reading
// resumes past it, or starts only at a boundary its own scan cannot
// contain (a key's characters never precede a key), or, for assignments,
// is not started again inside the text it covered (noAssignUntil): so no
// byte is scanned more than a few times and Redact stays linear.
type redactor struct {
	s             string
	b             strings.Builder
	last          int // s[:last] is written to b or replaced
	n             int
	noAssignUntil int
}

// A hit is a secret at s[start:end].
type hit struct {
	start, end int
	kind       string
}

// at looks for a secret starting at, or for an assignment, right after s[i].
func (r *redactor) at(i int) (hit, bool) {
	s := r.s
	if c := s[i]; c != ':' && c != '=' {
		return keyAt(s, i)
	}
	if i < r.noAssignUntil {
		return hit{}, false
	}
	h, ok, scanned := assignmentAt(s, i)
	if !ok {
		r.noAssignUntil = scanned
	}
	return h, ok
}

// keyAt looks for a secret of a known shape starting at s[i].
func keyAt(s string, i int) (hit, bool) {
	var prev byte
	if i > 0 {
		prev = s[i-1]
	}
	switch s[i] {
	case 'A':
		if isAlnum(prev) {
			return hit{}, false
		}
		if e := awsKeyAt(s, i); e > 0 {
			return hit{i, e, "aws-access-key"}, true
		}
		if e := googleKeyAt(s, i); e > 0 && !isKeyChar(prev) {
			return hit{i, e, "google-api-key"}, true
		}
	case 's':
		if !isKeyChar(prev) {
			return skKeyAt(s, i)
		}
	case 'g':
		if !isWordByte(prev) {
			return githubTokenAt(s, i)
		}
	case 'x':
		if !isKeyChar(prev) {
			return slackTokenAt(s, i)
		}
	case 'e':
		if !isKeyChar(prev) && prev != '.' {
			return jwtAt(s, i)
		}
	case '-':
		if prev != '-' {
			return privateKeyAt(s, i)
		}
	case 'b', 'B':
		if !isWordByte(prev) {
			return bearerAt(s, i)
		}
	}
	return hit{}, false
}

// awsKeyAt returns the end of an AWS access key id at s[i:], or 0.
func awsKeyAt(s string, i int) int {
	const size = 20
	if len(s)-i < size || !(strings.HasPrefix(s[i:], "AKIA") || strings.HasPrefix(s[i:], "ASIA")) {
		return 0
	}
	for _, c := range []byte(s[i+4 : i+size]) {
		if !('A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return 0
		}
	}
	if i+size < len(s) && isAlnum(s[i+size]) {
		return 0
	}
	return i + size
}

// googleKeyAt returns the end of a Google API key at s[i:], or 0.
func googleKeyAt(s string, i int) int {
	const size = 39
	if !strings.HasPrefix(s[i:], "AIza") || runEnd(s, i+4, isKeyChar) != i+size {
		return 0
	}
	return i + size
}

// skKeyAt finds an OpenAI or Anthropic key at s[i:].
func skKeyAt(s string, i int) (hit, bool) {
	if !strings.HasPrefix(s[i:], "sk-") {
		return hit{}, false
	}
	e := runEnd(s, i+3, isKeyChar)
	kind, body := "openai-key", s[i+3:e]
	if strings.HasPrefix(s[i:], "sk-ant-") {
		kind, body = "anthropic-key", s[i+7:e]
	}
	if len(body) < 20 || !mixed(body) {
		return hit{}, false
	}
	return hit{i, e, kind}, true
}

// githubTokenAt finds a GitHub token at s[i:].
func githubTokenAt(s string, i int) (hit, bool) {
	t := s[i:]
	if strings.HasPrefix(t, "github_pat_") {
		if e := runEnd(s, i+11, isWordByte); e-(i+11) >= 22 {
			return hit{i, e, "github-token"}, true
		}
		return hit{}, false
	}
	if len(t) < 4 || t[0] != 'g' || t[1] != 'h' || t[3] != '_' || strings.IndexByte("pousr", t[2]) < 0 {
		return hit{}, false
	}
	if e := runEnd(s, i+4, isAlnum); e-(i+4) >= 36 && (e == len(s) || s[e] != '_') {
		return hit{i, e, "github-token"}, true
	}
	return hit{}, false
}

// slackTokenAt finds a Slack token at s[i:].
func slackTokenAt(s string, i int) (hit, bool) {
	t := s[i:]
	if len(t) < 5 || !strings.HasPrefix(t, "xox") || strings.IndexByte("abpr", t[3]) < 0 || t[4] != '-' {
		return hit{}, false
	}
	e := runEnd(s, i+5, isKeyChar)
	if body := s[i+5 : e]; len(body) >= 10 && strings.ContainsAny(body, "0123456789") {
		return hit{i, e, "slack-token"}, true
	}
	return hit{}, false
}

// jwtAt finds a JSON Web Token at s[i:]: eyJ…, a dot, a payload, a dot
// and a signature, which may be empty; more segments (JWE) are taken too.
func jwtAt(s string, i int) (hit, bool) {
	if !strings.HasPrefix(s[i:], "eyJ") {
		return hit{}, false
	}
	e := runEnd(s, i, isKeyChar)
	if e-i < 10 || e >= len(s) || s[e] != '.' {
		return hit{}, false
	}
	p := runEnd(s, e+1, isKeyChar)
	if p-(e+1) < 4 || p >= len(s) || s[p] != '.' {
		return hit{}, false
	}
	e = runEnd(s, p+1, isKeyChar)
	for e+1 < len(s) && s[e] == '.' && isKeyChar(s[e+1]) {
		e = runEnd(s, e+1, isKeyChar)
	}
	return hit{i, e, "jwt"}, true
}

// privateKeyAt finds a PEM private key block at s[i:], to its END line or
// to the end of s.
func privateKeyAt(s string, i int) (hit, bool) {
	const begin, end = "-----BEGIN ", "-----END "
	if !strings.HasPrefix(s[i:], begin) {
		return hit{}, false
	}
	if pemLabelEnd(s, i+len(begin)) < 0 {
		return hit{}, false
	}
	for j := i + len(begin); ; {
		k := strings.Index(s[j:], end)
		if k < 0 {
			return hit{i, len(s), "private-key"}, true
		}
		j += k + len(end)
		if e := pemLabelEnd(s, j); e > 0 {
			return hit{i, e, "private-key"}, true
		}
	}
}

// pemLabelEnd reads a PEM label ending in PRIVATE KEY and its closing
// dashes at s[i:] and returns their end, or -1.
func pemLabelEnd(s string, i int) int {
	const dashes, label = "-----", "PRIVATE KEY"
	e := i
	for e < len(s) && e-i <= 64 && ('A' <= s[e] && s[e] <= 'Z' || '0' <= s[e] && s[e] <= '9' || s[e] == ' ') {
		e++
	}
	if !strings.HasSuffix(s[i:e], label) || !strings.HasPrefix(s[e:], dashes) {
		return -1
	}
	return e + len(dashes)
}

// bearerAt finds the token of "bearer <token>" at s[i:]. Outside an
// Authorization header the token must look like one: 16 characters or
// more, with letters and digits.
func bearerAt(s string, i int) (hit, bool) {
	const word = "bearer"
	if !hasPrefixFold(s[i:], word) {
		return hit{}, false
	}
	j := i + len(word)
	if j >= len(s) || !isHWS(s[j]) {
		return hit{}, false
	}
	j = runEnd(s, j, isHWS)
	e := runEnd(s, j, isTokenChar)
	if t := s[j:e]; len(t) < 16 || !strings.ContainsAny(t, "0123456789") || !hasLetter(t) {
		return hit{}, false
	}
	return hit{j, e, "bearer-token"}, true
}

// assignKeys are the names, lower case, whose assigned values Redact
// replaces, with the kind it reports. A name matches as the end of a
// longer one: DB_PASSWORD, client_secret, GITHUB_TOKEN, x-api-key.
var assignKeys = [...]struct{ name, kind string }{
	{"secret_access_key", "aws-secret"},
	{"authorization", "authorization"},
	{"passphrase", "password"},
	{"password", "password"},
	{"passwd", "password"},
	{"secret_key", "secret"},
	{"secret", "secret"},
	{"api_key", "api-key"},
	{"api-key", "api-key"},
	{"apikey", "api-key"},
	{"token", "token"},
}

// maxQuoted bounds how far a quoted value is looked for.
const maxQuoted = 512

// assignmentAt finds a secret assigned at the sign s[p] (':' or '=').
// When there is none, scanned is how far it read: no assignment starts
// again before it.
func assignmentAt(s string, p int) (h hit, ok bool, scanned int) {
	sepEnd := p + 1
	var prev byte
	if p > 0 {
		prev = s[p-1]
	}
	next := byte(0)
	if p+1 < len(s) {
		next = s[p+1]
	}
	switch s[p] {
	case ':':
		if next == ':' || prev == ':' {
			return hit{}, false, p + 1
		}
		if next == '=' {
			sepEnd++
		}
	case '=':
		if next == '=' || next == '>' || strings.IndexByte("=!<>:+-*/%&|^~", prev) >= 0 {
			return hit{}, false, p + 1
		}
	}

	// The name: before optional spaces and an optional (escaped) quote.
	k := p
	spaced := s[p] == ':'
	for n := 0; n < 8 && k > 0 && isHWS(s[k-1]); n++ {
		k--
		spaced = true
	}
	if k > 0 && (s[k-1] == '"' || s[k-1] == '\'') {
		k--
		if k > 0 && s[k-1] == '\\' {
			k--
		}
	}
	kind := keyKind(s[:k])
	if kind == "" {
		return hit{}, false, p + 1
	}

	// The value: after optional spaces, quoted or bare.
	v := sepEnd
	for v < len(s) && isHWS(s[v]) {
		v++
		spaced = true
	}
	if kind == "authorization" {
		return authorizationAt(s, v)
	}
	// A value of a known shape is reported as such: GITHUB_TOKEN=ghp_….
	open, closing := quotedAt(s, v)
	if start := max(open, v); start < len(s) && triggers[s[start]] {
		if h, ok := keyAt(s, start); ok {
			return h, true, h.end
		}
	}
	if open > 0 {
		if closing < 0 {
			return hit{}, false, min(len(s), open+maxQuoted)
		}
		if !literalSecret(kind, s[open:closing]) {
			return hit{}, false, closing
		}
		return hit{open, closing, kind}, true, closing
	}
	e := v
	for e < len(s) && !stopsValue(s[e]) {
		e++
	}
	c := s[v:e]
	if len(c) < minLen(kind) || placeholder(c) || e < len(s) && s[e] == '(' ||
		identLike(c) && (spaced || strings.IndexByte(c, '.') >= 0) {
		return hit{}, false, max(e, p+1)
	}
	return hit{v, e, kind}, true, e
}

// keyKind returns the kind of secret assigned to a name that ends name,
// or "" if it names none.
func keyKind(name string) string {
	if name == "" || strings.IndexByte("dDeEnNtTyY", name[len(name)-1]) < 0 {
		return "" // no name in assignKeys ends otherwise
	}
	for _, a := range assignKeys {
		if len(name) >= len(a.name) && hasPrefixFold(name[len(name)-len(a.name):], a.name) {
			return a.kind
		}
	}
	return ""
}

// minLen is the length from which an assigned value is taken for a secret.
func minLen(kind string) int {
	if kind == "aws-secret" {
		return 16
	}
	return 8
}

// literalSecret reports whether c, a quoted value assigned to a name of
// the kind, is a secret: long enough, one word, no placeholder.
func literalSecret(kind, c string) bool {
	return len(c) >= minLen(kind) && !strings.ContainsAny(c, " \t\r\n") && !placeholder(c)
}

// redactAssigned redacts v, the string value of the JSON key, if the key
// names a secret: {"password": "…"}, {"Authorization": "Bearer …"}.
func redactAssigned(key, v string) string {
	kind := keyKind(key)
	switch {
	case kind == "":
		return v
	case kind == "authorization":
		if h, ok, _ := authorizationAt(v, 0); ok {
			return v[:h.start] + "[REDACTED:" + h.kind + "]" + v[h.end:]
		}
		return v
	case literalSecret(kind, v):
		return "[REDACTED:" + kind + "]"
	}
	return v
}

// authorizationAt finds the credentials of an Authorization header value
// at s[v:]: "Bearer abc…", "Basic abc…", or a bare token.
func authorizationAt(s string, v int) (hit, bool, int) {
	a := v
	if open, _ := quotedAt(s, v); open > 0 {
		a = open
	}
	b := runEnd(s, a, isLetter)
	if b > a && b < len(s) && isHWS(s[b]) {
		c := runEnd(s, b, isHWS)
		e := runEnd(s, c, isTokenChar)
		if e-c < 8 {
			return hit{}, false, max(e, v+1)
		}
		kind := "authorization"
		if strings.EqualFold(s[a:b], "bearer") {
			kind = "bearer-token"
		}
		return hit{c, e, kind}, true, e
	}
	e := runEnd(s, a, isTokenChar)
	if e-a < 8 || !strings.ContainsAny(s[a:e], "0123456789") {
		return hit{}, false, max(e, v+1)
	}
	return hit{a, e, "authorization"}, true, e
}

// quotedAt finds a quoted string at s[v:] ('…', "…", `…` or \"…\") and
// returns where its content opens, or -1 if s[v] is no quote, and where
// it closes, on the same line and within maxQuoted bytes, or -1.
func quotedAt(s string, v int) (open, closing int) {
	if v >= len(s) {
		return -1, -1
	}
	q := s[v : v+1]
	switch {
	case s[v] == '"' || s[v] == '\'' || s[v] == '`':
	case s[v] == '\\' && v+1 < len(s) && s[v+1] == '"':
		q = `\"`
	default:
		return -1, -1
	}
	open = v + len(q)
	window := s[open:min(len(s), open+maxQuoted)]
	if nl := strings.IndexByte(window, '\n'); nl >= 0 {
		window = window[:nl]
	}
	k := strings.Index(window, q)
	if k < 0 {
		return open, -1
	}
	return open, open + k
}

// placeholder reports whether an assigned value is not a secret: a
// variable or template reference, a <placeholder>, a mask such as
// ********, or an earlier redaction.
func placeholder(c string) bool {
	if c == "" || strings.IndexByte("$%{<[*", c[0]) >= 0 {
		return true
	}
	return strings.Count(c, c[:1]) == len(c)
}

// identLike reports whether c reads as a name or a member expression
// (userPassword, process.env.TOKEN) rather than a secret: letters,
// underscores and dots, no digits.
func identLike(c string) bool {
	for i := 0; i < len(c); i++ {
		if b := c[i]; !isLetter(b) && b != '_' && b != '.' {
			return false
		}
	}
	return true
}

// stopsValue reports whether c ends a bare assigned value.
func stopsValue(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '\v', '\f', '"', '\'', '`', ',', ';', '(', ')', '[', ']', '{', '}', '<', '>', '&', '|', '\\':
		return true
	}
	return false
}

// mixed reports whether t has an upper-case letter, a lower-case letter
// and a digit, as random keys do and identifiers rarely do.
func mixed(t string) bool {
	var upper, lower, digit bool
	for i := 0; i < len(t); i++ {
		c := t[i]
		upper = upper || 'A' <= c && c <= 'Z'
		lower = lower || 'a' <= c && c <= 'z'
		digit = digit || '0' <= c && c <= '9'
	}
	return upper && lower && digit
}

func hasLetter(t string) bool {
	for i := 0; i < len(t); i++ {
		if isLetter(t[i]) {
			return true
		}
	}
	return false
}

// runEnd returns the end of the run of bytes in s from i that satisfy in.
func runEnd(s string, i int, in func(byte) bool) int {
	for i < len(s) && in(s[i]) {
		i++
	}
	return i
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

func isAlnum(c byte) bool { return isLetter(c) || '0' <= c && c <= '9' }

// isWordByte: letters, digits and '_'.
func isWordByte(c byte) bool { return isAlnum(c) || c == '_' }

// isKeyChar: the base64url alphabet of keys and JWT segments.
func isKeyChar(c byte) bool { return isWordByte(c) || c == '-' }

// isTokenChar: the characters of an HTTP token68 credential.
func isTokenChar(c byte) bool {
	return isKeyChar(c) || c == '.' || c == '~' || c == '+' || c == '/' || c == '='
}
