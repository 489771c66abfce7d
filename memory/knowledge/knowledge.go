// Package knowledge derives a project's knowledge from its records,
// without a model: what many records add up to, each line naming the
// records it came from, nothing said that no record shows
// (docs/architecture.md §7; the rules are in docs/decisions.md, "Project
// knowledge").
//
//   - How to work here: the commands that test, build, lint and run the
//     project, from the runs that passed (as the local agent judged them:
//     a piped run that failed is a failed run), with counts, sessions and
//     when last seen. A command whose newest run failed because the
//     command itself does not work here (not found, no such target) has
//     stopped working; one whose newest run failed and that another
//     runner of the same kind passed after was replaced, and so was one
//     whose program a later decision in force names as what it replaces
//     ("switch from npm to pnpm"). None of them is offered.
//   - What keeps failing and what fixed it: the same error (positions,
//     numbers and case aside) in more than one session, and the change
//     after which the command that showed it last passed next (the files
//     edited between the failure and the pass).
//   - What moves together and what is hot: files modified in the same
//     turn in more than one session; files modified in the most turns of
//     the last two weeks.
//   - Decisions in force: decisions not superseded, reverted, marked wrong
//     or gone.
//
// A Builder takes a project's records one by one, in any order, and keeps
// only what it adds up (a few hundred bytes per command, error, turn and
// decision), so that 100,000 records are derived without holding them.
// Render writes the lines as the context's block.
package knowledge

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/local"
)

// The rules' numbers (docs/decisions.md, "Project knowledge").
const (
	// commandsPerKind bounds the commands offered for each kind of run.
	commandsPerKind = 3
	// programSessions: a run of the program (not a test, build or lint)
	// is offered once it ran in this many sessions.
	programSessions = 2
	// failureSessions is how many sessions must have seen an error for it
	// to keep failing.
	failureSessions = 2
	// settledSessions: an error whose command then passed in this many
	// later sessions without it coming back is settled, and not given.
	settledSessions = 10
	maxFailures     = 4
	// togetherSessions: files modified in one turn, in this many sessions.
	togetherSessions = 2
	maxTogether      = 4
	// maxTurnFiles: a turn that modified more files (a sweep, a rename
	// across the tree) says nothing of which belong together.
	maxTurnFiles = 8
	// hotWindow, hotTurns: files modified in at least hotTurns turns of
	// the last hotWindow.
	hotWindow    = 14 * 24 * time.Hour
	hotTurns     = 3
	maxHot       = 5
	maxDecisions = 6
	// fixFiles bounds the files a fix names.
	fixFiles = 4
)

// A Builder adds up a project's records into its knowledge.
type Builder struct {
	project   string
	records   int
	runs      []run
	edits     []edit
	decisions []memory.Observation
	replaced  []memory.KnowledgeLine // commands no longer offered
}

// run is one record of a run.
type run struct {
	local.Run
	id       uint64
	time     time.Time // when it was first seen
	last     time.Time // when it was last seen (folds)
	count    int
	sessions []uint64 // the session it was made in, then those that saw it again
}

// edit is one record that modified files.
type edit struct {
	id      uint64
	session uint64
	prompt  int
	time    time.Time
	files   []string
}

// New returns a Builder for a project's records.
func New(project string) *Builder { return &Builder{project: project} }

// Add takes one record of the project. seenIn are the other sessions the
// same fact was seen in (the store folds a fact seen again into the record
// that first said it). A record marked wrong, or that an edit undid, is
// no evidence of anything; a superseded one is history, never a decision
// in force.
func (b *Builder) Add(o *memory.Observation, seenIn []uint64) {
	if o.Project != b.project {
		return
	}
	b.records++
	if o.Wrong || o.Reverted != 0 {
		return
	}
	if r, ok := local.RunOf(o); ok {
		last := o.Time
		if o.LastSeen.After(last) {
			last = o.LastSeen
		}
		b.runs = append(b.runs, run{Run: r, id: o.ID, time: o.Time, last: last, count: max(o.Count, 1),
			sessions: append([]uint64{o.SessionID}, seenIn...)})
		return
	}
	if o.Type == memory.TypeDecision {
		if o.SupersededBy == 0 && o.State != memory.StateGone && o.State != memory.StateSuperseded {
			d := *o
			d.Evidence, d.Request, d.Why, d.Narrative, d.FileAnchors, d.Edits = "", "", "", "", nil, nil
			b.decisions = append(b.decisions, d)
		}
		return
	}
	if len(o.FilesModified) > 0 && o.Tool != "" {
		b.edits = append(b.edits, edit{id: o.ID, session: o.SessionID, prompt: o.PromptNumber, time: o.Time,
			files: slices.Clone(o.FilesModified)})
	}
}

