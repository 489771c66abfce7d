package store_test

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/local"
	"github.com/mnemo-dev/mnemo/memory/store"
)

// MustOpen opens a Memory in a temporary directory and closes it at the
// end of the test.
func MustOpen(tb testing.TB, o store.Options) *store.Memory {
	tb.Helper()
	if o.Dir == "" && !o.InMemory {
		o.Dir = filepath.Join(tb.TempDir(), "db")
	}
	m, err := store.Open(context.Background(), o)
	if err != nil {
		tb.Fatalf("open memory: %v", err)
	}
	tb.Cleanup(func() { m.Close() })
	return m
}

// testClock is a time for Options.Now that a test moves while the
// memory's worker reads it.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock(t time.Time) *testClock { return &testClock{t: t} }

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// Add moves the clock on by d.
func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func waitIdle(tb testing.TB, m *store.Memory) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := m.WaitIdle(ctx); err != nil {
		tb.Fatalf("wait for the queue to drain: %v", err)
	}
}

func mustPrompt(tb testing.TB, m *store.Memory, csid, prompt string) memory.UserPromptResult {
	tb.Helper()
	r, err := m.UserPromptSubmit(context.Background(), memory.UserPromptParams{ContentSessionID: csid, Cwd: "/src/shop", Prompt: prompt})
	if err != nil {
		tb.Fatalf("prompt: %v", err)
	}
	return r
}

func mustTool(tb testing.TB, m *store.Memory, csid, tool, input, response string) memory.QueueResult {
	tb.Helper()
	r, err := m.PostToolUse(context.Background(), memory.ToolUseParams{
		ContentSessionID: csid, Cwd: "/src/shop", ToolName: tool,
		ToolInput: json.RawMessage(input), ToolResponse: json.RawMessage(response),
	})
	if err != nil {
		tb.Fatalf("post tool use: %v", err)
	}
	return r
}

func mustSession(tb testing.TB, m *store.Memory, csid string) *memory.Session {
	tb.Helper()
	s, err := m.Session(context.Background(), csid)
	if err != nil {
		tb.Fatalf("session %s: %v", csid, err)
	}
	return s
}

func observationsOf(tb testing.TB, m *store.Memory, sessionID uint64) []memory.Observation {
	tb.Helper()
	res, err := m.Search(context.Background(), memory.SearchParams{Limit: memory.MaxLimit})
	if err != nil {
		tb.Fatal(err)
	}
	var ids []uint64
	for _, h := range res.Hits {
		ids = append(ids, h.ID)
	}
	if len(ids) == 0 {
		return nil
	}
	got, err := m.Get(context.Background(), memory.IDsParams{IDs: ids})
	if err != nil {
		tb.Fatal(err)
	}
	var out []memory.Observation
	for _, o := range got.Observations {
		if o.SessionID == sessionID {
			out = append(out, o)
		}
	}
	slices.SortFunc(out, func(a, b memory.Observation) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

const readInput = `{"file_path":"/src/shop/cart/total.go"}`
const readResponse = `{"type":"text","file":{"filePath":"/src/shop/cart/total.go","content":"package cart","numLines":1,"startLine":1,"totalLines":40}}`

// recordingAgent wraps the local agent, records every run and can refuse
// resumes or report ids of its own, like a real remote agent may.
type recordingAgent struct {
	mu       sync.Mutex
	runs     []memory.AgentInput
	refuse   map[string]bool // memory session ids it does not know
	ownID    string          // when set, reported instead of NewID
	failNext int             // fail this many runs with a transient error
}

func (a *recordingAgent) Name() string { return "recording" }

func (a *recordingAgent) Run(ctx context.Context, in memory.AgentInput) (memory.AgentOutput, error) {
	a.mu.Lock()
	a.runs = append(a.runs, in)
	fail := a.failNext > 0
	if fail {
		a.failNext--
	}
	refused := in.ResumeID != "" && a.refuse[in.ResumeID]
	own := a.ownID
	a.mu.Unlock()
	if fail {
		return memory.AgentOutput{}, errors.New("agent unavailable")
	}
	if refused {
		return memory.AgentOutput{}, fmt.Errorf("no conversation found with session ID %s: %w", in.ResumeID, memory.ErrResumeRefused)
	}
	out, err := local.Agent{}.Run(ctx, in)
	if own != "" && in.ResumeID == "" {
		out.MemorySessionID = own
	}
	return out, err
}

func (a *recordingAgent) Runs() []memory.AgentInput {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.runs)
}

// Rule 1: one contentSessionId maps to exactly one session, also when
// several hook processes race.
func TestRule1OneSessionPerContentSessionID(t *testing.T) {
	m := MustOpen(t, store.Options{})
	const n = 16
	numbers := make([]int, n)
	ids := make([]uint64, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			r, err := m.UserPromptSubmit(context.Background(), memory.UserPromptParams{ContentSessionID: "cc-race", Cwd: "/src/shop", Prompt: fmt.Sprintf("prompt %d", i)})
			if err != nil {
				t.Error(err)
				return
			}
			numbers[i], ids[i] = r.PromptNumber, r.SessionID
		})
	}
	wg.Wait()
	slices.Sort(numbers)
	for i, got := range numbers {
		if got != i+1 {
			t.Fatalf("prompt numbers = %v, want 1..%d", numbers, n)
		}
	}
	for _, id := range ids {
		if id != ids[0] {
			t.Fatalf("session ids differ: %v", ids)
		}
	}
	sessions, err := m.Sessions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(sessions) != 1 || sessions[0].PromptCounter != n {
		t.Fatalf("sessions = %+v, want one with %d prompts", sessions, n)
	}
	prompts, _ := m.Prompts(context.Background(), ids[0])
	if len(prompts) != n {
		t.Fatalf("stored %d prompts, want %d", len(prompts), n)
	}
	// SessionStart for the same id is idempotent too.
	r, err := m.SessionStart(context.Background(), memory.SessionStartParams{ContentSessionID: "cc-race", Cwd: "/src/shop"})
	if err != nil || r.SessionID != ids[0] {
		t.Fatalf("session start = %d, %v; want session %d", r.SessionID, err, ids[0])
	}
}

