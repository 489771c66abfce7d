// Package privacy keeps what must not be remembered out of Mnemo's memory.
//
// It has three layers, each a pure function on text:
//
//   - Strip removes the tags that mark text as private or as Mnemo's own
//     injected context, with their content: <private>, <mnemo-context>,
//     <system-reminder>, <system_instruction>, <system-instruction>,
//     <persisted-output> and Gemini CLI's <hook_context>.
//   - Redact replaces values that look like keys, tokens, passwords and
//     private keys with a [REDACTED:<kind>] marker.
//   - Clean does both, in that order; it is what storage applies to every
//     prompt, tool input, tool output and assistant message. CleanJSON
//     applies Clean to every string inside a JSON document.
//
// All of them run in time linear in the input, whatever the input: they
// are hand-written single-pass scanners, with no regular expression to
// backtrack and nothing to compile at start-up. privacy imports only the
// standard library, because the Claude Code hook binary links it and must
// start in milliseconds.
//
// A prompt for which IsFullyPrivate reports true stores nothing for its
// turn: not the prompt, not its tool observations, not its summary.
package privacy

import (
	"slices"
	"strings"
)

// WarnTags is the number of removed tags above which callers log a warning:
// Strip still removes every tag, in linear time, but a text with more than
// WarnTags of them is unusual enough (a loop feeding Mnemo its own context,
// a hostile input) to be worth a line in the log.
//
//	clean, n := privacy.Strip(prompt)
//	if n > privacy.WarnTags {
//		slog.Warn("many private tags stripped", "tags", n)
//	}
const WarnTags = 100

// DefaultSkipTools lists the tools whose calls are not recorded unless the
// user configures otherwise: they carry bookkeeping, not work.
var DefaultSkipTools = []string{"ListMcpResourcesTool", "SlashCommand", "Skill", "TodoWrite", "AskUserQuestion"}

// Skipped reports whether calls of tool are not recorded, given the skip
// list (DefaultSkipTools unless configured). Names match exactly, as Claude
// Code spells them.
func Skipped(tool string, skip []string) bool {
	return slices.Contains(skip, tool)
}

// Clean returns s with its private tags stripped and its secrets redacted:
// Strip, then Redact. It is what storage applies to text.
func Clean(s string) string {
	s, _ = Strip(s)
	s, _ = Redact(s)
	return s
}

// IsFullyPrivate reports whether s is non-blank and nothing but whitespace
// remains after Strip: the whole prompt was private, so nothing of its turn
// is stored.
func IsFullyPrivate(s string) bool {
	if strings.TrimSpace(s) == "" {
		return false
	}
	clean, _ := Strip(s)
	return strings.TrimSpace(clean) == ""
}
