package observer_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/store"
)

// isolate points HOME and MNEMO_HOME at temporary folders.
func isolate(t *testing.T) string {
	t.Helper()
	base := t.TempDir()
	for _, v := range []string{"HOME", "MNEMO_HOME"} {
		dir := filepath.Join(base, strings.ToLower(v))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		t.Setenv(v, dir)
	}
	return base
}

// mem is a store.Memory on disk that a test can close and reopen.
type mem struct {
	*store.Memory
	once sync.Once
}

func openMemory(t testing.TB, dir, agentsDir string, agent memory.Agent) *mem {
	t.Helper()
	m, err := store.Open(context.Background(), store.Options{Dir: dir, Agent: agent, AgentsDir: agentsDir})
	if err != nil {
		t.Fatalf("open memory: %v", err)
	}
	mm := &mem{Memory: m}
	t.Cleanup(mm.close)
	return mm
}

func (m *mem) close() { m.once.Do(func() { m.Memory.Close() }) }

// waitIdle waits for the worker to drain the queue.
func (m *mem) waitIdle(t testing.TB, limit time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	if err := m.WaitIdle(ctx); err != nil {
		t.Fatalf("wait for the queue to drain: %v", err)
	}
}

// session drives one content session through the memory's stages.
type session struct {
	t    testing.TB
	m    *mem
	csid string
	cwd  string
}

func (s *session) prompt(text string) {
	s.t.Helper()
	if _, err := s.m.UserPromptSubmit(context.Background(), memory.UserPromptParams{ContentSessionID: s.csid, Cwd: s.cwd, Prompt: text}); err != nil {
		s.t.Fatalf("prompt: %v", err)
	}
}

func (s *session) tool(name string, input, response any) {
	s.t.Helper()
	in, err1 := json.Marshal(input)
	out, err2 := json.Marshal(response)
	if err1 != nil || err2 != nil {
		s.t.Fatal(err1, err2)
	}
	r, err := s.m.PostToolUse(context.Background(), memory.ToolUseParams{
		ContentSessionID: s.csid, Cwd: s.cwd, ToolName: name, ToolInput: in, ToolResponse: out,
	})
	if err != nil || !r.Queued {
		s.t.Fatalf("post tool use %s: %+v, %v", name, r, err)
	}
}

func (s *session) stop(last string) {
	s.t.Helper()
	if _, err := s.m.Stop(context.Background(), memory.StopParams{ContentSessionID: s.csid, LastAssistantMessage: last}); err != nil {
		s.t.Fatalf("stop: %v", err)
	}
}

func (s *session) end() {
	s.t.Helper()
	if _, err := s.m.SessionEnd(context.Background(), memory.SessionEndParams{ContentSessionID: s.csid, Reason: "other"}); err != nil {
		s.t.Fatalf("session end: %v", err)
	}
}

func (s *session) state() *memory.Session {
	s.t.Helper()
	sess, err := s.m.Session(context.Background(), s.csid)
	if err != nil {
		s.t.Fatalf("session %s: %v", s.csid, err)
	}
	return sess
}

// observations returns the session's stored observations, oldest first.
func (s *session) observations() []memory.Observation {
	s.t.Helper()
	sess := s.state()
	res, err := s.m.Search(context.Background(), memory.SearchParams{Limit: memory.MaxLimit})
	if err != nil {
		s.t.Fatal(err)
	}
	var ids []uint64
	for _, h := range res.Hits {
		ids = append(ids, h.ID)
	}
	if len(ids) == 0 {
		return nil
	}
	got, err := s.m.Get(context.Background(), memory.IDsParams{IDs: ids})
	if err != nil {
		s.t.Fatal(err)
	}
	var out []memory.Observation
	for _, o := range got.Observations {
		if o.SessionID == sess.ID {
			out = append(out, o)
		}
	}
	// ids grow with time
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].ID < out[j-1].ID; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

func (s *session) summaries() []memory.Summary {
	s.t.Helper()
	sums, err := s.m.Summaries(context.Background(), s.state().ID)
	if err != nil {
		s.t.Fatal(err)
	}
	return sums
}

func titles(obs []memory.Observation) []string {
	var out []string
	for _, o := range obs {
		out = append(out, o.Title)
	}
	return out
}

// readLog returns a memory session's stream.log.
func readLog(t testing.TB, agentsDir, id string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(agentsDir, id, "stream.log"))
	if err != nil {
		t.Fatalf("stream log of %s: %v", id, err)
	}
	return string(data)
}
