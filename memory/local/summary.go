package local

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mnemo-dev/mnemo/memory"
)

func summarize(ev memory.Event, request string, turn []memory.Observation) (memory.Summary, bool) {
	req := memory.FirstNonEmpty(request, ev.LastUserMessage)
	msg := strings.TrimSpace(ev.LastAssistantMessage)
	if len(turn) == 0 && req == "" && msg == "" {
		return memory.Summary{}, false
	}
	s := memory.Summary{Request: memory.Clip(req, 500)}
	said := splitMessage(msg)
	var investigated, failures, docs, completed, next, notes []string
	read, modified := map[string]bool{}, map[string]bool{}
	var touched []string // symbols the turn's edits touched
	for i := range turn {
		o := &turn[i]
		for _, f := range o.FilesRead {
			read[f] = true
		}
		for _, f := range o.FilesModified {
			modified[f] = true
		}
		if v := (runNote{o}).fact("symbols: "); v != "" && len(o.FilesModified) > 0 {
			touched = append(touched, strings.Split(v, ", ")...)
		}
	}
	for i := range turn {
		o := &turn[i]
		r := runNote{o}
		switch {
		case o.Type == memory.TypePrompt:
			continue // the request says it
		case o.Type == memory.TypeDecision:
			notes = append(notes, o.Title)
		case slices.Contains(o.Facts, "interrupted by the user"):
			notes = append(notes, o.Title)
		case o.Type == memory.TypeDiscovery:
			investigated = append(investigated, o.Title)
			if r.state() == runFailed {
				if e := r.errorMessage(); e != "" {
					failures = append(failures, memory.FirstNonEmpty(r.cause(), r.command())+" failed: "+e)
				}
			}
		default:
			completed = append(completed, o.Title)
		}
		// What the code touched is documented to do: the docs of changed
		// symbols, from the edits and from the reads before them.
		for _, f := range o.Facts {
			d, ok := strings.CutPrefix(f, "doc: ")
			if ok && o.Type != memory.TypeFeature && slices.ContainsFunc(touched, func(sym string) bool { return docAbout(d, sym) }) {
				docs = append(docs, d)
			}
		}
	}
	s.FilesRead = sortedKeys(read)
	s.FilesModified = sortedKeys(modified)
	learned := append(append(said.learned, docs...), failures...)
	fail, failAt := lastFailureAt(turn)
	if fail != nil {
		// The reply may say the tests pass where the turn's last run
		// failed: that is no completed work.
		kept := said.completed[:0]
		for _, sent := range said.completed {
			if hasPhrase(strings.ToLower(sent), donePhrases) {
				notes = append(notes, "The reply said \""+strings.TrimRight(sent, ".")+"\", but "+fail.command()+" failed")
				continue
			}
			kept = append(kept, sent)
		}
		said.completed = kept
	}
	completed = append(said.completed, completed...)

	if f := fail; f != nil {
		step := "Make " + f.command() + " pass"
		later := slices.ContainsFunc(turn[failAt+1:], func(o memory.Observation) bool { return (runNote{&o}).state() == runUnknown })
		switch e := f.errorMessage(); {
		case later:
			// Runs after it do not show how they ended.
			step += ": " + memory.FirstNonEmpty(f.cause(), "it") + " failed"
			if e != "" {
				step += " (" + e + ")"
			}
			step += ", and no later run shows it passing"
		case e != "":
			step += ": " + memory.FirstNonEmpty(f.cause(), "it") + " still fails (" + e + ")"
		}
		next = append(next, step)
	} else if cmd, changed := untestedChanges(turn); cmd != "" {
		next = append(next, "Re-run "+cmd+": "+listMore(changed, 3, len(changed))+" changed after the last run")
	}
	next = append(next, said.next...)
	if len(s.FilesModified) == 0 && slices.ContainsFunc(turn, func(o memory.Observation) bool { return o.Type != memory.TypePrompt }) {
		notes = append(notes, "No files were modified in this turn.")
	}

	s.Investigated = joinItems(investigated, 8)
	s.Learned = joinItems(learned, 5)
	s.Completed = joinItems(completed, 8)
	s.NextSteps = joinItems(next, 4)
	s.Notes = joinItems(notes, 4)
	return s, true
}

// docAbout reports whether a doc fact is about sym ("Cart.Last" matches
// "Last returns …" and "Cart.Last: …").
func docAbout(doc, sym string) bool {
	short := sym[strings.LastIndexByte(sym, '.')+1:]
	for _, name := range []string{sym, short} {
		if rest, ok := strings.CutPrefix(doc, name); ok && (rest == "" || rest[0] == ' ' || rest[0] == ':') {
			return true
		}
	}
	return false
}

// untestedChanges finds files modified after the turn's last passing test
// or build run: the command to run again and the files.
func untestedChanges(turn []memory.Observation) (string, []string) {
	last := -1
	for i := range turn {
		if (runNote{&turn[i]}).state() == runPassed {
			last = i
		}
	}
	if last < 0 {
		return "", nil
	}
	var changed []string
	for _, o := range turn[last+1:] {
		for _, f := range o.FilesModified {
			if isCode(f) {
				changed = append(changed, f)
			}
		}
	}
	if len(changed) == 0 {
		return "", nil
	}
	return runNote{&turn[last]}.command(), memory.Dedupe(changed, 8)
}

// said is what an assistant message reports, sentence by sentence.
type said struct{ learned, completed, next []string }

