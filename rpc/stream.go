package rpc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
	"go.lsp.dev/jsonrpc2"

	"github.com/mnemo-dev/mnemo/rpc/socket"
)

// frameStream is the raw-frame extension of jsonrpc2.Stream. jsonrpc2's conn
// type-asserts an unexported interface with exactly these two methods to read
// whole frames (and batches); its header stream implements it.
type frameStream interface {
	ReadFrame(ctx context.Context) ([]byte, int64, error)
	WriteFrame(ctx context.Context, data []byte) (int64, error)
}

// ErrBadHeader reports a frame whose header block is not LSP base framing
// (`Content-Length: N`, optional other fields, a blank line). The byte stream
// cannot be resynchronised after one, so the connection ends with it.
var ErrBadHeader = socket.ErrBadHeader

// NewStream returns a jsonrpc2.Stream over rwc with LSP base framing
// (Content-Length headers), like jsonrpc2.NewHeaderStream, but robust to bad
// bodies: jsonrpc2's Conn tears the whole connection down on a frame whose
// body is not JSON or not a JSON-RPC message, so this stream answers such a
// frame itself, with an error response whose id is null, and reads on:
//
//   - a body that is not valid JSON gets -32700 (parse error);
//   - valid JSON that is not a request, a response or a batch gets -32600.
//
// A frame whose header is malformed cannot be skipped: the stream answers it
// with -32700 (best effort) and Read/ReadFrame return an error wrapping
// ErrBadHeader (and jsonrpc2.ErrInvalidHeader), which ends the Conn.
//
// Writes of the Conn and the stream's own error responses are serialized by
// one mutex, so frames never interleave. Close closes rwc.
func NewStream(rwc io.ReadWriteCloser) jsonrpc2.Stream {
	inner := jsonrpc2.NewHeaderStream(rwc)
	frames, ok := inner.(frameStream)
	if !ok {
		// go.lsp.dev/jsonrpc2 v1.0.1's header stream has ReadFrame/WriteFrame;
		// a version without them would silently lose batches and speed.
		panic("rpc: jsonrpc2 header stream has no ReadFrame/WriteFrame")
	}
	return &stream{inner: inner, frames: frames}
}

// stream wraps jsonrpc2's header stream. It implements frameStream so that
// jsonrpc2.Conn keeps its raw-frame fast path.
type stream struct {
	inner  jsonrpc2.Stream
	frames frameStream
	mu     sync.Mutex // serializes every write to inner
}

// ReadFrame returns the body of the next frame that jsonrpc2.Conn can
// classify without failing: a single request or response object, or a batch
// array. Other frames are answered (see NewStream) and skipped. The returned
// slice is valid until the next read.
func (s *stream) ReadFrame(ctx context.Context) ([]byte, int64, error) {
	for {
		frame, n, err := s.frames.ReadFrame(ctx)
		if err != nil {
			if errors.Is(err, jsonrpc2.ErrInvalidHeader) {
				// Tell a peer that reads (a person with nc, say) why the
				// connection is about to end; the error is what matters.
				_ = s.reject(ctx, CodeParse, "parse error: malformed frame header: want \"Content-Length: <n>\" and a blank line before each JSON body; closing the connection")
				return nil, 0, fmt.Errorf("%w (%w)", ErrBadHeader, err)
			}
			return nil, 0, err
		}
		code := classify(frame)
		if code == CodeOK {
			return frame, n, nil
		}
		msg := "parse error: the message body is not valid JSON"
		if code == CodeInvalidRequest {
			msg = "invalid request: the message is not a JSON-RPC 2.0 request, response or batch"
		}
		if err := s.reject(ctx, code, msg); err != nil {
			return nil, 0, fmt.Errorf("rpc: answering a malformed message: %w", err)
		}
	}
}

// classify reports CodeOK for a frame that jsonrpc2.Conn accepts (it decodes
// with the same functions the Conn falls back to), CodeParse for a body that
// is not JSON, and CodeInvalidRequest for JSON that is not a message.
func classify(frame []byte) Code {
	i := 0
	for i < len(frame) && (frame[i] == ' ' || frame[i] == '\t' || frame[i] == '\r' || frame[i] == '\n') {
		i++
	}
	var err error
	if i < len(frame) && frame[i] == '[' {
		// The Conn answers bad batch members itself; only an array it cannot
		// split into members is fatal.
		_, err = jsonrpc2.ParseRequests(frame)
	} else {
		_, err = jsonrpc2.DecodeMessage(frame)
	}
	switch {
	case err == nil:
		return CodeOK
	case jsontext.Value(frame).IsValid():
		return CodeInvalidRequest
	default:
		return CodeParse
	}
}

// reject writes an error response with a null id.
func (s *stream) reject(ctx context.Context, code Code, msg string) error {
	body := jsonrpc2.AppendResponse(nil, jsonrpc2.ID{}, nil, &jsonrpc2.Error{Code: jsonrpc2.Code(code.Wire()), Message: msg})
	_, err := s.WriteFrame(ctx, body)
	return err
}

// WriteFrame writes one already-encoded JSON body (a message or a batch
// array) as one frame.
func (s *stream) WriteFrame(ctx context.Context, data []byte) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.frames.WriteFrame(ctx, data)
}

// Read implements jsonrpc2.Stream for readers without the frame fast path.
// A batch array is answered with -32600 and skipped, since a Message cannot
// hold one.
func (s *stream) Read(ctx context.Context) (jsonrpc2.Message, int64, error) {
	for {
		frame, n, err := s.ReadFrame(ctx)
		if err != nil {
			return nil, 0, err
		}
		msg, err := jsonrpc2.DecodeMessage(frame)
		if err == nil {
			return msg, n, nil
		}
		if err := s.reject(ctx, CodeInvalidRequest, "invalid request: batches are not supported here"); err != nil {
			return nil, 0, fmt.Errorf("rpc: answering a malformed message: %w", err)
		}
	}
}

// Write implements jsonrpc2.Stream.
func (s *stream) Write(ctx context.Context, msg jsonrpc2.Message) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inner.Write(ctx, msg)
}

// Close closes the underlying connection.
func (s *stream) Close() error { return s.inner.Close() }
