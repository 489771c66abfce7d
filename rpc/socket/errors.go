package socket

import "strconv"

// Code is the stable classification of an error that crosses the RPC
// boundary. Handlers and clients speak in Codes; the one table below maps each
// Code to its JSON-RPC wire code, in both directions. Package rpc names
// them too (rpc.Code, rpc.CodeOf).
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
	wire int32
	text string
}{
	CodeOK:              {0, "ok"},
	CodeUnknown:         {-32001, "unknown error"},
	CodeParse:           {-32700, "parse error"},
	CodeInvalidRequest:  {-32600, "invalid request"},
	CodeMethodNotFound:  {-32601, "method not found"},
	CodeInvalidParams:   {-32602, "invalid params"},
	CodeInternal:        {-32603, "internal error"},
	CodeNotInitialized:  {-32002, "server not initialized"},
	CodeCanceled:        {-32800, "request cancelled"},
	CodeVersionMismatch: {-32010, "protocol version mismatch"},
	CodeNotFound:        {-32011, "not found"},
}

// Wire returns the JSON-RPC error code sent for c (0 for CodeOK).
func (c Code) Wire() int32 {
	if c >= numCodes {
		return codeTable[CodeUnknown].wire
	}
	return codeTable[c].wire
}

// String returns the default message of c, e.g. "invalid params".
func (c Code) String() string {
	if c >= numCodes {
		return "code(" + strconv.Itoa(int(c)) + ")"
	}
	return codeTable[c].text
}

// CodeFromWire maps a JSON-RPC error code back to its Code; a code that is
// not in the table is CodeUnknown.
func CodeFromWire(w int32) Code {
	for c := CodeUnknown; c < numCodes; c++ {
		if codeTable[c].wire == w {
			return c
		}
	}
	return CodeUnknown
}

// Error is the boundary error: what a handler returns to send a coded error
// to the peer, and what a call returns when the peer answered with one. Its
// Message is sent verbatim, so it must not carry internals.
//
// errors.Is(err, ErrX) matches any *Error with the same Code as the sentinel
// ErrX (rpc.ErrVersionMismatch…), whatever its message.
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
