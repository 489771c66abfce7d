package rpc

import (
	"context"
	"io"
	"os"
	"sync/atomic"

	"go.lsp.dev/jsonrpc2"

	"github.com/mnemo-dev/mnemo/rpc/socket"
)

// ProtocolVersion is the version of the socket protocol (the mnemo/ methods
// and their params) that this build speaks (socket.ProtocolVersion).
const ProtocolVersion = socket.ProtocolVersion

// MethodHello is the handshake call, the first message on a socket
// connection.
const MethodHello = socket.MethodHello

// The client kinds sent in Hello.Client.
const (
	ClientHook  = socket.ClientHook
	ClientServe = socket.ClientServe
	ClientMCP   = socket.ClientMCP
	ClientCLI   = socket.ClientCLI
)

// Hello is the params of mnemo/hello (socket.Hello).
type Hello = socket.Hello

// HelloResult is the result of mnemo/hello.
type HelloResult = socket.HelloResult

// RequireHello wraps h for ONE socket connection with the version handshake.
// mnemo/hello is answered here: with HelloResult{ProtocolVersion,
// serverVersion, os.Getpid()} when the client's protocolVersion equals
// ProtocolVersion (then onHello, if not nil, gets the Hello, and h serves
// the rest of the connection), else with -32010 telling the user to restart
// the daemon; a client of an older Mnemo version (Hello.Version) that is
// not resuming a session gets -32010 too, naming both versions. Before a
// successful hello, any other call gets -32002
// "handshake required" and notifications are dropped.
func RequireHello(h jsonrpc2.Handler, serverVersion string, onHello func(Hello)) jsonrpc2.Handler {
	var greeted atomic.Bool
	pid := os.Getpid()
	return func(ctx context.Context, req *jsonrpc2.Request) (any, error) {
		if req.Method() == MethodHello {
			// The version first: a client of another version may send other
			// fields, and the user needs the restart hint, not a field error.
			v, perr := decodeParams[struct {
				ProtocolVersion int `json:"protocolVersion"`
			}](jsonrpc2.DefaultCodec, req.Params())
			if perr != nil {
				return nil, wireError(perr)
			}
			if v.ProtocolVersion != ProtocolVersion {
				return nil, wireError(socket.ProtocolMismatch(v.ProtocolVersion, ProtocolVersion, serverVersion, pid))
			}
			hello, perr := decodeParams[Hello](jsonrpc2.DefaultCodec, req.Params())
			if perr != nil {
				return nil, wireError(perr)
			}
			if c, ok := CompareVersions(hello.Version, serverVersion); ok && c < 0 && !hello.Resume {
				return nil, wireError(socket.OlderClient(hello.Version, serverVersion, pid))
			}
			greeted.Store(true)
			if onHello != nil {
				onHello(hello)
			}
			return HelloResult{ProtocolVersion: ProtocolVersion, ServerVersion: serverVersion, PID: pid}, nil
		}
		if !greeted.Load() {
			if !req.IsCall() {
				return nil, nil
			}
			return nil, wireError(Errorf(CodeNotInitialized, "handshake required: the first call on this connection must be %s", MethodHello))
		}
		return h(ctx, req)
	}
}

// Hello performs the handshake as client kind client (ClientHook, ...): it
// must be the first call on a socket connection. A daemon of another
// protocol version answers with an *Error of CodeVersionMismatch whose
// message tells the user what to do; a daemon that accepts but reports
// another version gets the same error from this side.
func (c *Client) Hello(ctx context.Context, client string) (HelloResult, error) {
	var res HelloResult
	if err := c.Call(ctx, MethodHello, Hello{ProtocolVersion: ProtocolVersion, Client: client, PID: os.Getpid()}, &res); err != nil {
		return HelloResult{}, err
	}
	if res.ProtocolVersion != ProtocolVersion {
		return res, socket.ProtocolMismatch(ProtocolVersion, res.ProtocolVersion, res.ServerVersion, res.PID)
	}
	return res, nil
}

// Handshake performs the mnemo/hello exchange on a raw connection, before
// any jsonrpc2.Conn owns it; the forwarder uses it before Forward. It reads
// exactly the response frame and nothing beyond it. ctx bounds the exchange
// when rw has SetDeadline (net.Conn). Its errors are those of Client.Hello,
// or I/O errors.
func Handshake(ctx context.Context, rw io.ReadWriter, client string) (HelloResult, error) {
	return socket.Handshake(ctx, rw, Hello{Client: client})
}

// HandshakeWith is Handshake with the hello h: its client kind, version
// and resume flag (the protocol version and pid are filled in).
func HandshakeWith(ctx context.Context, rw io.ReadWriter, h Hello) (HelloResult, error) {
	return socket.Handshake(ctx, rw, h)
}

// ReadFrame reads one LSP frame body without reading past it
// (socket.ReadFrame). A header without a valid Content-Length gives
// ErrBadHeader.
func ReadFrame(r io.Reader) ([]byte, error) { return socket.ReadFrame(r) }
