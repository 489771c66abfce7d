package local

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mnemo-dev/mnemo/memory"
)

var decisionRE = regexp.MustCompile(`(?i)\b(?:` +
	`(?:we|i)(?:'ve| have)? (?:decided|agreed|chose|chosen|settled on)` +
	`|let'?s (?:go with|use|switch|stick with|keep|adopt|move to|standardi[sz]e on|prefer)` +
	`|(?:we'll|we will|we should|we're going to|going forward,? we) (?:use|go with|switch|stick with|adopt|prefer|standardi[sz]e)` +
	`|(?:use|prefer|choose|pick|adopt|switch to)\b[^.!?\n]*?\b(?:instead of|rather than)` +
	`|prefer\b[^.!?\n]*?\bover` +
	`|from now on` +
	`|(?:always|never|don't|do not) use` +
	`|(?:^(?:\w+[,.]? )?|\b(?:we|i|let's|we'll|we will|we've|i'll|i will) )(?:switch(?:ed)?|move[ds]?|migrate[ds]?)(?: away)? from\b[^.!?\n]*?\bto` +
	`|^(?:\w+[,.]? )?go with` +
	`|^decision:\s*\w+` +
	`)\b`)

var decisionLeadRE = regexp.MustCompile(`(?i)^(?:so,? |ok,? |okay,? |agreed[.,]? |also,? |please,? |and |then,? )*(?:decision:\s*|we(?:'ve| have)? (?:decided|agreed) (?:to |that |on )?|i(?:'ve| have)? decided (?:to |that )?|we (?:chose|settled on) |let'?s |we'll |we will |we should |we're going to |going forward,? we |from now on,? (?:we |let's )?)`)

// askRE matches a sentence that asks for a choice, or for work, rather
// than stating one: "Decision: work out exactly what …", "Help me decide
// whether …", "Should we use X instead of Y?".
var askRE = regexp.MustCompile(`(?i)^(?:\w+[,.]? )?(?:decision:\s*)?(?:please\s+|can you\s+|could you\s+)?(?:work out|figure out|find out|investigate|determine|decide|look into|check|evaluate|compare|choose between|pick between|help me|tell me|explain|give me|think about|consider|weigh|should we|should i|shall we|do we|would you|which|whether|what|how|why)\b` +
	`|\b(?:help me decide|decide whether|decide between|decide if|trade-?offs|pros and cons|what do you think|your take|don't decide|before we decide|not decided)\b`)

// decisionWords are what every sentence decisionRE matches contains: a
// cheap test that spares most prompts the expression.
var decisionWords = []string{"decid", "agreed", "chose", "settled on", "let's", "lets ", "we'll", "we will", "we should", "we're going", "going forward", "instead of", "rather than", "prefer", "from now on", "always use", "never use", "don't use", "do not use", "switch", "go with", "decision:", "move from", "moved from", "moves from", "migrate", "away from"}

// decisionsIn returns the sentences of a prompt that state a choice; a
// sentence that asks for one (a question, "help me decide…", "Decision:
// work out …") states none.
func decisionsIn(request string) []string {
	lower := strings.ToLower(request)
	if !slices.ContainsFunc(decisionWords, func(w string) bool { return strings.Contains(lower, w) }) {
		return nil
	}
	var out []string
	for _, s := range sentences(request) {
		if decisionRE.MatchString(s) && !strings.HasSuffix(s, "?") && !askRE.MatchString(s) {
			out = append(out, memory.Clip(s, 240))
			if len(out) == 3 {
				break
			}
		}
	}
	return out
}

// decisionNote makes the decision observation of a turn whose prompt
// states a choice, unless the turn already has it.
func decisionNote(request string, turn []memory.Observation) (memory.Observation, bool) {
	if request == "" {
		return memory.Observation{}, false
	}
	for i := range turn {
		if turn[i].Type == memory.TypeDecision && turn[i].Tool == "" {
			return memory.Observation{}, false
		}
	}
	ds := decisionsIn(request)
	if len(ds) == 0 {
		return memory.Observation{}, false
	}
	choice := strings.TrimRight(decisionLeadRE.ReplaceAllString(ds[0], ""), ".!")
	choice = lowerFirst(choice)
	o := memory.Observation{Type: memory.TypeDecision, Request: request}
	o.Title = memory.Clip("Decision: "+choice, maxTitle)
	o.Subtitle = memory.Clip(ds[0], maxSubtitle)
	for _, d := range ds {
		o.Facts = append(o.Facts, "decided: "+d)
	}
	o.Narrative = "The prompt states a choice: " + memory.Clip(squash(request), 600)
	o.Concepts = topicWords(strings.Join(ds, " "), 6)
	return o, true
}

func lowerFirst(s string) string {
	r, size := utf8.DecodeRuneInString(s)
	if size == 0 || !unicode.IsUpper(r) {
		return s
	}
	// Keep acronyms and identifiers: "API …", "JSONRPC …".
	if next, _ := utf8.DecodeRuneInString(s[size:]); unicode.IsUpper(next) {
		return s
	}
	return string(unicode.ToLower(r)) + s[size:]
}

// fixPhrases and refactorPhrases read what a prompt asks for, for edits
// that no failing run explains.
var (
	fixPhrases      = []string{"fix", "fixes", "fixed", "fixing", "bug", "bugs", "broken", "crash", "crashes", "crashing", "regression", "is wrong", "are wrong", "doesn't work", "does not work", "off by"}
	refactorPhrases = []string{"refactor", "refactoring", "rename", "extract", "clean up", "cleanup", "split up", "split out", "deduplicate", "simplify", "move the", "move it"}
)
