package rpc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.lsp.dev/jsonrpc2"
)

// ProtocolVersion is the version of the socket protocol (the mnemo/ methods
// and their params) that this build speaks. Bump it on any incompatible
// change; a client and a daemon with different versions refuse each other.
const ProtocolVersion = 1

// MethodHello is the handshake call, the first message on a socket
// connection.
const MethodHello = "mnemo/hello"

// The client kinds sent in Hello.Client.
const (
	ClientHook  = "hook"
	ClientServe = "serve"
	ClientMCP   = "mcp"
	ClientCLI   = "cli"
)

// Hello is the params of mnemo/hello.
type Hello struct {
	ProtocolVersion int    `json:"protocolVersion"`
	Client          string `json:"client"` // ClientHook, ClientServe, ClientMCP or ClientCLI
	PID             int    `json:"pid"`
	// Version is the client's Mnemo version, when it has one (clients
	// before version 0.2 send none): a daemon refuses a client older than
	// itself (CompareVersions), unless Resume.
	Version string `json:"version,omitempty"`
	// Resume says that the client carries on a session a daemon that went
	// away had (an editor's sidecar after an upgrade's hand-over): served
	// even when older, since it speaks the same protocol and the editor
	// would break otherwise.
	Resume bool `json:"resume,omitempty"`
}

// HelloResult is the result of mnemo/hello.
type HelloResult struct {
	ProtocolVersion int    `json:"protocolVersion"`
	ServerVersion   string `json:"serverVersion"`
	PID             int    `json:"pid"`
}

// Validate requires a client kind.
func (h Hello) Validate() error {
	if h.Client == "" {
		return InvalidParams("field %q is required", "client")
	}
	return nil
}

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
				return nil, wireError(versionMismatch(v.ProtocolVersion, ProtocolVersion, serverVersion, pid))
			}
			hello, perr := decodeParams[Hello](jsonrpc2.DefaultCodec, req.Params())
			if perr != nil {
				return nil, wireError(perr)
			}
			if c, ok := CompareVersions(hello.Version, serverVersion); ok && c < 0 && !hello.Resume {
				return nil, wireError(olderClient(hello.Version, serverVersion, pid))
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

// versionMismatch is the -32010 error, worded for the user.
func versionMismatch(client, daemon int, serverVersion string, daemonPID int) *Error {
	return Errorf(CodeVersionMismatch,
		"protocol version mismatch: this client speaks version %d, the running daemon (mnemo %s, pid %d) speaks version %d; "+
			"stop it with \"mnemo daemon stop\" and retry (a new daemon starts by itself)",
		client, serverVersion, daemonPID, daemon)
}

// olderClient is the -32010 error of a client older than the daemon: a
// downgrade is refused, with what to do.
func olderClient(client, daemon string, daemonPID int) *Error {
	return Errorf(CodeVersionMismatch,
		"this client is mnemo %s, older than the running daemon (mnemo %s, pid %d), and Mnemo does not go back a version by itself: "+
			"use mnemo %s's binaries (mnemo, mnemo-hook, the editor extension's), or stop the daemon with \"mnemo daemon stop\" to run %s again",
		client, daemon, daemonPID, daemon, client)
}

// mismatchRe reads the daemon's version, pid and protocol out of a -32010
// message (versionMismatch's, also of daemons from before Hello.Version).
// Compiled on first use: a hook process pays for it only when refused.
var mismatchRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`the running daemon \(mnemo (\S+), pid (\d+)\) speaks version (\d+)`)
})

// olderProtocol reads a daemon's refusal of this client's protocol: the
// daemon's HelloResult, when its protocol is older than ProtocolVersion.
func olderProtocol(err error) (HelloResult, bool) {
	e, ok := errors.AsType[*Error](err)
	if !ok || e.Code != CodeVersionMismatch {
		return HelloResult{}, false
	}
	m := mismatchRe().FindStringSubmatch(e.Message)
	if m == nil {
		return HelloResult{}, false
	}
	pid, _ := strconv.Atoi(m[2])
	proto, _ := strconv.Atoi(m[3])
	if proto >= ProtocolVersion || pid <= 0 {
		return HelloResult{}, false
	}
	return HelloResult{ProtocolVersion: proto, ServerVersion: m[1], PID: pid}, true
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
		return res, versionMismatch(ProtocolVersion, res.ProtocolVersion, res.ServerVersion, res.PID)
	}
	return res, nil
}

// Handshake performs the mnemo/hello exchange on a raw connection, before
// any jsonrpc2.Conn owns it; the forwarder uses it before Forward. It reads
// exactly the response frame and nothing beyond it. ctx bounds the exchange
// when rw has SetDeadline (net.Conn). Its errors are those of Client.Hello,
// or I/O errors.
func Handshake(ctx context.Context, rw io.ReadWriter, client string) (HelloResult, error) {
	return handshake(ctx, rw, Hello{Client: client})
}

