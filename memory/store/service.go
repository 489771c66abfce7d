package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/google/uuid"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/local"
	"github.com/mnemo-dev/mnemo/memory/privacy"
	"github.com/mnemo-dev/mnemo/vector"
)

// Options configure a Memory.
type Options struct {
	// Dir is the Badger directory; ignored when InMemory.
	Dir      string
	InMemory bool
	// NoSync turns off the group sync of acknowledged writes (benchmarks):
	// they then survive a crash of the process, not of the machine.
	NoSync bool
	// Agent makes observations; local.Agent{} when nil.
	Agent memory.Agent
	// AgentsDir receives each memory session's audit trail
	// (<id>/conversation.json and <id>/stream.log); none when empty.
	AgentsDir string
	// SkipTools are tools whose events are not stored;
	// privacy.DefaultSkipTools when nil.
	SkipTools []string
	// Embedder embeds observations for semantic search; the hashing
	// embedder when nil. EmbedderNotice, when set, is shown in Status (why
	// a better embedder is not in use).
	Embedder       vector.Embedder
	EmbedderNotice string
	// ContextBytes is the SessionStart context budget; 8 KiB when 0.
	ContextBytes int
	// NoPromptRecall turns off UserPromptSubmit's recall: prompts are
	// stored and numbered, and get no context.
	NoPromptRecall bool
	// Paused are the projects whose capture or injection is paused, by
	// name: memory.PauseCapture, PauseInject or PauseAll.
	Paused map[string]string
	// SavePaused keeps the paused projects (the settings file) whenever
	// Pause or Resume changes them; nil keeps them in memory only.
	SavePaused func(map[string]string) error
	// Version is reported by Status.
	Version string
	Logger  *slog.Logger
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// ReviewAfter is how long a record whose file changed may go without
	// a confirmation before it needs review (memory.StateReview):
	// memory.ReviewAfter when 0; negative: at once.
	ReviewAfter time.Duration
}

// Memory is the running domain: the store, the stages, the worker that
// feeds the agent from the durable queue, and recall.
type Memory struct {
	store *database
	agent memory.Agent
	opts  Options
	log   *slog.Logger
	now   func() time.Time

	wake   chan struct{}
	cancel context.CancelFunc
	done   chan struct{}

	index    *vector.Index
	indexing indexState
	loaded   chan struct{} // closed once the index holds the stored observations
	loadFail atomic.Bool   // the index did not load whole
	indexGap atomic.Bool   // an observation Badger has could not be indexed
	// snapMu is held for reading by every change of the index with its
	// Badger commit, and for writing while a snapshot is taken, so that
	// the snapshot holds exactly what Badger had at its asOf.
	snapMu sync.RWMutex
	// snapGen is the index's generation that the snapshot file holds
	// (loaded or written); 0 when none does.
	snapGen atomic.Uint64
	bg      sync.WaitGroup // background indexing
	bgCtx   context.Context

	team    teamState   // team memory (team.go)
	watch   watchers    // Watch
	anchors anchorCheck // the states of observations' anchors

	paused  atomic.Pointer[pauses]
	pauseMu sync.Mutex // serializes Pause and Resume

	mu       sync.Mutex
	idle     *sync.Cond
	busy     bool
	runs     map[uint64]string // live agent runs by session id, this process only
	attempts map[uint64]int    // failed runs by event id
}

