package store

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/dgraph-io/badger/v4"
	"github.com/mnemo-dev/mnemo/memory"
)

// Context returns what SessionStart would inject for a project, without
// creating a session or recording an injection.
func (m *Memory) Context(ctx context.Context, p memory.ContextParams) (memory.ContextResult, error) {
	if err := p.Validate(); err != nil {
		return memory.ContextResult{}, err
	}
	return m.buildContext(ctx, m.project(p.Project, p.Cwd), p.Cwd, "", "")
}

// InjectionsOf returns the newest context injections (of one project when
// p.Project is set), newest first.
func (m *Memory) InjectionsOf(ctx context.Context, p memory.InjectionsParams) (memory.InjectionsResult, error) {
	if err := p.Validate(); err != nil {
		return memory.InjectionsResult{}, err
	}
	injections, err := m.injections(p.Project, cmp.Or(p.Limit, 20))
	res := memory.InjectionsResult{Injections: injections}
	if res.Injections == nil {
		res.Injections = []memory.Injection{}
	}
	if err != nil {
		return memory.InjectionsResult{}, fmt.Errorf("injections: %w", err)
	}
	return res, nil
}

// Context selection: the newest contextPool observations of the project
// are scored, the best fill the budget, and they are listed newest first.
const contextPool = 200

// typeWeight says how much an observation of each type is worth
// re-reading at the start of a session: what changed and why beats what
// was looked at.
var typeWeight = map[string]float64{
	memory.TypeBugfix: 1, memory.TypeDecision: 1, memory.TypeSecurity: 1, memory.TypeNote: 1, memory.TypeFeature: 0.9,
	memory.TypeRefactor: 0.8, memory.TypeChange: 0.7, memory.TypeDiscovery: 0.45,
}

// candidate is an observation considered for the context, with its score
// and the reasons for it.
type candidate struct {
	o       memory.Observation
	score   float64
	reasons []string
}

// scoreContext scores observations (newest first) for a session in cwd:
// recency (by rank), the worth of the type, files modified in the last
// summary's turn, and files under the working directory.
func scoreContext(obs []memory.Observation, recent map[string]bool, under string) []candidate {
	out := make([]candidate, 0, len(obs))
	for rank, o := range obs {
		c := candidate{o: o}
		recency := 1 / (1 + float64(rank)/20)
		w, ok := typeWeight[o.Type]
		if !ok {
			w = 0.7
		}
		if o.Source == memory.SourceSaved {
			w *= 1.2
			c.reasons = append(c.reasons, "saved on purpose")
		}
		c.score = recency * w
		c.reasons = append(c.reasons, fmt.Sprintf("%s, %s newest", o.Type, ordinal(rank+1)))
		for _, f := range o.Files() {
			if recent[f] {
				c.score += 0.5
				c.reasons = append(c.reasons, "touches "+f+", modified in the last session")
				break
			}
		}
		if under != "" {
			for _, f := range o.Files() {
				if strings.HasPrefix(f, under+"/") {
					c.score += 0.3
					c.reasons = append(c.reasons, "under the working directory "+under)
					break
				}
			}
		}
		out = append(out, c)
	}
	slices.SortStableFunc(out, func(a, b candidate) int { return cmp.Compare(b.score, a.score) })
	return out
}

// What was learned and decided leads the context: the newest
// contextLearnedScan learned records of the project (their own index, so
// that no later session's tool work pushes them out) fill up to
// contextLearnedShare of the budget, each with an excerpt of its text.
const (
	contextLearnedScan  = 60
	contextLearnedShare = 0.5
	contextExcerpt      = 240 // bytes of a learned record's text on its row
	// contextPromptScan bounds how many prompt records (memory.TypePrompt,
	// never given) the context's scan of the recent work passes over.
	contextPromptScan = 1000
)

