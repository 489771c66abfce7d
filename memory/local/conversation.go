package local

import (
	"regexp"
	"slices"
	"strings"

	"github.com/mnemo-dev/mnemo/memory"
)

// The conversation is memory: what the agent found, explained and chose
// in a turn's texts (memory.Event.Texts, its answer last) becomes a
// record of its own, also in a turn without any tool call.
//
// The rule for what is worth a record (conversationNotes):
//   - an answer with a table (a table of findings, a comparison);
//   - an answer that states a finding or a recommendation (a sentence
//     with findingPhrases: "the root cause is", "because", "comes from",
//     "I recommend", "my take"…) in 160 bytes of prose or more;
//   - in a turn with no tool call, any answer of two sentences or more and
//     200 bytes of prose or more: the turn's work was that explanation;
//   - in a turn with tool calls, an answer of two sentences or more and
//     400 bytes of prose or more: the agent explained what the tools
//     found, which the tool records do not say.
//
// A short answer ("Done.", "Glad it works.", "Noted.") or one that only
// reports what the tools did ("Added X; the tests pass.") makes none:
// the tool records and the turn's summary hold that. Such a record is a
// discovery titled by its finding. A choice the agent adopts in any of
// its texts ("I'll keep X rather than Y", "I'll use X instead of Y",
// "Decision: …") is a decision record (agentDecisions).

// causePhrases mark a sentence that says what was found: a cause, a
// reason, what something comes from.
var causePhrases = []string{
	"root cause", "the cause", "caused by", "because", "due to", "comes from", "come from", "culprit",
	"the reason", "the problem is", "the issue is", "the bug is", "turns out", "it's the", "it is the",
	"happens when", "fails when", "which means", "the delay is", "the regression", "the difference",
	"explains", "is where",
	// The same in the other languages people write to agents in: German,
	// French, Spanish, Chinese, Japanese.
	"weil", "ursache", "liegt daran", "der grund", "das problem ist", "der fehler ist",
	"parce que", "à cause", "la cause", "vient de", "la raison", "le problème est",
	"porque", "la causa", "debido a", "el problema es",
	"因为", "原因", "由于", "导致", "问题在于", "のため", "が原因",
}

// findingPhrases mark a sentence that states what was found or what to
// do: a cause, or a recommendation.
var findingPhrases = append(slices.Clip(causePhrases),
	"recommend", "recommendation", "i'd go with", "i would go with", "suggest", "my take", "the catch",
	"the fix is", "the fix:", "fix:", "the answer is", "trade-off", "trade-offs", "tradeoff", "is right", "is wrong",
	"ich empfehle", "empfehlung", "je recommande", "je conseille", "recomiendo", "建议", "推荐", "おすすめ")

var (
	tableSepRE = regexp.MustCompile(`(?m)^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)+\|?\s*$`)
	tableRowRE = regexp.MustCompile(`(?m)^\s*\|.*\|\s*$`)
)

// Bounds of a conversation record.
const (
	minFindingProse  = 160  // bytes of prose an answer needs to state a finding
	minExplainProse  = 200  // bytes of prose a turn without tool calls needs
	minReportProse   = 400  // bytes of prose a turn with tool calls needs without a finding
	maxTalkNarrative = 1500 // what a record keeps of the answer
)

// answerOf is the turn's answer: its texts that no tool call followed,
// in order; the host's last message for an event without texts.
func answerOf(ev memory.Event) string {
	var parts []string
	for _, t := range ev.Texts {
		if len(t.ToolUseIDs) == 0 {
			parts = append(parts, strings.TrimSpace(t.Text))
		}
	}
	if len(parts) == 0 {
		return strings.TrimSpace(ev.LastAssistantMessage)
	}
	return strings.Join(parts, "\n\n")
}

// conversationNotes makes the records of what a turn's texts said: the
// answer's finding, and the choices the agent adopted (unless the turn
// has them already: a stop event processed again).
func conversationNotes(ev memory.Event, request string, turn []memory.Observation) []memory.Observation {
	var out []memory.Observation
	has := func(o memory.Observation) bool {
		return slices.ContainsFunc(turn, func(t memory.Observation) bool { return t.Tool == "" && t.Title == o.Title })
	}
	if o, ok := findingNote(answerOf(ev), request, turn); ok && !has(o) {
		out = append(out, o)
	}
	for _, d := range agentDecisions(ev, request) {
		if !has(d) && !slices.ContainsFunc(out, func(o memory.Observation) bool { return o.Title == d.Title }) {
			out = append(out, d)
		}
	}
	return out
}

