package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/dgraph-io/badger/v4"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/vector"
)

// Recall at the moment of need: UserPromptSubmit searches the session's
// project with the prompt, while the prompt is being stored, and returns
// the few best memories that clear a relevance floor and that the session
// has not been given yet (by SessionStart's context or an earlier prompt's
// recall, read from the injection audit) nor made itself. What it returns
// is audited like SessionStart's context, with the source "prompt".

const (
	// promptRecallPool is how many hits of the prompt's search are
	// considered; the floor, the exclusions and the budget pick from them.
	promptRecallPool = 20
	// promptQueryBytes bounds the prompt text searched. The sentence
	// encoder reads its first 128 pieces anyway; the keyword terms of a
	// pasted log or file past this add cost, not relevance.
	promptQueryBytes = 2 << 10
	// promptRecallWait bounds the search. The hook waits about 0.9 s for
	// the whole call (hosts.EventBudget); a recall that is late is
	// dropped, and the prompt is answered without it.
	promptRecallWait = 300 * time.Millisecond

	// promptKeywordDepth is how deep the keyword ranking is read for the
	// floor's keyword evidence.
	promptKeywordDepth = 50

	// The relevance floor. A hit is recalled only with keyword evidence: a
	// keyword score (BM25) of at least promptKeywordShare of the best
	// keyword hit's, and at least promptCoverage of the prompt's terms
	// (weighted by IDF) — or promptAgreedCoverage of them when the
	// vector ranking also puts it first: the words and the meaning agree. The keyword share drops lines that share only a common word
	// with the prompt; the coverage keeps a prompt that nothing in memory
	// answers quiet, since what it shares with any record is a word or two.
	//
	// Chosen with the fusion's weights (vector/index.go) on the dev
	// splits of cmd/mnemo-eval (each replay question asked as the prompt
	// of a new session; the conversation tasks) and on DevBench, both
	// embedders: every unanswerable replay question stays quiet, 65% of the
	// answerable ones are answered (as under the reciprocal-rank floor
	// before), and LoCoMo's prompts name an evidence session for 0.64
	// instead of 0.55. Coverage 0.35–0.45 answered a point or two more and
	// spoke on unanswerable questions; see docs/benchmarks.md.
	promptKeywordShare   = 0.3
	promptCoverage       = 0.5
	promptAgreedCoverage = 0.2
)

// promptHits is what the prompt's search found: the hybrid ranking, and
// the keyword score of the keyword ranking's hits relative to its best.
type promptHits struct {
	hits    []vector.Hit
	keyword map[uint64]float64
	words   map[string]bool // the prompt's words (wordsOf), for the passages
	err     error
}

// errIndexLoading: the search index is not loaded yet; a prompt does not
// wait for it.
var errIndexLoading = errors.New("the search index is still loading")

// searchPrompt starts the search of a project for a prompt's recall and
// returns where its hits will come. The caller must receive from the channel.
func (m *Memory) searchPrompt(ctx context.Context, project, text string) <-chan promptHits {
	out := make(chan promptHits, 1)
	go func() {
		select {
		case <-m.loaded:
		default:
			out <- promptHits{err: errIndexLoading}
			return
		}
		ctx, cancel := context.WithTimeout(ctx, promptRecallWait)
		defer cancel()
		q := vector.Query{Text: cutBytes(text, promptQueryBytes), Project: project, Limit: promptRecallPool}
		hits, err := m.index.Search(ctx, q)
		if err != nil || len(hits) == 0 {
			out <- promptHits{err: err}
			return
		}
		q.Mode, q.Limit = vector.Keyword, promptKeywordDepth
		kw, err := m.index.Search(ctx, q)
		res := promptHits{hits: hits, keyword: make(map[uint64]float64, len(kw)), words: map[string]bool{}, err: err}
		for _, w := range wordsOf(q.Text) {
			res.words[w] = true
		}
		for _, h := range kw {
			if kw[0].Score > 0 {
				res.keyword[h.ID] = h.Score / kw[0].Score
			}
		}
		out <- res
	}()
	return out
}

// cutBytes cuts s to at most n bytes, at a character boundary, unmarked.
func cutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// relevant is the prompt recall's floor.
func (p *promptHits) relevant(h vector.Hit) bool {
	if h.KeywordRank == 0 || p.keyword[h.ID] < promptKeywordShare {
		return false
	}
	return h.Coverage >= promptCoverage || h.VectorRank == 1 && h.Coverage >= promptAgreedCoverage
}