// Open opens the store and starts the worker. After a restart every live
// session gets forceInit (rule 3), and events left in the queue are
// processed again.
func Open(ctx context.Context, o Options) (*Memory, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Agent == nil {
		o.Agent = local.Agent{}
	}
	if o.SkipTools == nil {
		o.SkipTools = privacy.DefaultSkipTools
	}
	if o.ContextBytes <= 0 {
		o.ContextBytes = 8 << 10
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.ReviewAfter == 0 {
		o.ReviewAfter = memory.ReviewAfter
	}
	if o.Embedder == nil {
		o.Embedder = vector.NewHashEmbedder()
	}
	if !o.InMemory && o.Dir == "" {
		return nil, errors.New("open memory: no data directory")
	}
	if !o.InMemory {
		if err := os.MkdirAll(o.Dir, 0o700); err != nil {
			return nil, fmt.Errorf("open memory: %w", err)
		}
	}
	m := &Memory{
		agent: o.Agent, opts: o, log: o.Logger, now: o.Now,
		wake: make(chan struct{}, 1), done: make(chan struct{}), runs: map[uint64]string{}, attempts: map[uint64]int{},
	}
	if err := m.setPauses(o.Paused); err != nil {
		return nil, fmt.Errorf("open memory: %w", err)
	}
	st, err := openDatabase(o.Dir, databaseOptions{InMemory: o.InMemory, Durable: !o.NoSync, Logger: o.Logger})
	if err != nil {
		return nil, err
	}
	m.store = st
	m.anchors.now, m.anchors.after, m.anchors.seen = o.Now, max(o.ReviewAfter, 0), m.seenAs
	m.idle = sync.NewCond(&m.mu)
	m.index = vector.NewIndex(o.Embedder)
	wctx, cancel := context.WithCancel(context.Background())
	m.cancel, m.bgCtx = cancel, wctx
	if err := m.recover(ctx); err != nil {
		cancel()
		st.Close()
		return nil, err
	}
	if err := m.openTeam(ctx); err != nil {
		cancel()
		st.Close()
		return nil, err
	}
	// The index loads in the background: the stages, the context and the
	// status serve at once; a search waits for the load (Search).
	m.loaded = make(chan struct{})
	m.bg.Go(func() {
		defer close(m.loaded)
		if err := m.loadIndex(wctx); err != nil {
			m.loadFail.Store(true)
			if wctx.Err() == nil {
				m.log.Error("load the search index; search serves what it has", "err", err)
			}
		}
	})
	m.startReframe()
	go m.work(wctx)
	m.kick()
	return m, nil
}

// recover marks every live session that has a memory session forceInit:
// the agent runs of the previous process are gone (rule 3).
func (m *Memory) recover(ctx context.Context) error {
	return m.store.update(ctx, func(txn *badger.Txn) error {
		return scan(txn, pSession, false, func(item *badger.Item) error {
			var s memory.Session
			if err := item.Value(func(b []byte) error { return unmarshalValue(b, &s) }); err != nil {
				return err
			}
			if s.Status == memory.StatusCompleted || !s.HasMemorySession() || s.ForceInit {
				return nil
			}
			s.ForceInit = true
			return m.store.putSession(txn, &s)
		})
	})
}

// Close stops the worker (an event it is processing stays queued unless
// its results were committed) and closes the store.
func (m *Memory) Close() error {
	m.cancel()
	<-m.done
	m.bg.Wait()
	if err := m.writeSnapshot(); err != nil {
		m.log.Error("the next start loads the index from the store", "err", err)
	}
	return m.store.Close()
}

// AgentName names the memory agent in use.
func (m *Memory) AgentName() string { return m.agent.Name() }

func (m *Memory) project(explicit, cwd string) string {
	if p := strings.TrimSpace(explicit); p != "" {
		return p
	}
	if p := memory.ProjectOf(cwd); p != "" {
		return p
	}
	return "default"
}

// at is when a stage happened: the client's time for history brought in
// after the fact, else (zero, or still to come) now.
func (m *Memory) at(t time.Time) time.Time {
	now := m.now()
	if t.IsZero() || t.After(now) {
		return now
	}
	return t
}

// clean strips privacy tags and redacts secrets, logging when a text
// carried an unusual number of tags.
func (m *Memory) clean(s string, max int) string {
	stripped, n := privacy.Strip(s)
	if n > privacy.WarnTags {
		m.log.Warn("many privacy tags stripped", "count", n)
	}
	red, _ := privacy.Redact(stripped)
	return clipBytes(red, max)
}

func (m *Memory) cleanJSON(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return nil
	}
	out, err := privacy.CleanJSON(raw)
	if err != nil {
		// Not JSON: keep it as a cleaned string.
		out, _ = json.Marshal(m.clean(string(raw), memory.MaxToolJSONBytes))
		return out
	}
	// A big tool output keeps its shape, and the start and end of its
	// long texts (memory.ShrinkJSON).
	return memory.ShrinkJSON(out, memory.MaxToolJSONBytes)
}

