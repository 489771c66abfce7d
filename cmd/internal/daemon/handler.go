package daemon

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/mnemo-dev/mnemo/adapters/vscode"
	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/rpc"
)

// connection is the server side of one client connection: the mnemo/*
// methods, and the editor's LSP session mapped onto the stages.
type connection struct {
	mux    *rpc.Mux
	editor *vscode.Editor
	exit   chan struct{} // closed by the LSP exit notification
	live   *liveChanges  // mnemo/watch
}

// newConnection builds the method table of one connection to m's memory.
// Serve it with c.serve, and Close it after the jsonrpc2 connection.
func newConnection(m *Main, log *slog.Logger) *connection {
	mem, home := m.Memory, m.Home
	editor := vscode.New(mem, vscode.Options{Logger: log, Version: Version, SaveWindow: m.Config.saveWindow()})
	c := &connection{mux: rpc.NewMux(log), editor: editor, exit: make(chan struct{}), live: newLiveChanges(mem, log)}
	c.mux.Use(rpc.LogCalls(log))
	mux := c.mux
	handle(mux, memory.MethodSessionStart, mem.SessionStart)
	handle(mux, memory.MethodUserPromptSubmit, mem.UserPromptSubmit)
	handle(mux, memory.MethodPostToolUse, mem.PostToolUse)
	handle(mux, memory.MethodStop, func(ctx context.Context, p memory.StopParams) (memory.QueueResult, error) {
		// An editor that asks for Stop itself needs no idle Stop; its saves
		// still in a window are remembered first, and the summary is told
		// what they changed.
		c.editor.Stop(ctx, &p)
		r, err := mem.Stop(ctx, p)
		if err == nil {
			m.rules.ended(p.ContentSessionID, memory.StageStop)
		}
		return r, err
	})
	handle(mux, memory.MethodSessionEnd, func(ctx context.Context, p memory.SessionEndParams) (memory.SessionEndResult, error) {
		r, err := mem.SessionEnd(ctx, p)
		if err == nil {
			m.rules.ended(p.ContentSessionID, memory.StageSessionEnd)
		}
		return r, err
	})
	handle(mux, memory.MethodSearch, mem.Search)
	handle(mux, memory.MethodTimeline, mem.Timeline)
	handle(mux, memory.MethodGetObservations, mem.Get)
	handle(mux, memory.MethodRecords, mem.Records)
	handle(mux, memory.MethodContext, mem.Context)
	handle(mux, memory.MethodSave, mem.Save)
	handle(mux, memory.MethodForget, mem.Forget)
	handle(mux, memory.MethodCorrect, mem.Correct)
	handle(mux, memory.MethodReview, mem.Review)
	handle(mux, memory.MethodKeep, mem.Keep)
	handle(mux, memory.MethodPin, mem.Pin)
	handle(mux, memory.MethodUnpin, mem.Unpin)
	handle(mux, memory.MethodMarkWrong, mem.MarkWrong)
	handle(mux, memory.MethodUnmarkWrong, mem.UnmarkWrong)
	handle(mux, memory.MethodKnowledge, mem.Knowledge)
	handle(mux, memory.MethodPause, mem.Pause)
	handle(mux, memory.MethodResume, mem.Resume)
	handle(mux, memory.MethodTeamJoin, m.team.join)
	handle(mux, memory.MethodTeamLeave, m.team.leave)
	handle(mux, memory.MethodTeamStatus, func(context.Context, struct{}) (memory.TeamStatus, error) { return m.team.status(), nil })
	handle(mux, memory.MethodStatus, func(ctx context.Context, _ struct{}) (memory.Status, error) {
		st, err := mem.Status(ctx)
		st.ProtocolVersion = rpc.ProtocolVersion
		st.DataDir = home
		if m.journal != nil {
			st.Journal = m.journal.status()
		}
		st.KnowledgePending = m.rules.unserved()
		return st, err
	})
	handle(mux, memory.MethodSessions, func(ctx context.Context, _ struct{}) (memory.SessionsResult, error) {
		s, err := mem.Sessions(ctx)
		return memory.SessionsResult{Sessions: s}, err
	})
	handle(mux, memory.MethodSession, mem.SessionRecords)
	handle(mux, memory.MethodInjections, mem.InjectionsOf)
	handle(mux, memory.MethodDoctor, func(ctx context.Context, _ struct{}) (memory.DoctorResult, error) {
		res, err := mem.Doctor(ctx)
		notes, problems := hookLogCheck(home, time.Now())
		res.Notes, res.Problems = append(res.Notes, notes...), append(res.Problems, problems...)
		return res, err
	})
	handle(mux, memory.MethodReindex, func(ctx context.Context, _ struct{}) (memory.ReindexResult, error) {
		n, err := mem.Reindex(ctx)
		return memory.ReindexResult{Observations: n}, err
	})
	handle(mux, memory.MethodExport, func(ctx context.Context, p memory.ExportParams) (memory.ExportResult, error) {
		return exportTo(ctx, mem, p)
	})
	handle(mux, memory.MethodImport, func(ctx context.Context, p memory.ImportParams) (memory.ImportResult, error) {
		return importFrom(ctx, mem, p)
	})
	handle(mux, memory.MethodWatch, c.live.watch)
	registerViewer(mux, m)
	c.editor.Register(mux)
	var once sync.Once
	rpc.HandleNotify(mux, "exit", func(context.Context, struct{}) error {
		once.Do(func() { close(c.exit) })
		return nil
	})
	return c
}

// Handler serves the connection.
func (c *connection) Handler() jsonrpc2.Handler { return c.mux.Handler() }

// serve serves rwc with h (the connection's handler, maybe wrapped) and
// binds the connection for its notifications.
func (c *connection) serve(ctx context.Context, rwc io.ReadWriteCloser, h jsonrpc2.Handler) jsonrpc2.Conn {
	conn := rpc.Serve(ctx, rwc, h)
	c.live.bind(conn)
	return conn
}

// Close ends what the connection owns: the watch and the editor session.
// Close the jsonrpc2 connection first.
func (c *connection) Close() {
	c.live.close()
	c.editor.Close()
}

// handle registers a memory method, mapping domain errors onto the wire
// through one table: bad input is invalid params (its text names the
// field), a missing record is not found, anything else is internal (and
// logged by the mux, never sent).
func handle[P, R any](m *rpc.Mux, method string, fn func(context.Context, P) (R, error)) {
	rpc.Handle(m, method, func(ctx context.Context, p P) (R, error) {
		r, err := fn(ctx, p)
		return r, wireError(err)
	})
}

func wireError(err error) error {
	var fe *memory.FieldError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &fe):
		return rpc.InvalidParams("%s", fe.Error())
	case errors.Is(err, memory.ErrInvalid):
		return rpc.InvalidParams("%s", err.Error())
	case errors.Is(err, memory.ErrNotFound):
		// The code says "not found": the sentinel's words at the end of
		// the text would say it twice.
		return rpc.NotFound("%s", strings.TrimSuffix(err.Error(), ": "+memory.ErrNotFound.Error()))
	default:
		return err
	}
}