// Rule 2: memorySessionId is empty until the agent reports one; then it is
// the agent's id (our UUID when it accepts one).
func TestRule2MemorySessionIDEmptyUntilAgentReports(t *testing.T) {
	agent := &recordingAgent{failNext: 1}
	m := MustOpen(t, store.Options{Agent: agent})
	mustPrompt(t, m, "cc-2", "look at the cart total")
	if s := mustSession(t, m, "cc-2"); s.HasMemorySession() {
		t.Fatalf("memorySessionId = %q before the agent ran", s.MemorySessionID)
	}
	mustTool(t, m, "cc-2", "Read", readInput, readResponse)
	// The first run fails: still nothing registered, the event waits.
	deadline := time.Now().Add(5 * time.Second)
	for len(agent.Runs()) < 2 && time.Now().Before(deadline) {
		if s := mustSession(t, m, "cc-2"); s.HasMemorySession() && len(agent.Runs()) < 2 {
			t.Fatalf("memory session registered by a failed run")
		}
		time.Sleep(2 * time.Millisecond)
	}
	waitIdle(t, m)
	s := mustSession(t, m, "cc-2")
	runs := agent.Runs()
	if want := runs[len(runs)-1].NewID; s.MemorySessionID != want || want == "" {
		t.Fatalf("memorySessionId = %q, want the id offered to the agent %q", s.MemorySessionID, want)
	}
}

