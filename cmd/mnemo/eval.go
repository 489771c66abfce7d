package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/urfave/cli/v2"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/client"
)

// mnemo eval measures recall on the person's own memory, read only: it
// draws questions from the records themselves, asks each of the daemon's
// search (hybrid, within the record's project, as a prompt's recall
// searches) and of grep over the same records, and reports R@5 and MRR
// by kind of question. Nothing is stored, changed or sent anywhere; the
// report gives counts, and the questions only when asked (--show).
//
// The kinds of question, each drawn from the records of real events (a
// tool run, an edit, a command):
//   - identifier: a rare identifier an event carried (camelCase,
//     snake_case, with digits), held by at most evalRare records of its
//     project; those records answer;
//   - test: a test's name (TestX, test_x), likewise;
//   - error: an error line a run printed, likewise;
//   - path: a file an event touched, held by at most evalRare records;
//   - prompt: a turn's prompt, searched among the records made before it,
//     answered by the earlier records of the files the turn then changed
//     (what the prompt's recall should have brought back).
//
// Grep is a person's grep over the same records (every field `mnemo get`
// shows): the question's words as whole words, any case, the records
// holding the most of them first, the newest among equals.

// evalKinds are the kinds of question, in the order the report shows them.
var evalKinds = []string{"identifier", "test", "error", "path", "prompt"}

// evalRare is how many records may hold what a question asks for: more,
// and the question says too little to be a fair test of finding.
const evalRare = 3

func evalCommand() *cli.Command {
	return &cli.Command{
		Name:  "eval",
		Usage: "measure how much of your own memory search finds, beside grep (read only: nothing is changed)",
		Description: "Draws questions from your records (rare identifiers, test names, error lines and paths of real events, and\n" +
			"each turn's prompt against the earlier records of the files it changed), searches each, and prints R@5 and MRR\n" +
			"by kind beside grep over the same records. The report shows counts; --show prints the questions too.",
		Flags: []cli.Flag{
			jsonFlag,
			&cli.StringFlag{Name: "project", Usage: "only this project's records"},
			&cli.IntFlag{Name: "questions", Value: 60, Usage: "at most this many questions of each kind"},
			&cli.BoolFlag{Name: "show", Usage: "print each question with where search and grep ranked its answer (the text of your records)"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return fmt.Errorf("eval takes no arguments (did you mean --project %s?)", c.Args().First())
			}
			if c.Int("questions") < 1 {
				return fmt.Errorf("--questions must be at least 1")
			}
			return withDaemon(c, true, func(ctx context.Context, cl *client.Client) error {
				opts := evalOptions{Project: c.String("project"), PerKind: c.Int("questions"), Show: c.Bool("show"), Progress: c.App.ErrWriter}
				rep, err := runEval(ctx, cl, opts)
				if err != nil {
					return err
				}
				if c.Bool("json") {
					enc := json.NewEncoder(c.App.Writer)
					enc.SetIndent("", "  ")
					return enc.Encode(rep)
				}
				return rep.print(c.App.Writer)
			})
		},
	}
}

// evalSource is what the evaluation reads: the daemon's client.
type evalSource interface {
	Records(context.Context, memory.RecordsParams) (memory.RecordsResult, error)
	Search(context.Context, memory.SearchParams) (memory.SearchResult, error)
	Status(context.Context) (memory.Status, error)
}

type evalOptions struct {
	Project  string
	PerKind  int
	Show     bool
	Progress io.Writer // where progress goes; nil for none
}

// evalReport is what `mnemo eval` prints.
type evalReport struct {
	Records  int            `json:"records"`
	Projects int            `json:"projects"`
	Took     time.Duration  `json:"tookNs"`
	Kinds    []evalKindRows `json:"kinds"`
	// Questions are listed only with --show.
	Questions []evalShown `json:"questions,omitempty"`
}

// evalKindRows are one kind's figures.
type evalKindRows struct {
	Kind      string  `json:"kind"`
	Questions int     `json:"questions"`
	SearchR5  float64 `json:"searchR5"`
	SearchMRR float64 `json:"searchMRR"`
	GrepR5    float64 `json:"grepR5"`
	GrepMRR   float64 `json:"grepMRR"`
}

// evalShown is one question and the rank (1-based, 0 past 10) of its
// first answer in search and in grep.
type evalShown struct {
	Kind       string `json:"kind"`
	Project    string `json:"project"`
	Question   string `json:"question"`
	SearchRank int    `json:"searchRank"`
	GrepRank   int    `json:"grepRank"`
}

// evalQuestion is one question drawn from the records.
type evalQuestion struct {
	kind, project, text string
	answers             map[uint64]bool
	// before, when set, keeps the records made before it (a prompt's).
	before time.Time
}