// buildContext makes the compact, size-budgeted index of a project's
// memory: its pinned observations (whatever their age, only the budget
// leaves one out), what was learned and decided (decisions, findings of
// the conversation, memories saved on purpose: the newest, each with an
// excerpt of its text), the last summary, then the most useful recent
// work, one line each, with the ids to fetch more. Reads, searches and
// listings are not given: the agent can look again, and they crowded out
// what was learned. When csid is set the injection is recorded with the
// reason for each observation.
func (m *Memory) buildContext(ctx context.Context, project, cwd, csid, source string) (memory.ContextResult, error) {
	res := memory.ContextResult{Project: project, ObservationIDs: []uint64{}}
	budget := m.opts.ContextBytes
	var (
		head    strings.Builder
		inj     = memory.Injection{ContentSessionID: csid, Project: project, Source: source}
		recent  = map[string]bool{}
		pins    []memory.Observation
		learnts []memory.Observation
		sum     *memory.Summary
		known   *memory.Knowledge // the project's knowledge, as last derived
	)
	top := fmt.Sprintf("<%s project=%q>\n# Memory of %s\n", memory.ContextTag, project, project)
	err := m.store.view(func(txn *badger.Txn) error {
		ids, err := m.store.pinned(txn, project)
		if err != nil {
			return err
		}
		for _, id := range ids {
			o, err := m.store.observation(txn, id)
			if errors.Is(err, memory.ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			pins = append(pins, *o)
		}
		if ids, err = m.store.learnedIDs(txn, project, contextLearnedScan); err != nil {
			return err
		}
		for _, id := range ids {
			o, err := m.store.observation(txn, id)
			if errors.Is(err, memory.ErrNotFound) {
				continue // an index key an older Mnemo's forget left
			}
			if err != nil {
				return err
			}
			learnts = append(learnts, *o)
		}
		if known, err = storedKnowledge(txn, project); err != nil {
			return err
		}
		sum, err = m.lastSummary(txn, project)
		return err
	})
	if err != nil {
		return res, fmt.Errorf("build context: %w", err)
	}
	var (
		pool []memory.Observation
		turn []*memory.Observation // the last summary's turn, of those read
	)
	seen := map[string]bool{}
	looks := 0   // reads, searches and listings left out
	prompts := 0 // prompts kept as records, left out
	isLearnt := map[uint64]bool{}
	for _, o := range learnts {
		isLearnt[o.ID] = true
	}
	isPinned := map[uint64]bool{}
	for _, o := range pins {
		isPinned[o.ID] = true
	}
	replaced := replacedRuns(known)
	err = m.eachObservation(ctx, project, func(o *memory.Observation) error {
		if sum != nil && o.SessionID == sum.SessionID && o.PromptNumber == sum.PromptNumber && o.SessionID != 0 {
			turn = append(turn, o)
		}
		title := strings.TrimSpace(o.Title)
		if title == "" || seen[title] || isPinned[o.ID] || isLearnt[o.ID] {
			// The newest of the same title stands for all; what was
			// learned has its own section (a record older than its index
			// competes here).
			return nil
		}
		// A dead end is not given as a fact (its files are checked below,
		// for the candidates that would be given).
		if o.Reverted != 0 || o.Wrong || o.SupersededBy != 0 {
			o.State = m.anchors.state(o)
			leaveOut(&inj, o)
			return nil
		}
		if why, ok := replaced[o.ID]; ok {
			// A command no longer offered: its passing runs no longer say
			// how to work here (project knowledge).
			if len(inj.Left) < maxLeft {
				inj.Left = append(inj.Left, memory.InjectionItem{ID: o.ID, Reason: why})
			}
			return nil
		}
		if look(o) {
			looks++
			return nil // not given: the agent can look again
		}
		if o.Type == memory.TypePrompt {
			// The person's own words: search and the prompt's recall
			// find them. A project of chat alone stops the scan.
			if prompts++; prompts >= contextPromptScan {
				return errStop
			}
			return nil
		}
		seen[title] = true
		pool = append(pool, *o)
		if len(pool) >= contextPool {
			return errStop
		}
		return nil
	})
	if err != nil {
		return res, fmt.Errorf("build context: %w", err)
	}
	if sum != nil {
		m.summaryHead(&head, &inj, sum, turn)
		for _, f := range sum.FilesModified {
			recent[f] = true
		}
	}
	const listHead = "\n## Recent work (id · time · type · title)\n"
	const footer = "\nFetch details with the mnemo search, timeline and get tools (or `mnemo get <id>`).\n"
	closing := "</" + memory.ContextTag + ">\n"
	used := len(top) + head.Len() + len(listHead) + len(footer) + len(closing)
	// Pinned observations come first, whatever their age; only the budget
	// leaves one out. Each comes with an excerpt of its text, as what was
	// learned does, while the pins' rows take less than
	// contextLearnedShare of the budget: a pinned note is there to be
	// read, not looked up.
	const pinHead = "\n## Pinned (id · time · type · what)\n"
	pinRoom := int(float64(budget)*contextLearnedShare) - len(pinHead)
	slices.SortFunc(pins, func(a, b memory.Observation) int {
		return cmp.Or(b.Time.Compare(a.Time), cmp.Compare(b.ID, a.ID))
	})
	var pinRows strings.Builder
	if len(pins) > 0 {
		used += len(pinHead)
	}
	for _, o := range pins {
		if o.State = m.anchors.state(&o); o.Wrong {
			leaveOut(&inj, &o)
			continue // a person's word that it is wrong beats their pin
		}
		row := contextRow(&o)
		excerpt := excerptOf(&o, contextExcerpt)
		if with := row + "  " + excerpt + "\n"; excerpt != "" && pinRows.Len()+len(with) <= pinRoom && used+len(with) <= budget {
			row = with
		} else {
			excerpt = "" // its title alone: the prompt that needs it gets its text
		}
		if used+len(row) > budget {
			continue // a shorter row may still fit
		}
		used += len(row)
		pinRows.WriteString(row)
		res.ObservationIDs = append(res.ObservationIDs, o.ID)
		reason := "pinned"
		if o.State == memory.StateChanged || o.State == memory.StateReview || o.State == memory.StateGone || o.State == memory.StateSuperseded {
			reason += "; marked " + o.State + " (" + anchorNote(&o) + ")"
		}
		inj.Items = append(inj.Items, memory.InjectionItem{ID: o.ID, Text: excerpt != "", Reason: reason})
	}
	if pinRows.Len() == 0 && len(pins) > 0 {
		used -= len(pinHead)
	}
	learnedRows := m.learnedSection(&inj, learnts, isPinned, &used, budget, &res)
	var knowledgeRows string
	err = m.store.view(func(txn *badger.Txn) error {
		given := map[uint64]bool{}
		for _, id := range res.ObservationIDs {
			given[id] = true
		}
		var err error
		knowledgeRows, err = m.knowledgeSection(txn, known, cwd, min(int(float64(budget)*contextKnowledgeShare), budget-used), given, &inj, &res)
		return err
	})
	if err != nil {
		return res, fmt.Errorf("build context: %w", err)
	}
	used += len(knowledgeRows)
	var picked []candidate
	for _, c := range scoreContext(pool, recent, subdirOf(cwd)) {
		// What no longer holds is not given as a fact, what changed is
		// marked: checked in the order of worth, only as far as the
		// budget goes.
		switch c.o.State = m.anchors.state(&c.o); c.o.State {
		case memory.StateGone:
			leaveOut(&inj, &c.o)
			continue
		case memory.StateChanged:
			c.reasons = append(c.reasons, "marked changed: "+anchorNote(&c.o))
		case memory.StateReview:
			// Its text is still in its file: marked, not left out (a
			// person has not said it is wrong; the agent can look).
			c.reasons = append(c.reasons, "marked needs review: "+anchorNote(&c.o))
		}
		if used >= budget {
			break
		}
		row := contextRow(&c.o)
		if used+len(row) > budget {
			continue // a shorter row may still fit
		}
		used += len(row)
		picked = append(picked, c)
	}
	slices.SortFunc(picked, func(a, b candidate) int {
		return cmp.Or(b.o.Time.Compare(a.o.Time), cmp.Compare(b.o.ID, a.o.ID))
	})
	var b strings.Builder
	b.WriteString(top)
	if pinRows.Len() > 0 {
		b.WriteString(pinHead)
		b.WriteString(pinRows.String())
	}
	b.WriteString(knowledgeRows)
	b.WriteString(learnedRows)
	b.WriteString(head.String())
	if len(picked) > 0 {
		b.WriteString(listHead)
		for _, c := range picked {
			b.WriteString(contextRow(&c.o))
			res.ObservationIDs = append(res.ObservationIDs, c.o.ID)
			inj.Items = append(inj.Items, memory.InjectionItem{ID: c.o.ID, Reason: strings.Join(c.reasons, "; ")})
		}
	} else if pinRows.Len() == 0 && learnedRows == "" && knowledgeRows == "" && len(recent) == 0 && !strings.Contains(head.String(), "## Last session") {
		if looks > 0 {
			b.WriteString("\nOnly reads and searches so far: the search tools find them.\n")
		} else {
			b.WriteString("\nNo memories for this project yet.\n")
		}
	}
	b.WriteString(footer)
	b.WriteString(closing)
	res.ObservationIDs = uniqueIDs(res.ObservationIDs) // a knowledge line may cite a record listed below it
	res.Context = b.String()
	res.Bytes = len(res.Context)
	if csid == "" {
		res.Items, res.Left = inj.Items, inj.Left // a preview says why
	} else {
		inj.Time, inj.Bytes = m.now(), res.Bytes
		if err := m.recordInjection(ctx, &inj); err != nil {
			m.log.Warn("record context injection", "err", err)
		}
	}
	return res, nil
}

// learnedSection writes the rows of what was learned and decided, the
// newest first, within contextLearnedShare of the budget (used counts
// what the context holds so far), records the items in inj and res, and
// returns the section ("" when it has no row). A record that no longer
// holds (reverted, wrong, superseded, its files gone) is left out.
func (m *Memory) learnedSection(inj *memory.Injection, learnts []memory.Observation, isPinned map[uint64]bool, used *int, budget int, res *memory.ContextResult) string {
	const sectionHead = "\n## What was learned and decided (id · time · type · what)\n"
	room := int(float64(budget)*contextLearnedShare) - len(sectionHead)
	type pick struct {
		o       memory.Observation
		row     string
		excerpt bool
		reason  string
	}
	// Worth and recency, as the recent work's: a finding of the
	// conversation is worth what a decision is, a memory saved on purpose
	// its type's worth; the best fill the room, newest first.
	var scored []candidate
	seen := map[string]bool{}
	for _, o := range learnts {
		title := strings.TrimSpace(o.Title)
		if title == "" || seen[title] || isPinned[o.ID] {
			continue
		}
		seen[title] = true
		if o.Reverted != 0 || o.Wrong || o.SupersededBy != 0 {
			o.State = m.anchors.state(&o)
			leaveOut(inj, &o)
			continue
		}
		w := 1.0
		if o.Source == memory.SourceSaved {
			w = cmp.Or(typeWeight[o.Type], 0.7) * 1.2
		}
		rank := len(scored)
		scored = append(scored, candidate{o: o, score: w / (1 + float64(rank)/20),
			reasons: []string{fmt.Sprintf("what was learned and decided: %s, %s newest of them", o.Type, ordinal(rank+1))}})
	}
	slices.SortStableFunc(scored, func(a, b candidate) int { return cmp.Compare(b.score, a.score) })
	var picked []pick
	for _, c := range scored {
		o := c.o
		if o.State = m.anchors.state(&o); o.State == memory.StateGone {
			leaveOut(inj, &o)
			continue
		}
		row := contextRow(&o)
		fits := func(r string) bool { return len(r) <= room && *used+len(sectionHead)+len(r) <= budget }
		excerpt := excerptOf(&o, contextExcerpt)
		if excerpt != "" && fits(row+"  "+excerpt+"\n") {
			row += "  " + excerpt + "\n"
		} else {
			excerpt = "" // its title alone: the prompt that needs it gets its text
		}
		if !fits(row) {
			continue // a shorter row may still fit
		}
		room -= len(row)
		*used += len(row)
		reason := c.reasons[0]
		if o.State == memory.StateReview {
			reason += "; marked needs review: " + anchorNote(&o)
		}
		picked = append(picked, pick{o: o, row: row, excerpt: excerpt != "", reason: reason})
	}
	if len(picked) == 0 {
		return ""
	}
	slices.SortFunc(picked, func(a, b pick) int { return cmp.Or(b.o.Time.Compare(a.o.Time), cmp.Compare(b.o.ID, a.o.ID)) })
	var b strings.Builder
	b.WriteString(sectionHead)
	for _, p := range picked {
		b.WriteString(p.row)
		res.ObservationIDs = append(res.ObservationIDs, p.o.ID)
		inj.Items = append(inj.Items, memory.InjectionItem{ID: p.o.ID, Text: p.excerpt, Reason: p.reason})
	}
	*used += len(sectionHead)
	return b.String()
}

// ordinal is a rank in words beside the records' ids, which the reasons
// also name with "#": "the", "2nd", "3rd", "11th".
func ordinal(n int) string {
	if n == 1 {
		return "the"
	}
	suffix := "th"
	if n%100 < 11 || n%100 > 13 {
		switch n % 10 {
		case 1:
			suffix = "st"
		case 2:
			suffix = "nd"
		case 3:
			suffix = "rd"
		}
	}
	return strconv.Itoa(n) + suffix
}

// excerptOf is what a record says beyond its title, on one line, at most
// n bytes: its narrative without the sentence the title repeats and the
// agent's framing (a tool call's why first, when it explains the call),
// else its why, else its facts; "" when that adds nothing to the title.
func excerptOf(o *memory.Observation, n int) string {
	text := o.Narrative
	if o.Tool != "" && explained(o.Why) {
		text = o.Why // what the call was for says more than what it did
	}
	for _, frame := range []string{"The prompt states a choice: ", "The agent adopted a choice: "} {
		text = strings.TrimPrefix(text, frame)
	}
	text = strings.Join(strings.Fields(flatTables(text)), " ")
	title, clipped := strings.CutSuffix(o.Title, "…")
	title = strings.Join(strings.Fields(title), " ")
	if clipped {
		// The title was cut inside a word: the excerpt goes on from the
		// start of that word.
		title = title[:strings.LastIndexByte(title, ' ')+1]
	}
	if rest, ok := strings.CutPrefix(text, title); ok && title != "" {
		text = strings.TrimSpace(rest)
	}
	if text == "" {
		text = strings.Join(strings.Fields(o.Why), " ")
	}
	if text == "" && len(o.Facts) > 0 {
		text = strings.Join(o.Facts, "; ")
	}
	if text == "" || strings.Contains(o.Title, text) {
		return ""
	}
	return memory.Clip(text, n)
}

// flatTables writes the rows of a text's markdown tables as lines of
// cells ("a, b, c;"), without their separator lines.
func flatTables(text string) string {
	if !strings.Contains(text, "|") {
		return text
	}
	lines := strings.Split(text, "\n")
	out := lines[:0]
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if !strings.HasPrefix(t, "|") {
			out = append(out, l)
			continue
		}
		var cells []string
		for _, c := range strings.Split(strings.Trim(t, "|"), "|") {
			if c = strings.TrimSpace(c); c != "" && strings.Trim(c, "-: ") != "" {
				cells = append(cells, c)
			}
		}
		if len(cells) > 0 {
			out = append(out, strings.Join(cells, ", ")+";")
		}
	}
	return strings.Join(out, "\n")
}