// SessionStart creates the session if needed (idempotent) and returns the
// context to inject.
func (m *Memory) SessionStart(ctx context.Context, p memory.SessionStartParams) (memory.ContextResult, error) {
	if err := p.Validate(); err != nil {
		return memory.ContextResult{}, err
	}
	project := m.project(p.Project, p.Cwd)
	if existing, err := m.Session(ctx, p.ContentSessionID); err == nil && existing.Project != "" {
		project = existing.Project
	}
	pause := m.PausedFor(project)
	if pause.Capture || p.NoCapture {
		// Nothing is stored: no session is opened (one opened before the
		// pause is left as it is); the context is still given, and
		// audited, unless injection is paused too.
		res := memory.ContextResult{Project: project, ObservationIDs: []uint64{}}
		if existing, err := m.Session(ctx, p.ContentSessionID); err == nil {
			res.SessionID = existing.ID
		}
		if pause.Inject || p.NoContext {
			return res, nil
		}
		built, err := m.buildContext(ctx, project, p.Cwd, p.ContentSessionID, p.Source)
		built.SessionID = res.SessionID
		return built, err
	}
	var replay bool
	var seen func(*badger.Txn, *memory.Session) error
	if p.EventKey != "" {
		// The same start delivered twice (a host that runs both its own
		// hooks and Claude Code's) opens the session once and gives its
		// context once.
		seen = func(txn *badger.Txn, s *memory.Session) error {
			var first memory.ContextResult
			var err error
			if replay, err = seenEvent(txn, p.EventKey, &first); err != nil || replay {
				return err
			}
			return rememberEvent(txn, p.EventKey, memory.ContextResult{SessionID: s.ID, Project: s.Project})
		}
	}
	sess, err := m.store.ensureSession(ctx, p.ContentSessionID, project, p.Cwd, p.Platform, m.at(p.At), seen)
	if err != nil {
		return memory.ContextResult{}, fmt.Errorf("session start: %w", err)
	}
	if !replay {
		m.publish(memory.Change{Kind: memory.KindSession, Time: m.now(), ID: sess.ID, ContentSessionID: sess.ContentSessionID,
			Project: sess.Project, Host: sess.Platform, Status: sess.Status})
	}
	if replay || p.NoContext || pause.Inject {
		return memory.ContextResult{SessionID: sess.ID, Project: sess.Project, ObservationIDs: []uint64{}}, nil
	}
	res, err := m.buildContext(ctx, sess.Project, p.Cwd, sess.ContentSessionID, p.Source)
	res.SessionID = sess.ID
	return res, err
}

