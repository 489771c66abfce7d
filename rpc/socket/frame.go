package socket

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// ErrBadHeader reports a frame whose header block is not LSP base framing
// (`Content-Length: N`, optional other fields, a blank line). The byte stream
// cannot be resynchronised after one, so the connection ends with it.
var ErrBadHeader = errors.New("rpc: malformed frame header: want \"Content-Length: <n>\\r\\n\\r\\n\" before each JSON body")

// appendFrame appends body to dst with its LSP header.
func appendFrame(dst, body []byte) []byte {
	dst = append(dst, "Content-Length: "...)
	dst = strconv.AppendInt(dst, int64(len(body)), 10)
	dst = append(dst, "\r\n\r\n"...)
	return append(dst, body...)
}

// appendCall appends the JSON-RPC 2.0 call of method with params (raw
// JSON; none when empty) and the number id, as go.lsp.dev/jsonrpc2 writes
// one: {"jsonrpc":"2.0","method":…,"params":…,"id":…}.
func appendCall(dst []byte, id int, method string, params []byte) []byte {
	m, _ := json.Marshal(method) // a string always marshals
	dst = append(dst, `{"jsonrpc":"2.0","method":`...)
	dst = append(dst, m...)
	if len(params) > 0 {
		dst = append(dst, `,"params":`...)
		dst = append(dst, params...)
	}
	dst = append(dst, `,"id":`...)
	dst = strconv.AppendInt(dst, int64(id), 10)
	return append(dst, '}')
}

// response is a JSON-RPC 2.0 response as this package reads one.
type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  json.RawMessage `json:"method"`
	Result  json.RawMessage `json:"result"` // "null" when the result is null, nil when absent
	Error   *struct {
		Code    int32  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// errNotAnswer is readAnswer's error for a frame that is not the answer
// to the call it waits for.
var errNotAnswer = errors.New("not the answer to the call")

// readAnswer reads the next frame from r as the answer to the call of id:
// its result (raw JSON), or the daemon's error response as an *Error. A
// frame that is not a JSON-RPC 2.0 response of id is an error wrapping
// errNotAnswer; I/O errors are ReadFrame's.
func readAnswer(r io.Reader, id int) (json.RawMessage, error) {
	body, err := ReadFrame(r)
	if err != nil {
		return nil, err
	}
	var res response
	if err := json.Unmarshal(body, &res); err != nil {
		return nil, fmt.Errorf("bad response: %w", err)
	}
	if res.JSONRPC != "2.0" || res.Method != nil || (res.Result == nil) == (res.Error == nil) ||
		string(bytes.TrimSpace(res.ID)) != strconv.Itoa(id) {
		return nil, errNotAnswer
	}
	if res.Error != nil {
		return nil, &Error{Code: CodeFromWire(res.Error.Code), Message: res.Error.Message}
	}
	return res.Result, nil
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
