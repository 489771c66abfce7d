package store

import (
	"bufio"
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/dgraph-io/badger/v4"

	"github.com/mnemo-dev/mnemo/memory"
)

// ExportMarkdown writes a readable document per project: its sessions,
// newest first, each with its prompts and, under each prompt, the
// observations and the summary of its turn; then the notes saved outside
// any session. It is for people and version control; JSON lines (Export)
// stay the lossless format. project, when set, keeps that project only.
// write stores a project's document: it calls fill with the writer to fill,
// and keeps what fill wrote only when fill returns nil. It returns the
// number of records written.
//
// One project is read at a time, one session at a time (its prompts,
// observations and summaries from their indexes), so memory stays bounded
// by the largest session, not the store.
func (m *Memory) ExportMarkdown(ctx context.Context, project string, write func(project string, fill func(io.Writer) error) error) (int, error) {
	byProject := map[string][]memory.Session{}
	err := m.store.view(func(txn *badger.Txn) error {
		return scan(txn, pSession, false, func(item *badger.Item) error {
			var s memory.Session
			if err := item.Value(func(b []byte) error { return unmarshalValue(b, &s) }); err != nil {
				return err
			}
			if project == "" || s.Project == project {
				byProject[s.Project] = append(byProject[s.Project], s)
			}
			return nil
		})
	})
	if err != nil {
		return 0, fmt.Errorf("export markdown: %w", err)
	}
	if project != "" {
		// A project with saved notes only has no sessions.
		if _, ok := byProject[project]; !ok {
			byProject[project] = nil
		}
	}
	projects := make([]string, 0, len(byProject))
	for p := range byProject {
		projects = append(projects, p)
	}
	slices.Sort(projects)
	n := 0
	for _, p := range projects {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		err := write(p, func(w io.Writer) error {
			k, err := m.writeProjectMarkdown(ctx, w, p, byProject[p])
			n += k
			return err
		})
		if err != nil {
			return n, fmt.Errorf("export markdown %s: %w", p, err)
		}
	}
	return n, nil
}

// writeProjectMarkdown writes one project's document.
func (m *Memory) writeProjectMarkdown(ctx context.Context, out io.Writer, project string, sessions []memory.Session) (int, error) {
	slices.SortFunc(sessions, func(a, b memory.Session) int {
		return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), cmp.Compare(b.ID, a.ID))
	})
	w := bufio.NewWriter(out)
	n := len(sessions)
	fmt.Fprintf(w, "# Memory of %s\n\n", project)
	// No time of export: the same memory makes the same document, so that
	// a document under version control changes only with the memory.
	fmt.Fprintf(w, "Written by `mnemo export --format markdown`: %s, newest first, each prompt\n", memory.Count(len(sessions), "session", "sessions"))
	fmt.Fprintf(w, "followed by what was remembered of its turn. `mnemo export` (JSON lines) is the\nlossless format.\n")

	summaries, err := m.projectSummaries(project)
	if err != nil {
		return n, err
	}
	for _, s := range sessions {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		var (
			prompts []memory.Prompt
			obs     []memory.Observation
		)
		err := m.store.view(func(txn *badger.Txn) error {
			if err := scan(txn, idKey(pPrompt, s.ID), false, func(item *badger.Item) error {
				var p memory.Prompt
				if err := item.Value(func(b []byte) error { return unmarshalValue(b, &p) }); err != nil {
					return err
				}
				prompts = append(prompts, p)
				return nil
			}); err != nil {
				return err
			}
			var err error
			obs, err = m.store.sessionObservations(txn, s.ID, -1)
			return err
		})
		if err != nil {
			return n, err
		}
		sums := summaries[s.ID]
		n += len(prompts) + len(obs) + len(sums)
		writeSessionMarkdown(w, &s, prompts, obs, sums)
	}

	// Notes saved outside a session (mnemo/save without one).
	var saved []memory.Observation
	err = m.store.view(func(txn *badger.Txn) error {
		return scan(txn, key(pObsProject, []byte(project), []byte{0}), true, func(item *badger.Item) error {
			k := item.Key()
			o, err := m.store.observation(txn, binary.BigEndian.Uint64(k[len(k)-8:]))
			if err != nil {
				return err
			}
			if o.SessionID == 0 {
				saved = append(saved, *o)
			}
			return nil
		})
	})
	if err != nil {
		return n, err
	}
	if len(saved) > 0 {
		fmt.Fprintf(w, "\n## Saved notes\n")
		for i := range saved {
			writeObservationMarkdown(w, &saved[i])
		}
		n += len(saved)
	}
	return n, w.Flush()
}

// projectSummaries returns a project's summaries by session, oldest first.
func (m *Memory) projectSummaries(project string) (map[uint64][]memory.Summary, error) {
	out := map[uint64][]memory.Summary{}
	err := m.store.view(func(txn *badger.Txn) error {
		return scan(txn, key(pSumProject, []byte(project), []byte{0}), false, func(item *badger.Item) error {
			k := item.Key()
			var s memory.Summary
			if err := getJSON(txn, idKey(pSummary, binary.BigEndian.Uint64(k[len(k)-8:])), &s); err != nil {
				return err
			}
			out[s.SessionID] = append(out[s.SessionID], s)
			return nil
		})
	})
	return out, err
}

