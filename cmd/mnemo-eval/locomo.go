package main

import (
	"archive/zip"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/store"
	"github.com/mnemo-dev/mnemo/vector"
)

// LoCoMo ("Evaluating Very Long-Term Conversational Memory of LLM
// Agents", ACL 2024): ten long conversations between two people, each in
// 19 to 32 dated sessions, and 1,986 questions, each with the turns that
// hold its answer (its evidence). The data is not ours: it is read from
// the benchmarks folder beside the checkout (locomo/locomo10.zip, as
// github.com/snap-research/locomo publishes it) and never copied here.
//
// It is replayed as a chat agent's memory would hold it: a project per
// conversation, a session per LoCoMo session, opened at its date, and
// each turn a prompt of that session ("Caroline: …"), its turn ended as
// a chat agent ends a turn without tool calls (a Stop without an
// answer). Photos are left out, as the peers leave them out: a chat
// agent's prompt hook receives the words, not the picture.
//
// Questions are scored as basic-memory scores them: searched within their
// conversation, a hit stands for the session it was made in (the ranking
// of sessions is the order of their first hit), and R@k is the share of
// the question's evidence sessions among the first k; also per turn, the
// share of its evidence turns.

// A LocomoConv is one conversation of LoCoMo with its questions.
type LocomoConv struct {
	ID        string // the file's name without .json: "26"
	Speakers  [2]string
	Sessions  []LocomoSession
	Questions []LocomoQuestion
}

// A LocomoSession is one dated session of a conversation.
type LocomoSession struct {
	N     int
	Date  time.Time
	Turns []LocomoTurn
}

// A LocomoTurn is one turn: "D<session>:<turn>", who said it and what.
type LocomoTurn struct {
	ID      string `json:"dia_id"`
	Speaker string `json:"speaker"`
	Text    string `json:"text"`
}

// A LocomoQuestion is one question and where its answer is.
type LocomoQuestion struct {
	Question string
	Category int
	// Evidence are the turns that hold the answer, "D<session>:<turn>",
	// and Sessions the sessions they are in.
	Evidence []string
	Sessions []string
}

// LocomoCategories names LoCoMo's categories as read from the data (the
// paper and the peers label them differently: basic-memory's converter
// calls 1 single-hop and 2 multi-hop): 1 asks for what several turns
// say, 2 when something happened, 3 what may be inferred, 4 what one
// turn says, 5 about something the conversation does not say (its
// evidence is the turn it twists).
var LocomoCategories = map[int]string{1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}

// locomoDateLayout is how LoCoMo writes a session's date: "1:56 pm on 8
// May, 2023".
const locomoDateLayout = "3:04 pm on 2 January, 2006"

var (
	locomoSessionKey = regexp.MustCompile(`^session_(\d+)$`)
	// An evidence entry is "D1:3", sometimes several in one string
	// ("D8:6; D9:17", "D9:1 D4:4"), once with a leading zero ("D30:05").
	locomoEvidence = regexp.MustCompile(`D(\d+):(\d+)`)
)

// LoadLocomo reads the conversations of LoCoMo's zip file.
func LoadLocomo(file string) ([]LocomoConv, error) {
	zr, err := zip.OpenReader(file)
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	var out []LocomoConv
	for _, f := range zr.File {
		if path.Ext(f.Name) != ".json" || f.FileInfo().IsDir() {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return nil, err
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", file, f.Name, err)
		}
		c, err := parseLocomo(strings.TrimSuffix(path.Base(f.Name), ".json"), data)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", file, f.Name, err)
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no conversation (<n>.json) in the zip", file)
	}
	slices.SortFunc(out, func(a, b LocomoConv) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}

// parseLocomo reads one conversation's file.
func parseLocomo(id string, data []byte) (LocomoConv, error) {
	c := LocomoConv{ID: id}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return c, err
	}
	for i, k := range []string{"speaker_a", "speaker_b"} {
		if err := json.Unmarshal(raw[k], &c.Speakers[i]); err != nil {
			return c, fmt.Errorf("%s: %w", k, err)
		}
	}
	for k, v := range raw {
		m := locomoSessionKey.FindStringSubmatch(k)
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		s := LocomoSession{N: n}
		if err := json.Unmarshal(v, &s.Turns); err != nil {
			return c, fmt.Errorf("%s: %w", k, err)
		}
		var date string
		if err := json.Unmarshal(raw[k+"_date_time"], &date); err != nil {
			return c, fmt.Errorf("%s_date_time: %w", k, err)
		}
		t, err := time.Parse(locomoDateLayout, date)
		if err != nil {
			return c, fmt.Errorf("%s_date_time: %w", k, err)
		}
		s.Date = t
		c.Sessions = append(c.Sessions, s)
	}
	if len(c.Sessions) == 0 {
		return c, fmt.Errorf("no session_<n>")
	}
	slices.SortFunc(c.Sessions, func(a, b LocomoSession) int { return cmp.Compare(a.N, b.N) })
	var qa []struct {
		Question string          `json:"question"`
		Category int             `json:"category"`
		Evidence json.RawMessage `json:"evidence"`
	}
	if err := json.Unmarshal(raw["qa"], &qa); err != nil {
		return c, fmt.Errorf("qa: %w", err)
	}
	for i, q := range qa {
		if LocomoCategories[q.Category] == "" {
			return c, fmt.Errorf("qa %d: unknown category %d", i, q.Category)
		}
		var ev []string
		if len(q.Evidence) > 0 && string(q.Evidence) != "null" {
			if err := json.Unmarshal(q.Evidence, &ev); err != nil {
				return c, fmt.Errorf("qa %d: evidence: %w", i, err)
			}
		}
		lq := LocomoQuestion{Question: q.Question, Category: q.Category}
		for _, e := range ev {
			for _, m := range locomoEvidence.FindAllStringSubmatch(e, -1) {
				s, _ := strconv.Atoi(m[1])
				t, _ := strconv.Atoi(m[2])
				lq.Evidence = append(lq.Evidence, turnKey(s, t))
				lq.Sessions = append(lq.Sessions, sessionKey(s))
			}
		}
		lq.Evidence, lq.Sessions = distinct(lq.Evidence), distinct(lq.Sessions)
		c.Questions = append(c.Questions, lq)
	}
	return c, nil
}