// minPromptWords is how many words a prompt needs to be a record of its
// own: "yes", "go on" and "thanks!" are not worth finding.
const minPromptWords = 3

// promptNote makes the record of a turn's prompt when the turn left no
// record of its own (no tool call, no finding, no decision): without it
// what the person said in such a turn (a chat, a question answered from
// what the agent knew) was kept only in the turn's summary, which search
// does not reach. The record is the prompt: its first line as the title,
// the prompt (as every record keeps it, memory.MaxRequestExcerpt) as its
// text.
func promptNote(request string, turn []memory.Observation) (memory.Observation, bool) {
	if len(turn) > 0 || len(strings.Fields(request)) < minPromptWords || machineMessageRE.MatchString(request) {
		return memory.Observation{}, false
	}
	o := memory.Observation{Type: memory.TypePrompt, Request: request}
	o.Title = memory.Clip(oneLine(request), maxTitle)
	var e evidenceBuf
	e.terms(request, true) // the identifiers and paths it names
	o.Evidence = strings.TrimSpace(e.b.String())
	return o, true
}

// machineMessageRE matches a turn opened by the host rather than typed:
// a background task's notification, a command's output, each wrapped in
// its element (<task-notification>…, <local-command-stdout>…).
var machineMessageRE = regexp.MustCompile(`^\s*<[a-z][a-z-]*>`)

// findingNote makes the discovery record of an answer worth keeping.
func findingNote(answer, request string, turn []memory.Observation) (memory.Observation, bool) {
	if answer == "" {
		return memory.Observation{}, false
	}
	prose := stripMarkdown(headTail(answer))
	sents := sentences(prose)
	var found []string // sentences that state a finding
	for _, s := range sents {
		if !strings.HasSuffix(s, "?") && hasPhrase(strings.ToLower(s), findingPhrases) {
			found = append(found, s)
		}
	}
	rows := tableRows(answer)
	toolCalls := slices.ContainsFunc(turn, func(o memory.Observation) bool { return o.Tool != "" })
	size := len(strings.Join(strings.Fields(prose), " "))
	worth := len(rows) > 0 ||
		len(found) > 0 && size >= minFindingProse ||
		!toolCalls && len(sents) >= 2 && size >= minExplainProse ||
		toolCalls && len(sents) >= 2 && size >= minReportProse
	if !worth {
		return memory.Observation{}, false
	}
	o := memory.Observation{Type: memory.TypeDiscovery, Request: request}
	o.Title = memory.Clip(oneLine(findingTitle(sents, found)), maxTitle)
	for _, s := range found {
		if s != o.Title && len(o.Facts) < maxFacts-len(rows[:min(len(rows), 4)]) {
			o.Facts = append(o.Facts, memory.Clip(oneLine(s), maxFact))
		}
	}
	for _, r := range rows[:min(len(rows), 4)] {
		o.Facts = append(o.Facts, memory.Clip(r, maxFact))
	}
	o.Facts = memory.Dedupe(o.Facts, maxFacts)
	o.Narrative = memory.Clip(strings.TrimSpace(prose), maxTalkNarrative)
	// Its files: those of the turn the answer names, else those the turn
	// changed, which the answer explains.
	if o.FilesRead = filesNamed(answer, turn); len(o.FilesRead) == 0 {
		o.FilesRead = changedIn(turn)
	}
	o.Concepts = memory.Dedupe(append(Concepts(o.FilesRead...), topicWords(o.Title+" "+strings.Join(found, " "), maxConcepts)...), maxConcepts)
	var e evidenceBuf
	e.terms(answer, true)
	o.Evidence = strings.TrimSpace(e.b.String())
	if o.Evidence == "" {
		o.Evidence = memory.Clip(oneLine(answer), 200)
	}
	return o, true
}

// findingTitle picks the sentence that says what was found: the first
// that names a cause, else the first finding, else the first sentence;
// a sentence of a few words ("Found it.") does not say enough.
func findingTitle(sents, found []string) string {
	long := func(s string) bool { return len(s) >= 30 }
	for _, s := range found {
		if long(s) && hasPhrase(strings.ToLower(s), causePhrases) {
			return s
		}
	}
	for _, group := range [][]string{found, sents} {
		if i := slices.IndexFunc(group, long); i >= 0 {
			return group[i]
		}
	}
	return memory.FirstNonEmpty(sents...)
}