// look reports whether an observation only looked: a read, a search, a
// listing of files. The context gives none of them.
func look(o *memory.Observation) bool {
	switch o.Tool {
	case "Read", "Open", "NotebookRead", "read_file", "view", "Grep", "Glob", "Search", "LS", "search", "grep_search", "file_search", "list_dir":
		return o.Type == memory.TypeDiscovery
	}
	return false
}

// contextRow is one observation's line in the context.
func contextRow(o *memory.Observation) string {
	title := strings.TrimSpace(o.Title)
	row := fmt.Sprintf("- #%d · %s · %s · %s", o.ID, fmtTime(o.Time), o.Type, memory.Clip(title, 140))
	if files := o.Files(); len(files) > 0 && !strings.Contains(title, files[0]) {
		row += " (" + memory.Clip(strings.Join(files, ", "), 80) + ")"
	}
	if o.Origin != nil && o.Origin.Author != "" {
		row += " — " + memory.Clip(o.Origin.Author, 40)
	}
	switch o.State {
	case memory.StateChanged:
		row += " [changed since]"
	case memory.StateReview:
		row += " [needs review]"
	case memory.StateGone:
		row += " [gone]"
	case memory.StateSuperseded:
		row += " [superseded by #" + strconv.FormatUint(o.SupersededBy, 10) + "]"
	}
	return row + "\n"
}