// UserPromptSubmit finds or creates the session (idempotent, also under
// racing callers: rule 1), numbers the prompt and stores it stripped, and
// returns the memories the prompt recalls (prompt.go). A prompt that is
// entirely private stores nothing, searches nothing and marks its turn
// private. A call that repeats an event key gets the first call's result
// without a recall.
func (m *Memory) UserPromptSubmit(ctx context.Context, p memory.UserPromptParams) (memory.UserPromptResult, error) {
	if err := p.Validate(); err != nil {
		return memory.UserPromptResult{}, err
	}
	now := m.at(p.At)
	private := privacy.IsFullyPrivate(p.Prompt)
	text := m.clean(p.Prompt, memory.MaxPromptBytes)
	project := m.project("", p.Cwd)
	existing, err := m.Session(ctx, p.ContentSessionID)
	if err == nil && existing.Project != "" {
		project = existing.Project
	}
	pause := m.PausedFor(project)
	// The recall's search runs while the prompt is written: one waits for
	// the embedder, the other for the disk.
	var found <-chan promptHits
	if !private && !m.opts.NoPromptRecall && !p.NoRecall && !pause.Inject && strings.TrimSpace(text) != "" {
		found = m.searchPrompt(ctx, project, text)
	}
	if pause.Capture || p.NoCapture {
		return m.recallOnly(ctx, p.ContentSessionID, project, existing, private, found)
	}
	var (
		res    memory.UserPromptResult
		replay bool
	)
	sess, err := m.store.ensureSession(ctx, p.ContentSessionID, project, p.Cwd, p.Platform, now, func(txn *badger.Txn, s *memory.Session) error {
		var err error
		if replay, err = seenEvent(txn, p.EventKey, &res); err != nil || replay {
			return err
		}
		s.PromptCounter++
		if s.Status != memory.StatusCompleted {
			s.Status = memory.StatusActive
		}
		res = memory.UserPromptResult{SessionID: s.ID, PromptNumber: s.PromptCounter, Private: private}
		if private {
			s.PrivatePrompts = append(s.PrivatePrompts, s.PromptCounter)
		} else if err := m.store.putPrompt(txn, &memory.Prompt{SessionID: s.ID, Number: s.PromptCounter, Text: text, Time: now}); err != nil {
			return err
		}
		return rememberEvent(txn, p.EventKey, res)
	})
	var search promptHits
	if found != nil {
		search = <-found
	}
	if err != nil {
		return memory.UserPromptResult{}, fmt.Errorf("user prompt: %w", err)
	}
	if !replay && !private {
		m.publish(memory.Change{Kind: memory.KindPrompt, Time: now, ID: sess.ID, ContentSessionID: sess.ContentSessionID,
			Project: sess.Project, Host: sess.Platform, PromptNumber: res.PromptNumber, Title: changeTitle(text)})
	}
	if found == nil || replay {
		return res, nil
	}
	if search.err != nil {
		level := slog.LevelWarn
		if errors.Is(search.err, errIndexLoading) {
			level = slog.LevelDebug // for the few seconds after a start
		}
		m.log.Log(ctx, level, "prompt recall: no search", "session", sess.ID, "prompt", res.PromptNumber, "err", search.err)
		return res, nil
	}
	res.Context, res.ObservationIDs, err = m.recallFor(ctx, sess, res.PromptNumber, &search)
	if err != nil {
		m.log.Warn("prompt recall", "session", sess.ID, "prompt", res.PromptNumber, "err", err)
	}
	return res, nil
}

// PostToolUse queues a tool event durably: when it returns, the event
// survives a crash of the process, and of the machine once the sync
// window has passed (SyncWindow). Skipped tools and events of a private turn are not
// stored.
func (m *Memory) PostToolUse(ctx context.Context, p memory.ToolUseParams) (memory.QueueResult, error) {
	if err := p.Validate(); err != nil {
		return memory.QueueResult{}, err
	}
	if privacy.Skipped(p.ToolName, m.opts.SkipTools) {
		return memory.QueueResult{Skipped: "tool " + p.ToolName + " is on the skip list"}, nil
	}
	ev := memory.Event{
		Kind: memory.EventTool, Cwd: p.Cwd, Platform: p.Platform,
		ToolName: p.ToolName, ToolUseID: p.ToolUseID, Source: p.Source,
		ToolInput: m.cleanJSON(p.ToolInput), ToolResponse: m.cleanJSON(p.ToolResponse),
	}
	// What the tool's file holds now is what the event saw, unless the
	// event is history brought in after the fact.
	if p.At.IsZero() || m.now().Sub(p.At) < liveSlack {
		ev.FileAnchors = fileAnchors(&ev)
	}
	return m.enqueue(ctx, p.ContentSessionID, m.project("", p.Cwd), p.EventKey, p.At, ev)
}

