package memory_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mnemo-dev/mnemo/memory"
)

// ShrinkJSON keeps a value that fits as it is; cuts the longest strings of
// one that does not to their start and end around a note, keeping its shape
// and every short string; and stays valid JSON whatever the strings hold.
func TestShrinkJSON(t *testing.T) {
	small := []byte(`{"a":"b","n":[1,2,3]}`)
	if got := memory.ShrinkJSON(small, 100); string(got) != string(small) {
		t.Errorf("a value that fits changed: %s", got)
	}

	long := "BEGIN " + strings.Repeat("0123456789", 100_000) + " END"
	raw, _ := json.Marshal(map[string]any{
		"filePath": "/p/big.log", "exitCode": 1,
		"stdout": long, "stderr": "short error text",
		"lines": []string{"kept", strings.Repeat("é", 50_000) + "tail é"},
	})
	const bound = 4096
	got := memory.ShrinkJSON(raw, bound)
	if len(got) > bound {
		t.Fatalf("%d bytes, want at most %d", len(got), bound)
	}
	var v struct {
		FilePath string   `json:"filePath"`
		ExitCode int      `json:"exitCode"`
		Stdout   string   `json:"stdout"`
		Stderr   string   `json:"stderr"`
		Lines    []string `json:"lines"`
	}
	if err := json.Unmarshal(got, &v); err != nil {
		t.Fatalf("not JSON of the same shape: %v\n%s", err, got)
	}
	if v.FilePath != "/p/big.log" || v.ExitCode != 1 || v.Stderr != "short error text" || len(v.Lines) != 2 || v.Lines[0] != "kept" {
		t.Errorf("the short parts were not kept: %+v", v)
	}
	if !strings.HasPrefix(v.Stdout, "BEGIN 0123") || !strings.HasSuffix(v.Stdout, "789 END") || !strings.Contains(v.Stdout, "bytes cut") {
		t.Errorf("stdout lost its start, its end or its note: %.80q … %.80q", v.Stdout, v.Stdout[max(0, len(v.Stdout)-80):])
	}
	if !strings.HasSuffix(v.Lines[1], "tail é") || !strings.Contains(v.Lines[1], "bytes cut") {
		t.Errorf("a cut string of multi-byte text: %.80q", v.Lines[1])
	}

	// Escapes and multi-byte characters at every cut position stay whole.
	for n := 0; n < 40; n++ {
		s := strings.Repeat("x", n) + strings.Repeat("\"\\\n\t\u00e9\u2028\U0001F600<>&\x01", 400)
		raw, _ := json.Marshal(map[string]string{"k": s})
		for _, m := range []int{200, 333, 1000} {
			got := memory.ShrinkJSON(raw, m)
			if !json.Valid(got) || len(got) > m {
				t.Fatalf("prefix %d, max %d: %d bytes, valid %v: %s", n, m, len(got), json.Valid(got), got)
			}
		}
	}

	// A structure too big even with every string cut: a string of its start.
	many := make([]int, 5000)
	raw, _ = json.Marshal(many)
	got = memory.ShrinkJSON(raw, 500)
	var s string
	if err := json.Unmarshal(got, &s); err != nil || len(got) > 500 || !strings.HasPrefix(s, "[0,0,") {
		t.Errorf("%d bytes: %s (%v)", len(got), got, err)
	}
}

// FuzzShrinkJSON: any valid JSON value comes out valid JSON within the
// bound.
func FuzzShrinkJSON(f *testing.F) {
	f.Add([]byte(`{"a":"`+strings.Repeat("\\u00e9x\\n", 300)+`"}`), 100)
	f.Add([]byte(`["`+strings.Repeat("ab", 500)+`",{"k":"v"}]`), 64)
	f.Fuzz(func(t *testing.T, raw []byte, bound int) {
		if !json.Valid(raw) || bound < 2 || bound > 1<<20 {
			return
		}
		got := memory.ShrinkJSON(raw, bound)
		if len(got) > bound && len(raw) > bound {
			t.Fatalf("%d bytes over %d: %s", len(got), bound, got)
		}
		if !json.Valid(got) {
			t.Fatalf("invalid: %s", got)
		}
	})
}

// A value cut twice (the hook cuts it, the daemon may cut it again) says
// in its note how much of the original was cut, not of the first cut.
func TestShrinkJSONTwiceCountsTheOriginal(t *testing.T) {
	text := strings.Repeat("abcdefghij", 10_000) // 100,000 bytes, nothing to escape
	raw, _ := json.Marshal(map[string]string{"stdout": text})
	once := memory.ShrinkJSON(raw, 8<<10)
	twice := memory.ShrinkJSON(once, 2<<10)
	var v struct{ Stdout string }
	if err := json.Unmarshal(twice, &v); err != nil {
		t.Fatal(err)
	}
	i := strings.Index(v.Stdout, "\n[… ")
	j := strings.Index(v.Stdout, " bytes cut …]\n")
	if i < 0 || j < i {
		t.Fatalf("no note: %q", v.Stdout)
	}
	var said int
	fmt.Sscanf(v.Stdout[i+len("\n[… "):j], "%d", &said)
	kept := len(v.Stdout) - (j + len(" bytes cut …]\n") - i)
	if said+kept != len(text) {
		t.Errorf("the note says %d cut, %d kept: %d, want %d", said, kept, said+kept, len(text))
	}
}