func sessionKey(n int) string     { return "S" + strconv.Itoa(n) }
func turnKey(s, t int) string     { return fmt.Sprintf("D%d:%d", s, t) }
func (c *LocomoConv) cwd() string { return "/home/chat/locomo-" + c.ID }

// csid is the content session id of one of the conversation's sessions.
func (c *LocomoConv) csid(n int) string { return fmt.Sprintf("locomo-%s-s%d", c.ID, n) }

// prompt is what the chat agent's prompt hook receives for a turn.
func (t *LocomoTurn) prompt() string { return t.Speaker + ": " + t.Text }

// locomoMemory is LoCoMo replayed into a memory, and where each of its
// records came from.
type locomoMemory struct {
	mem *store.Memory
	// turnOf maps a stored session's id and a prompt number to the turn
	// ("D1:3") the prompt was.
	turnOf map[uint64]map[int]string
	// records is how many records each conversation's sessions hold.
	records int
}

// replayLocomo plays every conversation into a fresh memory through the
// stages a chat agent's hooks call, then waits until the memory agent
// has made everything of them. progress, when set, is told how many
// turns of how many went in.
func replayLocomo(ctx context.Context, convs []LocomoConv, emb vector.Embedder, progress func(done, total int)) (*locomoMemory, error) {
	mem, err := store.Open(ctx, store.Options{InMemory: true, Embedder: emb, NoSync: true})
	if err != nil {
		return nil, err
	}
	lm := &locomoMemory{mem: mem, turnOf: map[uint64]map[int]string{}}
	fail := func(err error) (*locomoMemory, error) {
		mem.Close()
		return nil, err
	}
	total, done := 0, 0
	for _, c := range convs {
		for _, s := range c.Sessions {
			total += len(s.Turns)
		}
	}
	const platform = "chat"
	for _, c := range convs {
		for _, s := range c.Sessions {
			csid := c.csid(s.N)
			at := s.Date
			if _, err := mem.SessionStart(ctx, memory.SessionStartParams{ContentSessionID: csid, Cwd: c.cwd(), Source: "startup", Platform: platform, At: at}); err != nil {
				return fail(fmt.Errorf("locomo %s session %d: %w", c.ID, s.N, err))
			}
			for i, t := range s.Turns {
				// A turn a minute: LoCoMo dates the session, not its turns.
				at = s.Date.Add(time.Duration(i) * time.Minute)
				// NoRecall: what a prompt recalls changes nothing the
				// memory holds, and the questions are asked apart.
				r, err := mem.UserPromptSubmit(ctx, memory.UserPromptParams{ContentSessionID: csid, Cwd: c.cwd(), Prompt: t.prompt(), Platform: platform, At: at, NoRecall: true})
				if err != nil {
					return fail(fmt.Errorf("locomo %s %s: %w", c.ID, t.ID, err))
				}
				if lm.turnOf[r.SessionID] == nil {
					lm.turnOf[r.SessionID] = map[int]string{}
				}
				if m := locomoEvidence.FindStringSubmatch(t.ID); m != nil {
					sn, _ := strconv.Atoi(m[1])
					tn, _ := strconv.Atoi(m[2])
					lm.turnOf[r.SessionID][r.PromptNumber] = turnKey(sn, tn)
				}
				if _, err := mem.Stop(ctx, memory.StopParams{ContentSessionID: csid, Cwd: c.cwd(), At: at.Add(30 * time.Second)}); err != nil {
					return fail(fmt.Errorf("locomo %s %s: stop: %w", c.ID, t.ID, err))
				}
				done++
				if progress != nil && done%500 == 0 {
					progress(done, total)
				}
			}
			if _, err := mem.SessionEnd(ctx, memory.SessionEndParams{ContentSessionID: csid, Cwd: c.cwd(), Reason: "exit", At: at.Add(time.Minute)}); err != nil {
				return fail(fmt.Errorf("locomo %s session %d: end: %w", c.ID, s.N, err))
			}
		}
	}
	if err := mem.WaitIdle(ctx); err != nil {
		return fail(err)
	}
	counts, err := mem.Counts(ctx)
	if err != nil {
		return fail(err)
	}
	lm.records = counts.Observations
	return lm, nil
}

