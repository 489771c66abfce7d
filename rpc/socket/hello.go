package socket

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
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
		return &Error{Code: CodeInvalidParams, Message: `invalid params: field "client" is required`}
	}
	return nil
}

// ProtocolMismatch is the -32010 error of a client and a daemon that speak
// different protocol versions, worded for the user.
func ProtocolMismatch(client, daemon int, serverVersion string, daemonPID int) *Error {
	return &Error{Code: CodeVersionMismatch, Message: fmt.Sprintf(
		"protocol version mismatch: this client speaks version %d, the running daemon (mnemo %s, pid %d) speaks version %d; "+
			"stop it with \"mnemo daemon stop\" and retry (a new daemon starts by itself)",
		client, serverVersion, daemonPID, daemon)}
}

// OlderClient is the -32010 error of a client older than the daemon: a
// downgrade is refused, with what to do.
func OlderClient(client, daemon string, daemonPID int) *Error {
	return &Error{Code: CodeVersionMismatch, Message: fmt.Sprintf(
		"this client is mnemo %s, older than the running daemon (mnemo %s, pid %d), and Mnemo does not go back a version by itself: "+
			"use mnemo %s's binaries (mnemo, mnemo-hook, the editor extension's), or stop the daemon with \"mnemo daemon stop\" to run %s again",
		client, daemon, daemonPID, daemon, client)}
}

// olderProtocol reads a daemon's refusal of this client's protocol: the
// daemon's HelloResult, when its protocol is older than ProtocolVersion.
// It reads ProtocolMismatch's words (also of daemons from before
// Hello.Version): "the running daemon (mnemo V, pid P) speaks version N".
func olderProtocol(err error) (HelloResult, bool) {
	e, ok := errors.AsType[*Error](err)
	if !ok || e.Code != CodeVersionMismatch {
		return HelloResult{}, false
	}
	_, rest, ok1 := strings.Cut(e.Message, "the running daemon (mnemo ")
	version, rest, ok2 := strings.Cut(rest, ", pid ")
	pid, rest, ok3 := strings.Cut(rest, ") speaks version ")
	proto := rest[:len(rest)-len(strings.TrimLeft(rest, "0123456789"))]
	if !ok1 || !ok2 || !ok3 || version == "" || strings.ContainsAny(version, " \t\r\n") || !digits(pid) || proto == "" {
		return HelloResult{}, false
	}
	p, _ := strconv.Atoi(pid)
	n, _ := strconv.Atoi(proto)
	if n >= ProtocolVersion || p <= 0 {
		return HelloResult{}, false
	}
	return HelloResult{ProtocolVersion: n, ServerVersion: version, PID: p}, true
}

// digits reports whether s is one or more ASCII digits.
func digits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// Handshake performs the mnemo/hello exchange on a raw connection, before
// anything else reads it, as the client of h: its client kind, version and
// resume flag (the protocol version and pid are filled in). It reads
// exactly the response frame and nothing beyond it. ctx bounds the
// exchange when rw has SetDeadline (a Conn, a net.Conn).
//
// Errors: a daemon of another protocol version answers with an *Error of
// CodeVersionMismatch whose message tells the user what to do (a daemon
// that accepts but reports another version gets the same error from this
// side); the daemon's other error answers as an *Error; otherwise an I/O
// error, or ctx's when ctx ended first.
func Handshake(ctx context.Context, rw io.ReadWriter, h Hello) (HelloResult, error) {
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
	if _, err := rw.Write(appendFrame(nil, appendCall(nil, helloID, MethodHello, params))); err != nil {
		return HelloResult{}, handshakeErr(ctx, err)
	}
	return readHelloAnswer(ctx, rw)
}

// helloID is the id of the hello a client sends first.
const helloID = 1

// helloParams are the params of the hello h, with this build's protocol
// version and this process's pid.
func helloParams(h Hello) ([]byte, error) {
	h.ProtocolVersion, h.PID = ProtocolVersion, os.Getpid()
	return json.Marshal(h)
}

// readHelloAnswer reads the answer to the hello (helloID) from r: the
// daemon's HelloResult, or Handshake's errors.
func readHelloAnswer(ctx context.Context, r io.Reader) (HelloResult, error) {
	raw, err := readAnswer(r, helloID)
	if err != nil {
		if _, ok := errors.AsType[*Error](err); ok {
			return HelloResult{}, err
		}
		if errors.Is(err, errNotAnswer) {
			return HelloResult{}, errors.New("handshake: the daemon did not answer mnemo/hello")
		}
		return HelloResult{}, handshakeErr(ctx, err)
	}
	var hr HelloResult
	if err := json.Unmarshal(raw, &hr); err != nil {
		return HelloResult{}, fmt.Errorf("handshake: bad result: %w", err)
	}
	if hr.ProtocolVersion != ProtocolVersion {
		return hr, ProtocolMismatch(ProtocolVersion, hr.ProtocolVersion, hr.ServerVersion, hr.PID)
	}
	return hr, nil
}

func handshakeErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("handshake: %w", ctx.Err())
	}
	return fmt.Errorf("handshake: %w", err)
}