// tableRows returns the rows of the markdown tables of text, their cells
// joined by " | ", the header and separator lines left out.
func tableRows(text string) []string {
	if !strings.Contains(text, "|") || !tableSepRE.MatchString(text) {
		return nil
	}
	var out []string
	lines := tableRowRE.FindAllString(text, -1)
	for i, l := range lines {
		if tableSepRE.MatchString(l) || i+1 < len(lines) && tableSepRE.MatchString(lines[i+1]) {
			continue // the separator, and the header above it
		}
		var cells []string
		for _, c := range strings.Split(strings.Trim(strings.TrimSpace(l), "|"), "|") {
			if c = strings.TrimSpace(strings.ReplaceAll(c, "`", "")); c != "" {
				cells = append(cells, c)
			}
		}
		if len(cells) > 0 {
			out = append(out, strings.Join(cells, " | "))
		}
	}
	return out
}

// filesNamed returns the files of the turn that text names, by path or
// by base name.
func filesNamed(text string, turn []memory.Observation) []string {
	var out []string
	for _, o := range turn {
		for _, f := range o.Files() {
			base := f[strings.LastIndexByte(f, '/')+1:]
			if strings.Contains(text, f) || len(base) > 3 && strings.Contains(base, ".") && strings.Contains(text, base) {
				out = append(out, f)
			}
		}
	}
	return memory.Dedupe(out, 8)
}

// changedIn returns the files the turn's records modified.
func changedIn(turn []memory.Observation) []string {
	var out []string
	for _, o := range turn {
		out = append(out, o.FilesModified...)
	}
	return memory.Dedupe(out, 8)
}

// agentChoiceRE matches a sentence in which the agent adopts a choice:
// "I'll keep X rather than Y", "I'll pin X until Y", "I'll use X instead
// of Y", "I've decided to …", "Decision: …".
var agentChoiceRE = regexp.MustCompile(`(?i)(?:\b(?:i'll|i will|i'm going to|i am going to)\s+(?:\w+\s+){0,2}?(?:use|keep|pin|store|switch|go with|stick with|move|stay|turn on|enable|disable|force|leave|make|put|run|hold)\b[^.!?\n]*?\b(?:instead of|rather than|over|until|for now|so that)\b` +
	`|\bi(?:'ve| have)? (?:decided|chose|opted) (?:to|on|for)\b` +
	`|^decision:\s)`)

// agentDecisions makes the decision records of the choices the agent
// adopted in its texts, at most three a turn.
func agentDecisions(ev memory.Event, request string) []memory.Observation {
	var out []memory.Observation
	for _, t := range ev.Texts {
		for _, s := range sentences(stripMarkdown(t.Text)) {
			if len(out) == 3 {
				return out
			}
			if strings.HasSuffix(s, "?") || asksOrHedges(s) || !agentChoiceRE.MatchString(s) {
				continue
			}
			choice := strings.TrimRight(agentLeadRE.ReplaceAllString(s, ""), ".!")
			o := memory.Observation{Type: memory.TypeDecision, Request: request}
			o.Title = memory.Clip("Decision: "+lowerFirst(oneLine(choice)), maxTitle)
			o.Subtitle = memory.Clip(oneLine(s), maxSubtitle)
			o.Facts = []string{"decided: " + memory.Clip(oneLine(s), maxFact)}
			o.Narrative = "The agent adopted a choice: " + memory.Clip(oneLine(t.Text), 600)
			o.Concepts = topicWords(s, 6)
			o.Evidence = memory.Clip(oneLine(s), 240)
			out = append(out, o)
		}
	}
	return out
}

// agentLeadRE is the opening of an agent's choice that its title drops.
var agentLeadRE = regexp.MustCompile(`(?i)^(?:so,? |ok,? |instead,? |then,? )*(?:i'll |i will |i'm going to |i am going to |i(?:'ve| have)? (?:decided|chose|opted) (?:to |on |for )?|decision:\s*)`)

// asksOrHedges reports whether a sentence asks or offers rather than
// states: "if you want, I'll use …", "should I keep …", "you could …".
func asksOrHedges(s string) bool {
	lower := strings.ToLower(s)
	for _, p := range []string{"if you", "if we", "would you", "do you want", "should i", "shall i", "you could", "we could", "i could", "unless you"} {
		if strings.Contains(lower, p) {
			return true
		}
	}
	return false
}