// nextPhrases mark a sentence about what is left to do.
var nextPhrases = []string{"next", "next step", "next steps", "todo", "to-do", "follow-up", "follow up", "still need", "still fails", "still failing", "still broken", "still missing", "still to", "remaining", "not yet", "left to", "you may", "you might", "you could", "you should", "you must", "you will", "you need", "consider", "should also", "i'll", "we'll", "will need"}

// donePhrases mark a sentence about the state the work left things in.
var donePhrases = []string{"test passes", "tests pass", "tests now pass", "tests all pass", "check passes", "checks pass", "build passes", "build succeeds", "builds succeed"}

var nowRE = regexp.MustCompile(`\bnow (?:\w+s|is|are)\b`)

// hasPhrase reports whether lower (a lower-case sentence) contains one of
// phrases as whole words. A phrase that begins or ends in a script
// written without spaces (因为, 原因は) needs no word boundary there.
func hasPhrase(lower string, phrases []string) bool {
	for _, p := range phrases {
		for i := 0; ; {
			j := strings.Index(lower[i:], p)
			if j < 0 {
				break
			}
			start, end := i+j, i+j+len(p)
			if (start == 0 || p[0] >= 0x80 || !isIdentByte(lower[start-1])) && (end == len(lower) || p[len(p)-1] >= 0x80 || !isIdentByte(lower[end])) {
				return true
			}
			i = end
		}
	}
	return false
}

var doneVerbs = wordSet("added", "fixed", "changed", "updated", "created", "removed", "renamed", "switched", "implemented", "refactored", "moved", "replaced", "wrote", "made", "ran", "done", "deleted", "extracted", "introduced", "converted", "migrated", "rewrote", "adjusted", "corrected", "completed", "finished", "installed", "upgraded", "reverted", "merged", "committed", "verified", "confirmed")

// splitMessage sorts the sentences of an assistant message: what it did
// (first-person or past-tense openings: completed), what remains (next
// steps, questions), and the rest (what was learned).
func splitMessage(msg string) said {
	var s said
	if msg == "" {
		return s
	}
	for i, sent := range sentences(stripMarkdown(headTail(msg))) {
		if i == 16 {
			break
		}
		sent = memory.Clip(sent, 240)
		lower := strings.ToLower(sent)
		first, rest, _ := strings.Cut(sent, " ")
		lowFirst := strings.ToLower(strings.TrimRight(first, ":,"))
		switch {
		case strings.HasSuffix(sent, "?") || hasPhrase(lower, nextPhrases):
			s.next = append(s.next, sent)
		case lowFirst == "i" || lowFirst == "we" || lowFirst == "i've" || lowFirst == "we've":
			verb, tail, _ := strings.Cut(rest, " ")
			if verb == "have" || verb == "also" {
				verb, tail, _ = strings.Cut(tail, " ")
			}
			if verb == "" {
				s.learned = append(s.learned, sent)
				break
			}
			s.completed = append(s.completed, upperFirst(strings.TrimSpace(verb+" "+tail)))
		case doneVerbs[lowFirst] || hasPhrase(lower, donePhrases) || strings.Contains(lower, "now ") && nowRE.MatchString(lower):
			s.completed = append(s.completed, sent)
		default:
			s.learned = append(s.learned, sent)
		}
	}
	return s
}

func upperFirst(s string) string {
	r, size := utf8.DecodeRuneInString(s)
	if size == 0 {
		return s
	}
	return string(unicode.ToUpper(r)) + s[size:]
}

// sentences splits text at sentence ends (. ! ? before a space or the
// end; 。！？ anywhere) and at line breaks, each bullet its own sentence.
func sentences(text string) []string {
	var out []string
	for line := range strings.Lines(text) {
		line = strings.TrimSpace(line)
		line = strings.TrimLeft(line, "-*•> ")
		if line == "" {
			continue
		}
		start := 0
		for i := 0; i < len(line); i++ {
			c := line[i]
			if c >= 0x80 {
				if r, size := utf8.DecodeRuneInString(line[i:]); r == '。' || r == '！' || r == '？' {
					if s := strings.TrimSpace(line[start : i+size]); s != "" {
						out = append(out, s)
					}
					start = i + size
					i += size - 1
				}
				continue
			}
			if (c == '.' || c == '!' || c == '?') && (i+1 == len(line) || line[i+1] == ' ') {
				// Not after a single letter or a known abbreviation ("e.g.").
				word := line[max(0, strings.LastIndexByte(line[:i], ' ')+1):i]
				if c == '.' && (len(word) <= 1 || word == "e.g" || word == "i.e" || word == "etc" || word == "vs") && i+1 < len(line) {
					continue
				}
				if s := strings.TrimSpace(line[start : i+1]); s != "" {
					out = append(out, s)
				}
				start = i + 1
			}
		}
		if s := strings.TrimSpace(line[start:]); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func stripMarkdown(s string) string {
	if !strings.ContainsAny(s, "*_`#") {
		return s
	}
	r := strings.NewReplacer("**", "", "__", "", "`", "")
	var b strings.Builder
	for line := range strings.Lines(s) {
		t := strings.TrimLeft(line, " ")
		if strings.HasPrefix(t, "```") {
			continue
		}
		t = strings.TrimLeft(t, "#")
		b.WriteString(r.Replace(t))
	}
	return b.String()
}

// joinItems joins up to n distinct items as sentences, saying how many
// more there were.
func joinItems(items []string, n int) string {
	all := memory.Dedupe(items, len(items)+1)
	var b strings.Builder
	for i, it := range firstN(all, n) {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(asSentence(it))
	}
	if len(all) > n {
		fmt.Fprintf(&b, " (%d more.)", len(all)-n)
	}
	return b.String()
}
