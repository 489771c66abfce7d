package privacy

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"testing"
)

// FuzzTokens: on any valid JSON document, tokens gives the tokens
// json.Decoder's Token gives with UseNumber, in order, then io.EOF:
// CleanJSON's output does not depend on which of the two reads it.
func FuzzTokens(f *testing.F) {
	for _, s := range []string{
		`{"a":1,"b":[true,false,null,-1.5e+3,"x"],"c":{}}`,
		` [ "tab\there", "\u003cprivate\u003e", "caf\u00e9", "\ud83d\ude00", "\ud800" ] `,
		"\"\xff\xfe raw invalid UTF-8\"",
		`{"originalFile":"package main\n\nfunc main() {}\n","key \"quoted\"":"v\\"}`,
		`"plain"`, `0`, `1E700`, `null`, `[]`, `[[[]]]`, `{"":""}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		got := tokens{raw: raw}
		for n := 0; ; n++ {
			want, werr := dec.Token()
			tok, err := got.next()
			if errors.Is(werr, io.EOF) {
				if !errors.Is(err, io.EOF) {
					t.Fatalf("%q: token %d: got %#v, %v; want io.EOF", raw, n, tok, err)
				}
				return
			}
			if werr != nil {
				t.Fatalf("%q: json.Decoder: %v", raw, werr)
			}
			if err != nil || !reflect.DeepEqual(tok, want) {
				t.Fatalf("%q: token %d: got %#v, %v; want %#v", raw, n, tok, err, want)
			}
		}
	})
}
