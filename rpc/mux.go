package rpc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	json "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"go.lsp.dev/jsonrpc2"
)

// MethodCancelRequest is the LSP notification that cancels an in-flight call
// by id ({"id": number | string}).
const MethodCancelRequest = "$/cancelRequest"

// Mux is a method table: it decodes params into typed handlers, maps their
// errors through the one error table, recovers their panics and cancels
// calls named by $/cancelRequest. Register methods with Handle and
// HandleNotify, then serve each connection with its own Mux.Handler().
//
// Handlers run inline on the connection's read goroutine, so a connection's
// messages are handled one at a time in wire order; Concurrent releases a
// method from that order (see Concurrent).
type Mux struct {
	log   *slog.Logger
	codec jsonrpc2.Codec

	mu      sync.RWMutex
	methods map[string]*route
	mws     []Middleware
}

// route is one registered method.
type route struct {
	concurrent bool
	serve      func(ctx context.Context, params jsonrpc2.RawMessage) (any, error)
}

// Middleware wraps the Mux's dispatch of every call and notification (but not
// $/cancelRequest). It sees the request as jsonrpc2 hands it over, and the
// error as a boundary *Error (never an internal one): use CodeOf on it. The
// request's Method and Params are valid until the wrapped handler returns.
type Middleware func(next jsonrpc2.Handler) jsonrpc2.Handler

// MethodOption changes how a method is dispatched.
type MethodOption func(*route)

// Concurrent marks a method to be released from wire order: its handler
// calls jsonrpc2.Async first, so the connection reads on while it runs. A
// handler that calls back to the peer (Conn.Call) must be Concurrent, or the
// connection deadlocks; so must one that should be cancellable by
// $/cancelRequest, which can only be read while the handler runs.
func Concurrent() MethodOption {
	return func(r *route) { r.concurrent = true }
}

// MuxOption configures a Mux.
type MuxOption func(*Mux)

// WithParamsCodec makes the Mux decode params with c instead of
// jsonrpc2.DefaultCodec: for LSP methods, a codec calling protocol.Unmarshal
// (whose unions need it). When c fails without a json/v2 error (protocol's
// says only "at offset N"), the Mux decodes again with json/v2 to name the
// field, and falls back to c's message. The results are encoded by the
// connection's codec (Serve's jsonrpc2.WithCodec option).
func WithParamsCodec(c jsonrpc2.Codec) MuxOption {
	return func(m *Mux) { m.codec = c }
}

// NewMux returns an empty method table logging to log (nil: slog.Default()).
func NewMux(log *slog.Logger, opts ...MuxOption) *Mux {
	if log == nil {
		log = slog.Default()
	}
	m := &Mux{log: log, codec: jsonrpc2.DefaultCodec, methods: make(map[string]*route)}
	for _, o := range opts {
		o(m)
	}
	return m
}

// Use appends middlewares; the first one is the outermost. They apply to the
// handlers made by later calls to Handler.
func (m *Mux) Use(mws ...Middleware) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mws = append(m.mws, mws...)
}

// Handle registers fn as the handler of the call method.
//
// Params decode into a P with json/v2, or the WithParamsCodec codec (field
// names match json tags case-sensitively; unknown fields are ignored; absent
// or null params give the zero P); then Validate runs if *P or P implements
// Validate() error. A decode or validation failure answers -32602 naming the
// field, without calling fn. fn's result is the response; its error goes out
// through the error table: an *Error (anywhere in the chain) with its code
// and message, context.Canceled as -32800, anything else as -32603
// "internal error" with the real error logged.
//
// If the method arrives as a notification, fn still runs and its result is
// dropped. Registering a method twice panics.
func Handle[P, R any](m *Mux, method string, fn func(ctx context.Context, p P) (R, error), opts ...MethodOption) {
	m.add(method, func(ctx context.Context, raw jsonrpc2.RawMessage) (any, error) {
		p, perr := decodeParams[P](m.codec, raw)
		if perr != nil {
			return nil, perr
		}
		return fn(ctx, p)
	}, opts)
}

