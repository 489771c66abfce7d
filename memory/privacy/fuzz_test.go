package privacy_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mnemo-dev/mnemo/memory/privacy"
)

// The seed corpora are in testdata/fuzz/<target>; run a target with
//
//	go test -run '^$' -fuzz '^FuzzStrip$' -fuzztime 60s ./memory/privacy

func FuzzStrip(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		out, n := privacy.Strip(s)
		checkStripped(t, s, out, n)
		if got, want := privacy.IsFullyPrivate(s), strings.TrimSpace(s) != "" && strings.TrimSpace(out) == ""; got != want {
			t.Errorf("IsFullyPrivate(%q) = %v, want %v", s, got, want)
		}
	})
}

// checkStripped checks the properties of out, n = Strip(in).
func checkStripped(t *testing.T, in, out string, n int) {
	t.Helper()
	if n < 0 || n == 0 && out != in {
		t.Fatalf("Strip(%q) = %q, %d: changed without removing", in, out, n)
	}
	if len(out) > len(in)+n {
		t.Errorf("Strip(%q) = %q: grew by more than a space per tag", in, out)
	}
	if utf8.ValidString(in) && !utf8.ValidString(out) {
		t.Errorf("Strip(%q) = %q: invalid UTF-8", in, out)
	}
	lower := asciiLower(out)
	for _, name := range tagNames {
		if strings.Contains(lower, "<"+name+">") || strings.Contains(lower, "</"+name+">") {
			t.Fatalf("Strip(%q) = %q: a <%s> tag is left", in, out, name)
		}
	}
	if again, k := privacy.Strip(out); k != 0 || again != out {
		t.Fatalf("Strip(%q) = %q, which still has %d tags (%q)", in, out, k, again)
	}
}

func FuzzRedact(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		out, n := privacy.Redact(s)
		if n < 0 || n == 0 && out != s {
			t.Fatalf("Redact(%q) = %q, %d: changed without replacing", s, out, n)
		}
		if strings.Count(out, "[REDACTED:") < n {
			t.Errorf("Redact(%q) = %q: fewer markers than %d", s, out, n)
		}
		if utf8.ValidString(s) && !utf8.ValidString(out) {
			t.Errorf("Redact(%q) = %q: invalid UTF-8", s, out)
		}
		if again, k := privacy.Redact(out); k != 0 {
			t.Errorf("Redact(%q) = %q, then %q: not idempotent", s, out, again)
		}
	})
}

func FuzzCleanJSON(f *testing.F) {
	f.Fuzz(func(t *testing.T, raw []byte) {
		out, err := privacy.CleanJSON(raw)
		if !json.Valid(raw) {
			if !errors.Is(err, privacy.ErrInvalidJSON) {
				t.Fatalf("CleanJSON(%q) = %q, %v; want ErrInvalidJSON", raw, out, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("CleanJSON(%q): %v", raw, err)
		}
		if !json.Valid(out) {
			t.Fatalf("CleanJSON(%q) = %q: not valid JSON", raw, out)
		}
		var v any
		dec := json.NewDecoder(bytes.NewReader(out))
		dec.UseNumber() // 1E700 is valid JSON but no float64
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("CleanJSON(%q) = %q: %v", raw, out, err)
		}
		walkStrings(v, func(s string) {
			if _, n := privacy.Strip(s); n != 0 {
				t.Errorf("CleanJSON(%q) = %q: %q still has tags", raw, out, s)
			}
		})
	})
}

// walkStrings calls fn on every string in a decoded JSON value, keys too.
func walkStrings(v any, fn func(string)) {
	switch v := v.(type) {
	case string:
		fn(v)
	case []any:
		for _, e := range v {
			walkStrings(e, fn)
		}
	case map[string]any:
		for k, e := range v {
			fn(k)
			walkStrings(e, fn)
		}
	}
}

// asciiLower lowers ASCII letters only, as tag names match.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
