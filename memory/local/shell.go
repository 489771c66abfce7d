package local

import (
	"regexp"
	"strings"

	"github.com/mnemo-dev/mnemo/memory"
)

type cmdKind int

const (
	kindSetup   cmdKind = iota // cd, export, source: never the point
	kindOther                  // anything else
	kindLook                   // ls, cat, git log: reading
	kindRun                    // running the program
	kindWrite                  // a file written from the shell
	kindRemove                 // rm, git rm
	kindCommit                 // git commit
	kindInstall                // adding dependencies
	kindBuild                  // build, vet, lint, type check
	kindTest                   // a test run
	kindMove                   // mv, git mv
)

// shellCommand is one segment of a shell command line, words unquoted.
type shellCommand struct {
	words []string // without env assignments and wrappers (sudo, time…)
	// wrappers are the wrappers taken off words, in order ("uv", "run").
	wrappers []string
	kind     cmdKind
	args     []string // the words after the command (and subcommand)
	target   string   // a file stdout is redirected to
	// redirected: some of its output went to a file or /dev/null (not
	// 2>&1), so that the output the host saw is not all it printed.
	redirected bool
	sep        string // what follows it: | && || ; & ("" at the end; a new line is ;)
}

func (c shellCommand) String() string {
	var b strings.Builder
	for i, w := range c.words {
		if i > 0 {
			b.WriteByte(' ')
		}
		if strings.ContainsAny(w, " \t\n") || w == "" {
			w = inQuotes(oneLine(w))
		}
		b.WriteString(w)
	}
	return memory.Clip(b.String(), 80)
}

// primaryCommand is the segment of a command line that says what it does:
// a move, a test run, a build… before echo and cd.
func primaryCommand(line string) shellCommand {
	segs := parseShell(line)
	if i := primaryAt(segs); i >= 0 {
		return segs[i]
	}
	return shellCommand{kind: -1}
}

// primaryAt is the index of the primary segment of segs, -1 for none.
func primaryAt(segs []shellCommand) int {
	best := -1
	for i, c := range segs {
		if best < 0 || c.kind > segs[best].kind {
			best = i
		}
	}
	return best
}

// parseShell splits a command line into its commands at ; && || | & and
// newlines outside quotes, unquotes words, drops redirections (keeping a
// stdout target) and heredoc bodies.
func parseShell(line string) []shellCommand {
	var (
		segs    []shellCommand
		words   []string
		cur     = make([]byte, 0, 64)
		inWord  bool
		quote   byte
		heredoc string
	)
	flushWord := func() {
		if inWord {
			words = append(words, string(cur))
			cur = cur[:0]
			inWord = false
		}
	}
	flushSeg := func(sep string) {
		flushWord()
		if len(words) > 0 {
			c := newCommand(words)
			c.sep = sep
			segs = append(segs, c)
			words = nil
		}
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		if quote != 0 {
			switch {
			case c == quote:
				quote = 0
			case c == '\\' && quote == '"' && i+1 < len(line):
				i++
				cur = append(cur, line[i])
			default:
				cur = append(cur, c)
			}
			continue
		}
		switch {
		case c == '\'' || c == '"':
			quote, inWord = c, true
		case c == '\\' && i+1 < len(line):
			i++
			if line[i] != '\n' {
				cur = append(cur, line[i])
				inWord = true
			}
		case c == ' ' || c == '\t':
			flushWord()
		case c == '<' && strings.HasPrefix(line[i:], "<<") && !strings.HasPrefix(line[i:], "<<<"):
			// A heredoc: its body is data, not commands.
			j := i + 2
			if j < len(line) && line[j] == '-' {
				j++
			}
			for j < len(line) && line[j] == ' ' {
				j++
			}
			k := j
			for k < len(line) && line[k] != '\n' && line[k] != ' ' && line[k] != ';' {
				k++
			}
			heredoc = strings.Trim(line[j:k], `'"`)
			i = k - 1
			flushWord()
		case c == '\n' || c == ';':
			flushSeg(";")
			if c == '\n' && heredoc != "" {
				// Skip the body, up to the line that is the delimiter.
				rest, pos := line[i+1:], 0
				for {
					j := strings.IndexByte(rest[pos:], '\n')
					l := rest[pos:]
					if j >= 0 {
						l = rest[pos : pos+j]
					}
					if strings.TrimSpace(l) == heredoc {
						i += pos + len(l) // the loop steps onto the newline after it
						break
					}
					if j < 0 {
						i = len(line)
						break
					}
					pos += j + 1
				}
				heredoc = ""
			}
		case c == '|':
			switch {
			case i+1 < len(line) && line[i+1] == '|':
				flushSeg("||")
				i++
			case i+1 < len(line) && line[i+1] == '&': // |& pipes stderr too
				flushSeg("|")
				i++
			default:
				flushSeg("|")
			}
		case c == '&':
			switch {
			case i+1 < len(line) && line[i+1] == '&':
				flushSeg("&&")
				i++
			case inWord && len(cur) > 0 && cur[len(cur)-1] == '>', i+1 < len(line) && line[i+1] == '>':
				cur = append(cur, c)
				inWord = true
			default:
				flushSeg("&")
			}
		default:
			cur = append(cur, c)
			inWord = true
		}
	}
	flushSeg("")
	return segs
}

var redirectRE = regexp.MustCompile(`^(\d*|&)(>>?|<)(&\d+)?(.*)$`)

func newCommand(raw []string) shellCommand {
	var c shellCommand
	for i := 0; i < len(raw); i++ {
		w := raw[i]
		if w == "" || !strings.ContainsRune("0123456789&<>", rune(w[0])) {
			c.words = append(c.words, w)
			continue
		}
		if m := redirectRE.FindStringSubmatch(w); m != nil {
			target := m[4]
			if target == "" && m[3] == "" && i+1 < len(raw) {
				i++
				target = raw[i]
			}
			if m[2] != "<" && m[3] == "" && target != "" {
				c.redirected = true
			}
			if m[2] != "<" && (m[1] == "" || m[1] == "1" || m[1] == "&") && target != "" && target != "/dev/null" && m[3] == "" {
				c.target = target
			}
			continue
		}
		c.words = append(c.words, w)
	}
	// Env assignments and wrappers.
	for len(c.words) > 1 {
		w := c.words[0]
		if i := strings.IndexByte(w, '='); i > 0 && isIdent(w[:i]) {
			c.words = c.words[1:]
			continue
		}
		if commandWrappers[w] {
			c.wrappers = append(c.wrappers, w)
			c.words = c.words[1:]
			if runWrappers[w] && len(c.words) > 1 && c.words[0] == "run" {
				// uv run pytest: the tool runs in the project's environment.
				c.wrappers = append(c.wrappers, "run")
				c.words = c.words[1:]
			}
			continue
		}
		break
	}
	c.kind, c.args = classifyCommand(c.words, c.target)
	return c
}

var commandWrappers = wordSet("sudo", "time", "env", "nohup", "exec", "command", "npx", "bunx", "uv", "poetry", "pipenv", "bundle", "pdm", "hatch", "rye")

// runWrappers run the command after their "run" in the project's
// environment.
var runWrappers = wordSet("uv", "poetry", "pipenv", "pdm", "hatch", "rye")