// writeSessionMarkdown writes a session: its heading, then each prompt
// with its turn's observations and summary; observations and summaries of
// no prompt (an editor's saves) come first.
func writeSessionMarkdown(w *bufio.Writer, s *memory.Session, prompts []memory.Prompt, obs []memory.Observation, sums []memory.Summary) {
	host := cmp.Or(s.Platform, "unknown host")
	fmt.Fprintf(w, "\n## %s · %s · %s\n\n", s.CreatedAt.UTC().Format("2006-01-02 15:04"), host, s.ContentSessionID)
	fmt.Fprintf(w, "Status %s, %s", s.Status, memory.Count(s.PromptCounter, "prompt", "prompts"))
	if !s.CompletedAt.IsZero() {
		fmt.Fprintf(w, ", completed %s", s.CompletedAt.UTC().Format("2006-01-02 15:04"))
	}
	fmt.Fprintf(w, ".\n")
	turn := func(number int) {
		for i := range obs {
			if obs[i].PromptNumber == number {
				writeObservationMarkdown(w, &obs[i])
			}
		}
		for i := range sums {
			if sums[i].PromptNumber == number {
				writeSummaryMarkdown(w, &sums[i])
			}
		}
	}
	known := map[int]bool{}
	for _, p := range prompts {
		known[p.Number] = true
	}
	// What belongs to no stored prompt: an editor's events, a private
	// turn's (nothing), a prompt older than the store.
	var orphans []int
	for _, o := range obs {
		if !known[o.PromptNumber] && !slices.Contains(orphans, o.PromptNumber) {
			orphans = append(orphans, o.PromptNumber)
		}
	}
	for _, s := range sums {
		if !known[s.PromptNumber] && !slices.Contains(orphans, s.PromptNumber) {
			orphans = append(orphans, s.PromptNumber)
		}
	}
	slices.Sort(orphans)
	for _, number := range orphans {
		turn(number)
	}
	for _, p := range prompts {
		fmt.Fprintf(w, "\n### Prompt %d, %s\n\n", p.Number, p.Time.UTC().Format("15:04"))
		writeQuoted(w, p.Text)
		turn(p.Number)
	}
}

// writeObservationMarkdown writes one observation as a list item with its
// details indented under it.
func writeObservationMarkdown(w *bufio.Writer, o *memory.Observation) {
	fmt.Fprintf(w, "\n- **%s** #%d · %s", o.Type, o.ID, oneLineMD(o.Title))
	if o.SupersededBy != 0 {
		fmt.Fprintf(w, " · superseded by #%d", o.SupersededBy)
	}
	if o.Count > 1 {
		fmt.Fprintf(w, " · seen %d times, last %s", o.Count, fmtTime(o.LastTime()))
	}
	fmt.Fprintf(w, "\n")
	if o.Subtitle != "" {
		fmt.Fprintf(w, "  %s\n", oneLineMD(o.Subtitle))
	}
	if o.Narrative != "" {
		fmt.Fprintf(w, "\n  %s\n", strings.ReplaceAll(strings.TrimSpace(o.Narrative), "\n", "\n  "))
	}
	if len(o.Facts) > 0 {
		fmt.Fprintf(w, "\n")
		for _, f := range o.Facts {
			fmt.Fprintf(w, "  - %s\n", oneLineMD(f))
		}
	}
	if len(o.FilesRead) > 0 {
		fmt.Fprintf(w, "\n  Read: %s\n", codeList(o.FilesRead))
	}
	if len(o.FilesModified) > 0 {
		fmt.Fprintf(w, "\n  Modified: %s\n", codeList(o.FilesModified))
	}
}

// writeSummaryMarkdown writes a turn's summary.
func writeSummaryMarkdown(w *bufio.Writer, s *memory.Summary) {
	fmt.Fprintf(w, "\n**Summary of the turn**\n\n")
	for _, f := range []struct{ label, text string }{
		{"Request", s.Request}, {"Investigated", s.Investigated}, {"Learned", s.Learned},
		{"Completed", s.Completed}, {"Next steps", s.NextSteps}, {"Notes", s.Notes},
	} {
		if t := strings.TrimSpace(f.text); t != "" {
			fmt.Fprintf(w, "- %s: %s\n", f.label, oneLineMD(t))
		}
	}
	if len(s.FilesModified) > 0 {
		fmt.Fprintf(w, "- Files modified: %s\n", codeList(s.FilesModified))
	}
}

// writeQuoted writes text as a block quote, line by line.
func writeQuoted(w *bufio.Writer, text string) {
	text = strings.TrimSpace(text)
	if text == "" {
		text = "(no text)"
	}
	for line := range strings.SplitSeq(text, "\n") {
		fmt.Fprintf(w, "> %s\n", strings.TrimRight(line, " \t\r"))
	}
}

// oneLineMD puts text on one line, so that it cannot start a heading or
// end the list item it is in.
func oneLineMD(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// codeList writes paths as code spans, comma-separated.
func codeList(paths []string) string {
	quoted := make([]string, len(paths))
	for i, p := range paths {
		quoted[i] = "`" + strings.ReplaceAll(p, "`", "'") + "`"
	}
	return strings.Join(quoted, ", ")
}
