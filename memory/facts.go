package memory

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"
)

// The same fact seen again: the same file read whole while it holds the
// same bytes, the same command run with the same outcome, the same search
// finding the same. It is folded into the record that first said it (the
// store keeps one record with a count and the latest time) instead of
// being stored once more per session.
//
// "The same" is read strictly. Two observations are the same fact when
// everything they say is the same: project, type, tool, title, subtitle,
// narrative, facts, files read, evidence, and what they saw of their files
// (the content hash of each anchor). Only the time a command took may
// differ ("ok pkg 1.02s"). What is never a repeated fact: an edit or
// anything that modified a file (two edits are two events, even when they
// write the same text), a decision, a note saved on purpose, a record
// without a tool.

// FactKey identifies what o says, whoever made it and whenever: two
// observations with the same key are the same fact. It is "" when o is
// not a fact that repeats (see above).
func (o *Observation) FactKey() string {
	if o.Tool == "" || len(o.FilesModified) > 0 || o.Anchor != nil || o.Source == SourceSaved ||
		o.Type == TypeDecision || o.Type == TypeNote || o.Title == "" {
		return ""
	}
	norm := func(s string) string { return s }
	if o.ranCommand() {
		norm = stripDurations
	}
	h := sha256.New()
	fmt.Fprintf(h, "fact1\x00%s\x00%s\x00%s\x00%s\x00%s\x00%s\x00", o.Project, o.Type, o.Tool, norm(o.Title), norm(o.Subtitle), norm(o.Narrative))
	for _, part := range [][]string{o.Facts, o.FilesRead} {
		for _, s := range part {
			fmt.Fprintf(h, "%s\x01", norm(s))
		}
		h.Write([]byte{0})
	}
	fmt.Fprintf(h, "%s\x00", norm(o.Evidence))
	for _, a := range o.FileAnchors {
		fmt.Fprintf(h, "%s\x01%s\x01%s\x00", a.File, a.Hash, a.Blob)
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// ranCommand reports whether o is the observation of a command run (its
// facts name the command: "$ go test ./...").
func (o *Observation) ranCommand() bool {
	for _, f := range o.Facts {
		if strings.HasPrefix(f, "$ ") {
			return true
		}
	}
	return false
}

// stripDurations replaces the times in a command's output, which differ
// from run to run of the same command with the same outcome: how long
// something took, as test runners and build tools print it ("1.021s",
// "(0.00s)", "in 0.12s", "Time: 1.234 s", "35ms"), a number (with a
// fraction or not) that starts a word (not "v1.2s"), then at most one
// space and a unit that ends one. A scan, not a regular expression: it runs on every
// command's evidence.
func stripDurations(s string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) || i > 0 && (isWordByte(s[i-1]) || s[i-1] == '.') {
			continue
		}
		j := i
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		if j+1 < len(s) && s[j] == '.' && isDigit(s[j+1]) {
			for j++; j < len(s) && isDigit(s[j]); j++ {
			}
		}
		k := j
		if k < len(s) && s[k] == ' ' {
			k++
		}
		end := -1
		for _, unit := range durationUnits {
			if strings.HasPrefix(s[k:], unit) && (k+len(unit) == len(s) || !isWordByte(s[k+len(unit)])) {
				end = k + len(unit)
				break
			}
		}
		if end < 0 {
			i = j - 1
			continue
		}
		b.WriteString(s[last:i])
		b.WriteString("#t")
		last, i = end, end-1
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// durationUnits are the units stripDurations knows, longer first.
var durationUnits = []string{"seconds", "secs", "sec", "ns", "µs", "us", "ms", "s"}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// isWordByte reports whether c is part of a word, as \b sees words (and
// any byte of a multi-byte character).
func isWordByte(c byte) bool {
	return isDigit(c) || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' || c >= 0x80
}

// Seen is the number of times o was seen (Count, at least 1).
func (o *Observation) Seen() int { return max(o.Count, 1) }

// LastTime is when o was last seen: LastSeen, or its time.
func (o *Observation) LastTime() time.Time {
	if o.LastSeen.After(o.Time) {
		return o.LastSeen
	}
	return o.Time
}

// Fold counts again, into o, the observation seen that says the same
// (FactKey): its count adds up, the latest time is kept.
func (o *Observation) Fold(again *Observation) {
	last := o.LastTime()
	if t := again.LastTime(); t.After(last) {
		last = t
	}
	o.Count = o.Seen() + again.Seen()
	if last.After(o.Time) {
		o.LastSeen = last
	}
}
