package memory

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// How a record reads, the same wherever it is shown: the CLI's listings
// and records (mnemo search, timeline, get) and the MCP tools' results.

// Markdown renders the observation whole, as readable markdown: what it
// says, what became of it, and what it said before a correction.
func (o *Observation) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "## #%d · %s · %s\n", o.ID, orDash(o.Type), orDash(o.Title))
	fmt.Fprintf(&b, "%s · project %s", fmtTime(o.Time), orDash(o.Project))
	if o.ContentSessionID != "" {
		fmt.Fprintf(&b, " · session %s, prompt %d", o.ContentSessionID, o.PromptNumber)
	}
	switch {
	case o.Source == SourceSaved && o.SavedBy == SavedByPerson:
		b.WriteString(" · saved by a person")
	case o.Source == SourceSaved:
		b.WriteString(" · saved by the agent")
	}
	if o.Pinned {
		b.WriteString(" · pinned")
	}
	if o.Kept != nil {
		b.WriteString(" · kept by a person " + fmtTime(o.Kept.Time))
	}
	switch o.State {
	case StateChanged:
		b.WriteString(" · changed: its file changed since, what it wrote is still there")
	case StateReview:
		fmt.Fprintf(&b, " · needs review: its file changed since, nothing confirmed it since %s (mnemo keep, correct or forget)", fmtTime(o.Confirmed()))
	case StateGone:
		b.WriteString(" · gone: what it saw is no longer in the code")
	case StateReverted:
		fmt.Fprintf(&b, " · reverted: undone in its session (#%d)", o.Reverted)
	case StateSuperseded:
		fmt.Fprintf(&b, " · superseded by #%d: a later observation says what is true now", o.SupersededBy)
	case StateWrong:
		b.WriteString(" · marked wrong by a person: not a fact")
	}
	if len(o.Supersedes) > 0 {
		b.WriteString(" · supersedes " + hashList(o.Supersedes))
	}
	if o.Count > 1 {
		fmt.Fprintf(&b, " · seen %d times, last %s", o.Count, fmtTime(o.LastTime()))
	}
	b.WriteString("\n")
	if o.Subtitle != "" {
		fmt.Fprintf(&b, "%s\n", o.Subtitle)
	}
	if o.Request != "" {
		fmt.Fprintf(&b, "Request: %s\n", o.Request)
	}
	if o.Narrative != "" {
		fmt.Fprintf(&b, "\n%s\n", strings.TrimRight(o.Narrative, "\n"))
	}
	if len(o.Facts) > 0 {
		b.WriteString("\nFacts:\n")
		for _, f := range o.Facts {
			fmt.Fprintf(&b, "- %s\n", f)
		}
	}
	for _, l := range []struct {
		label string
		items []string
	}{{"Files modified", o.FilesModified}, {"Files read", o.FilesRead}, {"Concepts", o.Concepts}} {
		if len(l.items) > 0 {
			fmt.Fprintf(&b, "%s: %s\n", l.label, strings.Join(l.items, ", "))
		}
	}
	if o.Evidence != "" {
		if strings.Contains("\n"+o.Evidence, "\nbefore: ") {
			b.WriteString("\nEvidence (from the event; before: the failure it fixed):\n")
		} else {
			b.WriteString("\nEvidence (from the event):\n")
		}
		for l := range strings.Lines(strings.TrimRight(o.Evidence, "\n")) {
			fmt.Fprintf(&b, "  %s", l)
		}
		b.WriteString("\n")
	}
	if len(o.Edits) > 0 {
		fmt.Fprintf(&b, "\nCorrected %s; what it said before, newest first:\n", Count(len(o.Edits), "time", "times"))
		for i := len(o.Edits) - 1; i >= 0; i-- {
			e := o.Edits[i]
			fmt.Fprintf(&b, "- until %s: %s\n", fmtTime(e.Time), orDash(e.Title))
			for _, text := range append([]string{e.Subtitle, e.Narrative}, e.Facts...) {
				for l := range strings.Lines(strings.TrimRight(text, "\n")) {
					fmt.Fprintf(&b, "  %s", strings.TrimRight(l, "\n")+"\n")
				}
			}
		}
	}
	return b.String()
}

// StateMark marks a record whose code changed or is gone since, in a
// one-line listing.
func StateMark(state string) string {
	switch state {
	case StateChanged:
		return " [changed since]"
	case StateReview:
		return " [needs review]"
	case StateGone:
		return " [gone]"
	case StateReverted:
		return " [reverted]"
	case StateWrong:
		return " [marked wrong]"
	case StateSuperseded:
		return " [superseded]"
	}
	return ""
}

// SeenMark says, after a row, how many times the same fact was seen and
// when last ("" when once).
func SeenMark(count int, last time.Time) string {
	if count <= 1 {
		return ""
	}
	return fmt.Sprintf(" (seen %d×, last %s)", count, fmtTime(last))
}

// fmtTime is a record's time as it reads in a listing: local, to the
// minute.
func fmtTime(t time.Time) string { return t.Local().Format("2006-01-02 15:04") }

func orDash(s string) string {
	if strings.TrimSpace(s) == "" {
		return "-"
	}
	return s
}

func hashList(ids []uint64) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = "#" + strconv.FormatUint(id, 10)
	}
	return strings.Join(parts, ", ")
}
