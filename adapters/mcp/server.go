package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/client"
	"github.com/mnemo-dev/mnemo/rpc"
)

// The tools' names. Claude Code shows them to the model as
// mcp__<server>__<name>, e.g. mcp__mnemo__search.
const (
	ToolSearch          = "search"
	ToolTimeline        = "timeline"
	ToolGetObservations = "get_observations"
	ToolSaveMemory      = "save_memory"
	ToolForget          = "forget"
	ToolCorrectMemory   = "correct_memory"
	ToolPinMemory       = "pin_memory"
)

// DefaultCallTimeout bounds one daemon call made by a tool.
const DefaultCallTimeout = 30 * time.Second

// Options configure a Server.
type Options struct {
	// Cwd is the working directory the server was started in: save_memory
	// resolves relative file paths against it, and its project (Project)
	// is the default one for save_memory.
	Cwd string
	// Project overrides the project of Cwd.
	Project string
	// Version is reported to clients as the server's version.
	Version string
	// DaemonHelp is appended to the error of a tool call that could not
	// reach the daemon: what the user can do (where the logs are, which
	// command shows the daemon's state).
	DaemonHelp string
	// CallTimeout bounds each daemon call; DefaultCallTimeout when 0.
	CallTimeout time.Duration
	// Logger receives one line per tool call (name, duration, outcome;
	// never the arguments) and the SDK's own log. Nil discards.
	Logger *slog.Logger
	// Now is the clock for ages such as "7d"; time.Now when nil.
	Now func() time.Time
	// Hosts names the coding agents whose sessions search's host argument
	// can keep to (the hosts' table, adapters/hosts), for its description.
	Hosts []string
}

// Server is Mnemo's MCP server: the memory tools over a Caller.
type Server struct {
	daemon *client.Client // each call bounded by opts.CallTimeout
	opts   Options
	log    *slog.Logger
	sdk    *sdk.Server
}

// NewServer builds the server and its tools. Serve it with Run, or use
// SDK to connect it to another transport (tests).
func NewServer(c Caller, o Options) *Server {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Project == "" {
		o.Project = memory.ProjectOf(o.Cwd)
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = DefaultCallTimeout
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	s := &Server{daemon: client.New(timeoutCaller{c, o.CallTimeout}), opts: o, log: o.Logger}
	s.sdk = sdk.NewServer(&sdk.Implementation{Name: "mnemo", Title: "Mnemo memory", Version: o.Version}, &sdk.ServerOptions{
		Instructions: instructions(o.Project),
		Logger:       slog.New(shutdownIsNews{o.Logger.Handler()}),
		// No logging capability: this server sends no log messages.
		Capabilities: &sdk.ServerCapabilities{},
	})
	s.addTools()
	return s
}

// SDK returns the underlying SDK server.
func (s *Server) SDK() *sdk.Server { return s.sdk }

// Run serves one client over t (e.g. &sdk.StdioTransport{}) until the
// client disconnects (nil) or ctx ends (ctx.Err()).
func (s *Server) Run(ctx context.Context, t sdk.Transport) error {
	return s.sdk.Run(ctx, t)
}

// instructions is the server's instructions: what Mnemo is and the
// workflow the tools teach.
func instructions(project string) string {
	var b strings.Builder
	b.WriteString("Mnemo is this machine's persistent memory of past coding sessions: observations (what was done, found or decided, and the files involved) recorded from earlier sessions' tool use, and memories saved on purpose.\n\n")
	b.WriteString("Spend few tokens: disclose progressively.\n")
	b.WriteString("1. search: a compact index, one line per observation (#id · time · type · title). Filter by project, types, files and time.\n")
	b.WriteString("2. timeline(anchor=<id>): the observations just before and after an interesting one.\n")
	b.WriteString("3. get_observations(ids=[...]): the full records of the few ids that matter, batched in one call.\n")
	b.WriteString("Use save_memory for a decision, a gotcha or a fact worth keeping for later sessions; correct_memory to fix a memory that is wrong (its history is kept), pin_memory for one every session of the project must see, and forget to delete one that is sensitive or useless.\n")
	if project != "" {
		fmt.Fprintf(&b, "\nThe current project is %q.\n", project)
	}
	return b.String()
}

// toolFunc is a tool's logic: typed, checked input in; a text for the
// agent and a structured result out.
type toolFunc[In, Out any] func(ctx context.Context, in In) (text string, out Out, err error)

// addTool registers a tool whose input schema is t.InputSchema (a
// *jsonschema.Schema) and whose output schema is inferred from Out. Bad
// arguments and failures become tool errors (isError, with a text that
// says what to do); the session goes on.
func addTool[In, Out any](s *Server, t *sdk.Tool, fn toolFunc[In, Out]) {
	in := t.InputSchema.(*jsonschema.Schema)
	resolved, err := in.Resolve(nil)
	if err != nil {
		panic(fmt.Sprintf("mcp: tool %s: input schema: %v", t.Name, err))
	}
	t.OutputSchema = outputSchema[Out]()
	s.sdk.AddTool(t, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		start := time.Now()
		var input In
		err := decodeArgs(req.Params.Arguments, in, resolved, &input)
		var (
			text string
			out  Out
		)
		if err == nil {
			text, out, err = fn(ctx, input)
		}
		if err != nil {
			msg := s.explain(t.Name, err)
			s.log.Info("tool call", "tool", t.Name, "ms", time.Since(start).Milliseconds(), "ok", false, "err", err)
			res := &sdk.CallToolResult{}
			res.SetError(errors.New(msg))
			return res, nil
		}
		s.log.Info("tool call", "tool", t.Name, "ms", time.Since(start).Milliseconds(), "ok", true)
		structured, err := json.Marshal(out)
		if err != nil {
			return nil, fmt.Errorf("mcp: encode the result of %s: %w", t.Name, err)
		}
		return &sdk.CallToolResult{
			Content:           []sdk.Content{&sdk.TextContent{Text: text}},
			StructuredContent: json.RawMessage(structured),
		}, nil
	})
}

