package memory

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// ContextTag wraps everything Mnemo injects, so that Mnemo never stores
// its own output again (the privacy rules strip it at entry).
const ContextTag = "mnemo-context"

// Injection is the audit record of one context injection: what went in
// and why.
type Injection struct {
	ID               uint64          `json:"id"`
	Time             time.Time       `json:"time"`
	ContentSessionID string          `json:"contentSessionId,omitempty"`
	Project          string          `json:"project"`
	Source           string          `json:"source,omitempty"`
	Bytes            int             `json:"bytes"`
	Items            []InjectionItem `json:"items"`
}

// InjectionItem is one observation that went into a context.
type InjectionItem struct {
	ID     uint64 `json:"id"`
	Reason string `json:"reason"`
}

// Context returns what SessionStart would inject for a project, without
// creating a session or recording an injection.
func (m *Memory) Context(ctx context.Context, p ContextParams) (ContextResult, error) {
	if err := p.Validate(); err != nil {
		return ContextResult{}, err
	}
	return m.buildContext(ctx, m.project(p.Project, p.Cwd), p.Cwd, "", "")
}

// buildContext makes the compact, size-budgeted index of a project's
// memory: the last summary, then the most recent observations, one line
// each, with the ids to fetch more. When csid is set the injection is
// recorded.
func (m *Memory) buildContext(ctx context.Context, project, cwd, csid, source string) (ContextResult, error) {
	res := ContextResult{Project: project, ObservationIDs: []uint64{}}
	budget := m.opts.ContextBytes
	var (
		head strings.Builder
		rows []string
		inj  = Injection{ContentSessionID: csid, Project: project, Source: source}
	)
	fmt.Fprintf(&head, "<%s project=%q>\n# Memory of %s\n", ContextTag, project, project)
	err := m.store.view(func(txn *badger.Txn) error {
		sum, err := m.lastSummary(txn, project)
		if err != nil {
			return err
		}
		if sum != nil {
			fmt.Fprintf(&head, "\n## Last session (%s)\n", fmtTime(sum.Time))
			for _, f := range []struct{ label, text string }{
				{"Request", sum.Request}, {"Completed", sum.Completed}, {"Learned", sum.Learned},
				{"Next steps", sum.NextSteps},
			} {
				if t := strings.TrimSpace(f.text); t != "" {
					fmt.Fprintf(&head, "- %s: %s\n", f.label, clip(strings.ReplaceAll(t, "\n", " "), 300))
				}
			}
			if len(sum.FilesModified) > 0 {
				fmt.Fprintf(&head, "- Files modified: %s\n", clip(strings.Join(sum.FilesModified, ", "), 300))
			}
		}
		return nil
	})
	if err != nil {
		return res, fmt.Errorf("build context: %w", err)
	}
	const footer = "\nFetch details with the mnemo search, timeline and get tools (or `mnemo get <id>`).\n"
	closing := "</" + ContextTag + ">\n"
	used := head.Len() + len("\n## Recent observations (id · time · type · title)\n") + len(footer) + len(closing)
	seen := map[string]bool{}
	err = m.eachObservation(ctx, project, func(o *Observation) error {
		title := strings.TrimSpace(o.Title)
		if title == "" || seen[title] {
			return nil
		}
		row := fmt.Sprintf("- #%d · %s · %s · %s", o.ID, fmtTime(o.Time), o.Type, clip(title, 140))
		if files := o.Files(); len(files) > 0 && !strings.Contains(title, files[0]) {
			row += " (" + clip(strings.Join(files, ", "), 80) + ")"
		}
		row += "\n"
		if used+len(row) > budget {
			return errStop
		}
		seen[title] = true
		used += len(row)
		rows = append(rows, row)
		res.ObservationIDs = append(res.ObservationIDs, o.ID)
		inj.Items = append(inj.Items, InjectionItem{ID: o.ID, Reason: "recent in project"})
		return nil
	})
	if err != nil {
		return res, fmt.Errorf("build context: %w", err)
	}
	var b strings.Builder
	b.WriteString(head.String())
	if len(rows) > 0 {
		b.WriteString("\n## Recent observations (id · time · type · title)\n")
		for _, r := range rows {
			b.WriteString(r)
		}
	} else if !strings.Contains(head.String(), "## Last session") {
		b.WriteString("\nNo memories for this project yet.\n")
	}
	b.WriteString(footer)
	b.WriteString(closing)
	res.Context = b.String()
	res.Bytes = len(res.Context)
	if csid != "" {
		inj.Time, inj.Bytes = m.now(), res.Bytes
		if err := m.recordInjection(ctx, &inj); err != nil {
			m.log.Warn("record context injection", "err", err)
		}
	}
	return res, nil
}

func (m *Memory) recordInjection(ctx context.Context, inj *Injection) error {
	id, err := m.store.next("audit")
	if err != nil {
		return err
	}
	inj.ID = id
	return m.store.update(ctx, func(txn *badger.Txn) error { return setJSON(txn, idKey(pAudit, id), inj) })
}

// Injections returns the newest n context injections, newest first.
func (m *Memory) Injections(ctx context.Context, n int) ([]Injection, error) {
	var out []Injection
	err := m.store.view(func(txn *badger.Txn) error {
		return scan(txn, pAudit, true, func(item *badger.Item) error {
			var inj Injection
			if err := getJSON(txn, item.KeyCopy(nil), &inj); err != nil {
				return err
			}
			out = append(out, inj)
			if len(out) >= n {
				return errStop
			}
			return nil
		})
	})
	return out, err
}
