package install

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"

	"github.com/mnemo-dev/mnemo/adapters/hosts"
)

// The installers edit people's files the way a person would: Mnemo's
// entries are spliced in and out, and every other byte stays where it
// was (indentation, one-line arrays, the order of keys, comments where
// the format allows them, a final newline or none). An install followed
// by an uninstall gives the file back byte for byte.
//
// How: the edit itself works on values (object, mergeEvents); then
// spliceJSON writes the edited value over the file's own text, keeping the
// text of every value that did not change and of every gap (commas,
// whitespace, comments) between two members that are still neighbours.
// Only what is new is formatted, in the file's own indentation and line
// ending.

// jsoncFile reports whether the host reads the file at path as JSON with
// comments and trailing commas: VS Code's files (.vscode/, *.jsonc) and
// OpenCode's config. Other hosts read strict JSON, and a comment there is
// an invalid file.
func jsoncFile(path string) bool {
	base := filepath.Base(path)
	return strings.HasSuffix(base, ".jsonc") || base == "opencode.json" ||
		filepath.Base(filepath.Dir(path)) == ".vscode"
}

// stripJSONC blanks out comments and trailing commas with spaces (line
// ends kept), so that the result is JSON with every value at the same
// offset as in data. Strings are left alone.
func stripJSONC(data []byte) []byte {
	out := bytes.Clone(data)
	lastComma := -1 // a comma that may turn out to be trailing
	for i := 0; i < len(out); i++ {
		switch c := out[i]; {
		case c == '"':
			lastComma = -1
			for i++; i < len(out) && out[i] != '"'; i++ {
				if out[i] == '\\' {
					i++
				}
			}
		case c == '/' && i+1 < len(out) && out[i+1] == '/':
			for ; i < len(out) && out[i] != '\n'; i++ {
				if out[i] != '\r' {
					out[i] = ' '
				}
			}
		case c == '/' && i+1 < len(out) && out[i+1] == '*':
			end := bytes.Index(out[i+2:], []byte("*/"))
			stop := len(out)
			if end >= 0 {
				stop = i + 2 + end + 2
			}
			for ; i < stop; i++ {
				if out[i] != '\n' && out[i] != '\r' {
					out[i] = ' '
				}
			}
			i--
		case c == ',':
			lastComma = i
		case c == '}' || c == ']':
			if lastComma >= 0 {
				out[lastComma] = ' '
			}
			lastComma = -1
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		default:
			lastComma = -1
		}
	}
	return out
}

// A jnode is one value of a JSON text, with where it is.
type jnode struct {
	start, end int // the value's bytes
	kind       byte
	// An object's members and an array's elements, in order.
	keys  []string
	kidx  []int // where each member's key starts
	elems []*jnode
}

// parseNodes reads the structure of a valid JSON text (stripJSONC's
// output): the root value and everything in it.
func parseNodes(data []byte) (*jnode, error) {
	p := &nodeParser{data: data}
	p.space()
	n, err := p.value()
	if err != nil {
		return nil, err
	}
	return n, nil
}

type nodeParser struct {
	data []byte
	pos  int
}

func (p *nodeParser) space() {
	for p.pos < len(p.data) && strings.IndexByte(" \t\r\n", p.data[p.pos]) >= 0 {
		p.pos++
	}
}

var errNodes = errors.New("not JSON")

func (p *nodeParser) value() (*jnode, error) {
	if p.pos >= len(p.data) {
		return nil, errNodes
	}
	n := &jnode{start: p.pos, kind: p.data[p.pos]}
	switch n.kind {
	case '{', '[':
		closer := byte('}')
		if n.kind == '[' {
			closer = ']'
		}
		p.pos++
		for {
			p.space()
			if p.pos >= len(p.data) {
				return nil, errNodes
			}
			if p.data[p.pos] == closer {
				p.pos++
				break
			}
			if p.data[p.pos] == ',' {
				p.pos++
				continue
			}
			if n.kind == '{' {
				ks := p.pos
				k, err := p.value()
				if err != nil || k.kind != '"' {
					return nil, errNodes
				}
				var key string
				if json.Unmarshal(p.data[k.start:k.end], &key) != nil {
					return nil, errNodes
				}
				p.space()
				if p.pos >= len(p.data) || p.data[p.pos] != ':' {
					return nil, errNodes
				}
				p.pos++
				p.space()
				n.keys, n.kidx = append(n.keys, key), append(n.kidx, ks)
			}
			e, err := p.value()
			if err != nil {
				return nil, err
			}
			n.elems = append(n.elems, e)
		}
	case '"':
		for p.pos++; p.pos < len(p.data) && p.data[p.pos] != '"'; p.pos++ {
			if p.data[p.pos] == '\\' {
				p.pos++
			}
		}
		p.pos++
	default:
		for p.pos < len(p.data) && strings.IndexByte(",]} \t\r\n", p.data[p.pos]) < 0 {
			p.pos++
		}
	}
	n.end = min(p.pos, len(p.data))
	return n, nil
}

