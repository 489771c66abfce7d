package install

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// tomlDoc is a TOML file as its lines and the statements on them: enough
// to find a table, replace or remove its lines, and append one, leaving
// every other byte as it was. It is not a TOML decoder: it reads the
// structure (tables, keys, where values start and end) and the few string
// values the installer looks at.
type tomlDoc struct {
	lines []string // each with its line end, the last maybe without
	stmts []tomlStmt
}

// A tomlStmt is a table header or a key/value, on lines [first, last].
type tomlStmt struct {
	first, last int
	header      bool     // [table] or [[array]]
	array       bool     // [[array]]
	path        []string // a header's table; a key/value's full key (table + dotted key)
	table       []string // a key/value's table
	value       string   // a key/value's value as written
}

// errTOML is a file the installer cannot read as TOML.
type errTOML struct {
	line, col int
	msg       string
}

func (e *errTOML) Error() string { return fmt.Sprintf("line %d, column %d: %s", e.line, e.col, e.msg) }

// parseTOML reads data's structure.
func parseTOML(data string) (*tomlDoc, error) {
	d := &tomlDoc{}
	for rest := data; rest != ""; {
		i := strings.IndexByte(rest, '\n')
		if i < 0 {
			d.lines = append(d.lines, rest)
			break
		}
		d.lines = append(d.lines, rest[:i+1])
		rest = rest[i+1:]
	}
	p := &tomlParser{src: data, line: 0}
	var table []string
	for {
		p.skipSpace()
		if p.eof() {
			break
		}
		switch c := p.peek(); {
		case c == '#':
			p.skipComment()
		case c == '\n' || c == '\r':
			if err := p.endLine(); err != nil {
				return nil, err
			}
		case c == '[':
			st := tomlStmt{first: p.line, header: true}
			p.pos++
			if p.peek() == '[' {
				st.array = true
				p.pos++
			}
			path, err := p.key()
			if err != nil {
				return nil, err
			}
			if !p.take(']') || (st.array && !p.take(']')) {
				return nil, p.errf("a table header must end with %q", strings.Repeat("]", 1+boolInt(st.array)))
			}
			st.path, st.last, table = path, p.line, path
			d.stmts = append(d.stmts, st)
			if err := p.endStatement(); err != nil {
				return nil, err
			}
		default:
			st := tomlStmt{first: p.line, table: table}
			key, err := p.key()
			if err != nil {
				return nil, err
			}
			p.skipSpace()
			if !p.take('=') {
				return nil, p.errf("expected = after the key %s", strings.Join(key, "."))
			}
			p.skipSpace()
			start := p.pos
			if err := p.value(); err != nil {
				return nil, err
			}
			st.value = strings.TrimSpace(p.src[start:p.pos])
			st.path = slices.Concat(table, key)
			st.last = p.line
			d.stmts = append(d.stmts, st)
			if err := p.endStatement(); err != nil {
				return nil, err
			}
		}
	}
	return d, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

type tomlParser struct {
	src  string
	pos  int
	line int // 0-based
}

func (p *tomlParser) eof() bool  { return p.pos >= len(p.src) }
func (p *tomlParser) peek() byte { return p.src[p.pos] }

func (p *tomlParser) errf(format string, args ...any) error {
	start := strings.LastIndexByte(p.src[:min(p.pos, len(p.src))], '\n') + 1
	return &errTOML{line: p.line + 1, col: utf8.RuneCountInString(p.src[start:min(p.pos, len(p.src))]) + 1, msg: fmt.Sprintf(format, args...)}
}

func (p *tomlParser) take(c byte) bool {
	if !p.eof() && p.peek() == c {
		p.pos++
		return true
	}
	return false
}

func (p *tomlParser) skipSpace() {
	for !p.eof() && (p.peek() == ' ' || p.peek() == '\t') {
		p.pos++
	}
}

func (p *tomlParser) skipComment() {
	for !p.eof() && p.peek() != '\n' {
		p.pos++
	}
}

// endLine takes a line end.
func (p *tomlParser) endLine() error {
	if p.take('\r') && (p.eof() || p.peek() != '\n') {
		return p.errf("a carriage return must be followed by a line feed")
	}
	if p.take('\n') {
		p.line++
	}
	return nil
}

// endStatement takes what may follow a statement: spaces, a comment, the
// line end.
func (p *tomlParser) endStatement() error {
	p.skipSpace()
	if !p.eof() && p.peek() == '#' {
		p.skipComment()
	}
	if p.eof() {
		return nil
	}
	if c := p.peek(); c != '\n' && c != '\r' {
		return p.errf("unexpected %q after a statement", c)
	}
	return p.endLine()
}

// key reads a dotted key: bare keys and quoted ones, dots between.
func (p *tomlParser) key() ([]string, error) {
	var parts []string
	for {
		p.skipSpace()
		if p.eof() {
			return nil, p.errf("a key was expected")
		}
		switch c := p.peek(); {
		case c == '"':
			s, err := p.basicString()
			if err != nil {
				return nil, err
			}
			parts = append(parts, s)
		case c == '\'':
			s, err := p.literalString()
			if err != nil {
				return nil, err
			}
			parts = append(parts, s)
		case isBareKey(c):
			start := p.pos
			for !p.eof() && isBareKey(p.peek()) {
				p.pos++
			}
			parts = append(parts, p.src[start:p.pos])
		default:
			return nil, p.errf("a key was expected, not %q", c)
		}
		p.skipSpace()
		if !p.take('.') {
			return parts, nil
		}
	}
}

func isBareKey(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// basicString reads a "…" string and returns its value.
func (p *tomlParser) basicString() (string, error) {
	startLine, start := p.line, p.pos
	p.pos++
	var b strings.Builder
	for !p.eof() {
		c := p.peek()
		switch c {
		case '"':
			p.pos++
			return b.String(), nil
		case '\n':
			p.pos = start
			p.line = startLine
			return "", p.errf("the string is not closed on its line")
		case '\\':
			if p.pos+1 >= len(p.src) {
				break
			}
			e := p.src[p.pos+1]
			p.pos += 2
			switch e {
			case 'b':
				b.WriteByte('\b')
			case 't':
				b.WriteByte('\t')
			case 'n':
				b.WriteByte('\n')
			case 'f':
				b.WriteByte('\f')
			case 'r':
				b.WriteByte('\r')
			case 'e':
				b.WriteByte(0x1b)
			case '"', '\\':
				b.WriteByte(e)
			case 'u', 'U', 'x':
				n := map[byte]int{'u': 4, 'U': 8, 'x': 2}[e]
				if p.pos+n > len(p.src) {
					return "", p.errf("a short \\%c escape", e)
				}
				v, err := strconv.ParseUint(p.src[p.pos:p.pos+n], 16, 32)
				if err != nil {
					return "", p.errf("a bad \\%c escape", e)
				}
				b.WriteRune(rune(v))
				p.pos += n
			default:
				return "", p.errf("an unknown escape \\%c", e)
			}
			continue
		}
		b.WriteByte(c)
		p.pos++
	}
	p.pos, p.line = start, startLine
	return "", p.errf("the string is not closed")
}

// literalString reads a '…' string.
func (p *tomlParser) literalString() (string, error) {
	start := p.pos
	p.pos++
	end := strings.IndexAny(p.src[p.pos:], "'\n")
	if end < 0 || p.src[p.pos+end] != '\'' {
		p.pos = start
		return "", p.errf("the string is not closed on its line")
	}
	s := p.src[p.pos : p.pos+end]
	p.pos += end + 1
	return s, nil
}

// multiline skips a multi-line string, in triple double or single quotes.
func (p *tomlParser) multiline(q string) error {
	startLine, start := p.line, p.pos
	p.pos += 3
	for !p.eof() {
		switch {
		case q == `"""` && p.peek() == '\\':
			p.pos += 2
			if p.pos <= len(p.src) && p.src[p.pos-1] == '\n' {
				p.line++
			}
			continue
		case strings.HasPrefix(p.src[p.pos:], q):
			p.pos += 3
			// Up to two more quotes belong to the string.
			for i := 0; i < 2 && !p.eof() && p.peek() == q[0]; i++ {
				p.pos++
			}
			return nil
		case p.peek() == '\n':
			p.line++
		}
		p.pos++
	}
	p.pos, p.line = start, startLine
	return p.errf("the multi-line string is not closed")
}

// value skips one value: a string, an array or an inline table (which may
// span lines), or a scalar up to the line's end or comment.
func (p *tomlParser) value() error {
	if p.eof() {
		return p.errf("a value was expected")
	}
	switch c := p.peek(); {
	case strings.HasPrefix(p.src[p.pos:], `"""`):
		return p.multiline(`"""`)
	case strings.HasPrefix(p.src[p.pos:], `'''`):
		return p.multiline(`'''`)
	case c == '"':
		_, err := p.basicString()
		return err
	case c == '\'':
		_, err := p.literalString()
		return err
	case c == '[' || c == '{':
		return p.container()
	case c == '\n' || c == '\r' || c == '#':
		return p.errf("a value was expected")
	}
	start := p.pos
	for !p.eof() {
		c := p.peek()
		if c == '\n' || c == '\r' || c == '#' || c == ',' || c == ']' || c == '}' {
			break
		}
		p.pos++
	}
	if strings.TrimSpace(p.src[start:p.pos]) == "" {
		return p.errf("a value was expected")
	}
	return nil
}

// container skips an array or an inline table, with what it holds.
func (p *tomlParser) container() error {
	open, startLine, start := p.peek(), p.line, p.pos
	closing := byte(']')
	if open == '{' {
		closing = '}'
	}
	p.pos++
	for {
		// Spaces, line ends and comments between elements.
		for !p.eof() {
			c := p.peek()
			if c == ' ' || c == '\t' || c == '\r' {
				p.pos++
				continue
			}
			if c == '\n' {
				p.pos++
				p.line++
				continue
			}
			if c == '#' {
				p.skipComment()
				continue
			}
			break
		}
		if p.eof() {
			p.pos, p.line = start, startLine
			return p.errf("%q is not closed", open)
		}
		switch p.peek() {
		case closing:
			p.pos++
			return nil
		case ',':
			p.pos++
			continue
		}
		if open == '{' {
			if _, err := p.key(); err != nil {
				return err
			}
			p.skipSpace()
			if !p.take('=') {
				return p.errf("expected = in an inline table")
			}
			p.skipSpace()
		}
		if err := p.value(); err != nil {
			return err
		}
	}
}

// stringValue returns a key/value's value when it is a one-line string.
func (s tomlStmt) stringValue() (string, bool) {
	p := &tomlParser{src: s.value}
	if s.value == "" {
		return "", false
	}
	var v string
	var err error
	switch s.value[0] {
	case '"':
		v, err = p.basicString()
	case '\'':
		v, err = p.literalString()
	default:
		return "", false
	}
	return v, err == nil && p.pos == len(s.value)
}

func hasPrefix(path, prefix []string) bool {
	return len(path) >= len(prefix) && slices.Equal(path[:len(prefix)], prefix)
}

// table returns the index of the statement [path] (not an array of
// tables), or -1.
func (d *tomlDoc) table(path []string) int {
	return slices.IndexFunc(d.stmts, func(s tomlStmt) bool { return s.header && !s.array && slices.Equal(s.path, path) })
}

// conflict returns a statement that defines path otherwise than as the
// table [path] and its own keys and sub-tables: a dotted key or an inline
// table that reaches into it or holds it, or an array of tables on its way.
func (d *tomlDoc) conflict(path []string) (tomlStmt, bool) {
	for _, s := range d.stmts {
		switch {
		case s.header && s.array && (hasPrefix(path, s.path) || hasPrefix(s.path, path)):
			return s, true
		case s.header:
		case hasPrefix(s.path, path) && !hasPrefix(s.table, path):
			return s, true
		case hasPrefix(path, s.path) && len(s.path) < len(path):
			return s, true
		}
	}
	return tomlStmt{}, false
}

// extent returns the lines [first, end) of the table whose header is
// statement i: up to the next header, less the blank and comment lines
// just before it (they go with the next table).
func (d *tomlDoc) extent(i int) (first, end int) {
	first, end = d.stmts[i].first, len(d.lines)
	for _, s := range d.stmts[i+1:] {
		if s.header {
			end = s.first
			break
		}
	}
	last := d.stmts[i].last
	for _, s := range d.stmts[i+1:] {
		if s.first >= end {
			break
		}
		last = max(last, s.last)
	}
	return first, min(end, last+1)
}

// keyIn returns the statement of key (relative to the table) inside the
// table whose header is statement i.
func (d *tomlDoc) keyIn(i int, key ...string) (tomlStmt, bool) {
	full := slices.Concat(d.stmts[i].path, key)
	for _, s := range d.stmts[i+1:] {
		if s.header {
			break
		}
		if slices.Equal(s.path, full) {
			return s, true
		}
	}
	return tomlStmt{}, false
}

// lineEnd is the file's line end: CRLF when its first line ends so.
func (d *tomlDoc) lineEnd() string {
	if len(d.lines) > 0 && strings.HasSuffix(d.lines[0], "\r\n") {
		return "\r\n"
	}
	return "\n"
}

// tomlTable is a table to write: its header and its lines of keys.
type tomlTable struct {
	path []string
	keys []string // "key = value", in order
}

func (t tomlTable) lines(eol string) []string {
	out := []string{"[" + tomlKey(t.path) + "]" + eol}
	for _, k := range t.keys {
		out = append(out, k+eol)
	}
	return out
}

// tomlKey writes a dotted key, quoting the parts that are not bare.
func tomlKey(path []string) string {
	parts := make([]string, len(path))
	for i, p := range path {
		bare := p != ""
		for j := 0; j < len(p); j++ {
			bare = bare && isBareKey(p[j])
		}
		if bare {
			parts[i] = p
		} else {
			parts[i] = tomlString(p)
		}
	}
	return strings.Join(parts, ".")
}

// tomlString writes s as a basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\u%04X", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// set writes table t: over the table's own lines where it is (keeping its
// sub-tables elsewhere), else at the end after a blank line. It reports
// whether anything changed.
func (d *tomlDoc) set(t tomlTable) (bool, error) {
	if s, ok := d.conflict(t.path); ok {
		return false, fmt.Errorf("%s is defined at line %d otherwise than as the table [%s]", strings.Join(t.path, "."), s.first+1, tomlKey(t.path))
	}
	eol := d.lineEnd()
	want := t.lines(eol)
	if i := d.table(t.path); i >= 0 {
		first, end := d.extent(i)
		if slices.Equal(trimmed(d.lines[first:end]), trimmed(want)) {
			return false, nil
		}
		if end == len(d.lines) && !strings.HasSuffix(d.lines[end-1], "\n") {
			// The table ended the file without a line end: so does its
			// replacement.
			want[len(want)-1] = strings.TrimRight(want[len(want)-1], "\r\n")
		}
		d.lines = slices.Concat(d.lines[:first], want, d.lines[end:])
		return true, d.reparse()
	}
	if n := len(d.lines); n > 0 {
		if !strings.HasSuffix(d.lines[n-1], "\n") {
			// A file without a final line end keeps none: the table ends
			// the file so, and remove gives the file back as it was.
			d.lines[n-1] += eol
			want[len(want)-1] = strings.TrimRight(want[len(want)-1], "\r\n")
		}
		if strings.TrimSpace(d.lines[n-1]) != "" {
			d.lines = append(d.lines, eol)
		}
	}
	d.lines = append(d.lines, want...)
	return true, d.reparse()
}

// remove deletes the table [path] and its sub-tables, with the blank
// lines after each, and the blank line set put before a table it appended
// at the end. It reports whether there was one.
func (d *tomlDoc) remove(path []string) (bool, error) {
	var spans [][2]int
	for i, s := range d.stmts {
		if s.header && !s.array && hasPrefix(s.path, path) {
			first, end := d.extent(i)
			spans = append(spans, [2]int{first, end})
		}
	}
	if len(spans) == 0 {
		return false, nil
	}
	for _, sp := range slices.Backward(spans) {
		first, end := sp[0], sp[1]
		// The blank lines after it go with it; at the end of the file, the
		// blank line before it too.
		for end < len(d.lines) && strings.TrimSpace(d.lines[end]) == "" {
			end++
		}
		if end == len(d.lines) && first > 0 && strings.TrimSpace(d.lines[first-1]) == "" {
			first--
		}
		noEOL := end == len(d.lines) && !strings.HasSuffix(d.lines[end-1], "\n")
		d.lines = slices.Delete(d.lines, first, end)
		if n := len(d.lines); noEOL && n > 0 {
			// The file ended without a line end after the table: so it
			// does again.
			d.lines[n-1] = strings.TrimRight(d.lines[n-1], "\r\n")
		}
	}
	return true, d.reparse()
}

// reparse reads the statements again after the lines changed.
func (d *tomlDoc) reparse() error {
	nd, err := parseTOML(d.String())
	if err != nil {
		return err
	}
	*d = *nd
	return nil
}

func trimmed(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = strings.TrimSpace(l)
	}
	return out
}

func (d *tomlDoc) String() string { return strings.Join(d.lines, "") }

// asInvalid turns a parse error into the installer's refusal.
func asInvalid(path string, err error) error {
	if e, ok := errors.AsType[*errTOML](err); ok {
		return fmt.Errorf("%w: %s: %v (fix it by hand; nothing was changed)", ErrInvalidSettings, path, e)
	}
	return fmt.Errorf("%w: %s: %v (nothing was changed)", ErrInvalidSettings, path, err)
}