// HandleNotify registers fn as the handler of the notification method. Its
// error (and a params failure) is logged, never sent: jsonrpc2 would end the
// connection on it. If the method arrives as a call, it is answered with a
// null result after fn ran, or with fn's error.
func HandleNotify[P any](m *Mux, method string, fn func(ctx context.Context, p P) error, opts ...MethodOption) {
	m.add(method, func(ctx context.Context, raw jsonrpc2.RawMessage) (any, error) {
		p, perr := decodeParams[P](m.codec, raw)
		if perr != nil {
			return nil, perr
		}
		return nil, fn(ctx, p)
	}, opts)
}

func (m *Mux) add(method string, serve func(context.Context, jsonrpc2.RawMessage) (any, error), opts []MethodOption) {
	if method == "" || method == MethodCancelRequest {
		panic(fmt.Sprintf("rpc: cannot register method %q", method))
	}
	r := &route{serve: serve}
	for _, o := range opts {
		o(r)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, dup := m.methods[method]; dup {
		panic(fmt.Sprintf("rpc: method %q registered twice", method))
	}
	m.methods[method] = r
}

// Handler returns the jsonrpc2.Handler for ONE connection: request ids are
// per connection, and so is the table of cancellable calls. Methods
// registered later are served too.
//
// What it answers: an unknown call gets -32601 (`method not found: "x"`); an
// unknown notification is dropped (logged at debug); a handler panic is
// recovered, logged with its stack, and a call gets -32603 "internal error"
// while the connection lives on. It never returns an error for a
// notification, so no handler can end the connection.
//
// Handlers get a context of their own, derived from the connection's (the
// ctx given to Serve): it carries that context's values, ends when the
// handler returns, the connection's context ends, or $/cancelRequest names
// the call, and is safe to derive from and to retain. (jsonrpc2's pooled
// request context is not: a context.WithCancel or WithTimeout of it can
// panic after the handler returns, which also rules out
// jsonrpc2.CancelHandler.)
func (m *Mux) Handler() jsonrpc2.Handler {
	m.mu.RLock()
	h := jsonrpc2.Handler(m.dispatch)
	for i := len(m.mws) - 1; i >= 0; i-- {
		h = m.mws[i](h)
	}
	m.mu.RUnlock()

	var (
		mu       sync.Mutex
		inflight = make(map[jsonrpc2.ID]context.CancelFunc)
	)
	cancel := func(id jsonrpc2.ID) {
		mu.Lock()
		c := inflight[id]
		mu.Unlock()
		if c != nil {
			c()
		}
	}

	return func(ctx context.Context, req *jsonrpc2.Request) (result any, err error) {
		defer func() {
			// A panicking middleware; dispatch recovers handler panics itself.
			if r := recover(); r != nil {
				m.log.Error("rpc: middleware panicked", "method", req.Method(), "panic", r, "stack", string(debug.Stack()))
				result, err = nil, wireError(&Error{Code: CodeInternal})
			}
			if !req.IsCall() {
				result, err = nil, nil
			}
		}()
		if req.Method() == MethodCancelRequest {
			if !req.IsCall() {
				m.cancel(req.Params(), cancel)
				return nil, nil
			}
			return nil, wireError(Errorf(CodeInvalidRequest, "invalid request: %s is a notification", MethodCancelRequest))
		}

		if r := m.route(req.Method()); r != nil && r.concurrent {
			// Releases the read loop; clones the request in place, so its
			// Method and Params stay valid until we return.
			jsonrpc2.Async(ctx)
		}
		hctx, stop := context.WithCancel(jsonrpc2.DetachContext(ctx))
		defer stop()
		if req.IsCall() {
			id := req.ID()
			mu.Lock()
			inflight[id] = stop
			mu.Unlock()
			defer func() {
				mu.Lock()
				delete(inflight, id)
				mu.Unlock()
			}()
		}

		result, err = h(hctx, req)
		if err != nil {
			e, ok := errors.AsType[*Error](err)
			if !ok {
				// A middleware made up its own error; it is internal too.
				m.log.Error("rpc: middleware failed", "method", req.Method(), "err", err)
				e = &Error{Code: CodeInternal}
			}
			return nil, wireError(e)
		}
		return result, nil
	}
}

// Call handles one call in this process, as Handler does a call on a
// connection: its params decoded, the handler run, a panic recovered, and
// an error mapped through the error table to a boundary *Error (an
// internal one logged). Middlewares do not run. It is for calls that come
// from elsewhere than a connection: the daemon's reading of the hooks'
// journal.
func (m *Mux) Call(ctx context.Context, method string, params []byte) (result any, err error) {
	r := m.route(method)
	if r == nil {
		return nil, Errorf(CodeMethodNotFound, "method not found: %q", method)
	}
	defer func() {
		if p := recover(); p != nil {
			m.log.Error("rpc: handler panicked", "method", method, "panic", p, "stack", string(debug.Stack()))
			result, err = nil, &Error{Code: CodeInternal}
		}
	}()
	result, err = r.serve(ctx, params)
	if err != nil {
		return nil, m.boundary(method, err)
	}
	return result, nil
}

func (m *Mux) route(method string) *route {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.methods[method]
}

// cancel routes a $/cancelRequest notification ({"id": number | string})
// to the connection's table of calls in flight.
func (m *Mux) cancel(params jsonrpc2.RawMessage, cancel func(jsonrpc2.ID)) {
	var p struct {
		ID jsontext.Value `json:"id"`
	}
	if err := json.Unmarshal(params, &p); err != nil || len(p.ID) == 0 {
		m.log.Debug("rpc: malformed $/cancelRequest", "params", string(params))
		return
	}
	switch p.ID.Kind() {
	case '0':
		n, err := strconv.ParseInt(string(p.ID), 10, 64)
		if err != nil {
			m.log.Debug("rpc: malformed $/cancelRequest id", "id", string(p.ID))
			return
		}
		cancel(jsonrpc2.NewNumberID(n))
	case '"':
		var s string
		if err := json.Unmarshal(p.ID, &s); err != nil {
			return
		}
		cancel(jsonrpc2.NewStringID(s))
	default:
		m.log.Debug("rpc: malformed $/cancelRequest id", "id", string(p.ID))
	}
}

// dispatch finds the route, decodes, runs and maps errors. Its errors are
// always *Error.
func (m *Mux) dispatch(ctx context.Context, req *jsonrpc2.Request) (result any, err error) {
	r := m.route(req.Method())
	if r == nil {
		if req.IsCall() {
			return nil, Errorf(CodeMethodNotFound, "method not found: %q", req.Method())
		}
		m.log.Debug("rpc: dropped unknown notification", "method", req.Method())
		return nil, nil
	}
	defer func() {
		if p := recover(); p != nil {
			m.log.Error("rpc: handler panicked", "method", req.Method(), "panic", p, "stack", string(debug.Stack()))
			result, err = nil, &Error{Code: CodeInternal}
			if !req.IsCall() {
				err = nil
			}
		}
	}()

	result, err = r.serve(ctx, req.Params())
	if err == nil {
		return result, nil
	}
	if !req.IsCall() {
		m.log.Warn("rpc: notification failed", "method", req.Method(), "err", err)
		return nil, nil
	}
	return nil, m.boundary(req.Method(), err)
}

// boundary maps a handler error to what the client may see, logging what it
// may not.
func (m *Mux) boundary(method string, err error) *Error {
	if e, ok := errors.AsType[*Error](err); ok {
		return e
	}
	if errors.Is(err, context.Canceled) {
		return &Error{Code: CodeCanceled}
	}
	m.log.Error("rpc: handler failed", "method", method, "err", err)
	return &Error{Code: CodeInternal}
}

// LogCalls is a Middleware that logs every call and notification at debug
// level: method, whether it was a call, how long it took, and its code.
func LogCalls(log *slog.Logger) Middleware {
	return func(next jsonrpc2.Handler) jsonrpc2.Handler {
		return func(ctx context.Context, req *jsonrpc2.Request) (any, error) {
			if !log.Enabled(ctx, slog.LevelDebug) {
				return next(ctx, req)
			}
			start := time.Now()
			res, err := next(ctx, req)
			log.LogAttrs(ctx, slog.LevelDebug, "rpc",
				slog.String("method", req.Method()),
				slog.Bool("call", req.IsCall()),
				slog.Duration("took", time.Since(start)),
				slog.String("code", CodeOf(err).String()))
			return res, err
		}
	}
}