// spliceJSON writes the JSON value want over the text of data (the file
// as it is; stripped is stripJSONC(data)), keeping data's bytes wherever
// the value did not change. ok is false when data cannot be read so.
func spliceJSON(data, stripped []byte, want json.RawMessage) (out []byte, ok bool) {
	root, err := parseNodes(stripped)
	if err != nil {
		return nil, false
	}
	s := splicer{data: data, stripped: stripped, unit: indentUnit(data), eol: "\n"}
	if bytes.Contains(data, []byte("\r\n")) {
		s.eol = "\r\n" // a Windows file's new lines end as its old ones do
	}
	var b bytes.Buffer
	b.Write(data[:root.start])
	if err := s.render(&b, root, want); err != nil {
		return nil, false
	}
	b.Write(data[root.end:])
	return b.Bytes(), true
}

type splicer struct {
	data, stripped []byte
	unit           string // one level of indentation
	eol            string // the file's line ending: "\r\n" or "\n"
}

// indentUnit is the file's level of indentation: the whitespace before
// its first indented line's content, else two spaces.
func indentUnit(data []byte) string {
	for line := range bytes.Lines(data) {
		trimmed := bytes.TrimLeft(line, " \t")
		if len(trimmed) == len(line) || len(bytes.TrimSpace(trimmed)) == 0 {
			continue
		}
		return string(line[:len(line)-len(trimmed)])
	}
	return "  "
}

// lineIndent is the whitespace that starts the line holding offset at.
func (s *splicer) lineIndent(at int) string {
	start := bytes.LastIndexByte(s.data[:at], '\n') + 1
	end := start
	for end < len(s.data) && (s.data[end] == ' ' || s.data[end] == '\t') {
		end++
	}
	return string(s.data[start:end])
}

// render writes the text of want in the place of n.
func (s *splicer) render(b *bytes.Buffer, n *jnode, want json.RawMessage) error {
	if equalJSON(s.stripped[n.start:n.end], want) {
		b.Write(s.data[n.start:n.end])
		return nil
	}
	want = bytes.TrimSpace(want)
	switch {
	case n.kind == '{' && len(want) > 0 && want[0] == '{':
		return s.renderObject(b, n, want)
	case n.kind == '[' && len(want) > 0 && want[0] == '[':
		return s.renderArray(b, n, want)
	}
	b.Write(s.format(want, s.lineIndent(n.start), s.oneLine(n)))
	return nil
}

// oneLine reports whether the container n is written on one line.
func (s *splicer) oneLine(n *jnode) bool {
	return !bytes.Contains(s.data[n.start:n.end], []byte("\n"))
}

// format writes a new value: indented as the file is, from a line
// indented by indent, or compact (", " and ": ") in a one-line container.
func (s *splicer) format(v json.RawMessage, indent string, compact bool) []byte {
	var b bytes.Buffer
	if compact {
		if json.Compact(&b, v) != nil {
			return v
		}
		return b.Bytes()
	}
	if json.Indent(&b, v, indent, s.unit) != nil {
		return v
	}
	if s.eol != "\n" {
		return bytes.ReplaceAll(b.Bytes(), []byte("\n"), []byte(s.eol))
	}
	return b.Bytes()
}

// An item is one element or member of a container as it is to be written:
// an old one (old >= 0) with its new value, or a new one.
type item struct {
	old int
	key string
	val json.RawMessage
}

func (s *splicer) renderObject(b *bytes.Buffer, n *jnode, want json.RawMessage) error {
	members, err := parseObject(want)
	if err != nil {
		return err
	}
	items := make([]item, 0, len(members))
	used := make([]bool, len(n.keys))
	for _, m := range members {
		it := item{old: -1, key: m.key, val: m.value}
		for i, k := range n.keys {
			if k == m.key && !used[i] {
				it.old, used[i] = i, true
				break
			}
		}
		items = append(items, it)
	}
	return s.renderItems(b, n, items)
}