// EditSymbols names the declarations an edit of file adds, changes or
// removes, else those its pairs (old and new text) sit in, found in
// original (the file before the edit); none for a file that is not code.
// They are the names the local agent's observation of the edit gives,
// whichever agent makes observations: an editor says them in the summary
// of its saves (adapters/vscode).
func (m *Memory) EditSymbols(file, original string, pairs [][2]string) []string {
	return local.EditSymbols(file, original, pairs)
}

// Stop queues the turn that just ended: its summary, and the records of
// what it said (turn.go). The turn's texts are the client's (a
// back-fill's), or read here from a live Claude Code session's
// transcript; the answer the host's hook sent ends them when the
// transcript has not caught up with it.
func (m *Memory) Stop(ctx context.Context, p memory.StopParams) (memory.QueueResult, error) {
	if err := p.Validate(); err != nil {
		return memory.QueueResult{}, err
	}
	project := ""
	if p.Cwd != "" {
		project = m.project("", p.Cwd)
	}
	texts := p.Texts
	if texts == nil {
		texts = m.turnTexts(ctx, p, project)
	}
	ev := memory.Event{
		Kind:                 memory.EventStop,
		LastUserMessage:      m.clean(p.LastUserMessage, memory.MaxMessageBytes),
		LastAssistantMessage: m.clean(p.LastAssistantMessage, memory.MaxMessageBytes),
		Texts:                m.cleanTexts(withAnswer(texts, p.LastAssistantMessage)),
	}
	return m.enqueue(ctx, p.ContentSessionID, project, p.EventKey, p.At, ev)
}

func (m *Memory) enqueue(ctx context.Context, csid, project, eventKey string, at time.Time, ev memory.Event) (memory.QueueResult, error) {
	now := m.at(at)
	var res memory.QueueResult
	var eventID uint64 // kept across retries: a conflict does not use up an id
	err := m.store.updateDurable(ctx, func(txn *badger.Txn) error {
		res = memory.QueueResult{}
		if replay, err := seenEvent(txn, eventKey, &res); err != nil || replay {
			res = memory.QueueResult{Skipped: "duplicate: this event was already recorded", EventID: res.EventID}
			return err
		}
		sess, err := m.store.sessionByContentID(txn, csid)
		if project == "" {
			project = m.project("", ev.Cwd)
		}
		if err == nil {
			project = sess.Project
		}
		if why := m.capturePaused(project); why != "" {
			res.Skipped = why // and nothing is written, not even the event key
			return nil
		}
		if errors.Is(err, memory.ErrNotFound) {
			// Events may arrive before any prompt (editors, lost hooks):
			// the session is created here, never invented from another id.
			id, err := m.store.next("session")
			if err != nil {
				return err
			}
			sess = &memory.Session{ID: id, ContentSessionID: csid, Project: project, Cwd: ev.Cwd, Platform: ev.Platform, Status: memory.StatusInitialized, CreatedAt: now, UpdatedAt: now}
			if err := txn.Set(key(pContentIdx, []byte(csid)), be64(id)); err != nil {
				return err
			}
			if err := m.store.putSession(txn, sess); err != nil {
				return err
			}
		} else if err != nil {
			return err
		}
		if sess.PromptPrivate(sess.PromptCounter) {
			res.Skipped = "the prompt of this turn is private"
			return rememberEvent(txn, eventKey, res)
		}
		e := ev
		e.SessionID, e.ContentSessionID, e.PromptNumber = sess.ID, sess.ContentSessionID, sess.PromptCounter
		e.Project, e.Time, e.Queued = sess.Project, now, m.now()
		if eventID == 0 {
			id, err := m.store.next("event")
			if err != nil {
				return err
			}
			eventID = id
		}
		e.ID = eventID
		if err := m.store.putEvent(txn, &e); err != nil {
			return err
		}
		res.Queued, res.EventID = true, e.ID
		return rememberEvent(txn, eventKey, res)
	})
	if err != nil {
		return memory.QueueResult{}, fmt.Errorf("queue event: %w", err)
	}
	if res.Queued {
		m.kick()
	}
	return res, nil
}