func (r *evalReport) print(w io.Writer) error {
	projects := "projects"
	if r.Projects == 1 {
		projects = "project"
	}
	fmt.Fprintf(w, "Evaluated %d records of %d %s in %s (read only: nothing was changed).\n", r.Records, r.Projects, projects, r.Took.Round(10*time.Millisecond))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "kind\tquestions\tsearch R@5\tMRR\tgrep R@5\tMRR\t")
	for _, k := range r.Kinds {
		if k.Questions == 0 {
			fmt.Fprintf(tw, "%s\t0\t-\t-\t-\t-\t\n", k.Kind)
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t\n", k.Kind, k.Questions, k.SearchR5, k.SearchMRR, k.GrepR5, k.GrepMRR)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(r.Questions) > 0 {
		fmt.Fprintln(w, "\nEach question, with the rank of its first answer (0: not in the first 10):")
		for _, q := range r.Questions {
			fmt.Fprintf(w, "  %-10s search %2d  grep %2d  %s  %s\n", q.Kind, q.SearchRank, q.GrepRank, q.Project, q.Question)
		}
	}
	return nil
}

// runEval reads every record of the memory (or of one project), draws
// the questions and scores search and grep on them.
func runEval(ctx context.Context, src evalSource, opts evalOptions) (*evalReport, error) {
	start := time.Now()
	// Reading the records is most of the time of a large memory (half a
	// minute at 100k): its progress is counted against all of them, so
	// only when every project is read.
	var reading *progress
	if opts.Progress != nil && opts.Project == "" {
		if st, err := src.Status(ctx); err == nil && st.Counts.Observations > 0 {
			reading = newProgress(opts.Progress, "eval, reading", "records", st.Counts.Observations)
		}
	}
	var recs []memory.Observation
	for after := uint64(0); ; {
		page, err := src.Records(ctx, memory.RecordsParams{After: after, Project: opts.Project, Limit: memory.MaxLimit})
		if err != nil {
			return nil, fmt.Errorf("read the records: %w", err)
		}
		recs = append(recs, page.Observations...)
		if reading != nil {
			reading.Set(len(recs))
		}
		if page.Next == 0 {
			break
		}
		after = page.Next
	}
	if reading != nil {
		reading.Done(len(recs))
	}
	g := newEvalGrep(recs)
	qs := drawQuestions(recs, g, opts.PerKind)
	rep := &evalReport{Records: len(recs)}
	projects := map[string]bool{}
	for _, o := range recs {
		projects[o.Project] = true
	}
	rep.Projects = len(projects)
	type acc struct{ n, sr5, smrr, gr5, gmrr float64 }
	by := map[string]*acc{}
	var bar *progress
	if opts.Progress != nil && len(qs) > 0 {
		bar = newProgress(opts.Progress, "eval", "questions", len(qs))
	}
	for i, q := range qs {
		p := memory.SearchParams{Query: q.text, Project: q.project, Limit: 10}
		if !q.before.IsZero() {
			p.Until = q.before.Add(-time.Nanosecond)
		}
		res, err := src.Search(ctx, p)
		if err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
		ids := make([]uint64, len(res.Hits))
		for j, h := range res.Hits {
			ids[j] = h.ID
		}
		sr, gr := firstAnswer(q, ids), firstAnswer(q, g.search(q, 10))
		a := by[q.kind]
		if a == nil {
			a = &acc{}
			by[q.kind] = a
		}
		a.n++
		score := func(rank int, r5, mrr *float64) {
			if rank > 0 {
				*mrr += 1 / float64(rank)
				if rank <= 5 {
					*r5++
				}
			}
		}
		score(sr, &a.sr5, &a.smrr)
		score(gr, &a.gr5, &a.gmrr)
		if opts.Show {
			rep.Questions = append(rep.Questions, evalShown{Kind: q.kind, Project: q.project, Question: q.text, SearchRank: sr, GrepRank: gr})
		}
		if bar != nil {
			bar.Set(i + 1)
		}
	}
	if bar != nil {
		bar.Done(len(qs))
	}
	for _, k := range evalKinds {
		row := evalKindRows{Kind: k}
		if a := by[k]; a != nil {
			row.Questions = int(a.n)
			row.SearchR5, row.SearchMRR, row.GrepR5, row.GrepMRR = a.sr5/a.n, a.smrr/a.n, a.gr5/a.n, a.gmrr/a.n
		}
		rep.Kinds = append(rep.Kinds, row)
	}
	rep.Took = time.Since(start)
	return rep, nil
}

// firstAnswer is the rank (1-based) of the first of ids that answers q
// within the first 10, or 0.
func firstAnswer(q evalQuestion, ids []uint64) int {
	for i, id := range ids[:min(10, len(ids))] {
		if q.answers[id] {
			return i + 1
		}
	}
	return 0
}

