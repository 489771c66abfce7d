package rpc

import (
	"context"
	"errors"
	"fmt"

	"go.lsp.dev/jsonrpc2"
)

// Code is the stable classification of an error that crosses the RPC
// boundary. Handlers and clients speak in Codes; the one table below maps each
// Code to its JSON-RPC wire code, in both directions.
type Code uint8

// The Codes. Their numeric values are internal; the wire codes are in the
// table (see [Code.Wire]).
const (
	CodeOK              Code = iota // no error; only CodeOf(nil) returns it
	CodeUnknown                     // -32001: an error with no code (a transport failure, a foreign wire code)
	CodeParse                       // -32700: the message body is not JSON
	CodeInvalidRequest              // -32600: JSON, but not a JSON-RPC request or response
	CodeMethodNotFound              // -32601
	CodeInvalidParams               // -32602: the params do not decode or do not validate
	CodeInternal                    // -32603: the handler failed; details are in the server log only
	CodeNotInitialized              // -32002: a call before the handshake (or before LSP initialize)
	CodeCanceled                    // -32800 (LSP RequestCancelled): the caller cancelled the request
	CodeVersionMismatch             // -32010: the client and the daemon speak different protocol versions
	CodeNotFound                    // -32011: the thing named by the params does not exist
	numCodes
)

// codeTable is the one table from Code to JSON-RPC code and default message.
var codeTable = [numCodes]struct {
	wire jsonrpc2.Code
	text string
}{
	CodeOK:              {0, "ok"},
	CodeUnknown:         {jsonrpc2.UnknownError, "unknown error"},
	CodeParse:           {jsonrpc2.ParseError, "parse error"},
	CodeInvalidRequest:  {jsonrpc2.InvalidRequest, "invalid request"},
	CodeMethodNotFound:  {jsonrpc2.MethodNotFound, "method not found"},
	CodeInvalidParams:   {jsonrpc2.InvalidParams, "invalid params"},
	CodeInternal:        {jsonrpc2.InternalError, "internal error"},
	CodeNotInitialized:  {jsonrpc2.ServerNotInitialized, "server not initialized"},
	CodeCanceled:        {-32800, "request cancelled"},
	CodeVersionMismatch: {-32010, "protocol version mismatch"},
	CodeNotFound:        {-32011, "not found"},
}

// Wire returns the JSON-RPC error code sent for c (0 for CodeOK).
func (c Code) Wire() jsonrpc2.Code {
	if c >= numCodes {
		return codeTable[CodeUnknown].wire
	}
	return codeTable[c].wire
}

// String returns the default message of c, e.g. "invalid params".
func (c Code) String() string {
	if c >= numCodes {
		return fmt.Sprintf("code(%d)", uint8(c))
	}
	return codeTable[c].text
}

// codeFromWire maps a JSON-RPC error code back to its Code; a code that is
// not in the table is CodeUnknown.
func codeFromWire(w jsonrpc2.Code) Code {
	for c := CodeUnknown; c < numCodes; c++ {
		if codeTable[c].wire == w {
			return c
		}
	}
	return CodeUnknown
}

// Error is the boundary error: what a handler returns to send a coded error
// to the peer, and what [Client.Call] returns when the peer answered with
// one. Its Message is sent verbatim, so it must not carry internals.
//
// errors.Is(err, ErrX) matches any *Error with the same Code as the sentinel
// ErrX, whatever its message.
type Error struct {
	Code    Code
	Message string
}

// Error returns the message, or the Code's default message when empty.
func (e *Error) Error() string {
	if e.Message == "" {
		return e.Code.String()
	}
	return e.Message
}

// Is reports whether target is an *Error with the same Code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// Sentinels for errors.Is, one per Code.
var (
	ErrUnknown         = &Error{Code: CodeUnknown}
	ErrParse           = &Error{Code: CodeParse}
	ErrInvalidRequest  = &Error{Code: CodeInvalidRequest}
	ErrMethodNotFound  = &Error{Code: CodeMethodNotFound}
	ErrInvalidParams   = &Error{Code: CodeInvalidParams}
	ErrInternal        = &Error{Code: CodeInternal}
	ErrNotInitialized  = &Error{Code: CodeNotInitialized}
	ErrCanceled        = &Error{Code: CodeCanceled}
	ErrVersionMismatch = &Error{Code: CodeVersionMismatch}
	ErrNotFound        = &Error{Code: CodeNotFound}
)

// Errorf returns an *Error with code and the formatted message, verbatim.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// InvalidParams returns a CodeInvalidParams error whose message is
// "invalid params: " and the formatted text.
func InvalidParams(format string, args ...any) *Error {
	return &Error{Code: CodeInvalidParams, Message: "invalid params: " + fmt.Sprintf(format, args...)}
}

// NotFound returns a CodeNotFound error whose message is "not found: " and
// the formatted text.
func NotFound(format string, args ...any) *Error {
	return &Error{Code: CodeNotFound, Message: "not found: " + fmt.Sprintf(format, args...)}
}

// CodeOf classifies err: CodeOK for nil; the Code of the first *Error in its
// chain; the mapped code of a *jsonrpc2.Error (from a raw jsonrpc2.Conn);
// CodeCanceled for context.Canceled; CodeUnknown otherwise.
func CodeOf(err error) Code {
	if err == nil {
		return CodeOK
	}
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Code
	}
	if e, ok := errors.AsType[*jsonrpc2.Error](err); ok {
		return codeFromWire(e.Code)
	}
	if errors.Is(err, context.Canceled) {
		return CodeCanceled
	}
	return CodeUnknown
}

// wireError turns a boundary error into what jsonrpc2 writes.
func wireError(e *Error) *jsonrpc2.Error {
	return &jsonrpc2.Error{Code: e.Code.Wire(), Message: e.Error()}
}

// fromWire turns an error response received from the peer into an *Error.
func fromWire(e *jsonrpc2.Error) *Error {
	return &Error{Code: codeFromWire(e.Code), Message: e.Message}
}