// SessionEnd marks the session completed and ends its live agent run.
func (m *Memory) SessionEnd(ctx context.Context, p memory.SessionEndParams) (memory.SessionEndResult, error) {
	if err := p.Validate(); err != nil {
		return memory.SessionEndResult{}, err
	}
	now := m.at(p.At)
	var (
		status  memory.SessionStatus
		changed memory.Change
		replay  bool
	)
	err := m.store.updateDurable(ctx, func(txn *badger.Txn) error {
		var first memory.SessionEndResult
		var err error
		if replay, err = seenEvent(txn, p.EventKey, &first); err != nil || replay {
			// The same end taken again (the hooks' journal read again
			// after a crash) does not end a session resumed since.
			status = first.Status
			return err
		}
		sess, err := m.store.sessionByContentID(txn, p.ContentSessionID)
		if err != nil {
			return err
		}
		sess.Status, sess.CompletedAt, sess.UpdatedAt = memory.StatusCompleted, now, now
		status = sess.Status
		changed = memory.Change{Kind: memory.KindSession, Time: now, ID: sess.ID, ContentSessionID: sess.ContentSessionID,
			Project: sess.Project, Host: sess.Platform, Status: sess.Status}
		if err := m.store.putSession(txn, sess); err != nil {
			return err
		}
		return rememberEvent(txn, p.EventKey, memory.SessionEndResult{Status: status})
	})
	if errors.Is(err, memory.ErrNotFound) {
		if p.Cwd != "" {
			if why := m.capturePaused(m.project("", p.Cwd)); why != "" {
				// The session was never recorded.
				return memory.SessionEndResult{Skipped: why}, nil
			}
		}
		return memory.SessionEndResult{}, fmt.Errorf("session end: no session %q: %w", p.ContentSessionID, memory.ErrNotFound)
	}
	if err != nil {
		return memory.SessionEndResult{}, fmt.Errorf("session end: %w", err)
	}
	if !replay {
		m.publish(changed)
	}
	return memory.SessionEndResult{Status: status}, nil
}

// Session returns the session of a contentSessionId.
func (m *Memory) Session(ctx context.Context, csid string) (*memory.Session, error) {
	var s *memory.Session
	err := m.store.view(func(txn *badger.Txn) error {
		var err error
		s, err = m.store.sessionByContentID(txn, csid)
		return err
	})
	return s, err
}

// Sessions lists every session, newest first.
func (m *Memory) Sessions(ctx context.Context) ([]memory.Session, error) {
	var out []memory.Session
	err := m.store.view(func(txn *badger.Txn) error {
		return scan(txn, pSession, true, func(item *badger.Item) error {
			var s memory.Session
			if err := item.Value(func(b []byte) error { return unmarshalValue(b, &s) }); err != nil {
				return err
			}
			out = append(out, s)
			return nil
		})
	})
	return out, err
}

// Prompts returns a session's stored prompts in order.
func (m *Memory) Prompts(ctx context.Context, sessionID uint64) ([]memory.Prompt, error) {
	var out []memory.Prompt
	err := m.store.view(func(txn *badger.Txn) error {
		return scan(txn, key(pPrompt, be64(sessionID)), false, func(item *badger.Item) error {
			var p memory.Prompt
			if err := item.Value(func(b []byte) error { return unmarshalValue(b, &p) }); err != nil {
				return err
			}
			out = append(out, p)
			return nil
		})
	})
	return out, err
}