// A toolError is a failure the tool itself found (unknown ids, nothing
// matched where something must); its text is shown as is.
type toolError struct{ msg string }

func (e *toolError) Error() string { return e.msg }

func failf(format string, args ...any) error { return &toolError{fmt.Sprintf(format, args...)} }

// explain turns a tool's error into the text the agent sees: what went
// wrong and what to do about it. Internal details stay in the log.
func (s *Server) explain(tool string, err error) string {
	var te *toolError
	var re *rpc.Error
	switch {
	case errors.As(err, &te):
		return te.msg
	case errors.Is(err, ErrArguments):
		return fmt.Sprintf("%s: %v. Call %s again with arguments that fit its input schema.", tool, err, tool)
	case errors.Is(err, ErrDaemonUnreachable):
		msg := fmt.Sprintf("%s: %v. Mnemo starts its daemon on demand, and this server reconnects on the next call, so retrying once may work.", tool, err)
		if s.opts.DaemonHelp != "" {
			msg += " " + s.opts.DaemonHelp
		}
		return msg
	case errors.As(err, &re):
		switch re.Code {
		case rpc.CodeInvalidParams:
			return fmt.Sprintf("%s: invalid arguments: %s.", tool, strings.TrimPrefix(re.Message, "invalid params: "))
		case rpc.CodeNotFound:
			return fmt.Sprintf("%s: %s. Use search to find existing ids.", tool, re.Message)
		case rpc.CodeVersionMismatch:
			return fmt.Sprintf("%s: %s", tool, re.Message)
		}
		msg := fmt.Sprintf("%s: the Mnemo daemon failed (%s).", tool, re.Message)
		if s.opts.DaemonHelp != "" {
			msg += " " + s.opts.DaemonHelp
		}
		return msg
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("%s: the Mnemo daemon did not answer within %s; try again, or with a narrower request. %s", tool, s.opts.CallTimeout, s.opts.DaemonHelp)
	case errors.Is(err, context.Canceled):
		return fmt.Sprintf("%s: cancelled.", tool)
	}
	return fmt.Sprintf("%s: %v", tool, err)
}

// timeoutCaller bounds each call of a Caller with a timeout.
type timeoutCaller struct {
	Caller
	timeout time.Duration
}

func (c timeoutCaller) Call(ctx context.Context, method string, params, result any) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	return c.Caller.Call(ctx, method, params, result)
}

// shutdownIsNews lowers the SDK's "server run cancelled" from an error to
// information: the client ending the server (Claude Code does at every
// exit) is the normal way for it to stop.
type shutdownIsNews struct{ slog.Handler }

func (h shutdownIsNews) Handle(ctx context.Context, r slog.Record) error {
	if r.Level == slog.LevelError && r.Message == "server run cancelled" {
		r.Level = slog.LevelInfo
	}
	return h.Handler.Handle(ctx, r)
}

func (h shutdownIsNews) WithAttrs(attrs []slog.Attr) slog.Handler {
	return shutdownIsNews{h.Handler.WithAttrs(attrs)}
}

func (h shutdownIsNews) WithGroup(name string) slog.Handler {
	return shutdownIsNews{h.Handler.WithGroup(name)}
}