// HandshakeWith is Handshake with the hello h: its client kind, version
// and resume flag (the protocol version and pid are filled in).
func HandshakeWith(ctx context.Context, rw io.ReadWriter, h Hello) (HelloResult, error) {
	return handshake(ctx, rw, h)
}

func handshake(ctx context.Context, rw io.ReadWriter, h Hello) (HelloResult, error) {
	if d, ok := rw.(interface{ SetDeadline(time.Time) error }); ok {
		// Once ctx is done (so ctx.Err() is set), fail the pending I/O.
		fired := make(chan struct{})
		stop := context.AfterFunc(ctx, func() {
			_ = d.SetDeadline(time.Unix(1, 0))
			close(fired)
		})
		defer func() {
			if !stop() {
				<-fired // never leave the past deadline behind
			}
			_ = d.SetDeadline(time.Time{})
		}()
	}
	params, err := helloParams(h)
	if err != nil {
		return HelloResult{}, err
	}
	if _, err := rw.Write(appendFrame(nil, jsonrpc2.AppendCall(nil, helloID, MethodHello, params))); err != nil {
		return HelloResult{}, handshakeErr(ctx, err)
	}
	return readHelloAnswer(ctx, rw, helloID)
}

// helloID is the id of the hello a client sends first.
var helloID = jsonrpc2.NewNumberID(1)

// helloParams are the params of the hello h, with this build's protocol
// version and this process's pid.
func helloParams(h Hello) (jsonrpc2.RawMessage, error) {
	h.ProtocolVersion, h.PID = ProtocolVersion, os.Getpid()
	return jsonrpc2.DefaultCodec.Marshal(h)
}

// appendFrame appends body to dst with its LSP header.
func appendFrame(dst, body []byte) []byte {
	dst = append(dst, "Content-Length: "...)
	dst = strconv.AppendInt(dst, int64(len(body)), 10)
	dst = append(dst, "\r\n\r\n"...)
	return append(dst, body...)
}

// readHelloAnswer reads the answer to the hello of id from r: the
// daemon's HelloResult, or Client.Hello's errors, or an I/O error
// (handshakeErr).
func readHelloAnswer(ctx context.Context, r io.Reader, id jsonrpc2.ID) (HelloResult, error) {
	resp, err := ReadFrame(r)
	if err != nil {
		return HelloResult{}, handshakeErr(ctx, err)
	}
	msg, err := jsonrpc2.DecodeMessage(resp)
	if err != nil {
		return HelloResult{}, fmt.Errorf("handshake: bad response: %w", err)
	}
	res, ok := msg.(*jsonrpc2.Response)
	if !ok || res.ID() != id {
		return HelloResult{}, errors.New("handshake: the daemon did not answer mnemo/hello")
	}
	if err := res.Err(); err != nil {
		if e, ok := errors.AsType[*jsonrpc2.Error](err); ok {
			return HelloResult{}, fromWire(e)
		}
		return HelloResult{}, err
	}
	var hr HelloResult
	if err := jsonrpc2.DefaultCodec.Unmarshal(res.Result(), &hr); err != nil {
		return HelloResult{}, fmt.Errorf("handshake: bad result: %w", err)
	}
	if hr.ProtocolVersion != ProtocolVersion {
		return hr, versionMismatch(ProtocolVersion, hr.ProtocolVersion, hr.ServerVersion, hr.PID)
	}
	return hr, nil
}

func handshakeErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("handshake: %w", ctx.Err())
	}
	return fmt.Errorf("handshake: %w", err)
}

// ReadFrame reads one LSP frame body without reading past it: the header a
// byte at a time (it is short), then exactly Content-Length bytes. A header
// without a valid Content-Length gives ErrBadHeader. The handshake reads its
// answer with it; a client reading a server's frames by hand can too.
func ReadFrame(r io.Reader) ([]byte, error) {
	const maxHeader = 4 << 10
	var (
		hdr []byte
		b   [1]byte
	)
	for !bytes.HasSuffix(hdr, []byte("\r\n\r\n")) && !bytes.HasSuffix(hdr, []byte("\n\n")) {
		if len(hdr) >= maxHeader {
			return nil, ErrBadHeader
		}
		if _, err := io.ReadFull(r, b[:]); err != nil {
			if errors.Is(err, io.EOF) && len(hdr) > 0 {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		hdr = append(hdr, b[0])
	}
	length := -1
	for line := range bytes.Lines(hdr) {
		name, value, ok := bytes.Cut(bytes.TrimRight(line, "\r\n"), []byte(":"))
		if ok && bytes.EqualFold(bytes.TrimSpace(name), []byte("Content-Length")) {
			n, err := strconv.Atoi(string(bytes.TrimSpace(value)))
			if err != nil || n <= 0 || n > 1<<30 {
				return nil, ErrBadHeader
			}
			length = n
		}
	}
	if length < 0 {
		return nil, ErrBadHeader
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(r, body); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return body, nil
}