// evalText is everything a record says, as `mnemo get` shows it.
func evalText(o *memory.Observation) string {
	parts := []string{o.Title, o.Subtitle, o.Narrative, o.Why, o.Request, o.Evidence}
	parts = append(parts, o.Facts...)
	parts = append(parts, o.Concepts...)
	parts = append(parts, o.Files()...)
	return strings.Join(parts, "\n")
}

// evalWords splits text into lowercased words as grep -w sees them:
// runs of letters, digits and underscores.
func evalWords(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_'
	})
}

// evalGrep is grep over the records: every record's words, indexed.
type evalGrep struct {
	recs  []memory.Observation
	words map[string][]int32 // word → the records holding it, in order
}

func newEvalGrep(recs []memory.Observation) *evalGrep {
	g := &evalGrep{recs: recs, words: map[string][]int32{}}
	for i := range recs {
		for _, w := range evalWords(evalText(&recs[i])) {
			list := g.words[w]
			if n := len(list); n == 0 || list[n-1] != int32(i) {
				g.words[w] = append(list, int32(i))
			}
		}
	}
	return g
}

// holding returns the records of project holding every word of phrase,
// in order (its words as a person would grep them, all of them); past
// most+1 of them it stops looking.
func (g *evalGrep) holding(project, phrase string, most int) []int32 {
	words := evalWords(phrase)
	if len(words) == 0 {
		return nil
	}
	var out []int32
	for _, i := range g.words[words[0]] {
		if g.recs[i].Project != project {
			continue
		}
		ok := true
		for _, w := range words[1:] {
			if _, found := slices.BinarySearch(g.words[w], i); !found {
				ok = false
				break
			}
		}
		if ok {
			if out = append(out, i); len(out) > most {
				break
			}
		}
	}
	return out
}

// search ranks the records of q's project (made before q.before, when
// set) by how many of the question's distinct words they hold, the newest
// among equals, and returns the ids of the first limit.
func (g *evalGrep) search(q evalQuestion, limit int) []uint64 {
	count := map[int32]int{}
	seen := map[string]bool{}
	for _, w := range evalWords(q.text) {
		if len(w) < 3 || evalStop[w] || seen[w] {
			continue
		}
		seen[w] = true
		for _, i := range g.words[w] {
			o := &g.recs[i]
			if o.Project != q.project || !q.before.IsZero() && !o.Time.Before(q.before) {
				continue
			}
			count[i]++
		}
	}
	hits := make([]int32, 0, len(count))
	for i := range count {
		hits = append(hits, i)
	}
	slices.SortFunc(hits, func(a, b int32) int {
		return cmp.Or(cmp.Compare(count[b], count[a]), g.recs[b].Time.Compare(g.recs[a].Time), cmp.Compare(b, a))
	})
	out := make([]uint64, 0, limit)
	for _, i := range hits[:min(limit, len(hits))] {
		out = append(out, g.recs[i].ID)
	}
	return out
}

// evalStop are words a person leaves out of a grep.
var evalStop = map[string]bool{"the": true, "and": true, "for": true, "with": true, "was": true, "are": true,
	"why": true, "how": true, "what": true, "when": true, "where": true, "our": true, "that": true, "this": true,
	"from": true, "into": true, "does": true, "did": true, "not": true, "can": true, "their": true, "they": true,
	"have": true, "has": true, "were": true, "which": true, "who": true, "you": true, "there": true, "again": true,
	"please": true, "should": true, "could": true, "would": true, "will": true, "but": true, "now": true, "then": true}

