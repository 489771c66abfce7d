package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/client"
	"github.com/mnemo-dev/mnemo/memory/store"
	"github.com/mnemo-dev/mnemo/rpc"
)

var _ client.Caller = (*rpc.Client)(nil)

// TestEveryMethodReachesTheMemory plays a session through every method of
// the client, over an in-memory pipe and over the per-user socket (with
// its hello), against a real in-memory store served the way the daemon
// serves it.
func TestEveryMethodReachesTheMemory(t *testing.T) {
	for _, tr := range []struct {
		name    string
		connect func(*testing.T, *store.Memory) *rpc.Client
	}{
		{"pipe", pipeClient},
		{"socket", socketClient},
	} {
		t.Run(tr.name, func(t *testing.T) {
			mem := openMemory(t)
			cl := client.New(tr.connect(t, mem))
			ctx := t.Context()
			project := projectDir(t, "billing-api")

			st, err := cl.Status(ctx)
			must(t, err)
			if st.ProtocolVersion != rpc.ProtocolVersion || st.Version != "test" {
				t.Errorf("Status = %+v; want protocol %d, version test", st, rpc.ProtocolVersion)
			}

			started, err := cl.SessionStart(ctx, memory.SessionStartParams{ContentSessionID: "s1", Cwd: project, Source: "startup"})
			must(t, err)
			if started.Project != "billing-api" || started.SessionID == 0 {
				t.Errorf("SessionStart = %+v; want project billing-api and a session id", started)
			}
			prompt, err := cl.UserPromptSubmit(ctx, memory.UserPromptParams{ContentSessionID: "s1", Cwd: project, Prompt: "round invoice totals half-even"})
			must(t, err)
			if prompt.SessionID != started.SessionID || prompt.PromptNumber != 1 {
				t.Errorf("UserPromptSubmit = %+v; want session %d, prompt 1", prompt, started.SessionID)
			}
			queued, err := cl.PostToolUse(ctx, memory.ToolUseParams{
				ContentSessionID: "s1", Cwd: project, ToolName: "Bash", ToolUseID: "toolu_1",
				ToolInput:    json.RawMessage(`{"command":"go test ./payments/..."}`),
				ToolResponse: json.RawMessage(`{"stdout":"ok  \tbilling-api/payments\t0.01s","stderr":"","interrupted":false}`),
			})
			must(t, err)
			if !queued.Queued {
				t.Errorf("PostToolUse = %+v; want queued", queued)
			}
			stopped, err := cl.Stop(ctx, memory.StopParams{ContentSessionID: "s1", LastAssistantMessage: "Totals now round half-even."})
			must(t, err)
			if !stopped.Queued {
				t.Errorf("Stop = %+v; want queued", stopped)
			}
			ended, err := cl.SessionEnd(ctx, memory.SessionEndParams{ContentSessionID: "s1", Reason: "exit"})
			must(t, err)
			if ended.Status == "" {
				t.Errorf("SessionEnd = %+v; want a status", ended)
			}
			wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			must(t, mem.WaitIdle(wctx))

			saved, err := cl.Save(ctx, memory.SaveParams{Text: "Money rounds half-even, once, at the invoice total.", Title: "rounding rule", Cwd: project})
			must(t, err)
			if saved.ID == 0 {
				t.Fatalf("Save = %+v; want an id", saved)
			}
			found, err := cl.Search(ctx, memory.SearchParams{Query: "rounding rule", Project: "billing-api"})
			must(t, err)
			if !slices.ContainsFunc(found.Hits, func(h memory.Hit) bool { return h.ID == saved.ID }) {
				t.Errorf("Search hits = %+v; want #%d", found.Hits, saved.ID)
			}
			around, err := cl.Timeline(ctx, memory.TimelineParams{Anchor: json.RawMessage(jsonOf(saved.ID))})
			must(t, err)
			if around.AnchorID != saved.ID {
				t.Errorf("Timeline anchor = %d; want %d", around.AnchorID, saved.ID)
			}
			got, err := cl.GetObservations(ctx, memory.IDsParams{IDs: []uint64{saved.ID, 999999}})
			must(t, err)
			if len(got.Observations) != 1 || got.Observations[0].Title != "rounding rule" || !slices.Equal(got.Missing, []uint64{999999}) {
				t.Errorf("GetObservations = %+v; want the saved one, 999999 missing", got)
			}
			injected, err := cl.Context(ctx, memory.ContextParams{Cwd: project})
			must(t, err)
			if injected.Project != "billing-api" || !slices.Contains(injected.ObservationIDs, saved.ID) {
				t.Errorf("Context = %+v; want billing-api with #%d", injected, saved.ID)
			}

			sessions, err := cl.Sessions(ctx)
			must(t, err)
			if len(sessions.Sessions) != 1 || sessions.Sessions[0].ContentSessionID != "s1" {
				t.Errorf("Sessions = %+v; want s1 alone", sessions)
			}
			doctor, err := cl.Doctor(ctx)
			must(t, err)
			if doctor.Problems == nil || len(doctor.Problems) != 0 {
				t.Errorf("Doctor = %#v; want an empty list of problems", doctor)
			}
			reindex, err := cl.Reindex(ctx)
			must(t, err)
			if reindex.Observations < 1 {
				t.Errorf("Reindex = %+v; want the saved observation at least", reindex)
			}

			corrected, err := cl.Correct(ctx, memory.CorrectParams{ID: saved.ID, Text: "Money rounds half-even, once per line."})
			must(t, err)
			if !corrected.Changed || corrected.Observation.Narrative != "Money rounds half-even, once per line." || len(corrected.Observation.Edits) != 1 {
				t.Errorf("Correct = %+v; want the new text and one edit", corrected)
			}
			pinned, err := cl.Pin(ctx, memory.IDsParams{IDs: []uint64{saved.ID}})
			must(t, err)
			if !slices.Equal(pinned.Changed, []uint64{saved.ID}) {
				t.Errorf("Pin = %+v; want #%d changed", pinned, saved.ID)
			}
			unpinned, err := cl.Unpin(ctx, memory.IDsParams{IDs: []uint64{saved.ID}})
			must(t, err)
			if !slices.Equal(unpinned.Changed, []uint64{saved.ID}) {
				t.Errorf("Unpin = %+v; want #%d changed", unpinned, saved.ID)
			}

			paused, err := cl.Pause(ctx, memory.PauseParams{Cwd: project, What: memory.PauseInject})
			must(t, err)
			if paused.Project != "billing-api" || paused.Pause != (memory.Pause{Inject: true}) || len(paused.Paused) != 1 {
				t.Errorf("Pause = %+v; want billing-api's injection paused", paused)
			}
			if st, err := cl.Status(ctx); err != nil || len(st.Paused) != 1 {
				t.Errorf("Status = %+v, %v; want billing-api paused", st.Paused, err)
			}
			resumed, err := cl.Resume(ctx, memory.PauseParams{Project: "billing-api"})
			must(t, err)
			if resumed.Pause != (memory.Pause{}) || len(resumed.Paused) != 0 {
				t.Errorf("Resume = %+v; want nothing paused", resumed)
			}

			file := filepath.Join(t.TempDir(), "export.jsonl")
			exported, err := cl.Export(ctx, memory.ExportParams{Path: file})
			must(t, err)
			if exported.Records < 3 { // a session, a prompt, an observation
				t.Errorf("Export = %+v; want at least 3 records", exported)
			}
			imported, err := cl.Import(ctx, memory.ImportParams{Path: file})
			must(t, err)
			if imported.Duplicates == 0 || imported.Observations != 0 {
				t.Errorf("Import of its own export = %+v; want only duplicates", imported)
			}

			forgot, err := cl.Forget(ctx, memory.IDsParams{IDs: []uint64{saved.ID, 999999}})
			must(t, err)
			if !slices.Equal(forgot.Deleted, []uint64{saved.ID}) || !slices.Equal(forgot.Missing, []uint64{999999}) {
				t.Errorf("Forget = %+v; want #%d deleted, 999999 missing", forgot, saved.ID)
			}
		})
	}
}

