// Package client is the typed client of the daemon's memory methods: one
// Go method per mnemo/* method of package memory (methods.go), taking that
// method's params and returning its result. With the daemon's method table
// (cmd/internal/daemon) it is the one place where the domain meets rpc: the
// CLI, the MCP tools, the demo, the benchmarks and the soak test call the
// daemon through it.
// The hook does not: it sends whatever Translate makes of a Claude Code
// payload, by the method its stage names, and so needs no typed method.
//
// A Client does not own its connection. It calls through a Caller: an
// *rpc.Client from rpc.Connect (closed by whoever connected it), or a
// wrapper that adds a policy, such as the MCP server's reconnect-once
// DaemonClient.
//
//	cl, err := rpc.Connect(ctx, rpc.ConnectOptions{Home: home, Client: rpc.ClientCLI})
//	if err != nil {
//		return err
//	}
//	defer cl.Close()
//	res, err := client.New(cl).Search(ctx, memory.SearchParams{Query: "rounding"})
//
// # Errors
//
// An error the daemon answered is an *rpc.Error; rpc.CodeOf classifies it:
// rpc.CodeInvalidParams for params that do not validate (its message names
// the field), rpc.CodeNotFound for a record that does not exist (a
// timeline's anchor), rpc.CodeInternal for a failure whose details are in
// the daemon's log only. Any other error is the Caller's, unchanged: for an
// *rpc.Client a transport error, or one wrapping ctx's error, wrapped with
// the method's name. On any error the result is the zero value.
package client

import (
	"context"

	"github.com/mnemo-dev/mnemo/memory"
)

// A Caller calls one method of the daemon with params (nil sends none)
// and decodes its result into result. *rpc.Client satisfies it.
type Caller interface {
	Call(ctx context.Context, method string, params, result any) error
}

// Client calls the memory methods through a Caller. It is safe for
// concurrent use when its Caller is.
type Client struct {
	c Caller
}

// New returns a client that calls through c.
func New(c Caller) *Client { return &Client{c: c} }

// call calls method and returns its decoded result.
func call[R any](ctx context.Context, c Caller, method string, params any) (R, error) {
	var r R
	if err := c.Call(ctx, method, params, &r); err != nil {
		var zero R
		return zero, err
	}
	return r, nil
}

// The five stages.

// SessionStart opens (or reopens) a session and returns the context to
// inject (mnemo/sessionStart).
func (c *Client) SessionStart(ctx context.Context, p memory.SessionStartParams) (memory.ContextResult, error) {
	return call[memory.ContextResult](ctx, c.c, memory.MethodSessionStart, p)
}

// UserPromptSubmit records a prompt and numbers it
// (mnemo/userPromptSubmit).
func (c *Client) UserPromptSubmit(ctx context.Context, p memory.UserPromptParams) (memory.UserPromptResult, error) {
	return call[memory.UserPromptResult](ctx, c.c, memory.MethodUserPromptSubmit, p)
}

// PostToolUse queues one tool run, or one editor event, for the memory
// agent (mnemo/postToolUse).
func (c *Client) PostToolUse(ctx context.Context, p memory.ToolUseParams) (memory.QueueResult, error) {
	return call[memory.QueueResult](ctx, c.c, memory.MethodPostToolUse, p)
}

// Stop queues the end of a turn, which the agent summarizes (mnemo/stop).
func (c *Client) Stop(ctx context.Context, p memory.StopParams) (memory.QueueResult, error) {
	return call[memory.QueueResult](ctx, c.c, memory.MethodStop, p)
}

// SessionEnd completes a session (mnemo/sessionEnd).
func (c *Client) SessionEnd(ctx context.Context, p memory.SessionEndParams) (memory.SessionEndResult, error) {
	return call[memory.SessionEndResult](ctx, c.c, memory.MethodSessionEnd, p)
}

// Recall.

// Search ranks observations, or lists them by the filters alone when p has
// no query (mnemo/search).
func (c *Client) Search(ctx context.Context, p memory.SearchParams) (memory.SearchResult, error) {
	return call[memory.SearchResult](ctx, c.c, memory.MethodSearch, p)
}