// drawQuestions draws at most perKind questions of each kind from the
// records, spread evenly over them in the order of their ids, so that the
// same memory gives the same questions.
func drawQuestions(recs []memory.Observation, g *evalGrep, perKind int) []evalQuestion {
	cands := map[string][]evalQuestion{}
	asked := map[string]bool{} // kind, project and text: each asked once
	add := func(q evalQuestion) {
		k := q.kind + "\x00" + q.project + "\x00" + strings.ToLower(q.text)
		if asked[k] {
			return
		}
		asked[k] = true
		cands[q.kind] = append(cands[q.kind], q)
	}
	// rare adds a question whose answers are the records holding phrase,
	// when few do. Each phrase of a project is looked at once.
	tried := map[string]bool{}
	rare := func(kind, project, phrase string) {
		k := project + "\x00" + strings.ToLower(phrase)
		if tried[k] {
			return
		}
		tried[k] = true
		held := g.holding(project, phrase, evalRare)
		if len(held) == 0 || len(held) > evalRare {
			return
		}
		q := evalQuestion{kind: kind, project: project, text: phrase, answers: map[uint64]bool{}}
		for _, i := range held {
			q.answers[recs[i].ID] = true
		}
		add(q)
	}
	files := map[string]map[string][]int{} // project → file → records touching it
	for i := range recs {
		o := &recs[i]
		if files[o.Project] == nil {
			files[o.Project] = map[string][]int{}
		}
		for _, f := range o.Files() {
			files[o.Project][f] = append(files[o.Project][f], i)
		}
	}
	for i := range recs {
		o := &recs[i]
		if o.Tool == "" {
			continue // what was said, saved or asked; the kinds are of real events
		}
		for _, t := range evalTokens(o.Title + "\n" + o.Evidence + "\n" + strings.Join(o.Facts, "\n")) {
			if evalTestName(t) {
				rare("test", o.Project, t)
			} else if evalIdentifier(t) {
				rare("identifier", o.Project, t)
			}
		}
		for _, f := range o.Facts {
			if e, ok := strings.CutPrefix(f, "error: "); ok && len(evalWords(e)) >= 3 {
				rare("error", o.Project, memory.Clip(e, 160))
			}
		}
		for _, f := range o.FilesModified {
			if n := len(files[o.Project][f]); n > 0 && n <= evalRare {
				q := evalQuestion{kind: "path", project: o.Project, text: f, answers: map[uint64]bool{}}
				for _, j := range files[o.Project][f] {
					q.answers[recs[j].ID] = true
				}
				add(q)
			}
		}
	}
	// A turn's prompt against the records made before it: the earlier
	// records of the files the turn changed answer.
	type turnKey struct {
		session uint64
		prompt  int
	}
	turns := map[turnKey][]int{}
	var order []turnKey
	for i := range recs {
		o := &recs[i]
		if o.SessionID == 0 || o.PromptNumber == 0 || strings.TrimSpace(o.Request) == "" {
			continue
		}
		k := turnKey{o.SessionID, o.PromptNumber}
		if turns[k] == nil {
			order = append(order, k)
		}
		turns[k] = append(turns[k], i)
	}
	for _, k := range order {
		idx := turns[k]
		first := recs[idx[0]]
		changed := map[string]bool{}
		for _, i := range idx {
			if recs[i].Time.Before(first.Time) {
				first = recs[i]
			}
			for _, f := range recs[i].FilesModified {
				changed[f] = true
			}
		}
		q := evalQuestion{kind: "prompt", project: first.Project, text: memory.Clip(strings.Join(strings.Fields(first.Request), " "), 500),
			answers: map[uint64]bool{}, before: first.Time}
		for f := range changed {
			for _, j := range files[first.Project][f] {
				if recs[j].Time.Before(first.Time) {
					q.answers[recs[j].ID] = true
				}
			}
		}
		if len(q.answers) > 0 {
			add(q)
		}
	}
	var out []evalQuestion
	for _, kind := range evalKinds {
		c := cands[kind]
		if len(c) <= perKind {
			out = append(out, c...)
			continue
		}
		for i := range perKind {
			out = append(out, c[i*len(c)/perKind])
		}
	}
	return out
}

// evalTokens are the identifier-like tokens of text: runs of letters,
// digits and underscores, in their case.
func evalTokens(text string) []string {
	return strings.FieldsFunc(text, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_'
	})
}

// evalIdentifier reports whether a token looks like a name in code:
// at least 6 characters, and camelCase, snake_case or letters with
// digits; not a number, a hash or a plain word.
func evalIdentifier(t string) bool {
	if len(t) < 6 || len(t) > 64 {
		return false
	}
	var lower, upper, digit, under, hump bool
	prev := rune(0)
	for _, r := range t {
		switch {
		case unicode.IsLower(r):
			lower = true
		case unicode.IsUpper(r):
			upper = true
			if unicode.IsLower(prev) {
				hump = true
			}
		case unicode.IsDigit(r):
			digit = true
		case r == '_':
			under = true
		}
		prev = r
	}
	if !lower && !upper {
		return false
	}
	if digit && !under && !hump {
		// Letters with digits only: a hash or an id, unless it reads as a
		// word with a number (utf8, sha256, v2Client).
		return false
	}
	return hump || under && len(strings.Trim(t, "_")) >= 6 && strings.Contains(strings.Trim(t, "_"), "_")
}

// evalTestName reports whether a token names a test: TestX, test_x.
func evalTestName(t string) bool {
	if rest, ok := strings.CutPrefix(t, "Test"); ok && len(rest) >= 3 {
		r := []rune(rest)[0]
		return unicode.IsUpper(r) || r == '_'
	}
	rest, ok := strings.CutPrefix(t, "test_")
	return ok && len(rest) >= 3
}