// TestAnsweredErrorsAreRPCErrors checks what the package doc promises: an
// error the daemon answered is an *rpc.Error that rpc.CodeOf classifies,
// with the result left zero.
func TestAnsweredErrorsAreRPCErrors(t *testing.T) {
	cl := client.New(pipeClient(t, openMemory(t)))
	ctx := t.Context()
	for _, tc := range []struct {
		name string
		call func() (any, error)
		code rpc.Code
		text string // in the message
	}{
		{"a bad search mode is invalid params naming the field", func() (any, error) {
			return cl.Search(ctx, memory.SearchParams{Query: "x", Mode: "fuzzy"})
		}, rpc.CodeInvalidParams, "mode"},
		{"a get of no ids is invalid params naming the field", func() (any, error) {
			return cl.GetObservations(ctx, memory.IDsParams{})
		}, rpc.CodeInvalidParams, "ids"},
		{"a save without text is invalid params naming the field", func() (any, error) {
			return cl.Save(ctx, memory.SaveParams{Cwd: "/tmp"})
		}, rpc.CodeInvalidParams, "text"},
		{"a relative export path is invalid params naming the field", func() (any, error) {
			return cl.Export(ctx, memory.ExportParams{Path: "export.jsonl"})
		}, rpc.CodeInvalidParams, "path"},
		{"a correction of an id that does not exist is not found, naming it", func() (any, error) {
			return cl.Correct(ctx, memory.CorrectParams{ID: 424242, Title: "x"})
		}, rpc.CodeNotFound, "#424242"},
		{"an empty correction is invalid params", func() (any, error) {
			return cl.Correct(ctx, memory.CorrectParams{ID: 1})
		}, rpc.CodeInvalidParams, "title"},
		{"a pin of an id that does not exist is not found, naming it", func() (any, error) {
			return cl.Pin(ctx, memory.IDsParams{IDs: []uint64{424242}})
		}, rpc.CodeNotFound, "#424242"},
		{"a timeline around an id that does not exist is not found", func() (any, error) {
			return cl.Timeline(ctx, memory.TimelineParams{Anchor: json.RawMessage(`424242`)})
		}, rpc.CodeNotFound, "424242"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := tc.call()
			rerr, ok := errors.AsType[*rpc.Error](err)
			if !ok {
				t.Fatalf("err = %v (%T); want an *rpc.Error", err, err)
			}
			if rpc.CodeOf(err) != tc.code || !strings.Contains(rerr.Message, tc.text) {
				t.Errorf("err = %v (%v); want %v mentioning %q", err, rpc.CodeOf(err), tc.code, tc.text)
			}
			if !reflect.ValueOf(res).IsZero() {
				t.Errorf("result = %+v; want the zero value", res)
			}
		})
	}
}

