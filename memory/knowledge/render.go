package knowledge

import (
	"fmt"
	"strings"

	"github.com/mnemo-dev/mnemo/memory"
)

// The block's headings, by kind of line.
var headings = map[string]string{
	memory.KnowledgeCommand:  "How to work here:",
	memory.KnowledgeFailure:  "What keeps failing, and what fixed it:",
	memory.KnowledgeTogether: "Files that change together:",
	memory.KnowledgeHot:      "Changed most lately:",
	memory.KnowledgeDecision: "Decisions in force:",
}

// Heading is the heading a kind of line is shown under.
func Heading(kind string) string { return headings[kind] }

// BlockHead begins the context's block of project knowledge.
const BlockHead = "\n## Project knowledge (added up from the records; ids in brackets)\n"

// shownIDs is how many of a line's ids the block shows.
const shownIDs = 3

// Row is a line as the block shows it: its text and its first ids.
func Row(l memory.KnowledgeLine) string {
	var b strings.Builder
	b.WriteString("- ")
	b.WriteString(l.Text)
	if len(l.IDs) > 0 {
		b.WriteString(" [")
		for i, id := range l.IDs[:min(len(l.IDs), shownIDs)] {
			if i > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprintf(&b, "#%d", id)
		}
		if len(l.IDs) > shownIDs {
			fmt.Fprintf(&b, " +%d", len(l.IDs)-shownIDs)
		}
		b.WriteByte(']')
	}
	b.WriteByte('\n')
	return b.String()
}

// Render writes lines (in the order of memory.KnowledgeKinds, as
// Builder.Knowledge gives them) as the context's block, within budget
// bytes: a line that does not fit is left out, a shorter later one may
// still fit. It returns the block ("" when no line fits) and the lines
// it holds.
func Render(lines []memory.KnowledgeLine, budget int) (string, []memory.KnowledgeLine) {
	var b strings.Builder
	var shown []memory.KnowledgeLine
	used := len(BlockHead)
	kind := ""
	for _, l := range lines {
		row := Row(l)
		head := ""
		if l.Kind != kind {
			head = Heading(l.Kind) + "\n"
		}
		if used+len(head)+len(row) > budget {
			continue
		}
		if head != "" {
			b.WriteString(head)
			kind = l.Kind
		}
		b.WriteString(row)
		used += len(head) + len(row)
		shown = append(shown, l)
	}
	if len(shown) == 0 {
		return "", nil
	}
	return BlockHead + b.String(), shown
}

// Said reports whether instructions (a project's CLAUDE.md or AGENTS.md,
// Mnemo's own block taken out) already say what line is about: its key,
// spaces and case aside. A command's line is said when the command is;
// a decision's when its words are.
func Said(instructions string, l memory.KnowledgeLine) bool {
	key := squash(l.Key)
	if instructions == "" || len(key) < 3 {
		return false
	}
	return strings.Contains(squash(instructions), key)
}

func squash(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }
