package rpc_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/mnemo-dev/mnemo/rpc"
)

func TestParams(t *testing.T) {
	tests := []struct {
		name    string
		params  any
		want    searchParams // when wantErr is ""
		wantErr string       // the exact -32602 message
	}{
		{name: "wrong type names the field", params: rawJSON(`{"query":"x","limit":"ten"}`),
			wantErr: `invalid params: field "limit": expected number, got string`},
		{name: "nested field", params: rawJSON(`{"filter":{"files":["a",1]}}`),
			wantErr: `invalid params: field "filter.files[1]": expected string, got number`},
		{name: "self-decoding type", params: rawJSON(`{"filter":{"since":"yesterday"}}`),
			wantErr: `invalid params: field "filter.since": invalid string: parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"`},
		{name: "fraction for an int", params: rawJSON(`{"limit":1.5}`),
			wantErr: `invalid params: field "limit": invalid number 1.5: invalid syntax`},
		{name: "array instead of object", params: rawJSON(`[1,2]`),
			wantErr: `invalid params: expected object, got array`},
		{name: "duplicate member", params: rawJSON(`{"limit":1,"limit":2}`),
			wantErr: `invalid params: field "limit": duplicate object member name`},
		{name: "Validate fails", params: rawJSON(`{"limit":5000}`),
			wantErr: `invalid params: limit must be between 0 and 1000, got 5000`},
		{name: "absent params are the zero value", params: nil, want: searchParams{}},
		{name: "null params are the zero value", params: rawJSON(`null`), want: searchParams{}},
		{name: "unknown fields ignored, names case-sensitive", params: rawJSON(`{"query":"q","Limit":7,"extra":{"x":1}}`),
			want: searchParams{Query: "q"}},
		{name: "valid", params: rawJSON(`{"query":"q","limit":7}`), want: searchParams{Query: "q", Limit: 7}},
	}
	mux, _, _ := newTestMux(t)
	c, _ := newPipeClient(t, mux.Handler(), nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got searchParams
			err := c.Call(ctxT(t), "search", tt.params, &got)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if got.Query != tt.want.Query || got.Limit != tt.want.Limit {
					t.Fatalf("got %+v, want %+v", got, tt.want)
				}
				return
			}
			if rpc.CodeOf(err) != rpc.CodeInvalidParams || !errors.Is(err, rpc.ErrInvalidParams) {
				t.Fatalf("err = %v (code %v), want invalid params", err, rpc.CodeOf(err))
			}
			if err.Error() != tt.wantErr {
				t.Fatalf("message:\n got %s\nwant %s", err.Error(), tt.wantErr)
			}
		})
	}
}

func rawJSON(s string) jsonrpc2.RawMessage { return jsonrpc2.RawMessage(s) }

// TestValidateReturningRPCError: a Validate that returns an *rpc.Error is sent
// as it is.
func TestValidateReturningRPCError(t *testing.T) {
	m := rpc.NewMux(nil)
	rpc.Handle(m, "get", func(ctx context.Context, p getParams) (int, error) { return p.ID, nil })
	c, _ := newPipeClient(t, m.Handler(), nil)
	err := c.Call(ctxT(t), "get", getParams{ID: -1}, nil)
	if rpc.CodeOf(err) != rpc.CodeNotFound || err.Error() != "not found: id -1" {
		t.Fatalf("err = %v", err)
	}
}

type getParams struct {
	ID int `json:"id"`
}

func (p getParams) Validate() error {
	if p.ID < 0 {
		return rpc.NotFound("id %d", p.ID)
	}
	return nil
}

func TestHandlerErrors(t *testing.T) {
	tests := []struct {
		method   string
		wantCode rpc.Code
		wantMsg  string
		sentinel error
	}{
		{method: "missing", wantCode: rpc.CodeNotFound, wantMsg: "not found: observation 42", sentinel: rpc.ErrNotFound},
		{method: "wrapped", wantCode: rpc.CodeNotFound, wantMsg: `not found: session "abc"`, sentinel: rpc.ErrNotFound},
		{method: "fail", wantCode: rpc.CodeInternal, wantMsg: "internal error", sentinel: rpc.ErrInternal},
		{method: "panic", wantCode: rpc.CodeInternal, wantMsg: "internal error", sentinel: rpc.ErrInternal},
		{method: "nope", wantCode: rpc.CodeMethodNotFound, wantMsg: `method not found: "nope"`, sentinel: rpc.ErrMethodNotFound},
	}
	mux, _, _ := newTestMux(t)
	c, _ := newPipeClient(t, mux.Handler(), nil)
	for _, tt := range tests {
		t.Run(tt.method, func(t *testing.T) {
			err := c.Call(ctxT(t), tt.method, nil, nil)
			e, ok := errors.AsType[*rpc.Error](err)
			if !ok {
				t.Fatalf("err = %v (%T), want *rpc.Error", err, err)
			}
			if e.Code != tt.wantCode || e.Message != tt.wantMsg {
				t.Errorf("got %v %q, want %v %q", e.Code, e.Message, tt.wantCode, tt.wantMsg)
			}
			if !errors.Is(err, tt.sentinel) {
				t.Errorf("errors.Is(%v, %v) = false", err, tt.sentinel)
			}
			// The connection lives on.
			var sum int
			if err := c.Call(ctxT(t), "sum", sumParams{A: 1, B: 2}, &sum); err != nil || sum != 3 {
				t.Fatalf("sum after %s: %d, %v", tt.method, sum, err)
			}
		})
	}
}