// Knowledge returns what the records add up to, at now (what "lately"
// counts from).
func (b *Builder) Knowledge(now time.Time) memory.Knowledge {
	k := memory.Knowledge{Project: b.project, Computed: now, Records: b.records, Lines: []memory.KnowledgeLine{}}
	slices.SortFunc(b.runs, func(x, y run) int { return cmp.Or(x.time.Compare(y.time), cmp.Compare(x.id, y.id)) })
	slices.SortFunc(b.edits, func(x, y edit) int { return cmp.Or(x.time.Compare(y.time), cmp.Compare(x.id, y.id)) })
	b.replaced = nil
	k.Lines = append(k.Lines, b.commands()...)
	k.Replaced = b.replaced
	k.Lines = append(k.Lines, b.failures()...)
	k.Lines = append(k.Lines, b.together()...)
	k.Lines = append(k.Lines, b.hot(now)...)
	k.Lines = append(k.Lines, b.decided()...)
	return k
}

// command is the runs of one command.
type command struct {
	name   string
	kind   string
	runner string
	runs   []run // oldest first
}

// groupCommands groups the runs by command, in the order of their first
// run.
func (b *Builder) groupCommands() []*command {
	var out []*command
	byName := map[string]*command{}
	for _, r := range b.runs {
		c := byName[r.Command]
		if c == nil {
			c = &command{name: r.Command, kind: r.Kind, runner: r.Runner}
			byName[r.Command] = c
			out = append(out, c)
		}
		c.runs = append(c.runs, r)
	}
	return out
}

// judged returns the newest run of c that passed or failed, by when it was
// last seen; false when none did.
func (c *command) judged() (run, bool) {
	var best run
	found := false
	for _, r := range c.runs {
		if r.Outcome == local.RunRan {
			continue
		}
		if !found || r.last.After(best.last) || r.last.Equal(best.last) && r.id > best.id {
			best, found = r, true
		}
	}
	return best, found
}

func (c *command) lastPass() (time.Time, bool) {
	var t time.Time
	found := false
	for _, r := range c.runs {
		if r.Outcome == local.RunPassed && (!found || r.last.After(t)) {
			t, found = r.last, true
		}
	}
	return t, found
}

