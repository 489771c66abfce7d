package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/local"
	"github.com/mnemo-dev/mnemo/vector"
)

// The worker drains the durable queue through the agent. An event leaves
// the queue only in the transaction that stores what it produced, so a
// crash at any point loses nothing and stores nothing twice.

func (m *Memory) kick() {
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

func (m *Memory) work(ctx context.Context) {
	defer close(m.done)
	backoff := 50 * time.Millisecond
	for {
		m.setBusy(true)
		n, err := m.drain(ctx)
		m.setBusy(false)
		if ctx.Err() != nil {
			return
		}
		wait := time.Duration(-1)
		if err != nil {
			m.log.Error("memory worker", "err", err)
			wait = backoff
			backoff = min(backoff*2, 30*time.Second)
		} else {
			backoff = 50 * time.Millisecond
			if n > 0 {
				continue
			}
		}
		var timer <-chan time.Time
		if wait >= 0 {
			timer = time.After(wait)
		}
		select {
		case <-ctx.Done():
			return
		case <-m.wake:
		case <-timer:
		}
	}
}

func (m *Memory) setBusy(b bool) {
	m.mu.Lock()
	m.busy = b
	m.mu.Unlock()
	if !b {
		m.idle.Broadcast()
	}
}

// maxAttempts is how many times the configured agent may fail on one
// event before the local agent makes its observation instead.
const maxAttempts = 5

// drain processes queued events in order; it returns how many it handled.
// An event that fails holds back the later events of its own session only:
// other sessions go on.
func (m *Memory) drain(ctx context.Context) (int, error) {
	events, err := m.store.queued(256)
	if err != nil {
		return 0, err
	}
	var (
		done    int
		errs    []error
		blocked = map[uint64]bool{}
	)
	for _, ev := range events {
		if err := ctx.Err(); err != nil {
			return done, err
		}
		if blocked[ev.SessionID] {
			continue
		}
		if err := m.process(ctx, ev); err != nil {
			blocked[ev.SessionID] = true
			errs = append(errs, fmt.Errorf("event %d (%s of session %q): %w", ev.ID, ev.Kind, ev.ContentSessionID, err))
			continue
		}
		done++
	}
	return done, errors.Join(errs...)
}

// WaitIdle blocks until the queue is empty, the worker is idle and the
// search index is loaded, or ctx ends.
func (m *Memory) WaitIdle(ctx context.Context) error {
	for {
		c, err := m.Counts(ctx)
		if err != nil {
			return err
		}
		m.mu.Lock()
		busy := m.busy
		m.mu.Unlock()
		loaded := false
		select {
		case <-m.loaded:
			loaded = true
		default:
		}
		if c.Queued == 0 && !busy && loaded {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// shouldResume is rule 3: resume the agent only when the session has a
// memory session, this is a continuation prompt, and forceInit is off.
func shouldResume(s *memory.Session, promptNumber int) bool {
	return s.HasMemorySession() && promptNumber > 1 && !s.ForceInit
}

func (m *Memory) process(ctx context.Context, ev memory.Event) error {
	var (
		sess *memory.Session
		in   memory.AgentInput
	)
	err := m.store.view(func(txn *badger.Txn) error {
		var err error
		sess, err = m.store.session(txn, ev.SessionID)
		if err != nil {
			return err
		}
		if p, err := m.store.prompt(txn, sess.ID, ev.PromptNumber); err == nil {
			in.Request = p.Text
		}
		in.Turn, err = m.store.sessionObservations(txn, sess.ID, ev.PromptNumber)
		return err
	})
	if errors.Is(err, memory.ErrNotFound) {
		m.log.Warn("dropping queued event of a missing session", "event", ev.ID, "session", ev.SessionID)
		return m.dropEvent(ctx, ev.ID)
	}
	if err != nil {
		return err
	}
	if sess.PromptPrivate(ev.PromptNumber) {
		return m.dropEvent(ctx, ev.ID)
	}
	in.Session, in.Events = *sess, []memory.Event{ev}

	m.mu.Lock()
	live := m.runs[sess.ID]
	m.mu.Unlock()
	switch {
	case sess.ResumeOverride != "":
		in.ResumeID = sess.ResumeOverride // an explicit resume id wins (rule 6)
	case live != "":
		in.ResumeID = live // the run this process started continues
	case shouldResume(sess, ev.PromptNumber):
		in.ResumeID = sess.MemorySessionID
	default:
		in.NewID = newMemorySessionID()
	}
	agent := m.agent
	m.mu.Lock()
	m.attempts[ev.ID]++
	if m.attempts[ev.ID] > maxAttempts && agent.Name() != (local.Agent{}).Name() {
		// The configured agent keeps failing on this event: the local
		// compressor makes its observation, in the same memory session
		// (it accepts any id).
		agent = local.Agent{}
		m.log.Warn("agent keeps failing; the local agent takes over this event", "event", ev.ID, "agent", m.agent.Name())
	}
	m.mu.Unlock()
	out, err := agent.Run(ctx, in)
	if errors.Is(err, memory.ErrFallback) {
		// The agent declines (budget spent, endpoint down): the local agent
		// makes the observations under the same memory session id, so a
		// session over budget does not get a new memory session per event.
		agent = local.Agent{}
		out, err = agent.Run(ctx, in)
	}
	if errors.Is(err, memory.ErrResumeRefused) && in.ResumeID != "" {
		// Rule 6: the agent does not know that memory session; start a
		// fresh one and record its id.
		m.log.Warn("agent refused resume; starting a fresh memory session", "session", sess.ContentSessionID, "memorySession", in.ResumeID)
		in.ResumeID, in.NewID = "", newMemorySessionID()
		out, err = agent.Run(ctx, in)
	}
	if err == nil && out.MemorySessionID == "" {
		err = errors.New("reported no memory session id")
	}
	if err == nil {
		err = m.commit(ctx, ev, sess, out)
	}
	if err != nil {
		return fmt.Errorf("agent %s: %w", agent.Name(), err)
	}
	m.mu.Lock()
	delete(m.attempts, ev.ID)
	m.mu.Unlock()
	if err := m.audit(in, out); err != nil {
		m.log.Warn("agent audit trail", "memorySession", out.MemorySessionID, "err", err)
	}
	m.mu.Lock()
	m.runs[sess.ID] = out.MemorySessionID
	m.mu.Unlock()
	return nil
}

// commit registers the memory session (rule 4: before anything made under
// it is stored), stores what the agent produced and deletes the event, in
// one transaction.
func (m *Memory) commit(ctx context.Context, ev memory.Event, sess *memory.Session, out memory.AgentOutput) error {
	if ev.Kind == memory.EventStop {
		// What a turn without tools said is about the work it follows (turn.go).
		if err := m.tieToEarlierWork(sess.ID, ev.PromptNumber, out.Observations); err != nil {
			return err
		}
	}
	// The observations are indexed (and embedded) before the transaction
	// that takes the event off the queue: once the queue is empty, search
	// finds everything. What the transaction does not store leaves the
	// index again.
	obs := make([]memory.Observation, len(out.Observations))
	docs := make([]vector.Doc, len(out.Observations))
	for i, o := range out.Observations {
		id, err := m.store.next("obs")
		if err != nil {
			return err
		}
		o.ID, o.Hash = id, ""
		o.SessionID, o.ContentSessionID, o.MemorySessionID = sess.ID, sess.ContentSessionID, out.MemorySessionID
		o.PromptNumber, o.Project, o.Host = ev.PromptNumber, sess.Project, sess.Platform
		if o.Source == "" {
			o.Source = cmp.Or(ev.Source, memory.SourceAgent)
		}
		if o.Time.IsZero() {
			o.Time = ev.Time
		}
		o.FileAnchors, o.State = anchorsFor(&o, ev.FileAnchors), ""
		m.scrubObservation(&o)
		obs[i], docs[i] = o, DocOf(&o)
	}
	if err := m.embedDocs(ctx, docs); err != nil {
		return fmt.Errorf("index: %w", err)
	}
	// The index and Badger change together, as a snapshot sees them.
	m.snapMu.RLock()
	defer m.snapMu.RUnlock()
	if err := m.index.Add(ctx, docs...); err != nil {
		return fmt.Errorf("index: %w", err)
	}
	var (
		unstored []uint64
		changes  []memory.Change
		pushes   int
		whyGiven []memory.Observation // records of the turn that got their why
	)
	now := m.now()
	err := m.store.update(ctx, func(txn *badger.Txn) error {
		unstored, changes, pushes, whyGiven = unstored[:0], changes[:0], 0, nil
		sess, err := m.store.session(txn, ev.SessionID)
		if err != nil {
			return err
		}
		if err := m.registerMemorySession(txn, sess, out.MemorySessionID); err != nil {
			return err
		}
		if out.AssistantUUID != "" {
			sess.Turns = setTurn(sess.Turns, memory.TurnAnchor{PromptNumber: ev.PromptNumber, MemorySessionID: out.MemorySessionID, AssistantUUID: out.AssistantUUID})
			if err := m.store.putSession(txn, sess); err != nil {
				return err
			}
		}
		for i := range obs {
			o := obs[i]
			// The same fact seen again is counted on its record.
			fk := o.FactKey()
			folded, err := m.store.fold(txn, &o, fk)
			if err != nil {
				return err
			}
			if folded != nil {
				unstored = append(unstored, o.ID)
				changes = append(changes, observationChange(folded))
				continue
			}
			// An edit that undoes an earlier one of its session marks both.
			undone, err := m.store.markReverted(txn, sess.ID, &o)
			if err != nil {
				return err
			}
			if undone != nil {
				changes = append(changes, observationChange(undone))
			}
			ok, err := m.store.putFact(txn, &o, fk)
			if err != nil {
				return err
			}
			if !ok && undone != nil {
				// Not stored (the same note again): the earlier edit was
				// not undone by a record.
				undone.Reverted = 0
				if err := setJSON(txn, idKey(pObs, undone.ID), undone); err != nil {
					return err
				}
			}
			if !ok {
				unstored = append(unstored, o.ID)
				continue
			}
			// A later observation of the same subject supersedes the
			// earlier one.
			older, err := m.store.supersede(txn, &o)
			if err != nil {
				return err
			}
			for _, p := range older {
				changes = append(changes, observationChange(p))
			}
			changes = append(changes, observationChange(&o))
			if queued, err := m.queuePush(txn, memory.OpPut, &o); err != nil {
				return err
			} else if queued {
				pushes++
			}
			if v := docs[i].Vector; v != nil {
				if err := txn.Set(idKey(pVector, o.ID), encodeVector(v)); err != nil {
					return err
				}
			}
		}
		if s := out.Summary; s != nil {
			sum := *s
			sum.ID = 0
			sum.SessionID, sum.ContentSessionID, sum.MemorySessionID = sess.ID, sess.ContentSessionID, out.MemorySessionID
			// The turn's end, when the event has its time (a back-fill's
			// is in the past).
			sum.PromptNumber, sum.Project, sum.Time = ev.PromptNumber, sess.Project, now
			if !ev.Time.IsZero() && ev.Time.Before(now) {
				sum.Time = ev.Time
			}
			m.scrubSummary(&sum)
			if err := m.store.putSummary(txn, &sum); err != nil {
				return err
			}
			changes = append(changes, memory.Change{Kind: memory.KindSummary, Time: sum.Time, ID: sum.ID, ContentSessionID: sum.ContentSessionID,
				Project: sum.Project, Host: sess.Platform, PromptNumber: sum.PromptNumber, Title: changeTitle(sum.Request)})
		}
		if ev.Kind == memory.EventStop && len(ev.Texts) > 0 {
			// The text before each tool call of the turn is that call's
			// why (turn.go).
			turn, err := m.store.sessionObservations(txn, sess.ID, ev.PromptNumber)
			if err != nil {
				return err
			}
			if whyGiven, err = m.giveWhys(txn, &ev, turn); err != nil {
				return err
			}
			for i := range whyGiven {
				if queued, err := m.queuePush(txn, memory.OpPut, &whyGiven[i]); err != nil {
					return err
				} else if queued {
					pushes++
				}
				changes = append(changes, observationChange(&whyGiven[i]))
			}
		}
		return txn.Delete(idKey(pQueue, ev.ID))
	})
	if err != nil {
		unstored = unstored[:0]
		for _, o := range obs {
			unstored = append(unstored, o.ID)
		}
	}
	m.index.Remove(unstored...)
	if err == nil {
		if len(ev.FileAnchors) > 0 {
			m.anchors.forgetSeen() // a record that saw its files as they are now
		}
		m.indexWhys(ctx, whyGiven)
		m.publish(changes...)
		m.queued(pushes)
	}
	return err
}

// registerMemorySession records id as the session's current memory
// session. A memory session belongs to exactly one content session
// (rule 5).
func (m *Memory) registerMemorySession(txn *badger.Txn, sess *memory.Session, id string) error {
	if sess.MemorySessionID == id && !sess.ForceInit && sess.ResumeOverride == "" {
		return nil
	}
	owner, err := getID(txn, key(pMemoryIdx, []byte(id)))
	switch {
	case err == nil && owner != sess.ID:
		return fmt.Errorf("memory session %s already belongs to session %d", id, owner)
	case err != nil && !errors.Is(err, memory.ErrNotFound):
		return err
	}
	if err := txn.Set(key(pMemoryIdx, []byte(id)), be64(sess.ID)); err != nil {
		return err
	}
	sess.MemorySessionID, sess.ForceInit, sess.ResumeOverride = id, false, ""
	if n := len(sess.MemorySessions); n == 0 || sess.MemorySessions[n-1] != id {
		sess.MemorySessions = append(sess.MemorySessions, id)
	}
	sess.UpdatedAt = m.now()
	return m.store.putSession(txn, sess)
}

func (m *Memory) dropEvent(ctx context.Context, id uint64) error {
	return m.store.update(ctx, func(txn *badger.Txn) error { return txn.Delete(idKey(pQueue, id)) })
}

// scrubSummary cleans every text field of a summary before storage.
func (m *Memory) scrubSummary(s *memory.Summary) {
	for _, f := range []*string{&s.Request, &s.Investigated, &s.Learned, &s.Completed, &s.NextSteps, &s.Notes} {
		*f = m.clean(*f, memory.MaxMessageBytes)
	}
	for _, list := range [][]string{s.FilesRead, s.FilesModified} {
		for i := range list {
			list[i] = m.clean(list[i], 4096)
		}
	}
}

// maxEvidenceBytes bounds an observation's evidence as stored: the local
// agent writes at most 2 KB; an import or another agent may not.
const maxEvidenceBytes = 4 << 10

// scrubObservation cleans every text field again before storage: agents
// (a remote model above all) may echo what they were shown.
func (m *Memory) scrubObservation(o *memory.Observation) {
	for _, f := range []*string{&o.Title, &o.Subtitle, &o.Narrative} {
		*f = m.clean(*f, memory.MaxMessageBytes)
	}
	o.Request = m.clean(o.Request, memory.MaxRequestExcerpt)
	o.Why = m.clean(o.Why, maxWhyBytes)
	o.Evidence = m.clean(o.Evidence, maxEvidenceBytes)
	for _, list := range [][]string{o.Facts, o.Concepts, o.FilesRead, o.FilesModified} {
		for i := range list {
			list[i] = m.clean(list[i], 4096)
		}
	}
}

// setTurn records the anchor of a turn, replacing an older one of the same
// prompt: the newest run of a turn is where it stands.
func setTurn(turns []memory.TurnAnchor, t memory.TurnAnchor) []memory.TurnAnchor {
	for i := range turns {
		if turns[i].PromptNumber == t.PromptNumber {
			turns[i] = t
			return turns
		}
	}
	return append(turns, t)
}