// TestNotificationsInWireOrder: inline handlers see messages in order, and a
// failing or panicking notification neither answers nor ends anything.
func TestNotificationsInWireOrder(t *testing.T) {
	mux, _, logs := newTestMux(t)
	c, srv := newPipeClient(t, mux.Handler(), nil)
	ctx := ctxT(t)
	var want []int
	for i := range 200 {
		method := "note"
		switch i % 50 {
		case 10:
			method = "noteFail"
		case 20:
			method = "notePanic"
		case 30:
			method = "unknownNote"
		default:
			want = append(want, i)
		}
		if err := c.Notify(ctx, method, noteParams{N: i}); err != nil {
			t.Fatal(err)
		}
	}
	var got []int
	if err := c.Call(ctx, "notes", nil, &got); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("notes out of order or lost:\n got %v\nwant %v", got, want)
	}
	for _, w := range []string{"notification failed", "note store broken", "handler panicked", "note panic value", "dropped unknown notification"} {
		if !strings.Contains(logs.String(), w) {
			t.Errorf("log lacks %q", w)
		}
	}
	select {
	case <-srv.Done():
		t.Fatalf("server connection ended: %v", srv.Err())
	default:
	}
}

// TestCancelRequest cancels a Concurrent call with $/cancelRequest, by
// number and by string id, on the wire.
func TestCancelRequest(t *testing.T) {
	for _, id := range []string{`7`, `"req-7"`} {
		t.Run(id, func(t *testing.T) {
			mux, svc, _ := newTestMux(t)
			conn, _ := serveTest(t, mux.Handler())
			p := newRawPeer(t, conn)
			p.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"slow"}`)
			waitFor(t, svc.started, "the slow call to start")
			// Concurrent: the connection serves while "slow" runs.
			p.expectSum(1)
			p.send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":` + id + `}}`)
			msg := p.read()
			if string(msg.ID) != id || msg.Error == nil || msg.Error.Code != -32800 || msg.Error.Message != "request cancelled" {
				t.Fatalf("want -32800 for id %s, got %s", id, msg.raw)
			}
			if err := waitFor(t, svc.stopped, "the handler to see the cancel"); !errors.Is(err, context.Canceled) {
				t.Fatalf("handler saw %v", err)
			}
			// Cancelling an id that is not in flight, or a malformed cancel,
			// does nothing.
			p.send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":` + id + `}}`)
			p.send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":[1]}}`)
			p.send(`{"jsonrpc":"2.0","method":"$/cancelRequest"}`)
			p.expectSum(2)
		})
	}
}

// TestClientCancel: a Client whose context ends sends $/cancelRequest, and
// the server's handler sees its context end.
func TestClientCancel(t *testing.T) {
	mux, svc, _ := newTestMux(t)
	c, _ := newPipeClient(t, mux.Handler(), nil)
	ctx, cancel := context.WithCancel(ctxT(t))
	errc := make(chan error, 1)
	go func() { errc <- c.Call(ctx, "slow", nil, nil) }()
	waitFor(t, svc.started, "the slow call to start")
	cancel()
	err := waitFor(t, errc, "Call to return")
	if !errors.Is(err, context.Canceled) || rpc.CodeOf(err) != rpc.CodeCanceled || !strings.Contains(err.Error(), "call slow") {
		t.Fatalf("Call = %v (code %v)", err, rpc.CodeOf(err))
	}
	if err := waitFor(t, svc.stopped, "the handler to see the cancel"); !errors.Is(err, context.Canceled) {
		t.Fatalf("handler saw %v", err)
	}
}