// Timeline returns the observations around an anchor, oldest first
// (mnemo/timeline). An anchor id that does not exist is rpc.CodeNotFound.
func (c *Client) Timeline(ctx context.Context, p memory.TimelineParams) (memory.TimelineResult, error) {
	return call[memory.TimelineResult](ctx, c.c, memory.MethodTimeline, p)
}

// GetObservations returns full observations; ids that do not exist are
// listed as missing, not an error (mnemo/getObservations).
func (c *Client) GetObservations(ctx context.Context, p memory.IDsParams) (memory.ObservationsResult, error) {
	return call[memory.ObservationsResult](ctx, c.c, memory.MethodGetObservations, p)
}

// Records returns a page of full observations in the order of their
// ids; ask again with After set to Next until Next is 0 (mnemo/records).
func (c *Client) Records(ctx context.Context, p memory.RecordsParams) (memory.RecordsResult, error) {
	return call[memory.RecordsResult](ctx, c.c, memory.MethodRecords, p)
}

// Context returns what SessionStart would inject for a project
// (mnemo/context).
func (c *Client) Context(ctx context.Context, p memory.ContextParams) (memory.ContextResult, error) {
	return call[memory.ContextResult](ctx, c.c, memory.MethodContext, p)
}

// Save stores a memory saved on purpose (mnemo/save).
func (c *Client) Save(ctx context.Context, p memory.SaveParams) (memory.SaveResult, error) {
	return call[memory.SaveResult](ctx, c.c, memory.MethodSave, p)
}

// Forget deletes observations from every index; ids that do not exist are
// listed as missing, not an error (mnemo/forget).
func (c *Client) Forget(ctx context.Context, p memory.IDsParams) (memory.ForgetResult, error) {
	return call[memory.ForgetResult](ctx, c.c, memory.MethodForget, p)
}

// Correct replaces an observation's title, text or both, keeping what it
// said as an edit on the record (mnemo/correct). An id that does not
// exist is rpc.CodeNotFound; an empty correction rpc.CodeInvalidParams.
func (c *Client) Correct(ctx context.Context, p memory.CorrectParams) (memory.CorrectResult, error) {
	return call[memory.CorrectResult](ctx, c.c, memory.MethodCorrect, p)
}

// Review lists the records that need review: their file changed since
// and nothing confirmed them lately (mnemo/review).
func (c *Client) Review(ctx context.Context, p memory.ReviewParams) (memory.ReviewResult, error) {
	return call[memory.ReviewResult](ctx, c.c, memory.MethodReview, p)
}

// Keep records a person's word that observations still hold as their
// files are now (mnemo/keep). Ids that do not exist are
// rpc.CodeNotFound, and nothing is kept.
func (c *Client) Keep(ctx context.Context, p memory.IDsParams) (memory.PinResult, error) {
	return call[memory.PinResult](ctx, c.c, memory.MethodKeep, p)
}

// Pin keeps observations in every SessionStart context of their project
// (mnemo/pin). Ids that do not exist are rpc.CodeNotFound, and nothing is
// pinned.
func (c *Client) Pin(ctx context.Context, p memory.IDsParams) (memory.PinResult, error) {
	return call[memory.PinResult](ctx, c.c, memory.MethodPin, p)
}

// Unpin undoes Pin (mnemo/unpin), with the same errors.
func (c *Client) Unpin(ctx context.Context, p memory.IDsParams) (memory.PinResult, error) {
	return call[memory.PinResult](ctx, c.c, memory.MethodUnpin, p)
}

// MarkWrong records a person's word that observations are wrong: kept,
// never given as facts again (mnemo/markWrong).
func (c *Client) MarkWrong(ctx context.Context, p memory.IDsParams) (memory.PinResult, error) {
	return call[memory.PinResult](ctx, c.c, memory.MethodMarkWrong, p)
}

// UnmarkWrong takes it back (mnemo/unmarkWrong).
func (c *Client) UnmarkWrong(ctx context.Context, p memory.IDsParams) (memory.PinResult, error) {
	return call[memory.PinResult](ctx, c.c, memory.MethodUnmarkWrong, p)
}