// recallFor picks, from the hits of a prompt's search (best first), the
// memories to give the session: above the floor, not given to the session
// yet (given), not made by it, one per title, within MaxPromptContextItems
// and MaxPromptContextBytes; the best come with the passage of their text
// the prompt needs. It records the injection and returns the context and
// the ids, or nothing.
func (m *Memory) recallFor(ctx context.Context, sess *memory.Session, prompt int, found *promptHits) (string, []uint64, error) {
	head := fmt.Sprintf("<%s project=%q source=%q>\n# Memory for this prompt (id · type · title · files)\n", memory.ContextTag, sess.Project, memory.InjectionPrompt)
	const footer = "Details: the mnemo get tool, or `mnemo get <id>`.\n"
	closing := "</" + memory.ContextTag + ">\n"
	used := len(head) + len(footer) + len(closing)
	var (
		rows []string
		inj  = memory.Injection{ContentSessionID: sess.ContentSessionID, Project: sess.Project, Source: memory.InjectionPrompt, PromptNumber: prompt}
		ids  []uint64
	)
	err := m.store.view(func(txn *badger.Txn) error {
		given, err := m.given(txn, sess.ContentSessionID)
		if err != nil {
			return err
		}
		titles := map[string]bool{}
		for _, h := range found.hits {
			if len(rows) == memory.MaxPromptContextItems {
				break
			}
			if !found.relevant(h) || given[h.ID] {
				continue
			}
			o, err := m.store.observation(txn, h.ID)
			if errors.Is(err, memory.ErrNotFound) {
				continue // forgotten since the search
			}
			if err != nil {
				return err
			}
			title := strings.TrimSpace(o.Title)
			if sess.ID != 0 && o.SessionID == sess.ID || o.ContentSessionID == sess.ContentSessionID || title == "" || titles[title] {
				continue
			}
			// What no longer holds is not recalled as a fact. A superseded
			// record is: it was true when it was made (the error a test
			// gave before its fix), and the prompt asks for it; its row
			// names the record that says what is true now.
			switch o.State = m.anchors.state(o); o.State {
			case memory.StateGone, memory.StateReverted, memory.StateWrong:
				leaveOut(&inj, o)
				continue
			}
			row := promptRow(o)
			if used+len(row) > memory.MaxPromptContextBytes {
				continue // a shorter row may still fit
			}
			// What the record says that the prompt needs: for the best
			// rows, the passage of its text that shares the most of the
			// prompt's words, while the budget leaves room for a title row
			// after it.
			passage := ""
			if room := memory.MaxPromptContextBytes - used - len(row) - promptRowReserve; len(rows) < promptPassages && room > 60 {
				if passage = passageFor(o, found.words, min(room, promptPassage)); passage != "" {
					row += "  " + passage + "\n"
				}
			}
			used += len(row)
			titles[title] = true
			rows = append(rows, row)
			ids = append(ids, o.ID)
			inj.Items = append(inj.Items, memory.InjectionItem{ID: o.ID, Text: passage != "", Reason: fmt.Sprintf(
				"matches the prompt: score %.3f, keyword rank %d (%.0f%% of the best keyword score), holds %.0f%% of its terms, vector rank %d",
				h.Score, h.KeywordRank, 100*found.keyword[h.ID], 100*h.Coverage, h.VectorRank)})
		}
		return nil
	})
	if err != nil || len(rows) == 0 {
		return "", nil, err
	}
	text := head + strings.Join(rows, "") + footer + closing
	inj.Time, inj.Bytes = m.now(), len(text)
	if err := m.recordInjection(ctx, &inj); err != nil {
		// Unrecorded, the same memories could be given again; better than
		// a recall the audit cannot explain.
		return "", nil, fmt.Errorf("record the injection: %w", err)
	}
	return text, ids, nil
}

// The best promptPassages rows of a recall carry a passage of their
// record's text (at most promptPassage bytes each) while promptRowReserve
// bytes stay for the rows after them.
const (
	promptPassages   = 2
	promptPassage    = 320
	promptRowReserve = 150
)

