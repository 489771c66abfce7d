package rpc

import (
	"context"
	"errors"
	"fmt"

	"go.lsp.dev/jsonrpc2"

	"github.com/mnemo-dev/mnemo/rpc/socket"
)

// Code is the stable classification of an error that crosses the RPC
// boundary; its table of wire codes is socket's ([socket.Code]), which a
// client that makes one call reads without this package.
type Code = socket.Code

// The Codes; [socket.Code] has the wire code of each.
const (
	CodeOK              = socket.CodeOK
	CodeUnknown         = socket.CodeUnknown
	CodeParse           = socket.CodeParse
	CodeInvalidRequest  = socket.CodeInvalidRequest
	CodeMethodNotFound  = socket.CodeMethodNotFound
	CodeInvalidParams   = socket.CodeInvalidParams
	CodeInternal        = socket.CodeInternal
	CodeNotInitialized  = socket.CodeNotInitialized
	CodeCanceled        = socket.CodeCanceled
	CodeVersionMismatch = socket.CodeVersionMismatch
	CodeNotFound        = socket.CodeNotFound
)

// Error is the boundary error: what a handler returns to send a coded error
// to the peer, and what [Client.Call] returns when the peer answered with
// one. Its Message is sent verbatim, so it must not carry internals.
//
// errors.Is(err, ErrX) matches any *Error with the same Code as the sentinel
// ErrX, whatever its message.
type Error = socket.Error

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
		return socket.CodeFromWire(int32(e.Code))
	}
	if errors.Is(err, context.Canceled) {
		return CodeCanceled
	}
	return CodeUnknown
}

// wireError turns a boundary error into what jsonrpc2 writes.
func wireError(e *Error) *jsonrpc2.Error {
	return &jsonrpc2.Error{Code: jsonrpc2.Code(e.Code.Wire()), Message: e.Error()}
}

// fromWire turns an error response received from the peer into an *Error.
func fromWire(e *jsonrpc2.Error) *Error {
	return &Error{Code: socket.CodeFromWire(int32(e.Code)), Message: e.Message}
}