// commands are the lines of how to work here.
func (b *Builder) commands() []memory.KnowledgeLine {
	cmds := b.groupCommands()
	var lines []memory.KnowledgeLine
	type offer struct {
		line   memory.KnowledgeLine
		passes int
	}
	offers := map[string][]offer{}
	for _, c := range cmds {
		newest, ok := c.judged()
		if !ok {
			continue
		}
		passes, fails := 0, 0
		var lastFail *run
		sessions := map[uint64]bool{}
		for i, r := range c.runs {
			switch r.Outcome {
			case local.RunPassed:
				passes += r.count
			case local.RunFailed:
				fails += r.count
				if lastFail == nil || !r.last.Before(lastFail.last) {
					lastFail = &c.runs[i]
				}
			}
			for _, s := range r.sessions {
				sessions[s] = true
			}
		}
		if passes == 0 || c.kind == local.RunProgram && len(sessions) < programSessions {
			continue // a script run once is no way of working
		}
		last := newest.last
		for _, r := range c.runs {
			if r.last.After(last) {
				last = r.last
			}
		}
		gone := ""
		switch {
		case newest.Outcome == local.RunFailed && newest.Broken:
			gone = fmt.Sprintf("`%s` stopped working: %s", c.name, memory.Clip(newest.Error, 100))
		case newest.Outcome == local.RunFailed:
			if by := replacedBy(c, newest, cmds); by != nil {
				gone = fmt.Sprintf("`%s` was replaced by `%s`", c.name, by.name)
			}
		}
		if d := b.decidedAway(c, last); gone == "" && d != nil {
			gone = fmt.Sprintf("`%s`: decision #%d moved away from it", c.name, d.ID)
		}
		if gone != "" {
			b.replaced = append(b.replaced, memory.KnowledgeLine{
				Kind: memory.KnowledgeReplaced, Text: gone, Key: c.name, IDs: passedIDs(c.runs), Count: passes, Last: last,
				Why: "no longer how to work here: " + gone,
			})
			continue
		}
		var t strings.Builder
		fmt.Fprintf(&t, "%s: `%s` passed %s", c.kind, c.name, times(passes))
		if len(sessions) > 1 {
			fmt.Fprintf(&t, " in %d sessions", len(sessions))
		}
		if fails > 0 {
			fmt.Fprintf(&t, ", failed %s", times(fails))
			if lastFail != nil && lastFail.Error != "" {
				fmt.Fprintf(&t, " (last: %s)", memory.Clip(lastFail.Error, 80))
			}
		}
		fmt.Fprintf(&t, "; last run %s", day(last))
		if newest.Outcome == local.RunFailed {
			t.WriteString(", failing")
		}
		why := fmt.Sprintf("how to work here: `%s` passed %s", c.name, times(passes))
		offers[c.kind] = append(offers[c.kind], offer{passes: passes, line: memory.KnowledgeLine{
			Kind: memory.KnowledgeCommand, Text: t.String(), Key: c.name, IDs: runIDs(c.runs),
			Count: passes + fails, Sessions: len(sessions), Last: last, Why: why,
		}})
	}
	for _, kind := range []string{local.RunTest, local.RunBuild, local.RunLint, local.RunProgram} {
		list := offers[kind]
		slices.SortStableFunc(list, func(x, y offer) int {
			return cmp.Or(cmp.Compare(y.passes, x.passes), y.line.Last.Compare(x.line.Last))
		})
		for _, o := range list[:min(len(list), commandsPerKind)] {
			lines = append(lines, o.line)
		}
	}
	return lines
}

// replacedBy returns another runner of c's kind that passed after c's
// newest run, which failed: the project runs its tests (or builds) that
// way now. nil when none did.
func replacedBy(c *command, newest run, cmds []*command) *command {
	for _, o := range cmds {
		if o == c || o.kind != c.kind || o.runner == c.runner {
			continue
		}
		if t, ok := o.lastPass(); ok && t.After(newest.last) {
			return o
		}
	}
	return nil
}

// passedIDs are the ids of the runs that passed, the newest first.
func passedIDs(runs []run) []uint64 {
	var ids []uint64
	for i := len(runs) - 1; i >= 0 && len(ids) < memory.MaxKnowledgeIDs; i-- {
		if runs[i].Outcome == local.RunPassed {
			ids = append(ids, runs[i].id)
		}
	}
	return ids
}

// decidedAway returns a decision in force, made after c last ran, that
// names c's program as what it replaces ("switch from npm to pnpm"); nil
// when there is none.
func (b *Builder) decidedAway(c *command, last time.Time) *memory.Observation {
	prog := strings.ToLower(strings.Fields(c.runner + " x")[0])
	for i := range b.decisions {
		d := &b.decisions[i]
		if d.Time.After(last) && slices.Contains(d.Replaces(), prog) {
			return d
		}
	}
	return nil
}

// runIDs are the ids of runs, the newest pass first, then the newest
// failure, then the others newest first.
func runIDs(runs []run) []uint64 {
	rs := slices.Clone(runs)
	slices.SortStableFunc(rs, func(x, y run) int { return cmp.Or(y.last.Compare(x.last), cmp.Compare(y.id, x.id)) })
	var ids []uint64
	add := func(id uint64) {
		if !slices.Contains(ids, id) && len(ids) < memory.MaxKnowledgeIDs {
			ids = append(ids, id)
		}
	}
	for _, want := range []string{local.RunPassed, local.RunFailed} {
		for _, r := range rs {
			if r.Outcome == want {
				add(r.id)
				break
			}
		}
	}
	for _, r := range rs {
		add(r.id)
	}
	return ids
}

// failure is the failed runs with one error.
type failure struct {
	command string
	errText string
	runs    []run // oldest first
}