// TestConcurrentCallsBack: a Concurrent handler can call the peer back on the
// same connection without deadlock.
func TestConcurrentCallsBack(t *testing.T) {
	mux, svc, _ := newTestMux(t)
	clientMux := rpc.NewMux(nil)
	rpc.Handle(clientMux, "client/name", func(ctx context.Context, p struct{}) (string, error) { return "vscode", nil })
	c, srv := newPipeClient(t, mux.Handler(), clientMux.Handler())
	svc.peer = func() jsonrpc2.Conn { return srv }
	var got string
	if err := c.Call(ctxT(t), "askPeer", nil, &got); err != nil {
		t.Fatal(err)
	}
	if got != "peer is vscode" {
		t.Fatalf("got %q", got)
	}
}

// TestHandlerContext: a handler may derive contexts from its own and keep
// one past its return: jsonrpc2's pooled request context would panic here.
// The context carries the connection's values and ends when the handler
// returns.
func TestHandlerContext(t *testing.T) {
	type key struct{}
	kept := make(chan context.Context, 1)
	m := rpc.NewMux(nil)
	rpc.Handle(m, "derive", func(ctx context.Context, p struct{}) (string, error) {
		ctx2, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		stop := context.AfterFunc(ctx, func() {})
		defer stop()
		select {
		case kept <- ctx:
		default:
		}
		v, _ := ctx2.Value(key{}).(string)
		return v, ctx2.Err()
	})
	a, b := netPipe(t)
	srv := rpc.Serve(context.WithValue(context.Background(), key{}, "conn-value"), b, m.Handler())
	c := rpc.NewClient(a, nil)
	t.Cleanup(func() { c.Close(); srv.Close() })
	for i := range 2000 {
		var v string
		if err := c.Call(ctxT(t), "derive", nil, &v); err != nil || v != "conn-value" {
			t.Fatalf("call %d: %q, %v", i, v, err)
		}
	}
	ctx := <-kept
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("a handler's context did not end when it returned")
	}
}

func TestMiddleware(t *testing.T) {
	log, logs := newLogger()
	mux, _, _ := newTestMux(t)
	var (
		mu   sync.Mutex
		seen []string
	)
	mux.Use(rpc.LogCalls(log), func(next jsonrpc2.Handler) jsonrpc2.Handler {
		return func(ctx context.Context, req *jsonrpc2.Request) (any, error) {
			res, err := next(ctx, req)
			mu.Lock()
			seen = append(seen, fmt.Sprintf("%s:%v:%v", req.Method(), rpc.CodeOf(err), err))
			mu.Unlock()
			return res, err
		}
	})
	c, _ := newPipeClient(t, mux.Handler(), nil)
	ctx := ctxT(t)
	_ = c.Call(ctx, "sum", sumParams{1, 1}, nil)
	_ = c.Call(ctx, "fail", nil, nil)
	_ = c.Notify(ctx, "note", noteParams{N: 1})
	_ = c.Call(ctx, "notes", nil, nil)

	mu.Lock()
	got := slices.Clone(seen)
	mu.Unlock()
	want := []string{"sum:ok:<nil>", "fail:internal error:internal error", "note:ok:<nil>", "notes:ok:<nil>"}
	if !slices.Equal(got, want) {
		t.Fatalf("middleware saw %q, want %q", got, want)
	}
	for _, w := range []string{"method=sum call=true took=", "code=ok", "method=fail call=true", `code="internal error"`, "method=note call=false"} {
		if !strings.Contains(logs.String(), w) {
			t.Errorf("LogCalls log lacks %q:\n%s", w, logs.String())
		}
	}
}

func TestRegisterTwicePanics(t *testing.T) {
	m := rpc.NewMux(nil)
	rpc.Handle(m, "x", func(ctx context.Context, p struct{}) (int, error) { return 0, nil })
	for _, method := range []string{"x", "", rpc.MethodCancelRequest} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("registering %q did not panic", method)
				}
			}()
			rpc.HandleNotify(m, method, func(ctx context.Context, p struct{}) error { return nil })
		}()
	}
}