func (s *splicer) renderArray(b *bytes.Buffer, n *jnode, want json.RawMessage) error {
	var elems []json.RawMessage
	if err := json.Unmarshal(want, &elems); err != nil {
		return err
	}
	// The longest run of elements that stayed the same, in order...
	old := n.elems
	lcs := make([][]int, len(old)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(elems)+1)
	}
	for i := len(old) - 1; i >= 0; i-- {
		for j := len(elems) - 1; j >= 0; j-- {
			if equalJSON(s.stripped[old[i].start:old[i].end], elems[j]) {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	items := make([]item, 0, len(elems))
	var oldRun []int
	var newRun []json.RawMessage
	flush := func() {
		// ...and between two of them, elements edited in place when as
		// many went as came, of the same kind; else gone and new ones.
		same := len(oldRun) == len(newRun)
		for k := range oldRun {
			same = same && len(newRun[k]) > 0 && newRun[k][0] == old[oldRun[k]].kind && (old[oldRun[k]].kind == '{' || old[oldRun[k]].kind == '[')
		}
		for k, v := range newRun {
			it := item{old: -1, val: v}
			if same {
				it.old = oldRun[k]
			}
			items = append(items, it)
		}
		oldRun, newRun = oldRun[:0], newRun[:0]
	}
	i, j := 0, 0
	for i < len(old) && j < len(elems) {
		switch {
		case equalJSON(s.stripped[old[i].start:old[i].end], elems[j]) && lcs[i][j] == lcs[i+1][j+1]+1:
			flush()
			items = append(items, item{old: i, val: elems[j]})
			i, j = i+1, j+1
		case lcs[i+1][j] >= lcs[i][j+1]:
			oldRun = append(oldRun, i)
			i++
		default:
			newRun = append(newRun, elems[j])
			j++
		}
	}
	for ; i < len(old); i++ {
		oldRun = append(oldRun, i)
	}
	newRun = append(newRun, elems[j:]...)
	flush()
	return s.renderItems(b, n, items)
}

// renderItems writes container n with items: the text between two items
// that were neighbours before is kept (commas, whitespace, comments), and
// so is the text after the opening and before the closing bracket.
func (s *splicer) renderItems(b *bytes.Buffer, n *jnode, items []item) error {
	open, closeAt := n.start, n.end-1
	b.WriteByte(s.data[open])
	if len(items) == 0 {
		b.WriteByte(s.data[closeAt])
		return nil
	}
	startOf := func(i int) int {
		if n.kind == '{' {
			return n.kidx[i]
		}
		return n.elems[i].start
	}
	endOf := func(i int) int { return n.elems[i].end }

	indent := s.lineIndent(open)
	oneLine := s.oneLine(n)
	var lead, tail, sep, colon string
	if len(n.elems) > 0 {
		lead = string(s.data[open+1 : startOf(0)])
		tail = string(s.data[endOf(len(n.elems)-1):closeAt])
		if ws := strings.TrimLeft(lead, " \t\r\n"); ws != "" {
			lead = lead[:len(lead)-len(ws)] // not a comment for new items
		}
		sep = lead
		if len(n.elems) > 1 {
			gap := string(s.stripped[endOf(0):startOf(1)])
			if k := strings.IndexByte(gap, ','); k >= 0 {
				sep = gap[k+1:]
			}
		}
		if n.kind == '{' {
			colon = string(s.data[s.keyEnd(n, 0):n.elems[0].start])
		}
	} else {
		oneLine = false
		lead = s.eol + indent + s.unit
		tail = s.eol + indent
		sep = lead
	}
	if colon == "" || strings.ContainsAny(colon, "/") {
		colon = ": "
	}
	childIndent := indent + s.unit
	if i := strings.LastIndexByte(sep, '\n'); i >= 0 {
		childIndent = sep[i+1:]
	}

	for k, it := range items {
		switch {
		case k == 0 && it.old == 0:
			b.WriteString(string(s.data[open+1 : startOf(0)]))
		case k == 0:
			b.WriteString(lead)
		case it.old > 0 && items[k-1].old == it.old-1:
			b.Write(s.data[endOf(it.old-1):startOf(it.old)])
		default:
			b.WriteByte(',')
			b.WriteString(sep)
		}
		if it.old >= 0 {
			if n.kind == '{' {
				b.Write(s.data[startOf(it.old):n.elems[it.old].start])
			}
			if err := s.render(b, n.elems[it.old], it.val); err != nil {
				return err
			}
			continue
		}
		if n.kind == '{' {
			k, _ := hosts.MarshalJSON(it.key)
			b.Write(k)
			b.WriteString(colon)
		}
		b.Write(s.format(it.val, childIndent, oneLine))
	}
	b.WriteString(tail)
	b.WriteByte(s.data[closeAt])
	return nil
}

// keyEnd is where the key of member i of object n ends.
func (s *splicer) keyEnd(n *jnode, i int) int {
	p := &nodeParser{data: s.stripped, pos: n.kidx[i]}
	k, err := p.value()
	if err != nil {
		return n.kidx[i]
	}
	return k.end
}