// Rule 3: resume only when memorySessionId is set AND promptNumber > 1 AND
// forceInit is off; never with a contentSessionId; after a restart live
// sessions get forceInit.
func TestRule3ResumeOnlyForContinuations(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	agent := &recordingAgent{}
	open := func() *store.Memory {
		m, err := store.Open(context.Background(), store.Options{Dir: dir, Agent: agent})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	m := open()
	mustPrompt(t, m, "cc-3", "first")
	mustTool(t, m, "cc-3", "Read", readInput, readResponse)
	waitIdle(t, m)
	first := mustSession(t, m, "cc-3").MemorySessionID
	if r := agent.Runs()[0]; r.ResumeID != "" || r.NewID == "" {
		t.Fatalf("first prompt: run %+v resumed; want a fresh memory session", r)
	}
	m.Close()

	// Restart: the live session gets forceInit, so prompt 2 runs fresh.
	m = open()
	if s := mustSession(t, m, "cc-3"); !s.ForceInit {
		t.Fatalf("after restart forceInit = false, want true")
	}
	mustPrompt(t, m, "cc-3", "second")
	mustTool(t, m, "cc-3", "Read", `{"file_path":"/src/shop/cart/tax.go"}`, `{}`)
	waitIdle(t, m)
	runs := agent.Runs()
	if r := runs[len(runs)-1]; r.ResumeID != "" {
		t.Fatalf("prompt 2 after restart resumed %q; want fresh (forceInit)", r.ResumeID)
	}
	s := mustSession(t, m, "cc-3")
	if s.ForceInit || s.MemorySessionID == first || len(s.MemorySessions) != 2 {
		t.Fatalf("after the fresh run: %+v; want forceInit off and a second memory session", s)
	}
	second := s.MemorySessionID
	if _, err := m.SessionEnd(context.Background(), memory.SessionEndParams{ContentSessionID: "cc-3", Reason: "other"}); err != nil {
		t.Fatal(err)
	}
	m.Close()

	// A completed session is not live: after a restart it keeps its memory
	// session, and a continuation prompt resumes it.
	m = open()
	defer m.Close()
	mustPrompt(t, m, "cc-3", "third")
	mustTool(t, m, "cc-3", "Read", `{"file_path":"/src/shop/cart/discount.go"}`, `{}`)
	waitIdle(t, m)
	runs = agent.Runs()
	if r := runs[len(runs)-1]; r.ResumeID != second {
		t.Fatalf("prompt 3 resumed %q, want %q", r.ResumeID, second)
	}
	for _, r := range runs {
		if r.ResumeID == "cc-3" || r.NewID == "cc-3" {
			t.Fatalf("a run used the contentSessionId as a memory session id: %+v", r)
		}
	}

	// A first prompt never resumes, even with a memory session.
	mustPrompt(t, m, "cc-3b", "only")
	mustTool(t, m, "cc-3b", "Read", readInput, readResponse)
	waitIdle(t, m)
	runs = agent.Runs()
	if r := runs[len(runs)-1]; r.ResumeID != "" {
		t.Fatalf("a first prompt resumed %q", r.ResumeID)
	}
}

// Rule 4: observations carry the memorySessionId they were made under;
// none is stored before one is registered; a session's several memory
// sessions are all found by its contentSessionId.
func TestRule4ObservationsCarryRegisteredMemorySession(t *testing.T) {
	agent := &recordingAgent{failNext: 3}
	m := MustOpen(t, store.Options{Agent: agent})
	mustPrompt(t, m, "cc-4", "fix the cart")
	mustTool(t, m, "cc-4", "Read", readInput, readResponse)
	sess := mustSession(t, m, "cc-4")
	if got := observationsOf(t, m, sess.ID); len(got) != 0 || sess.HasMemorySession() {
		t.Fatalf("stored %d observations before a memory session was registered", len(got))
	}
	waitIdle(t, m)
	sess = mustSession(t, m, "cc-4")
	obs := observationsOf(t, m, sess.ID)
	if len(obs) != 1 || obs[0].MemorySessionID != sess.MemorySessionID {
		t.Fatalf("observations = %+v, want one under %s", obs, sess.MemorySessionID)
	}
	// A forced fresh run starts a second memory session for the same
	// content session.
	if err := m.ResumeWith(context.Background(), "cc-4", "explicit-0001"); err != nil {
		t.Fatal(err)
	}
	mustTool(t, m, "cc-4", "Read", `{"file_path":"/src/shop/cart/tax.go"}`, `{}`)
	waitIdle(t, m)
	sess = mustSession(t, m, "cc-4")
	if len(sess.MemorySessions) != 2 {
		t.Fatalf("memory sessions = %v, want two", sess.MemorySessions)
	}
	obs = observationsOf(t, m, sess.ID)
	under := map[string]int{}
	for _, o := range obs {
		under[o.MemorySessionID]++
	}
	if len(obs) != 2 || under[sess.MemorySessions[0]] != 1 || under[sess.MemorySessions[1]] != 1 {
		t.Fatalf("observations by memory session = %v, want one under each of %v", under, sess.MemorySessions)
	}
	res, err := m.Doctor(context.Background())
	if err != nil || len(res.Problems) != 0 {
		t.Fatalf("doctor: %v %v", res.Problems, err)
	}
}

// Rule 5: sessions are isolated; a memory session id is never shared.
func TestRule5SessionsIsolated(t *testing.T) {
	agent := &recordingAgent{}
	m := MustOpen(t, store.Options{Agent: agent})
	var wg sync.WaitGroup
	for _, csid := range []string{"cc-5a", "cc-5b", "cc-5c"} {
		wg.Go(func() {
			mustPrompt(t, m, csid, "work in "+csid)
			for i := range 5 {
				mustTool(t, m, csid, "Read", fmt.Sprintf(`{"file_path":"/src/shop/%s/f%d.go"}`, csid, i), `{}`)
			}
		})
	}
	wg.Wait()
	waitIdle(t, m)
	seen := map[string]string{}
	for _, csid := range []string{"cc-5a", "cc-5b", "cc-5c"} {
		s := mustSession(t, m, csid)
		obs := observationsOf(t, m, s.ID)
		if len(obs) != 5 {
			t.Fatalf("%s has %d observations, want 5", csid, len(obs))
		}
		for _, o := range obs {
			if o.ContentSessionID != csid || !strings.Contains(o.FilesRead[0], csid) {
				t.Fatalf("%s got an observation of another session: %+v", csid, o)
			}
		}
		if other, dup := seen[s.MemorySessionID]; dup {
			t.Fatalf("memory session %s shared by %s and %s", s.MemorySessionID, other, csid)
		}
		seen[s.MemorySessionID] = csid
	}

	// An agent that reports another session's memory session id is refused.
	agent.mu.Lock()
	agent.ownID = mustSession(t, m, "cc-5a").MemorySessionID
	agent.mu.Unlock()
	before := len(agent.Runs())
	mustPrompt(t, m, "cc-5d", "hijack")
	mustTool(t, m, "cc-5d", "Read", readInput, readResponse)
	for len(agent.Runs()) < before+2 {
		time.Sleep(time.Millisecond)
	}
	if s := mustSession(t, m, "cc-5d"); s.HasMemorySession() {
		t.Fatalf("cc-5d took memory session %s of cc-5a", s.MemorySessionID)
	}
	if c, _ := m.Counts(context.Background()); c.Queued != 1 {
		t.Fatalf("queued = %d, want the refused event kept", c.Queued)
	}
}

// Rule 6: a refused resume starts a fresh memory session and records its
// id; an explicit resume id wins over the stored one.
func TestRule6RefusedResumeStartsFresh(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	agent := &recordingAgent{}
	m, err := store.Open(context.Background(), store.Options{Dir: dir, Agent: agent})
	if err != nil {
		t.Fatal(err)
	}
	mustPrompt(t, m, "cc-6", "first")
	mustTool(t, m, "cc-6", "Read", readInput, readResponse)
	waitIdle(t, m)
	old := mustSession(t, m, "cc-6").MemorySessionID
	m.SessionEnd(context.Background(), memory.SessionEndParams{ContentSessionID: "cc-6"})
	m.Close()

	agent.refuse = map[string]bool{old: true}
	m = MustOpen(t, store.Options{Dir: dir, Agent: agent})
	mustPrompt(t, m, "cc-6", "second")
	mustTool(t, m, "cc-6", "Read", `{"file_path":"/src/shop/cart/tax.go"}`, `{}`)
	waitIdle(t, m)
	runs := agent.Runs()
	refused, fresh := runs[len(runs)-2], runs[len(runs)-1]
	if refused.ResumeID != old || fresh.ResumeID != "" || fresh.NewID == "" {
		t.Fatalf("runs = %+v then %+v; want a refused resume of %s then a fresh run", refused, fresh, old)
	}
	s := mustSession(t, m, "cc-6")
	if s.MemorySessionID != fresh.NewID {
		t.Fatalf("memorySessionId = %s, want the fresh %s", s.MemorySessionID, fresh.NewID)
	}

	// An explicit resume id wins over the stored one.
	if err := m.ResumeWith(context.Background(), "cc-6", old+"-explicit"); err != nil {
		t.Fatal(err)
	}
	mustTool(t, m, "cc-6", "Read", `{"file_path":"/src/shop/cart/discount.go"}`, `{}`)
	waitIdle(t, m)
	runs = agent.Runs()
	if r := runs[len(runs)-1]; r.ResumeID != old+"-explicit" {
		t.Fatalf("resumed %q, want the explicit id", r.ResumeID)
	}
	if s := mustSession(t, m, "cc-6"); s.MemorySessionID != old+"-explicit" || s.ResumeOverride != "" {
		t.Fatalf("after the explicit resume: %+v", s)
	}
}

// Rule 7: each memory session keeps an audit trail: conversation.json with
// every message and its session metadata, and stream.log appended, never
// replaced, on resume.
func TestRule7AuditTrail(t *testing.T) {
	agents := filepath.Join(t.TempDir(), "agents")
	m := MustOpen(t, store.Options{AgentsDir: agents})
	mustPrompt(t, m, "cc-7", "first")
	mustTool(t, m, "cc-7", "Read", readInput, readResponse)
	waitIdle(t, m)
	mustPrompt(t, m, "cc-7", "second")
	mustTool(t, m, "cc-7", "Read", `{"file_path":"/src/shop/cart/tax.go"}`, `{}`)
	waitIdle(t, m)
	ms := mustSession(t, m, "cc-7").MemorySessionID
	b, err := os.ReadFile(filepath.Join(agents, ms, "conversation.json"))
	if err != nil {
		t.Fatal(err)
	}
	var conv []memory.AuditMessage
	if err := json.Unmarshal(b, &conv); err != nil {
		t.Fatalf("conversation.json: %v\n%s", err, b)
	}
	if len(conv) != 4 {
		t.Fatalf("conversation has %d messages, want 4 (input and output of two runs)", len(conv))
	}
	for _, msg := range conv {
		if msg.ContentSessionID != "cc-7" || msg.MemorySessionID != ms {
			t.Fatalf("message without its session metadata: %+v", msg)
		}
	}
	if !conv[2].Resumed || conv[0].Resumed {
		t.Fatalf("resumed flags = %v, %v; want false then true", conv[0].Resumed, conv[2].Resumed)
	}
	log, err := os.ReadFile(filepath.Join(agents, ms, "stream.log"))
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(string(log), "\n"); lines != 2 || !strings.Contains(string(log), "resumed=true") {
		t.Fatalf("stream.log:\n%s\nwant two appended lines, the second resumed", log)
	}
}

// Rule 8: sessions from before unified ids (an agent that reported its own
// id) keep resuming with their stored memorySessionId.
func TestRule8LegacySessionsKeepTheirID(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	agent := &recordingAgent{ownID: "sdk-legacy-7f3a"}
	m, err := store.Open(context.Background(), store.Options{Dir: dir, Agent: agent})
	if err != nil {
		t.Fatal(err)
	}
	mustPrompt(t, m, "cc-8", "first")
	mustTool(t, m, "cc-8", "Read", readInput, readResponse)
	waitIdle(t, m)
	if s := mustSession(t, m, "cc-8"); s.MemorySessionID != "sdk-legacy-7f3a" {
		t.Fatalf("memorySessionId = %q, want the agent's own id", s.MemorySessionID)
	}
	m.SessionEnd(context.Background(), memory.SessionEndParams{ContentSessionID: "cc-8"})
	m.Close()

	agent.ownID = ""
	m = MustOpen(t, store.Options{Dir: dir, Agent: agent})
	mustPrompt(t, m, "cc-8", "second")
	mustTool(t, m, "cc-8", "Read", `{"file_path":"/src/shop/cart/tax.go"}`, `{}`)
	waitIdle(t, m)
	runs := agent.Runs()
	if r := runs[len(runs)-1]; r.ResumeID != "sdk-legacy-7f3a" {
		t.Fatalf("resumed %q, want the legacy id", r.ResumeID)
	}
	if s := mustSession(t, m, "cc-8"); s.MemorySessionID != "sdk-legacy-7f3a" || len(s.MemorySessions) != 1 {
		t.Fatalf("session after resume: %+v", s)
	}
}