// TestErrorTable pins the wire codes and CodeOf's classification.
func TestErrorTable(t *testing.T) {
	wire := []struct {
		code rpc.Code
		want jsonrpc2.Code
	}{
		{rpc.CodeParse, -32700}, {rpc.CodeInvalidRequest, -32600}, {rpc.CodeMethodNotFound, -32601},
		{rpc.CodeInvalidParams, -32602}, {rpc.CodeInternal, -32603}, {rpc.CodeNotInitialized, -32002},
		{rpc.CodeUnknown, -32001}, {rpc.CodeCanceled, -32800}, {rpc.CodeVersionMismatch, -32010},
		{rpc.CodeNotFound, -32011},
	}
	for _, w := range wire {
		if got := jsonrpc2.Code(w.code.Wire()); got != w.want {
			t.Errorf("%v.Wire() = %d, want %d", w.code, got, w.want)
		}
		if got := rpc.CodeOf(&jsonrpc2.Error{Code: w.want}); got != w.code {
			t.Errorf("CodeOf(wire %d) = %v, want %v", w.want, got, w.code)
		}
	}
	tests := []struct {
		name string
		err  error
		want rpc.Code
	}{
		{"nil", nil, rpc.CodeOK},
		{"rpc error", rpc.InvalidParams("x"), rpc.CodeInvalidParams},
		{"wrapped rpc error", fmt.Errorf("ctx: %w", rpc.NotFound("y")), rpc.CodeNotFound},
		{"foreign wire code", &jsonrpc2.Error{Code: -32099}, rpc.CodeUnknown},
		{"canceled", fmt.Errorf("call: %w", context.Canceled), rpc.CodeCanceled},
		{"plain", io.EOF, rpc.CodeUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := rpc.CodeOf(tt.err); got != tt.want {
				t.Errorf("CodeOf = %v, want %v", got, tt.want)
			}
		})
	}
	if errors.Is(rpc.NotFound("a"), rpc.ErrInvalidParams) || !errors.Is(rpc.Errorf(rpc.CodeNotFound, "b"), rpc.ErrNotFound) {
		t.Error("errors.Is must match on the code only")
	}
	if got := rpc.InvalidParams("limit %d", 3).Error(); got != "invalid params: limit 3" {
		t.Errorf("InvalidParams message = %q", got)
	}
	if got := (&rpc.Error{Code: rpc.CodeInternal}).Error(); got != "internal error" {
		t.Errorf("empty message = %q", got)
	}
}

// waitFor receives from ch within 5 s.
func waitFor[T any](t testing.TB, ch chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(5 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// lspCodec is the codec an LSP server plugs in: protocol's own is
// unexported.
type lspCodec struct{}

func (lspCodec) Marshal(v any) ([]byte, error)      { return protocol.Marshal(v) }
func (lspCodec) Unmarshal(data []byte, v any) error { return protocol.Unmarshal(data, v) }

// TestParamsCodec decodes LSP params with protocol's codec; its terse errors
// still come out naming the field.
func TestParamsCodec(t *testing.T) {
	m := rpc.NewMux(nil, rpc.WithParamsCodec(lspCodec{}))
	rpc.Handle(m, "lsp/saved", func(ctx context.Context, p protocol.DidSaveTextDocumentParams) (string, error) {
		return string(p.TextDocument.URI), nil
	})
	c, _ := newPipeClient(t, m.Handler(), nil)
	var got string
	if err := c.Call(ctxT(t), "lsp/saved", rawJSON(`{"textDocument":{"uri":"file:///a.go"},"text":"x"}`), &got); err != nil || got != "file:///a.go" {
		t.Fatalf("got %q, %v", got, err)
	}
	err := c.Call(ctxT(t), "lsp/saved", rawJSON(`{"textDocument":{"uri":5}}`), &got)
	if rpc.CodeOf(err) != rpc.CodeInvalidParams || err.Error() != `invalid params: field "textDocument.uri": invalid JSON string (got number)` {
		t.Fatalf("err = %v", err)
	}
}

// TestCall: a call handled in this process (the daemon's reading of the
// hooks' journal) decodes, runs and maps its errors as one on a
// connection does.
func TestCall(t *testing.T) {
	mux, _, _ := newTestMux(t)
	res, err := mux.Call(ctxT(t), "sum", []byte(`{"a":2,"b":5}`))
	if err != nil || res != 7 {
		t.Fatalf("Call(sum) = %v, %v", res, err)
	}
	for _, tt := range []struct {
		method, params string
		want           rpc.Code
	}{
		{"missing", `{}`, rpc.CodeNotFound},
		{"fail", `{}`, rpc.CodeInternal},
		{"panic", `{}`, rpc.CodeInternal},
		{"nope", `{}`, rpc.CodeMethodNotFound},
		{"sum", `{"a":"two"}`, rpc.CodeInvalidParams},
	} {
		_, err := mux.Call(ctxT(t), tt.method, []byte(tt.params))
		if e, ok := errors.AsType[*rpc.Error](err); !ok || e.Code != tt.want {
			t.Errorf("Call(%s, %s) = %v, want code %v", tt.method, tt.params, err, tt.want)
		}
	}
}