// subdirOf is the working directory relative to its repository's top
// level ("" at the top or outside a repository).
func subdirOf(cwd string) string {
	if cwd == "" {
		return ""
	}
	root := memory.RootOf(cwd)
	rel, err := filepath.Rel(root, cwd)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return ""
	}
	return filepath.ToSlash(rel)
}

// recordInjection stores the audit record of an injection and, when it
// went to a content session, indexes it under that session (given reads
// the index).
func (m *Memory) recordInjection(ctx context.Context, inj *memory.Injection) error {
	id, err := m.store.next("audit")
	if err != nil {
		return err
	}
	inj.ID = id
	return m.store.update(ctx, func(txn *badger.Txn) error {
		if inj.ContentSessionID != "" {
			if err := txn.Set(auditSessionKey(inj.ContentSessionID, id), nil); err != nil {
				return err
			}
		}
		return setJSON(txn, idKey(pAudit, id), inj)
	})
}

func auditSessionKey(csid string, id uint64) []byte {
	return key(pAuditSess, []byte(csid), []byte{0}, be64(id))
}

// given returns the observations given to a content session so far: those
// a prompt's recall listed, and those SessionStart's context gave with
// their text. A record whose title alone the context listed has not been
// given: the prompt that needs it gets it.
func (m *Memory) given(txn *badger.Txn, csid string) (map[uint64]bool, error) {
	out := map[uint64]bool{}
	prefix := key(pAuditSess, []byte(csid), []byte{0})
	err := scan(txn, prefix, false, func(item *badger.Item) error {
		k := item.Key()
		var inj memory.Injection
		err := getJSON(txn, idKey(pAudit, binary.BigEndian.Uint64(k[len(k)-8:])), &inj)
		if errors.Is(err, memory.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		for _, it := range inj.Items {
			if it.Text || inj.Source == memory.InjectionPrompt {
				out[it.ID] = true
			}
		}
		return nil
	})
	return out, err
}

// Injections returns the newest n context injections, newest first.
func (m *Memory) Injections(ctx context.Context, n int) ([]memory.Injection, error) {
	return m.injections("", n)
}

// injections returns the newest n context injections (of one project,
// when it is set), newest first.
func (m *Memory) injections(project string, n int) ([]memory.Injection, error) {
	var out []memory.Injection
	err := m.store.view(func(txn *badger.Txn) error {
		return scan(txn, pAudit, true, func(item *badger.Item) error {
			var inj memory.Injection
			if err := getJSON(txn, item.KeyCopy(nil), &inj); err != nil {
				return err
			}
			if project == "" || inj.Project == project {
				out = append(out, inj)
			}
			if len(out) >= n {
				return errStop
			}
			return nil
		})
	})
	return out, err
}

// summaryHead writes the last session's summary. What it says of a
// record of its turn that is not given as a fact (gone, reverted,
// superseded, wrong) is not given either: the items that name such a
// record's title are left out, and the audit says so. The turn's records
// are those of the project's newest that the context reads anyway (turn).
func (m *Memory) summaryHead(head *strings.Builder, inj *memory.Injection, sum *memory.Summary, turn []*memory.Observation) {
	var dead []*memory.Observation
	for _, o := range turn {
		switch o.State = m.anchors.state(o); o.State {
		case memory.StateGone, memory.StateReverted, memory.StateSuperseded, memory.StateWrong:
			dead = append(dead, o)
		}
	}
	fmt.Fprintf(head, "\n## Last session (%s)\n", fmtTime(sum.Time))
	for _, f := range []struct{ label, text string }{
		{"Request", sum.Request}, {"Completed", sum.Completed}, {"Learned", sum.Learned},
		{"Next steps", sum.NextSteps},
	} {
		t := strings.TrimSpace(f.text)
		if f.label != "Request" {
			var named []*memory.Observation
			t, named = withoutTitles(t, dead)
			for _, o := range named {
				leaveSummaryOut(inj, o, f.label)
			}
		}
		if t != "" {
			fmt.Fprintf(head, "- %s: %s\n", f.label, memory.Clip(strings.ReplaceAll(t, "\n", " "), 300))
		}
	}
	if len(sum.FilesModified) > 0 {
		fmt.Fprintf(head, "- Files modified: %s\n", memory.Clip(strings.Join(sum.FilesModified, ", "), 300))
	}
}

// withoutTitles takes out of a summary's text the items (sentences) that
// name one of dead's titles, and returns what is left ("" when nothing
// is) and the observations it named.
func withoutTitles(text string, dead []*memory.Observation) (string, []*memory.Observation) {
	var named []*memory.Observation
	for _, o := range dead {
		title := strings.TrimSpace(o.Title)
		if title == "" {
			continue
		}
		if cut, ok := cutItem(text, title); ok {
			named = append(named, o)
			text = cut
		}
	}
	if len(named) == 0 {
		return text, nil
	}
	text = strings.Join(strings.Fields(text), " ")
	if !strings.ContainsFunc(text, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) {
		text = ""
	}
	return text, named
}

// cutItem takes out of text every item that is title (the summary writes
// an item as a sentence: the title and a period), not a longer item that
// starts with it.
func cutItem(text, title string) (string, bool) {
	var b strings.Builder
	found := false
	for {
		i := strings.Index(text, title)
		if i < 0 {
			b.WriteString(text)
			return b.String(), found
		}
		end := i + len(title)
		if end < len(text) && text[end] == '.' {
			end++
		}
		if (i == 0 || text[i-1] == ' ') && (end == len(text) || text[end] == ' ') {
			b.WriteString(text[:i])
			found = true
		} else {
			b.WriteString(text[:end])
		}
		text = text[end:]
	}
}

// leaveSummaryOut records in an injection's audit that what the last
// summary's line said of o was left out, and why.
func leaveSummaryOut(inj *memory.Injection, o *memory.Observation, label string) {
	if len(inj.Left) < maxLeft {
		inj.Left = append(inj.Left, memory.InjectionItem{ID: o.ID, Reason: "summary line left out (" + label + " named it): " + o.State + " (" + anchorNote(o) + ")"})
	}
}
