package store

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/flate"
)

// Record values are stored compressed, in frames this package writes and
// reads itself:
//
//	0xB5 'M' 'Z'   magic (no JSON value starts with 0xB5)
//	dictionary     one byte: the preset dictionary the stream is primed with
//	stream         DEFLATE (RFC 1951), ending with its final block
//
// Badger's own block compression stays off (see openDatabase), so every
// file of the store holds these frames byte for byte: an audit that proves
// a text gone finds each frame by its magic and inflates it (Frames).
//
// A preset dictionary of the records' JSON field names and common words
// matters for values of one or two kilobytes, where a plain deflate stream
// has no history to point back to: on the replayed eval data an
// observation's JSON goes from 1.8 KB to 0.72 KB (2.5×, against 2.0×
// without the dictionary; zstd with the same dictionary gave 2.3×). The
// streams are standard DEFLATE, written and read with
// github.com/klauspost/compress/flate (already linked by Badger): at level
// 5 it gives 720 bytes in ~48 µs where the standard library's level 3
// gives 726 in ~54 µs. Inflating takes ~13 µs (zstd ~7 µs, for 8% more
// bytes).
//
// A value whose frame would not be smaller stays plain JSON, as every value
// was before frames (schema 1); readers take both forms (decodeValue).
const frameMagic = "\xb5MZ"

// frameDict1 is dictionary 1. A dictionary never changes once released:
// the frames written with it could not be read. A better one is added as
// dictionary 2.
//
//go:embed frame_dict1.txt
var frameDict1 []byte

const frameDictID = 1

// frameLevel trades CPU for bytes: on the eval's observations level 5
// gives 720 bytes where level 3 gives 752, for ~10% more CPU.
const frameLevel = 5

// maxFrameBytes bounds what one frame may inflate to (Badger's values are
// far smaller), so that a corrupt or forged frame cannot exhaust memory.
const maxFrameBytes = 64 << 20

var errFrame = errors.New("bad value frame")

var (
	writers = sync.Pool{New: func() any {
		w, err := flate.NewWriterDict(io.Discard, frameLevel, frameDict1)
		if err != nil {
			panic(err) // only for a bad level
		}
		return w
	}}
	readers = sync.Pool{New: func() any { return flate.NewReaderDict(bytes.NewReader(nil), frameDict1) }}
	buffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}
)

// isFrame reports whether a stored value is a frame (not plain JSON).
func isFrame(b []byte) bool {
	return len(b) > len(frameMagic) && string(b[:len(frameMagic)]) == frameMagic
}

// encodeValue returns what to store for the plain value b: its frame, or b
// itself when the frame is not smaller.
func encodeValue(b []byte) []byte {
	out := bytes.NewBuffer(make([]byte, 0, len(b)/2+16))
	out.WriteString(frameMagic)
	out.WriteByte(frameDictID)
	w := writers.Get().(*flate.Writer)
	w.ResetDict(out, frameDict1)
	_, err := w.Write(b)
	if err == nil {
		err = w.Close()
	}
	w.Reset(io.Discard) // let go of out
	writers.Put(w)
	if err != nil || out.Len() >= len(b) {
		return b
	}
	return out.Bytes()
}

// inflate appends what the frame b holds to dst. On an error dst holds
// what was inflated before it.
func inflate(dst *bytes.Buffer, b []byte) error {
	if !isFrame(b) {
		return errFrame
	}
	if id := b[len(frameMagic)]; id != frameDictID {
		return fmt.Errorf("%w: dictionary %d is not one this Mnemo knows", errFrame, id)
	}
	r := readers.Get().(io.ReadCloser)
	defer readers.Put(r)
	if err := r.(flate.Resetter).Reset(bytes.NewReader(b[len(frameMagic)+1:]), frameDict1); err != nil {
		return err
	}
	n, err := dst.ReadFrom(io.LimitReader(r, maxFrameBytes+1))
	if err == nil && n > maxFrameBytes {
		err = fmt.Errorf("%w: more than %d bytes", errFrame, maxFrameBytes)
	}
	if err != nil {
		return fmt.Errorf("%w: %w", errFrame, err)
	}
	return nil
}

// decodeValue returns the plain value of a stored one: inflated when it is
// a frame, b itself when it is plain (written before frames).
func decodeValue(b []byte) ([]byte, error) {
	if !isFrame(b) {
		return b, nil
	}
	var out bytes.Buffer
	if err := inflate(&out, b); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// unmarshalValue decodes a stored value (a frame or plain JSON) into v.
func unmarshalValue(b []byte, v any) error {
	if !isFrame(b) {
		return json.Unmarshal(b, v)
	}
	buf := buffers.Get().(*bytes.Buffer)
	buf.Reset()
	defer func() {
		if buf.Cap() <= 1<<20 {
			buffers.Put(buf)
		}
	}()
	if err := inflate(buf, b); err != nil {
		return err
	}
	return json.Unmarshal(buf.Bytes(), v)
}

// marshalValue is what the store keeps for v: its JSON, in a frame.
func marshalValue(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return encodeValue(b), nil
}

// Frames finds every value frame in data (a file of the store, or any
// bytes) and returns what each holds, inflated; a frame that is cut off
// or damaged gives what could be inflated of it. An audit that proves a
// text gone from the files must look in these as well as in the raw bytes,
// since a compressed value does not hold its text as plain bytes.
func Frames(data []byte) [][]byte {
	var out [][]byte
	for off := 0; ; {
		i := bytes.Index(data[off:], []byte(frameMagic))
		if i < 0 {
			return out
		}
		off += i
		var buf bytes.Buffer
		_ = inflate(&buf, data[off:])
		if buf.Len() > 0 {
			out = append(out, buf.Bytes())
		}
		off += len(frameMagic)
	}
}