// turnsOf searches one question in its conversation and returns the
// turns of the hits, best first (a turn once per record: a turn may have
// several).
func (lm *locomoMemory) turnsOf(ctx context.Context, c *LocomoConv, question, mode string, limit int) ([]string, error) {
	res, err := lm.mem.Search(ctx, memory.SearchParams{Query: question, Project: memory.ProjectOf(c.cwd()), Mode: mode, Limit: limit})
	if err != nil {
		return nil, err
	}
	if len(res.Hits) == 0 {
		return nil, nil
	}
	ids := make([]uint64, len(res.Hits))
	for i, h := range res.Hits {
		ids[i] = h.ID
	}
	got, err := lm.mem.Get(ctx, memory.IDsParams{IDs: ids})
	if err != nil {
		return nil, err
	}
	byID := map[uint64]*memory.Observation{}
	for i := range got.Observations {
		byID[got.Observations[i].ID] = &got.Observations[i]
	}
	var out []string
	for _, id := range ids {
		if o := byID[id]; o != nil {
			if t := lm.turnOf[o.SessionID][o.PromptNumber]; t != "" {
				out = append(out, t)
			}
		}
	}
	return out, nil
}

// sessionsOf maps turns ("D3:7") to their sessions ("S3"), in order.
func sessionsOf(turns []string) []string {
	out := make([]string, 0, len(turns))
	for _, t := range turns {
		if m := locomoEvidence.FindStringSubmatch(t); m != nil {
			n, _ := strconv.Atoi(m[1])
			out = append(out, sessionKey(n))
		}
	}
	return out
}

// locomoResult is one ranking's scores, by category ("all" too), at
// both granularities.
type locomoResult struct {
	session, turn map[string]*graded
}

func newLocomoResult() *locomoResult {
	r := &locomoResult{session: map[string]*graded{}, turn: map[string]*graded{}}
	for _, k := range locomoRows() {
		r.session[k], r.turn[k] = &graded{}, &graded{}
	}
	return r
}

// locomoRows are the rows of the tables: all, then each category.
func locomoRows() []string {
	rows := []string{"all"}
	for c := 1; c <= 5; c++ {
		rows = append(rows, LocomoCategories[c])
	}
	return rows
}

func (r *locomoResult) add(q *LocomoQuestion, turns []string) {
	sessions := sessionsOf(turns)
	want := func(keys []string) map[string]bool {
		m := map[string]bool{}
		for _, k := range keys {
			m[k] = true
		}
		return m
	}
	for _, k := range []string{"all", LocomoCategories[q.Category]} {
		r.session[k].add(want(q.Sessions), sessions)
		r.turn[k].add(want(q.Evidence), turns)
	}
}