// TestEachMethodSendsItsNameAndParams checks the wire contract of every
// method: its mnemo/* name, its params passed as given, and no params
// (nil, so that nothing but the method is sent) for the maintenance
// methods that take none. A Caller's own error comes back unchanged.
func TestEachMethodSendsItsNameAndParams(t *testing.T) {
	ctx := t.Context()
	anchor := memory.TimelineParams{Anchor: json.RawMessage(`7`)}
	ids := memory.IDsParams{IDs: []uint64{7}}
	for _, tc := range []struct {
		method string
		params any
		call   func(*client.Client) error
	}{
		{memory.MethodSessionStart, memory.SessionStartParams{ContentSessionID: "s"}, func(c *client.Client) error {
			_, err := c.SessionStart(ctx, memory.SessionStartParams{ContentSessionID: "s"})
			return err
		}},
		{memory.MethodUserPromptSubmit, memory.UserPromptParams{ContentSessionID: "s"}, func(c *client.Client) error {
			_, err := c.UserPromptSubmit(ctx, memory.UserPromptParams{ContentSessionID: "s"})
			return err
		}},
		{memory.MethodPostToolUse, memory.ToolUseParams{ContentSessionID: "s", ToolName: "Bash"}, func(c *client.Client) error {
			_, err := c.PostToolUse(ctx, memory.ToolUseParams{ContentSessionID: "s", ToolName: "Bash"})
			return err
		}},
		{memory.MethodStop, memory.StopParams{ContentSessionID: "s"}, func(c *client.Client) error {
			_, err := c.Stop(ctx, memory.StopParams{ContentSessionID: "s"})
			return err
		}},
		{memory.MethodSessionEnd, memory.SessionEndParams{ContentSessionID: "s"}, func(c *client.Client) error {
			_, err := c.SessionEnd(ctx, memory.SessionEndParams{ContentSessionID: "s"})
			return err
		}},
		{memory.MethodSearch, memory.SearchParams{Query: "q"}, func(c *client.Client) error {
			_, err := c.Search(ctx, memory.SearchParams{Query: "q"})
			return err
		}},
		{memory.MethodTimeline, anchor, func(c *client.Client) error { _, err := c.Timeline(ctx, anchor); return err }},
		{memory.MethodGetObservations, ids, func(c *client.Client) error { _, err := c.GetObservations(ctx, ids); return err }},
		{memory.MethodContext, memory.ContextParams{Project: "p"}, func(c *client.Client) error {
			_, err := c.Context(ctx, memory.ContextParams{Project: "p"})
			return err
		}},
		{memory.MethodSave, memory.SaveParams{Text: "t"}, func(c *client.Client) error {
			_, err := c.Save(ctx, memory.SaveParams{Text: "t"})
			return err
		}},
		{memory.MethodForget, ids, func(c *client.Client) error { _, err := c.Forget(ctx, ids); return err }},
		{memory.MethodCorrect, memory.CorrectParams{ID: 7, Title: "t"}, func(c *client.Client) error {
			_, err := c.Correct(ctx, memory.CorrectParams{ID: 7, Title: "t"})
			return err
		}},
		{memory.MethodPin, ids, func(c *client.Client) error { _, err := c.Pin(ctx, ids); return err }},
		{memory.MethodUnpin, ids, func(c *client.Client) error { _, err := c.Unpin(ctx, ids); return err }},
		{memory.MethodPause, memory.PauseParams{Project: "p", What: memory.PauseCapture}, func(c *client.Client) error {
			_, err := c.Pause(ctx, memory.PauseParams{Project: "p", What: memory.PauseCapture})
			return err
		}},
		{memory.MethodResume, memory.PauseParams{Project: "p"}, func(c *client.Client) error {
			_, err := c.Resume(ctx, memory.PauseParams{Project: "p"})
			return err
		}},
		{memory.MethodStatus, nil, func(c *client.Client) error { _, err := c.Status(ctx); return err }},
		{memory.MethodViewer, nil, func(c *client.Client) error { _, err := c.Viewer(ctx); return err }},
		{memory.MethodSessions, nil, func(c *client.Client) error { _, err := c.Sessions(ctx); return err }},
		{memory.MethodDoctor, nil, func(c *client.Client) error { _, err := c.Doctor(ctx); return err }},
		{memory.MethodReindex, nil, func(c *client.Client) error { _, err := c.Reindex(ctx); return err }},
		{memory.MethodExport, memory.ExportParams{Path: "/x"}, func(c *client.Client) error {
			_, err := c.Export(ctx, memory.ExportParams{Path: "/x"})
			return err
		}},
		{memory.MethodImport, memory.ImportParams{Path: "/x"}, func(c *client.Client) error {
			_, err := c.Import(ctx, memory.ImportParams{Path: "/x"})
			return err
		}},
	} {
		t.Run(tc.method, func(t *testing.T) {
			rec := &recorder{err: errors.New("connection reset")}
			err := tc.call(client.New(rec))
			if err != rec.err {
				t.Errorf("err = %v; want the Caller's error unchanged", err)
			}
			if rec.method != tc.method || !reflect.DeepEqual(rec.params, tc.params) {
				t.Errorf("called %s with %#v; want %s with %#v", rec.method, rec.params, tc.method, tc.params)
			}
		})
	}
}

