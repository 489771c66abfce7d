package main

import (
	"context"
	"errors"
	"log/slog"
	"sync"

	"go.lsp.dev/jsonrpc2"

	"github.com/mnemo-dev/mnemo/adapters/vscode"
	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/rpc"
)

// The custom methods of DESIGN §3.
const (
	MethodSessionStart     = "mnemo/sessionStart"
	MethodUserPromptSubmit = "mnemo/userPromptSubmit"
	MethodPostToolUse      = "mnemo/postToolUse"
	MethodStop             = "mnemo/stop"
	MethodSessionEnd       = "mnemo/sessionEnd"
	MethodSearch           = "mnemo/search"
	MethodTimeline         = "mnemo/timeline"
	MethodGetObservations  = "mnemo/getObservations"
	MethodContext          = "mnemo/context"
	MethodSave             = "mnemo/save"
	MethodForget           = "mnemo/forget"
	MethodStatus           = "mnemo/status"
)

// connection is the server side of one client connection: the mnemo/*
// methods, and the editor's LSP session mapped onto the stages.
type connection struct {
	mux    *rpc.Mux
	editor *vscode.Editor
	exit   chan struct{} // closed by the LSP exit notification
}

// newConnection builds the method table of one connection to mem.
func newConnection(mem *memory.Memory, log *slog.Logger, home string) *connection {
	c := &connection{mux: rpc.NewMux(log), editor: vscode.New(mem, log, Version), exit: make(chan struct{})}
	c.mux.Use(rpc.LogCalls(log))
	m := c.mux
	handle(m, MethodSessionStart, mem.SessionStart)
	handle(m, MethodUserPromptSubmit, mem.UserPromptSubmit)
	handle(m, MethodPostToolUse, mem.PostToolUse)
	handle(m, MethodStop, func(ctx context.Context, p memory.StopParams) (memory.QueueResult, error) {
		c.editor.Stopped() // an editor that asks for Stop itself needs no idle Stop
		return mem.Stop(ctx, p)
	})
	handle(m, MethodSessionEnd, mem.SessionEnd)
	handle(m, MethodSearch, mem.Search)
	handle(m, MethodTimeline, mem.Timeline)
	handle(m, MethodGetObservations, mem.Get)
	handle(m, MethodContext, mem.Context)
	handle(m, MethodSave, mem.Save)
	handle(m, MethodForget, mem.Forget)
	handle(m, MethodStatus, func(ctx context.Context, _ struct{}) (memory.Status, error) {
		st, err := mem.Status(ctx)
		st.ProtocolVersion = rpc.ProtocolVersion
		st.DataDir = home
		return st, err
	})
	handle(m, MethodSessions, func(ctx context.Context, _ struct{}) (SessionsResult, error) {
		s, err := mem.Sessions(ctx)
		return SessionsResult{Sessions: s}, err
	})
	handle(m, MethodDoctor, func(ctx context.Context, _ struct{}) (DoctorResult, error) {
		p, err := mem.Doctor(ctx)
		if p == nil {
			p = []memory.Problem{}
		}
		return DoctorResult{Problems: p}, err
	})
	handle(m, MethodReindex, func(ctx context.Context, _ struct{}) (ReindexResult, error) {
		n, err := mem.Reindex(ctx)
		return ReindexResult{Observations: n}, err
	})
	handle(m, MethodExport, func(ctx context.Context, p ExportParams) (ExportResult, error) { return exportTo(ctx, mem, p) })
	handle(m, MethodImport, func(ctx context.Context, p ImportParams) (memory.ImportResult, error) { return importFrom(ctx, mem, p) })
	c.editor.Register(m)
	var once sync.Once
	rpc.HandleNotify(m, "exit", func(context.Context, struct{}) error {
		once.Do(func() { close(c.exit) })
		return nil
	})
	return c
}

// Handler serves the connection.
func (c *connection) Handler() jsonrpc2.Handler { return c.mux.Handler() }

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
		return rpc.NotFound("%s", err.Error())
	default:
		return err
	}
}