// Counts sizes the store.
//
// Observations and summaries are counted by their project-and-time index
// keys, one per record and written and deleted with it: those keys carry no
// value, so the count reads a few MB of tables at 100k observations instead
// of every record's block (70 MB, which then stays mapped in the daemon
// until dropped; a client that polls Status, as the soak and editors do,
// kept it there).
func (m *Memory) Counts(ctx context.Context) (memory.Counts, error) {
	var c memory.Counts
	err := m.store.view(func(txn *badger.Txn) error {
		c = memory.Counts{
			Sessions:     countPrefix(txn, pSession),
			Prompts:      countPrefix(txn, pPrompt),
			Observations: countPrefix(txn, pObsProject),
			Summaries:    countPrefix(txn, pSumProject),
			Queued:       countPrefix(txn, pQueue),
		}
		return nil
	})
	return c, err
}

// IndexLoaded is closed once the search index holds the stored
// observations (those still to embed go in later).
func (m *Memory) IndexLoaded() <-chan struct{} { return m.loaded }

// Status describes this memory.
func (m *Memory) Status(ctx context.Context) (memory.Status, error) {
	c, err := m.Counts(ctx)
	if err != nil {
		return memory.Status{}, err
	}
	dir := m.opts.Dir
	if m.opts.InMemory {
		dir = "(in memory)"
	}
	st := memory.Status{Version: m.opts.Version, DataDir: dir, Counts: c, Agent: m.agent.Name(), PID: os.Getpid(), Embedder: m.index.EmbedderID(), Notice: m.opts.EmbedderNotice}
	if ps := m.Paused(); len(ps) > 0 {
		st.Paused = ps
	}
	if m.store.durable != nil {
		s := m.store.syncStats()
		st.Sync = &memory.SyncStatus{WindowMs: millis(SyncWindow), Syncs: s.Syncs, LastLagMs: millis(s.LastLag), MaxLagMs: millis(s.MaxLag),
			MaxStartMs: millis(s.MaxStart), MaxSyncMs: millis(s.MaxSync), Errors: s.Errors}
	}
	select {
	case <-m.loaded:
	default:
		st.Embedder += " (loading the search index)"
	}
	if n := m.indexing.pending.Load(); n > 0 {
		st.Embedder += fmt.Sprintf(" (embedding: %d of %d left)", n, m.indexing.total.Load())
	}
	if r, ok := m.agent.(memory.AgentReporter); ok {
		if s := r.AgentStatus(); s != "" {
			st.Agent += " (" + s + ")"
		}
	}
	return st, nil
}

// WaitSynced returns once every write acknowledged before the call is on
// disk; at once when writes are not synced (InMemory, NoSync).
func (m *Memory) WaitSynced() error {
	if m.store.durable == nil {
		return nil
	}
	return m.store.durable.Wait()
}

// SyncStats returns how the group sync has kept its window (SyncWindow)
// since Open; zero when writes are not synced (InMemory, NoSync).
func (m *Memory) SyncStats() SyncStats { return m.store.syncStats() }

// millis is d in milliseconds, to a microsecond.
func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func clipBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && (s[cut]&0xC0) == 0x80 {
		cut--
	}
	return s[:cut] + "\n…[truncated]"
}

func newMemorySessionID() string { return uuid.NewString() }

// ResumeWith makes the next agent run of a session resume the given memory
// session, whatever is stored or running (rule 6: an explicit resume id
// wins).
func (m *Memory) ResumeWith(ctx context.Context, csid, memorySessionID string) error {
	if err := required("memorySessionId", memorySessionID); err != nil {
		return err
	}
	var sid uint64
	err := m.store.updateDurable(ctx, func(txn *badger.Txn) error {
		sess, err := m.store.sessionByContentID(txn, csid)
		if err != nil {
			return err
		}
		sid, sess.ResumeOverride = sess.ID, memorySessionID
		return m.store.putSession(txn, sess)
	})
	if err != nil {
		return fmt.Errorf("resume with %s: %w", memorySessionID, err)
	}
	m.mu.Lock()
	delete(m.runs, sid)
	m.mu.Unlock()
	return nil
}