// recorder is a Caller that records one call and fails it with err.
type recorder struct {
	method string
	params any
	err    error
}

func (r *recorder) Call(_ context.Context, method string, params, _ any) error {
	r.method, r.params = method, params
	return r.err
}

// openMemory opens a real in-memory store, closed at the end of the test.
func openMemory(t *testing.T) *store.Memory {
	t.Helper()
	mem, err := store.Open(t.Context(), store.Options{InMemory: true, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mem.Close() })
	return mem
}

// memoryMux serves every memory method from mem as the daemon's
// newConnection does (cmd/internal/daemon/handler.go): the same methods, the same results, the
// same mapping of domain errors onto the wire.
func memoryMux(mem *store.Memory, home string) *rpc.Mux {
	m := rpc.NewMux(slog.New(slog.DiscardHandler))
	handle(m, memory.MethodSessionStart, mem.SessionStart)
	handle(m, memory.MethodUserPromptSubmit, mem.UserPromptSubmit)
	handle(m, memory.MethodPostToolUse, mem.PostToolUse)
	handle(m, memory.MethodStop, mem.Stop)
	handle(m, memory.MethodSessionEnd, mem.SessionEnd)
	handle(m, memory.MethodSearch, mem.Search)
	handle(m, memory.MethodTimeline, mem.Timeline)
	handle(m, memory.MethodGetObservations, mem.Get)
	handle(m, memory.MethodContext, mem.Context)
	handle(m, memory.MethodSave, mem.Save)
	handle(m, memory.MethodForget, mem.Forget)
	handle(m, memory.MethodCorrect, mem.Correct)
	handle(m, memory.MethodPin, mem.Pin)
	handle(m, memory.MethodUnpin, mem.Unpin)
	handle(m, memory.MethodPause, mem.Pause)
	handle(m, memory.MethodResume, mem.Resume)
	handle(m, memory.MethodStatus, func(ctx context.Context, _ struct{}) (memory.Status, error) {
		st, err := mem.Status(ctx)
		st.ProtocolVersion = rpc.ProtocolVersion
		st.DataDir = home
		return st, err
	})
	handle(m, memory.MethodSessions, func(ctx context.Context, _ struct{}) (memory.SessionsResult, error) {
		s, err := mem.Sessions(ctx)
		return memory.SessionsResult{Sessions: s}, err
	})
	handle(m, memory.MethodDoctor, func(ctx context.Context, _ struct{}) (memory.DoctorResult, error) { return mem.Doctor(ctx) })
	handle(m, memory.MethodReindex, func(ctx context.Context, _ struct{}) (memory.ReindexResult, error) {
		n, err := mem.Reindex(ctx)
		return memory.ReindexResult{Observations: n}, err
	})
	handle(m, memory.MethodExport, func(ctx context.Context, p memory.ExportParams) (memory.ExportResult, error) {
		f, err := os.Create(p.Path)
		if err != nil {
			return memory.ExportResult{}, &memory.FieldError{Field: "path", Reason: err.Error()}
		}
		defer f.Close()
		n, err := mem.Export(ctx, f, p.Vectors)
		return memory.ExportResult{Records: n}, err
	})
	handle(m, memory.MethodImport, func(ctx context.Context, p memory.ImportParams) (memory.ImportResult, error) {
		f, err := os.Open(p.Path)
		if err != nil {
			return memory.ImportResult{}, &memory.FieldError{Field: "path", Reason: err.Error()}
		}
		defer f.Close()
		return mem.Import(ctx, f, nil)
	})
	return m
}

