package memory

import (
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Superseded: a later observation that says what is true now about the
// same subject as an earlier one supersedes it. Both are kept; the older
// is StateSuperseded, linked to the newer (Observation.SupersededBy), and
// the newer links back (Supersedes). A wrong supersede hides true memory,
// so "the same subject" is read narrowly, and only these count:
//
//   - a file read whole, read whole again: what the file holds now is the
//     later read's (a part of a file read is about that part only, and
//     supersedes nothing);
//   - a command run again, the very same command line: its outcome now is
//     the later run's (the same outcome again is the same fact, folded);
//   - an edit that replaced every line an earlier edit of the file wrote
//     (not the one it undid: that is StateReverted);
//   - a decision that names, as what it replaces ("instead of X", "switch
//     from X", "no longer use X"…), a word an earlier decision chose.
//
// Two edits of the same function are not otherwise one subject: the later
// one may change another part of it, and what each says stays true.

// Subject is the subject a later observation of the same subject
// supersedes o on, for reads and command runs ("" for the others):
// "read\x00<file>" or "run\x00<tool>\x00<command line>", within o's
// project.
func (o *Observation) Subject() string {
	if len(o.FilesModified) > 0 || o.Tool == "" || o.Source == SourceSaved || o.Anchor != nil {
		return ""
	}
	if cmd, ok := o.commandLine(); ok {
		return o.Project + "\x00run\x00" + o.Tool + "\x00" + cmd
	}
	if len(o.FilesRead) == 1 && o.Type == TypeDiscovery && o.Title == "Read "+o.FilesRead[0] {
		f := o.FilesRead[0]
		for _, fact := range o.Facts {
			if strings.HasPrefix(fact, f+": lines ") {
				return "" // a part of the file
			}
		}
		return o.Project + "\x00read\x00" + f
	}
	return ""
}

// commandLine is the command o ran, whole (a clipped one is no subject).
func (o *Observation) commandLine() (string, bool) {
	for _, f := range o.Facts {
		if cmd, ok := strings.CutPrefix(f, "$ "); ok {
			cmd = strings.TrimSpace(cmd)
			return cmd, cmd != "" && !strings.HasSuffix(cmd, "…")
		}
	}
	return "", false
}

// RewroteEdit reports whether o, an edit, replaced every line that p, an
// earlier edit of the same file, wrote, without undoing it (o wrote
// something else than what p replaced).
func (o *Observation) RewroteEdit(p *Observation) bool {
	if len(o.FilesModified) == 0 || len(p.FilesModified) == 0 || o.Project != p.Project {
		return false
	}
	for _, a := range o.FileAnchors {
		if len(a.Removed) == 0 {
			continue
		}
		for _, b := range p.FileAnchors {
			if a.File != b.File || len(b.Region) == 0 || sameSet(a.Region, b.Removed) {
				continue
			}
			if containsAll(a.Removed, b.Region) {
				return true
			}
		}
	}
	return false
}

func containsAll(set, lines []uint32) bool {
	for _, l := range lines {
		if !slices.Contains(set, l) {
			return false
		}
	}
	return true
}

func sameSet(a, b []uint32) bool { return containsAll(a, b) && containsAll(b, a) }

// replacedRE finds what a decision replaces: "instead of X", "rather than
// X", "switch from X", "no longer use X", "stop using X", "don't use X",
// "over X" after "prefer".
//
// It is compiled on first use, and reached only from here: the hook links
// this package for its types, and a compile at every hook's start was a
// tenth of a millisecond, while package regexp linked at all adds the
// inits of unicode's tables (a sync.OnceValue in a package variable would
// link it, from the package's init).
func replacedRE() *regexp.Regexp {
	replaced.once.Do(func() {
		replaced.re = regexp.MustCompile(`(?i)\b(?:instead of|rather than|(?:switch|switched|switching|move|moved|moving|migrate|migrated) (?:away )?from|no longer use|stop using|don't use|do not use|never use|prefer\b[^.!?\n]*?\bover)\s+(?:the |a |an |using )?([\w.@/+#-]+)`)
	})
	return replaced.re
}

var replaced struct {
	once sync.Once
	re   *regexp.Regexp
}

// replacedTerms are the words a decision says it replaces, lower case.
func replacedTerms(text string) []string {
	var out []string
	for _, m := range replacedRE().FindAllStringSubmatch(text, -1) {
		if t := strings.ToLower(strings.Trim(m[1], ".-")); len(t) > 1 {
			out = append(out, t)
		}
	}
	return out
}

// Replaces returns the words a decision names as what it replaces ("switch
// from npm to pnpm": npm), lower case; none for any other record.
func (o *Observation) Replaces() []string {
	if o.Type != TypeDecision {
		return nil
	}
	return replacedTerms(o.decisionText())
}

// decisionText is what a decision says it decided.
func (o *Observation) decisionText() string {
	var b strings.Builder
	for _, f := range o.Facts {
		if d, ok := strings.CutPrefix(f, "decided: "); ok {
			b.WriteString(d)
			b.WriteByte('\n')
		}
	}
	if b.Len() == 0 {
		return strings.TrimPrefix(o.Title, "Decision: ")
	}
	return b.String()
}

// ReplacesDecision reports whether o, a later decision of p's project,
// names as what it replaces a word that p chose (a word of p's decision
// that p itself does not name as replaced).
func (o *Observation) ReplacesDecision(p *Observation) bool {
	if o.Type != TypeDecision || p.Type != TypeDecision || o.Project != p.Project || o.ID == p.ID {
		return false
	}
	replaced := replacedTerms(o.decisionText())
	if len(replaced) == 0 {
		return false
	}
	was := p.decisionText()
	notChosen := replacedTerms(was)
	words := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(was), func(r rune) bool {
		return !(r == '.' || r == '@' || r == '/' || r == '+' || r == '#' || r == '-' || r == '_' || 'a' <= r && r <= 'z' || '0' <= r && r <= '9')
	}) {
		words[strings.Trim(w, ".-")] = true
	}
	for _, t := range replaced {
		if words[t] && !slices.Contains(notChosen, t) {
			return true
		}
	}
	return false
}