// passageFor is the part of a record's text (narrative, why, facts,
// subtitle) that the prompt needs: its sentences that hold the most of
// the prompt's words, in their order, at most n bytes; the record's
// excerpt when none holds one.
func passageFor(o *memory.Observation, words map[string]bool, n int) string {
	type sentence struct {
		text  string
		score int
		at    int
	}
	var (
		sents []sentence
		all   strings.Builder // every sentence so far: one that repeats a part of another adds nothing
	)
	add := func(text string) {
		for _, s := range splitSentences(text) {
			if strings.Contains(all.String(), s) || strings.Contains(o.Title, s) {
				continue
			}
			all.WriteString(s + "\n")
			score := 0
			for _, w := range wordsOf(s) {
				if words[w] {
					score++
				}
			}
			sents = append(sents, sentence{s, score, len(sents)})
		}
	}
	add(strings.TrimPrefix(strings.TrimPrefix(o.Narrative, "The prompt states a choice: "), "The agent adopted a choice: "))
	add(o.Why)
	for _, f := range o.Facts {
		add(f)
	}
	add(o.Subtitle)
	best := slices.Clone(sents)
	slices.SortStableFunc(best, func(a, b sentence) int { return cmp.Compare(b.score, a.score) })
	if len(best) == 0 || best[0].score == 0 {
		return excerptOf(o, n)
	}
	var picked []sentence
	size := 0
	for _, s := range best {
		if s.score == 0 || size+len(s.text)+1 > n && len(picked) > 0 {
			break
		}
		picked = append(picked, s)
		size += len(s.text) + 1
	}
	slices.SortFunc(picked, func(a, b sentence) int { return cmp.Compare(a.at, b.at) })
	parts := make([]string, len(picked))
	for i, s := range picked {
		parts[i] = s.text
	}
	return memory.Clip(strings.Join(parts, " "), n)
}

// splitSentences splits text into sentences (at ". ", "! ", "? " and
// line breaks), each on one line.
func splitSentences(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		line = strings.Join(strings.Fields(strings.TrimLeft(strings.TrimSpace(line), "-*•>| ")), " ")
		for line != "" {
			i := strings.IndexAny(line, ".!?")
			for i >= 0 && i+1 < len(line) && line[i+1] != ' ' {
				j := strings.IndexAny(line[i+1:], ".!?")
				if j < 0 {
					i = -1
					break
				}
				i += j + 1
			}
			if i < 0 {
				out = append(out, line)
				break
			}
			if s := strings.TrimSpace(line[:i+1]); len(s) > 1 {
				out = append(out, s)
			}
			line = strings.TrimSpace(line[i+1:])
		}
	}
	return out
}

// wordsOf returns the lowercased words of text of three letters or more
// (identifiers whole: "client_encoding", "yaml.v3").
func wordsOf(text string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' && r != '-' && r != '.'
	}) {
		if w = strings.Trim(w, ".-"); len(w) >= 3 && !recallStopWords[w] {
			out = append(out, w)
		}
	}
	return out
}

// recallStopWords are words too common to tie a passage to a prompt.
var recallStopWords = map[string]bool{"the": true, "and": true, "for": true, "with": true, "that": true, "this": true, "from": true,
	"what": true, "when": true, "where": true, "which": true, "why": true, "how": true, "was": true, "were": true, "are": true,
	"our": true, "we're": true, "you": true, "your": true, "have": true, "has": true, "had": true, "not": true, "but": true,
	"can": true, "could": true, "should": true, "would": true, "will": true, "did": true, "does": true, "any": true, "all": true,
	"now": true, "new": true, "one": true, "its": true, "it's": true, "there": true, "them": true, "they": true, "then": true,
	"than": true, "into": true, "about": true, "also": true, "just": true, "some": true, "use": true, "used": true, "get": true}

// promptRow is one observation's line in a prompt's recall: one line
// whatever its title holds.
func promptRow(o *memory.Observation) string {
	title := strings.Join(strings.Fields(o.Title), " ")
	row := fmt.Sprintf("- #%d · %s · %s", o.ID, o.Type, memory.Clip(title, 140))
	if files := o.Files(); len(files) > 0 && !strings.Contains(title, files[0]) {
		row += " · " + memory.Clip(strings.Join(strings.Fields(strings.Join(files, ", ")), " "), 80)
	}
	switch o.State {
	case memory.StateSuperseded:
		row += " [superseded by #" + strconv.FormatUint(o.SupersededBy, 10) + "]"
	case memory.StateReview:
		row += " [needs review]"
	}
	return row + "\n"
}

// recallOnly answers the prompt of a session whose capture is paused:
// nothing is stored, not the prompt, not its number, not the session; the
// recall (when found is not nil) is given and audited against the session
// as it stands: the one recorded before the pause, or none.
func (m *Memory) recallOnly(ctx context.Context, csid, project string, existing *memory.Session, private bool, found <-chan promptHits) (memory.UserPromptResult, error) {
	sess := &memory.Session{ContentSessionID: csid, Project: project}
	if existing != nil {
		sess = existing
	}
	res := memory.UserPromptResult{SessionID: sess.ID, PromptNumber: sess.PromptCounter, Private: private}
	if found == nil {
		return res, nil
	}
	search := <-found
	if search.err != nil {
		m.log.Debug("prompt recall: no search", "err", search.err)
		return res, nil
	}
	var err error
	res.Context, res.ObservationIDs, err = m.recallFor(ctx, sess, res.PromptNumber, &search)
	if err != nil {
		m.log.Warn("prompt recall", "err", err)
	}
	return res, nil
}