// reportLocomo replays LoCoMo with one embedder and prints its tables.
func reportLocomo(ctx context.Context, w, progress io.Writer, convs []LocomoConv, emb vector.Embedder) error {
	start := time.Now()
	turns, questions := 0, 0
	for _, c := range convs {
		for _, s := range c.Sessions {
			turns += len(s.Turns)
		}
		questions += len(c.Questions)
	}
	lm, err := replayLocomo(ctx, convs, emb, func(done, total int) {
		fmt.Fprintf(progress, "locomo: %d of %d turns replayed (%s)\n", done, total, time.Since(start).Round(time.Second))
	})
	if err != nil {
		return err
	}
	defer lm.mem.Close()
	replayed := time.Since(start)
	fmt.Fprintf(w, "\n== LoCoMo, %s embedder: %d conversations, %d turns → %d records (replayed in %s); %d questions, each searched within its conversation\n",
		emb.ID(), len(convs), turns, lm.records, replayed.Round(time.Millisecond), questions)

	// Search: ask for enough hits that ten distinct sessions are likely
	// among them (several turns of one session often match).
	const depth = 60
	rankings := []struct{ name, mode string }{{"keyword", memory.ModeKeyword}, {"vector", memory.ModeVector}, {"hybrid", memory.ModeHybrid}}
	results := map[string]*locomoResult{}
	for _, r := range rankings {
		results[r.name] = newLocomoResult()
	}
	results["grep"] = newLocomoResult()
	g := &textGrep{}
	for _, c := range convs {
		for _, s := range c.Sessions {
			for _, t := range s.Turns {
				g.add(c.ID, t.ID, t.prompt())
			}
		}
	}
	asked := 0
	for i := range convs {
		c := &convs[i]
		for j := range c.Questions {
			q := &c.Questions[j]
			for _, r := range rankings {
				turns, err := lm.turnsOf(ctx, c, q.Question, r.mode, depth)
				if err != nil {
					return fmt.Errorf("locomo %s question %d: %w", c.ID, j+1, err)
				}
				results[r.name].add(q, turns)
			}
			results["grep"].add(q, normTurns(g.search(c.ID, q.Question, depth*4)))
			if asked++; asked%500 == 0 {
				fmt.Fprintf(progress, "locomo: %d of %d questions asked (%s)\n", asked, questions, time.Since(start).Round(time.Second))
			}
		}
	}
	for _, level := range []string{"session", "turn"} {
		fmt.Fprintf(w, "\nper %s (R@k: the share of the question's evidence %ss among the first k distinct %ss of its hits; MRR within the first 10; quiet: no hit above the floor):\n", level, level, level)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "category\tn\tranking\tR@1\tR@5\tR@10\tMRR\tquiet\t")
		for _, cat := range locomoRows() {
			for _, name := range []string{"keyword", "vector", "hybrid", "grep"} {
				m := results[name].session[cat]
				if level == "turn" {
					m = results[name].turn[cat]
				}
				fmt.Fprintf(tw, "%s\t%.0f\t%s\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t\n", cat, m.n, name, m.Recall1(), m.Recall5(), m.Recall10(), m.MRR(), m.Quiet())
			}
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return locomoRecall(ctx, w, lm, convs)
}

// normTurns writes LoCoMo's turn ids as turnKey does ("D30:05" → "D30:5").
func normTurns(ids []string) []string {
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if m := locomoEvidence.FindStringSubmatch(id); m != nil {
			s, _ := strconv.Atoi(m[1])
			t, _ := strconv.Atoi(m[2])
			out = append(out, turnKey(s, t))
		}
	}
	return out
}

// locomoRecall asks every question as the first prompt of a new session
// of its conversation and prints, by category, how often the prompt's
// recall (UserPromptSubmit's context, the floor in force) named a record
// of an evidence session, and how often it gave nothing.
func locomoRecall(ctx context.Context, w io.Writer, lm *locomoMemory, convs []LocomoConv) error {
	type counts struct{ n, answered, quiet int }
	by := map[string]*counts{}
	for _, k := range locomoRows() {
		by[k] = &counts{}
	}
	for i := range convs {
		c := &convs[i]
		for j := range c.Questions {
			q := &c.Questions[j]
			r, err := lm.mem.UserPromptSubmit(ctx, memory.UserPromptParams{
				ContentSessionID: fmt.Sprintf("mnemo-eval-locomo-%s-q%d", c.ID, j+1), Cwd: c.cwd(), Prompt: q.Question, Platform: "mnemo-eval"})
			if err != nil {
				return fmt.Errorf("locomo %s question %d: prompt: %w", c.ID, j+1, err)
			}
			answered := false
			if len(r.ObservationIDs) > 0 {
				got, err := lm.mem.Get(ctx, memory.IDsParams{IDs: r.ObservationIDs})
				if err != nil {
					return err
				}
				for _, o := range got.Observations {
					if t := lm.turnOf[o.SessionID][o.PromptNumber]; t != "" && slices.Contains(q.Sessions, sessionsOf([]string{t})[0]) {
						answered = true
					}
				}
			}
			for _, k := range []string{"all", LocomoCategories[q.Category]} {
				by[k].n++
				if answered {
					by[k].answered++
				}
				if len(r.ObservationIDs) == 0 {
					by[k].quiet++
				}
			}
		}
	}
	fmt.Fprintf(w, "\nprompt recall (each question the first prompt of a new session of its conversation; the floor in force):\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "category\tn\tnamed an evidence session\tquiet\t")
	for _, k := range locomoRows() {
		c := by[k]
		fmt.Fprintf(tw, "%s\t%d\t%.3f\t%d (%.3f)\t\n", k, c.n, float64(c.answered)/float64(max(1, c.n)), c.quiet, float64(c.quiet)/float64(max(1, c.n)))
	}
	return tw.Flush()
}

// locomoFile is where LoCoMo is in the benchmarks folder.
func locomoFile(dir string) string { return filepath.Join(dir, "locomo", "locomo10.zip") }