// failures are the lines of what keeps failing and what fixed it.
func (b *Builder) failures() []memory.KnowledgeLine {
	var groups []*failure
	byKey := map[string]*failure{}
	for _, r := range b.runs {
		if r.Outcome != local.RunFailed || r.Broken || r.Error == "" {
			continue
		}
		// One error, whichever command showed it (the project may have
		// moved from `poetry run pytest` to `uv run pytest` in between).
		k := normalError(r.Error)
		f := byKey[k]
		if f == nil {
			f = &failure{}
			byKey[k] = f
			groups = append(groups, f)
		}
		f.errText, f.command = r.Error, r.Command // the newest wording, the newest command
		f.runs = append(f.runs, r)
	}
	type scored struct {
		line memory.KnowledgeLine
		open bool
	}
	var out []scored
	for _, f := range groups {
		sessions := map[uint64]bool{}
		count := 0
		newest := f.runs[0]
		for _, r := range f.runs {
			count += r.count
			for _, s := range r.sessions {
				sessions[s] = true
			}
			if r.last.After(newest.last) || r.last.Equal(newest.last) && r.id > newest.id {
				newest = r
			}
		}
		if len(sessions) < failureSessions {
			continue
		}
		var ids []uint64
		for i := len(f.runs) - 1; i >= 0 && len(ids) < memory.MaxKnowledgeIDs/2; i-- {
			ids = append(ids, f.runs[i].id)
		}
		var t strings.Builder
		fmt.Fprintf(&t, "`%s` fails with %q in %d sessions", f.command, memory.Clip(f.errText, 100), len(sessions))
		if count > len(sessions) {
			fmt.Fprintf(&t, " (%s)", times(count))
		}
		fmt.Fprintf(&t, ", last %s", day(newest.last))
		pass, fixIDs, files := b.fixAfter(newest)
		open := pass == nil
		switch {
		case pass == nil:
			t.WriteString("; not passed since")
		default:
			if b.passedSessionsAfter(newest) >= settledSessions {
				continue // settled: it has not come back for long
			}
			if len(files) > 0 {
				fmt.Fprintf(&t, "; passed again after changing %s", quoteList(files))
			} else {
				t.WriteString("; passed again with no change recorded in between")
			}
			fmt.Fprintf(&t, " (%s)", day(pass.last))
			ids = append(append([]uint64{pass.id}, fixIDs...), ids...)
		}
		if len(ids) > memory.MaxKnowledgeIDs {
			ids = ids[:memory.MaxKnowledgeIDs]
		}
		why := fmt.Sprintf("keeps failing: the same error of `%s` in %d sessions", f.command, len(sessions))
		out = append(out, scored{open: open, line: memory.KnowledgeLine{
			Kind: memory.KnowledgeFailure, Text: t.String(), Key: f.errText, IDs: dedupe(ids),
			Count: count, Sessions: len(sessions), Last: newest.last, Why: why,
		}})
	}
	slices.SortStableFunc(out, func(x, y scored) int {
		return cmp.Or(cmp.Compare(y.line.Sessions, x.line.Sessions), y.line.Last.Compare(x.line.Last))
	})
	var lines []memory.KnowledgeLine
	for _, s := range out[:min(len(out), maxFailures)] {
		lines = append(lines, s.line)
	}
	return lines
}

// fixAfter finds the first passing run of the failed run's command after
// it, and the edits between them in the sessions of either: the change
// after which the command passed. nil when it has not passed since.
func (b *Builder) fixAfter(failed run) (*run, []uint64, []string) {
	var pass *run
	for i, r := range b.runs {
		if r.Command == failed.Command && r.Outcome == local.RunPassed && after(r, failed) {
			pass = &b.runs[i]
			break
		}
	}
	if pass == nil {
		return nil, nil, nil
	}
	var ids []uint64
	var files []string
	for _, e := range b.edits {
		if e.session != failed.sessions[0] && !slices.Contains(pass.sessions, e.session) {
			continue
		}
		if e.time.Before(failed.last) || e.time.After(pass.last) || e.time.Equal(failed.last) && e.id < failed.id {
			continue
		}
		ids = append(ids, e.id)
		for _, f := range e.files {
			if !slices.Contains(files, f) {
				files = append(files, f)
			}
		}
	}
	if len(ids) > fixFiles*2 {
		ids = ids[len(ids)-fixFiles*2:]
	}
	if len(files) > fixFiles {
		files = append(files[:fixFiles], fmt.Sprintf("%d more", len(files)-fixFiles))
	}
	return pass, ids, files
}