// Knowledge returns what a project's records add up to, derived again when
// p.Refresh is set (mnemo/knowledge).
func (c *Client) Knowledge(ctx context.Context, p memory.KnowledgeParams) (memory.Knowledge, error) {
	return call[memory.Knowledge](ctx, c.c, memory.MethodKnowledge, p)
}

// Maintenance.

// Status describes the running daemon and its memory (mnemo/status).
func (c *Client) Status(ctx context.Context) (memory.Status, error) {
	return call[memory.Status](ctx, c.c, memory.MethodStatus, nil)
}

// Sessions lists the sessions (mnemo/sessions).
func (c *Client) Sessions(ctx context.Context) (memory.SessionsResult, error) {
	return call[memory.SessionsResult](ctx, c.c, memory.MethodSessions, nil)
}

// Session returns one session with its prompts, observations and
// summaries (mnemo/session).
func (c *Client) Session(ctx context.Context, p memory.SessionParams) (memory.SessionResult, error) {
	return call[memory.SessionResult](ctx, c.c, memory.MethodSession, p)
}

// Injections returns the newest context injections with the reason for
// each observation in them (mnemo/injections).
func (c *Client) Injections(ctx context.Context, p memory.InjectionsParams) (memory.InjectionsResult, error) {
	return call[memory.InjectionsResult](ctx, c.c, memory.MethodInjections, p)
}

// Doctor checks the store's invariants; a broken one is a Problem in the
// result, not an error (mnemo/doctor).
func (c *Client) Doctor(ctx context.Context) (memory.DoctorResult, error) {
	return call[memory.DoctorResult](ctx, c.c, memory.MethodDoctor, nil)
}

// Reindex starts embedding every observation again and says how many
// (mnemo/reindex); Status shows the progress.
func (c *Client) Reindex(ctx context.Context) (memory.ReindexResult, error) {
	return call[memory.ReindexResult](ctx, c.c, memory.MethodReindex, nil)
}

// Pause turns off capture, injection or both for a project
// (mnemo/pause); the daemon keeps it in its settings file.
func (c *Client) Pause(ctx context.Context, p memory.PauseParams) (memory.PauseResult, error) {
	return call[memory.PauseResult](ctx, c.c, memory.MethodPause, p)
}

// TeamJoin shares a project through a team server (mnemo/teamJoin).
func (c *Client) TeamJoin(ctx context.Context, p memory.TeamParams) (memory.TeamStatus, error) {
	return call[memory.TeamStatus](ctx, c.c, memory.MethodTeamJoin, p)
}

// TeamLeave stops sharing a project, or all (mnemo/teamLeave).
func (c *Client) TeamLeave(ctx context.Context, p memory.TeamParams) (memory.TeamStatus, error) {
	return call[memory.TeamStatus](ctx, c.c, memory.MethodTeamLeave, p)
}

// TeamStatus is the state of team memory (mnemo/teamStatus).
func (c *Client) TeamStatus(ctx context.Context) (memory.TeamStatus, error) {
	return call[memory.TeamStatus](ctx, c.c, memory.MethodTeamStatus, nil)
}

// Viewer starts the daemon's memory viewer if it does not serve yet and
// returns its address (mnemo/viewer).
func (c *Client) Viewer(ctx context.Context) (memory.ViewerResult, error) {
	return call[memory.ViewerResult](ctx, c.c, memory.MethodViewer, nil)
}

// Resume undoes Pause (mnemo/resume).
func (c *Client) Resume(ctx context.Context, p memory.PauseParams) (memory.PauseResult, error) {
	return call[memory.PauseResult](ctx, c.c, memory.MethodResume, p)
}

// Export has the daemon write the whole memory as JSON lines to p.Path, an
// absolute path (mnemo/export).
func (c *Client) Export(ctx context.Context, p memory.ExportParams) (memory.ExportResult, error) {
	return call[memory.ExportResult](ctx, c.c, memory.MethodExport, p)
}

// Import has the daemon read an export from p.Path, an absolute path;
// records already present are skipped (mnemo/import).
func (c *Client) Import(ctx context.Context, p memory.ImportParams) (memory.ImportResult, error) {
	return call[memory.ImportResult](ctx, c.c, memory.MethodImport, p)
}
