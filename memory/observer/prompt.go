package observer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mnemo-dev/mnemo/memory"
)

// Caps on what one prompt carries, in characters. A tool's input and its
// output are each cut to MaxFieldChars: 60 % from the head, 30 % from the
// tail and an <elided …/> marker between (the system we replace learned
// this from a single 2 MB tool output).
const (
	MaxFieldChars   = 16000
	maxRequestChars = 2000
	maxMessageChars = 4000
	maxTurnNotes    = 30
)

// systemPrompt is the observer's standing instruction; extra is appended.
func systemPrompt(extra string) string {
	s := strings.TrimSpace(`
You are Mnemo's memory observer. You watch a coding session that runs elsewhere: a person works with a coding agent, and you are shown each tool call that agent made (what it ran, with which input, and what came out). You have no tools and you never act; you only write notes.

Write notes that someone who opens this project next week, or the next agent, learns from: what was found, built, fixed or decided, and why. Record the work, not the watching: "Fixed half-even rounding in billing/rounding.go", never "The agent used Edit" or "I observed a file read".

For each tool call, answer with zero or more <observation> blocks and nothing else:
<observation>
  <type>bugfix | feature | refactor | change | discovery | decision | security_note</type>
  <title>a short title a person would write</title>
  <subtitle>one sentence, at most 24 words</subtitle>
  <facts><fact>one concrete fact: a command and its exit code, an error message, a symbol, a value</fact></facts>
  <narrative>what was done, how it works, why it matters</narrative>
  <concepts><concept>how-it-works</concept></concepts>
  <files_read><file>a path relative to the working directory</file></files_read>
  <files_modified><file>a path relative to the working directory</file></files_modified>
</observation>

Types: bugfix (something broken now works), feature (a new capability), refactor (same behaviour, new shape), change (any other modification: configuration, documentation, dependencies), discovery (how something works or why it fails), decision (a choice between options, with its reason), security_note (a finding that matters for security).
Concepts: two to five of how-it-works, why-it-exists, what-changed, problem-solution, gotcha, pattern, trade-off.

Skip routine calls (status checks, empty listings, installs, a repeat of a call already noted): answer with <skip/> and nothing else. Never answer in prose.

When asked for a progress summary, answer with exactly one <summary> block and nothing else:
<summary>
  <request>what the person asked for</request>
  <investigated>what was looked at</investigated>
  <learned>what was learned about how things work</learned>
  <completed>what is done</completed>
  <next_steps>what is still open, or where the work is heading</next_steps>
  <notes>anything else worth keeping</notes>
</summary>
If the turn did nothing worth a summary, answer <skip_summary reason="why"/> instead.`)
	if extra = strings.TrimSpace(extra); extra != "" {
		s += "\n\n" + extra
	}
	return s
}

// prompt is the user message that asks about one event. fresh says the
// memory session starts with this run: the model has not seen the turn's
// earlier notes, so their titles come along.
func prompt(in memory.AgentInput, ev memory.Event, fresh bool) string {
	var b strings.Builder
	request := capText(strings.TrimSpace(in.Request), maxRequestChars)
	if ev.Kind == memory.EventStop {
		b.WriteString("--- PROGRESS SUMMARY ---\nThe turn below has ended; the session goes on.\n")
		writeTag(&b, "user_request", request)
		if request == "" {
			writeTag(&b, "user_request", capText(strings.TrimSpace(ev.LastUserMessage), maxRequestChars))
		}
		writeNotes(&b, "observations_of_this_turn", in.Turn)
		writeTag(&b, "last_assistant_message", capText(strings.TrimSpace(ev.LastAssistantMessage), maxMessageChars))
		b.WriteString("\nWrite exactly one <summary> block for this turn (next_steps is where the work is heading), " +
			"or <skip_summary reason=\"…\"/>. Nothing else.")
		return b.String()
	}
	b.WriteString("<observed_from_primary_session>\n")
	writeTag(&b, "user_request", request)
	writeTag(&b, "what_happened", ev.ToolName)
	if !ev.Time.IsZero() {
		writeTag(&b, "occurred_at", ev.Time.UTC().Format(time.RFC3339))
	}
	writeTag(&b, "working_directory", ev.Cwd)
	writeTag(&b, "parameters", capText(showJSON(ev.ToolInput), MaxFieldChars))
	writeTag(&b, "outcome", capText(showJSON(ev.ToolResponse), MaxFieldChars))
	b.WriteString("</observed_from_primary_session>\n")
	if fresh {
		writeNotes(&b, "earlier_observations_of_this_turn", in.Turn)
	}
	b.WriteString("\nWrite the <observation> blocks for this tool call, or <skip/> if it is routine.")
	return b.String()
}

func writeTag(b *strings.Builder, tag, text string) {
	if text == "" {
		return
	}
	fmt.Fprintf(b, "<%s>%s</%s>\n", tag, text, tag)
}

// writeNotes lists observations by type and title, the newest maxTurnNotes.
func writeNotes(b *strings.Builder, tag string, notes []memory.Observation) {
	if len(notes) == 0 {
		return
	}
	if len(notes) > maxTurnNotes {
		notes = notes[len(notes)-maxTurnNotes:]
	}
	fmt.Fprintf(b, "<%s>\n", tag)
	for _, o := range notes {
		fmt.Fprintf(b, "- [%s] %s", o.Type, o.Title)
		if files := o.Files(); len(files) > 0 {
			fmt.Fprintf(b, " (%s)", strings.Join(files, ", "))
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(b, "</%s>\n", tag)
}

// showJSON renders a tool's input or output for a reader: a JSON string as
// its text, other JSON indented, anything else as it is.
func showJSON(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	}
	var out bytes.Buffer
	if json.Indent(&out, raw, "", "  ") == nil {
		return out.String()
	}
	return string(raw)
}

// capText keeps s whole up to max characters; a longer s keeps its first
// 60 % and last 30 % of max around a marker naming what was cut.
func capText(s string, max int) string {
	if len(s) <= max || utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	head, tail := max*6/10, max*3/10
	return fmt.Sprintf("%s\n<elided chars=\"%d\" original_size_chars=\"%d\" reason=\"oversize\" />\n%s",
		string(r[:head]), len(r)-head-tail, len(r), string(r[len(r)-tail:]))
}
