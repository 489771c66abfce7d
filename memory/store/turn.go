package store

import (
	"context"
	"errors"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/transcript"
	"github.com/mnemo-dev/mnemo/vector"
)

// What a turn said: at a turn's end (Stop) the daemon reads the texts the
// agent wrote in it from a Claude Code session's transcript — never the
// hook — cleans them as everything stored is cleaned, and queues them
// with the turn's stop event. The memory agent makes the records of what
// the turn said of them (memory/local: findings, decisions); the store
// gives each tool record of the turn the text the agent wrote just before
// the call (Observation.Why), when the stop event is committed.

// claudeCode is the platform of Claude Code's sessions, whose
// transcripts memory/transcript reads.
const claudeCode = "claude-code"

// transcriptTailBytes bounds the bytes of a transcript read at a turn's
// end (cmd/mnemo-bench measures the read).
const transcriptTailBytes = transcript.DefaultMaxBytes

// turnTexts reads the texts of the turn that just ended from the
// session's transcript: for a live turn end (not history brought in after
// the fact: the transcript's end is no longer that turn) of a Claude Code
// session whose turn is not private and whose capture is not paused.
// Nothing read is kept before it is cleaned (cleanTexts); a transcript
// that cannot be read gives no texts.
func (m *Memory) turnTexts(ctx context.Context, p memory.StopParams, project string) []memory.TurnText {
	if p.TranscriptPath == "" || !p.At.IsZero() && m.now().Sub(p.At) >= liveSlack {
		return nil
	}
	sess, err := m.Session(ctx, p.ContentSessionID)
	if err != nil || sess.Platform != claudeCode || sess.PromptPrivate(sess.PromptCounter) || m.capturePaused(sess.Project) != "" {
		return nil
	}
	start := time.Now()
	t, err := transcript.ReadLastTurn(p.TranscriptPath, transcriptTailBytes)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// Not written (--no-session-persistence) or not yet.
		m.log.Debug("no transcript at the turn's end", "session", sess.ID, "err", err)
		return nil
	case err != nil:
		m.log.Warn("read the transcript at the turn's end", "session", sess.ID, "err", err)
		return nil
	}
	m.log.Debug("read the turn's texts", "session", sess.ID, "texts", len(t.Texts), "bytes", t.Read, "complete", t.Complete, "took", time.Since(start))
	return t.Texts
}

// withAnswer ends a turn's texts with the answer the host's hook sent,
// unless they end with it already: Claude Code writes its transcript
// asynchronously, and the last text may not be there yet at Stop.
func withAnswer(texts []memory.TurnText, answer string) []memory.TurnText {
	answer = strings.TrimSpace(answer)
	if answer == "" {
		return texts
	}
	if n := len(texts); n > 0 && strings.TrimSpace(texts[n-1].Text) == answer {
		return texts
	}
	return append(texts[:len(texts):len(texts)], memory.TurnText{Text: answer})
}

// cleanTexts strips private parts from a turn's texts and redacts their
// secrets, then bounds them (memory.BoundTexts).
func (m *Memory) cleanTexts(texts []memory.TurnText) []memory.TurnText {
	out := make([]memory.TurnText, 0, len(texts))
	for _, t := range texts {
		t.Text = m.clean(t.Text, memory.MaxTurnTextBytes)
		out = append(out, t)
	}
	return memory.BoundTexts(out)
}

// maxWhyBytes bounds what a tool record keeps of the text before its call.
const maxWhyBytes = 1 << 10

// whys are the texts of a stop event that came before tool calls, by the
// call's tool use id.
func whys(ev *memory.Event) map[string]string {
	var out map[string]string
	for _, t := range ev.Texts {
		for _, id := range t.ToolUseIDs {
			if out == nil {
				out = map[string]string{}
			}
			out[id] = t.Text
		}
	}
	return out
}