// after reports whether run r was seen after run f was last seen (a run
// folded into an earlier record was seen again when the record was last
// seen).
func after(r, f run) bool {
	return r.last.After(f.last) || r.last.Equal(f.last) && r.id > f.id
}

// passedSessionsAfter counts the sessions in which the failed run's
// command passed after it.
func (b *Builder) passedSessionsAfter(failed run) int {
	sessions := map[uint64]bool{}
	for _, r := range b.runs {
		if r.Command == failed.Command && r.Outcome == local.RunPassed && after(r, failed) {
			for _, s := range r.sessions {
				sessions[s] = true
			}
		}
	}
	delete(sessions, failed.sessions[0])
	return len(sessions)
}

var (
	positionRE = regexp.MustCompile(`[\w./\\-]+\.\w+:\d+(?::\d+)?`)
	numberRE   = regexp.MustCompile(`0x[0-9a-f]+|\d+(?:\.\d+)?`)
)

// normalError is an error line without what changes from one run to the
// next: positions, numbers, addresses, durations, spacing, case.
func normalError(s string) string {
	s = strings.ToLower(s)
	s = positionRE.ReplaceAllString(s, "@")
	s = numberRE.ReplaceAllString(s, "#")
	return strings.Join(strings.Fields(s), " ")
}

// turn is one prompt of a session.
type turn struct {
	session uint64
	prompt  int
}

// together are the lines of files modified together.
func (b *Builder) together() []memory.KnowledgeLine {
	turns := map[turn][]edit{}
	var order []turn
	for _, e := range b.edits {
		t := turn{e.session, e.prompt}
		if _, ok := turns[t]; !ok {
			order = append(order, t)
		}
		turns[t] = append(turns[t], e)
	}
	type pair struct {
		a, b     string
		turns    int
		sessions map[uint64]bool
		ids      []uint64
		last     time.Time
	}
	pairs := map[[2]string]*pair{}
	for _, t := range order {
		var files []string
		for _, e := range turns[t] {
			for _, f := range e.files {
				if !slices.Contains(files, f) {
					files = append(files, f)
				}
			}
		}
		if len(files) < 2 || len(files) > maxTurnFiles {
			continue
		}
		slices.Sort(files)
		for i, x := range files {
			for _, y := range files[i+1:] {
				p := pairs[[2]string{x, y}]
				if p == nil {
					p = &pair{a: x, b: y, sessions: map[uint64]bool{}}
					pairs[[2]string{x, y}] = p
				}
				p.turns++
				p.sessions[t.session] = true
				for _, e := range turns[t] {
					if slices.Contains(e.files, x) || slices.Contains(e.files, y) {
						p.ids = append(p.ids, e.id)
						if e.time.After(p.last) {
							p.last = e.time
						}
					}
				}
			}
		}
	}
	var ps []*pair
	for _, p := range pairs {
		if len(p.sessions) >= togetherSessions {
			ps = append(ps, p)
		}
	}
	slices.SortFunc(ps, func(x, y *pair) int {
		return cmp.Or(cmp.Compare(y.turns, x.turns), y.last.Compare(x.last), cmp.Compare(x.a, y.a), cmp.Compare(x.b, y.b))
	})
	var lines []memory.KnowledgeLine
	for _, p := range ps[:min(len(ps), maxTogether)] {
		ids := dedupe(reversed(p.ids))
		if len(ids) > memory.MaxKnowledgeIDs {
			ids = ids[:memory.MaxKnowledgeIDs]
		}
		lines = append(lines, memory.KnowledgeLine{
			Kind: memory.KnowledgeTogether, Key: p.a + " " + p.b, IDs: ids, Count: p.turns, Sessions: len(p.sessions), Last: p.last,
			Text: fmt.Sprintf("`%s` and `%s` change together: %d turns in %d sessions, last %s", p.a, p.b, p.turns, len(p.sessions), day(p.last)),
			Why:  fmt.Sprintf("moves together: modified in the same turn in %d sessions", len(p.sessions)),
		})
	}
	return lines
}

