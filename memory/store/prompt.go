package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
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

	// The relevance floor. A hit is recalled only with keyword evidence, a
	// keyword score (BM25) of at least promptKeywordShare of the best
	// keyword hit's, and a fused score of at least promptRecallMinScore.
	// The fused score is the hybrid search's reciprocal-rank score: high
	// for a hit that leads both rankings of a prompt whose terms the best
	// keyword hit holds (the keyword ranking weighs more the more of them
	// it holds), at most about 0.36. Being ranks, it cannot tell a hit
	// that holds the prompt's words from one that shares a single common
	// word with it but ranks second among few: the keyword share can.
	//
	// Chosen on the dev split of cmd/mnemo-eval's replay set (265
	// observations in 4 projects; 160 questions, 16 with no answer), each
	// question asked as the prompt of a new session, with both embedders.
	// The score floor is the lowest at which both stay quiet on every
	// unanswerable question (USE-Lite from 0.13, the hashing embedder from
	// 0.15; at 0.10 they spoke on 56% and 88% of them). The keyword share
	// drops lines that share only a common word with the prompt: over the
	// search's candidates, the share of lines naming a file that answers
	// went from 0.50 to 0.56 while the share of questions answered moved
	// by a point or less; 0.5 gave 0.65 but lost a quarter of the answers
	// to error messages. With this floor `go run ./cmd/mnemo-eval -splits
	// dev` gives, with either embedder: 67% of the answerable questions
	// answered (identifiers 97–100%, errors 91%, why 88–92%, paths 81–94%,
	// paraphrases none: they share no words with the memory), every
	// unanswerable one quiet, 3.8 lines a recall, 63–64% of the lines and
	// 83–84% of the first lines naming a file that answers.
	promptKeywordShare   = 0.3
	promptRecallMinScore = 0.15
)

// promptHits is what the prompt's search found: the hybrid ranking, and
// the keyword score of the keyword ranking's hits relative to its best.
type promptHits struct {
	hits    []vector.Hit
	keyword map[uint64]float64
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
		res := promptHits{hits: hits, keyword: make(map[uint64]float64, len(kw)), err: err}
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
	return h.KeywordRank > 0 && p.keyword[h.ID] >= promptKeywordShare && h.Score >= promptRecallMinScore
}

// recallFor picks, from the hits of a prompt's search (best first), the
// memories to give the session: above the floor, not given to the session
// yet, not made by it, one per title, within MaxPromptContextItems and
// MaxPromptContextBytes. It records the injection and returns the context
// and the ids, or nothing.
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
			used += len(row)
			titles[title] = true
			rows = append(rows, row)
			ids = append(ids, o.ID)
			inj.Items = append(inj.Items, memory.InjectionItem{ID: o.ID, Reason: fmt.Sprintf(
				"matches the prompt: score %.3f, keyword rank %d (%.0f%% of the best keyword score), vector rank %d",
				h.Score, h.KeywordRank, 100*found.keyword[h.ID], h.VectorRank)})
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

// promptRow is one observation's line in a prompt's recall: one line
// whatever its title holds.
func promptRow(o *memory.Observation) string {
	title := strings.Join(strings.Fields(o.Title), " ")
	row := fmt.Sprintf("- #%d · %s · %s", o.ID, o.Type, memory.Clip(title, 140))
	if files := o.Files(); len(files) > 0 && !strings.Contains(title, files[0]) {
		row += " · " + memory.Clip(strings.Join(strings.Fields(strings.Join(files, ", ")), " "), 80)
	}
	if o.State == memory.StateSuperseded {
		row += " [superseded by #" + strconv.FormatUint(o.SupersededBy, 10) + "]"
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