// giveWhys sets, in txn, the Why of the records of a turn made from the
// tool calls a stop event's texts explain, and returns them as changed
// (to index again once committed); a record whose why explains its call
// joins what was learned. A record that has its why keeps it.
func (m *Memory) giveWhys(txn *badger.Txn, ev *memory.Event, turn []memory.Observation) ([]memory.Observation, error) {
	byID := whys(ev)
	if len(byID) == 0 {
		return nil, nil
	}
	var changed []memory.Observation
	for _, o := range turn {
		why, ok := byID[o.ToolUseID]
		if !ok || o.ToolUseID == "" || o.Why != "" {
			continue
		}
		o.Why = m.clean(why, maxWhyBytes)
		if err := setJSON(txn, idKey(pObs, o.ID), &o); err != nil {
			return nil, err
		}
		if learned(&o) {
			// A why that explains its call is what was learned: the
			// context leads with it (learned).
			if err := txn.Set(projectKey(pObsLearned, o.Project, o.Time, o.ID), nil); err != nil {
				return nil, err
			}
		}
		changed = append(changed, o)
	}
	return changed, nil
}

// indexWhys indexes again the records that got their why, with their
// sessions' platform: keyword and vector search find them by it.
func (m *Memory) indexWhys(ctx context.Context, obs []memory.Observation) {
	if len(obs) == 0 {
		return
	}
	docs := make([]vector.Doc, len(obs))
	for i := range obs {
		docs[i] = DocOf(&obs[i])
	}
	if err := m.indexDocs(ctx, docs); err != nil {
		m.log.Error("index the records' whys", "err", err)
	}
}

// maxEarlierFiles bounds the files a record of what was said gets from
// the work it follows up.
const maxEarlierFiles = 8

// tieToEarlierWork gives the records a turn's end made of what was said
// (a finding, the prompt kept as a record), when the turn touched no file
// (it talked, or ran a command: a benchmark, the tests) and they name
// none, the files of the work they follow up: those of the session's
// files their text names, else those that the session's latest turn that
// changed files changed. "What does that cost us?", "why not sync.Map?"
// are asked of the work just done, and the answer, which holds the
// reason, named no file: search found it, and could not tell what it was
// about. A decision is left as it is: it states what is chosen from now
// on, not what was done.
func (m *Memory) tieToEarlierWork(sessionID uint64, prompt int, obs []memory.Observation) error {
	if !slices.ContainsFunc(obs, needsEarlierFiles) {
		return nil
	}
	var session []memory.Observation
	err := m.store.view(func(txn *badger.Txn) error {
		var err error
		session, err = m.store.sessionObservations(txn, sessionID, -1)
		return err
	})
	if err != nil {
		return err
	}
	last := 0 // the latest earlier turn that changed files
	var known []string
	for _, o := range session {
		if o.PromptNumber == prompt && len(o.Files()) > 0 {
			return nil // the turn worked on files of its own
		}
		if o.PromptNumber < prompt && len(o.FilesModified) > 0 {
			last = max(last, o.PromptNumber)
		}
		if o.PromptNumber < prompt {
			known = append(known, o.Files()...)
		}
	}
	if last == 0 {
		return nil
	}
	var changed []string
	for _, o := range session {
		if o.PromptNumber == last {
			changed = append(changed, o.FilesModified...)
		}
	}
	changed = memory.Dedupe(changed, maxEarlierFiles)
	known = memory.Dedupe(known, 1<<10)
	for i := range obs {
		o := &obs[i]
		if !needsEarlierFiles(*o) {
			continue
		}
		text := o.Title + "\n" + o.Narrative + "\n" + strings.Join(o.Facts, "\n") + "\n" + o.Request
		var named []string
		for _, f := range known {
			base := f[strings.LastIndexByte(f, '/')+1:]
			if strings.Contains(text, f) || len(base) > 3 && strings.Contains(base, ".") && strings.Contains(text, base) {
				named = append(named, f)
			}
		}
		if len(named) > 0 {
			o.FilesRead = memory.Dedupe(named, maxEarlierFiles)
		} else {
			o.FilesRead = slices.Clone(changed)
		}
	}
	return nil
}

// needsEarlierFiles reports whether a record of what a turn said names no
// file and may be tied to the work it follows up (tieToEarlierWork).
func needsEarlierFiles(o memory.Observation) bool {
	return o.Tool == "" && o.Source != memory.SourceSaved && len(o.Files()) == 0 &&
		(o.Type == memory.TypeDiscovery || o.Type == memory.TypePrompt)
}