// handle registers a memory method with the daemon's error table: bad
// input is invalid params, a missing record is not found.
func handle[P, R any](m *rpc.Mux, method string, fn func(context.Context, P) (R, error)) {
	rpc.Handle(m, method, func(ctx context.Context, p P) (R, error) {
		r, err := fn(ctx, p)
		switch {
		case err == nil:
		case errors.Is(err, memory.ErrInvalid):
			err = rpc.InvalidParams("%s", err.Error())
		case errors.Is(err, memory.ErrNotFound):
			err = rpc.NotFound("%s", err.Error())
		}
		return r, err
	})
}

// pipeClient is an rpc client of mem's methods over an in-memory pipe.
func pipeClient(t *testing.T, mem *store.Memory) *rpc.Client {
	t.Helper()
	a, b := net.Pipe()
	conn := rpc.Serve(t.Context(), b, memoryMux(mem, t.TempDir()).Handler())
	cl := rpc.NewClient(a, nil)
	t.Cleanup(func() {
		cl.Close()
		conn.Close()
	})
	return cl
}

// socketClient serves mem's methods on the socket of a fresh home, hello
// first, as the daemon does, and connects to it with rpc.Connect.
func socketClient(t *testing.T, mem *store.Memory) *rpc.Client {
	t.Helper()
	// A short folder: socket paths are limited to ~100 bytes.
	home, err := os.MkdirTemp("", "mnemo-client-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	ln, err := rpc.Listen(rpc.SocketPath(home))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		rpc.ServeListener(ctx, ln, func(ctx context.Context, nc net.Conn) {
			c := rpc.Serve(ctx, nc, rpc.RequireHello(memoryMux(mem, home).Handler(), "test", nil))
			select {
			case <-c.Done():
			case <-ctx.Done():
			}
			c.Close()
		})
	}()
	cl, err := rpc.Connect(t.Context(), rpc.ConnectOptions{Home: home, Client: rpc.ClientCLI})
	if err != nil {
		cancel()
		<-done
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cl.Close()
		cancel()
		<-done
	})
	return cl
}

// projectDir makes a git project folder named name and returns its path.
func projectDir(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func jsonOf(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