// hot are the lines of the files modified in the most turns lately.
func (b *Builder) hot(now time.Time) []memory.KnowledgeLine {
	type file struct {
		name     string
		turns    map[turn]bool
		sessions map[uint64]bool
		ids      []uint64
		last     time.Time
	}
	files := map[string]*file{}
	for _, e := range b.edits {
		if e.time.Before(now.Add(-hotWindow)) || e.time.After(now) {
			continue
		}
		for _, name := range e.files {
			f := files[name]
			if f == nil {
				f = &file{name: name, turns: map[turn]bool{}, sessions: map[uint64]bool{}}
				files[name] = f
			}
			f.turns[turn{e.session, e.prompt}] = true
			f.sessions[e.session] = true
			f.ids = append(f.ids, e.id)
			if e.time.After(f.last) {
				f.last = e.time
			}
		}
	}
	var fs []*file
	for _, f := range files {
		if len(f.turns) >= hotTurns {
			fs = append(fs, f)
		}
	}
	slices.SortFunc(fs, func(x, y *file) int {
		return cmp.Or(cmp.Compare(len(y.turns), len(x.turns)), y.last.Compare(x.last), cmp.Compare(x.name, y.name))
	})
	var lines []memory.KnowledgeLine
	for _, f := range fs[:min(len(fs), maxHot)] {
		ids := dedupe(reversed(f.ids))
		if len(ids) > memory.MaxKnowledgeIDs {
			ids = ids[:memory.MaxKnowledgeIDs]
		}
		lines = append(lines, memory.KnowledgeLine{
			Kind: memory.KnowledgeHot, Key: f.name, IDs: ids, Count: len(f.turns), Sessions: len(f.sessions), Last: f.last,
			Text: fmt.Sprintf("`%s`: changed in %d turns of %d sessions in the last %d days, last %s", f.name, len(f.turns), len(f.sessions), int(hotWindow.Hours()/24), day(f.last)),
			Why:  fmt.Sprintf("hot: modified in %d turns of the last %d days", len(f.turns), int(hotWindow.Hours()/24)),
		})
	}
	return lines
}

// decided are the lines of the decisions in force, the newest first.
func (b *Builder) decided() []memory.KnowledgeLine {
	ds := b.decisions
	slices.SortFunc(ds, func(x, y memory.Observation) int { return cmp.Or(y.Time.Compare(x.Time), cmp.Compare(y.ID, x.ID)) })
	var lines []memory.KnowledgeLine
	seen := map[string]bool{}
	for _, d := range ds {
		text := decisionText(&d)
		if text == "" || seen[strings.ToLower(text)] {
			continue
		}
		seen[strings.ToLower(text)] = true
		why := "a decision in force: not superseded, reverted, marked wrong or gone"
		if len(d.Supersedes) > 0 {
			why += fmt.Sprintf("; it replaced #%d", d.Supersedes[0])
		}
		lines = append(lines, memory.KnowledgeLine{
			Kind: memory.KnowledgeDecision, Key: text, IDs: []uint64{d.ID}, Count: 1, Sessions: 1, Last: d.Time,
			Text: fmt.Sprintf("%s (%s)", memory.Clip(text, 160), day(d.Time)), Why: why,
		})
		if len(lines) == maxDecisions {
			break
		}
	}
	return lines
}

// decisionText is what a decision decided: its "decided: " facts, else its
// title.
func decisionText(o *memory.Observation) string {
	var parts []string
	for _, f := range o.Facts {
		if d, ok := strings.CutPrefix(f, "decided: "); ok {
			parts = append(parts, strings.TrimSpace(d))
		}
	}
	if len(parts) == 0 {
		return strings.TrimSpace(strings.TrimPrefix(o.Title, "Decision: "))
	}
	return strings.Join(parts, "; ")
}

func times(n int) string {
	if n == 1 {
		return "once"
	}
	return fmt.Sprintf("%d×", n)
}

func day(t time.Time) string { return t.UTC().Format("2006-01-02") }

func quoteList(files []string) string {
	q := make([]string, len(files))
	for i, f := range files {
		if strings.HasSuffix(f, " more") {
			q[i] = f
			continue
		}
		q[i] = "`" + f + "`"
	}
	return strings.Join(q, ", ")
}

func dedupe(ids []uint64) []uint64 {
	var out []uint64
	for _, id := range ids {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

func reversed(ids []uint64) []uint64 {
	out := slices.Clone(ids)
	slices.Reverse(out)
	return out
}
