package vector_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mnemo-dev/mnemo/vector"
)

// openUSELite loads the model from MNEMO_MODELS, or skips the test saying how
// to install it.
func openUSELite(tb testing.TB) *vector.USELite {
	tb.Helper()
	dir := os.Getenv("MNEMO_MODELS")
	if dir == "" {
		tb.Skip("MNEMO_MODELS is not set: run `mnemo model install` into a folder and point MNEMO_MODELS at it to test the sentence encoder")
	}
	useLiteOnce.Do(loadUSELite)
	if errors.Is(useLiteErr, vector.ErrNoModel) {
		tb.Skipf("no model in MNEMO_MODELS=%s: %v", dir, useLiteErr)
	}
	if useLiteErr != nil {
		tb.Fatal(useLiteErr)
	}
	return useLite
}

// loadUSELite loads the model from MNEMO_MODELS once for all tests.
func loadUSELite() {
	e, err := vector.OpenUSELite(os.Getenv("MNEMO_MODELS"))
	if err != nil {
		useLiteErr = err
		return
	}
	useLite = e.(*vector.USELite)
}

var (
	useLiteOnce sync.Once
	useLite     *vector.USELite
	useLiteErr  error
)

func cosine(a, b []float32) float64 {
	var d, na, nb float64
	for i := range a {
		d += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return d / math.Sqrt(na*nb)
}

// TestUSELiteMatchesReference compares the Go forward pass with vectors made by
// the TensorFlow.js implementation (@energetic-ai/embeddings 0.2.0 on the same
// weights), including Unicode, unknown characters and a text past 128 pieces.
func TestUSELiteMatchesReference(t *testing.T) {
	m := openUSELite(t)
	raw, err := os.ReadFile("testdata/uselite_golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var golden []struct {
		Text   string    `json:"text"`
		Vector []float32 `json:"vector"`
	}
	if err := json.Unmarshal(raw, &golden); err != nil {
		t.Fatal(err)
	}
	for _, g := range golden {
		t.Run(g.Text[:min(len(g.Text), 30)], func(t *testing.T) {
			got, err := m.Embed(context.Background(), g.Text)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != m.Dim() {
				t.Fatalf("got %d dims, want %d", len(got), m.Dim())
			}
			var maxDiff float64
			for i := range got {
				maxDiff = max(maxDiff, math.Abs(float64(got[i]-g.Vector[i])))
			}
			if c := cosine(got, g.Vector); c < 0.99999 || maxDiff > 1e-5 {
				t.Errorf("cosine to reference %.7f, max |diff| %.2g", c, maxDiff)
			}
		})
	}
}

func TestOpenUSELiteMissing(t *testing.T) {
	for name, dir := range map[string]string{"no folder given": "", "empty folder": t.TempDir(), "no such folder": t.TempDir() + "/nope"} {
		t.Run(name, func(t *testing.T) {
			if _, err := vector.OpenUSELite(dir); !errors.Is(err, vector.ErrNoModel) {
				t.Errorf("OpenUSELite(%q) error %v, want ErrNoModel", dir, err)
			}
		})
	}
	t.Run("damaged", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.MkdirAll(dir+"/use-lite", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dir+"/use-lite/model.json", []byte(`{"weightsManifest": [`), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := vector.OpenUSELite(dir)
		if err == nil || errors.Is(err, vector.ErrNoModel) {
			t.Errorf("error %v, want a read error other than ErrNoModel", err)
		}
		e, notice := vector.DefaultEmbedder(dir)
		if e.ID() != vector.HashEmbedderID || !strings.Contains(notice, "could not be read") {
			t.Errorf("DefaultEmbedder on a damaged model: %s, %q", e.ID(), notice)
		}
	})
}

func TestDefaultEmbedder(t *testing.T) {
	t.Run("without the model", func(t *testing.T) {
		e, notice := vector.DefaultEmbedder(t.TempDir())
		if e.ID() != vector.HashEmbedderID {
			t.Errorf("embedder %s, want the hashing one", e.ID())
		}
		if !strings.Contains(notice, "mnemo model install") {
			t.Errorf("notice %q does not say how to install the model", notice)
		}
	})
	t.Run("with the model", func(t *testing.T) {
		openUSELite(t)
		e, notice := vector.DefaultEmbedder(os.Getenv("MNEMO_MODELS"))
		if e.ID() != vector.USELiteID || e.Dim() != 512 || notice != "" {
			t.Errorf("DefaultEmbedder: %s %d %q", e.ID(), e.Dim(), notice)
		}
	})
}

// TestUSELiteSemantic checks what the sentence encoder is for: a query that
// shares no word with its answer still finds it, first by vectors, and in the
// top 3 of hybrid search (where a note sharing one common word with the query
// may come first).
func TestUSELiteSemantic(t *testing.T) {
	m := openUSELite(t)
	notes := []string{
		"Fixed the login bug in auth.ts where the session token expired too early",
		"The database migration failed on production because of a missing index",
		"Added unit tests for the payment service refund logic",
		"CI pipeline is slow because the Docker image is rebuilt on every run",
		"Use pnpm instead of npm in this repository",
		"Memory leak in the websocket server caused the process to crash after a day",
		"Dates are stored in UTC and converted to the user's timezone in the frontend",
		"Bake a chocolate cake for the team party on Friday",
		"The office coffee machine is broken",
	}
	var docs []vector.Doc
	for i, n := range notes {
		docs = append(docs, vector.Doc{ID: uint64(i + 1), Title: n})
	}
	ix := newTestIndex(t, m, docs...)
	tests := []struct {
		query string
		want  uint64
	}{
		{"repair authentication error when users sign in", 1},
		{"continuous integration takes too long, container builds are not cached", 4},
		{"socket service runs out of RAM over time", 6},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			for _, q := range vector.Terms(tt.query) {
				for _, d := range vector.Terms(notes[tt.want-1]) {
					if q == d {
						t.Fatalf("query and answer share the term %q", q)
					}
				}
			}
			got := ids(search(t, ix, vector.Query{Text: tt.query, Mode: vector.Vector}))
			if len(got) == 0 || got[0] != tt.want {
				t.Errorf("vector: hits %v, want %d first", got, tt.want)
			}
			got = ids(search(t, ix, vector.Query{Text: tt.query, Limit: 3}))
			if !slices.Contains(got, tt.want) {
				t.Errorf("hybrid: hits %v, want %d in the top 3", got, tt.want)
			}
		})
	}
}

func TestUSELiteEmbed(t *testing.T) {
	m := openUSELite(t)
	ctx := context.Background()
	t.Run("several lines", func(t *testing.T) {
		text := "Fixed rounding in invoice totals\nTotals now round once at the end.\n\nroundHalfEven truncated negative amounts."
		v, err := m.Embed(ctx, text)
		if err != nil {
			t.Fatal(err)
		}
		one, _ := m.Embed(ctx, "Fixed rounding in invoice totals")
		if c := cosine(v, v); math.Abs(c-1) > 1e-5 {
			t.Errorf("not unit length: %v", c)
		}
		if c := cosine(v, one); c < 0.5 || c > 0.999 {
			t.Errorf("cosine to its first line %v: want related but not equal", c)
		}
	})
	t.Run("empty", func(t *testing.T) {
		if _, err := m.Embed(ctx, ""); !errors.Is(err, vector.ErrNoText) {
			t.Errorf("error %v, want ErrNoText", err)
		}
	})
	t.Run("concurrent", func(t *testing.T) {
		texts := []string{"fix the login bug", "bake a cake", "schema upgrade broke the prod DB\nrolled back"}
		want := make([][]float32, len(texts))
		for i, s := range texts {
			want[i], _ = m.Embed(ctx, s)
		}
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 6 {
					k := (w + i) % len(texts)
					v, err := m.Embed(ctx, texts[k])
					if err != nil || cosine(v, want[k]) < 0.999999 {
						t.Errorf("concurrent Embed(%q): %v, cosine %v", texts[k], err, cosine(v, want[k]))
						return
					}
				}
			}()
		}
		wg.Wait()
	})
}

// TestUSELiteMatchesGonum compares the encoder with the vectors it gave
// before its own matrix kernels (gemm.go), when gonum's BLAS did its
// products, one text at a time: testdata/uselite_gonum.f16 holds them, as
// float16, for every text of testdata/eval (each observation's EmbedText,
// then each query). The products now sum in another order and in batches,
// and the last layer's second product comes after the pooling, so the
// vectors move by rounding only: cosine at least 0.9999 (float16 alone
// keeps them above 0.99999).
func TestUSELiteMatchesGonum(t *testing.T) {
	m := openUSELite(t)
	raw, err := os.ReadFile("testdata/uselite_gonum.f16")
	if err != nil {
		t.Fatal(err)
	}
	s := loadEvalSet(t, "testdata/eval")
	var texts []string
	for _, d := range s.Docs {
		texts = append(texts, d.EmbedText())
	}
	for _, q := range s.Queries {
		texts = append(texts, q.Query)
	}
	if len(raw) != len(texts)*m.Dim()*2 {
		t.Fatalf("%d bytes of vectors for %d texts", len(raw), len(texts))
	}
	worst, sum := 1.0, 0.0
	for i, text := range texts {
		got, err := m.Embed(context.Background(), text)
		if err != nil {
			t.Fatal(err)
		}
		want := make([]float32, m.Dim())
		for j := range want {
			want[j] = float16(binary.LittleEndian.Uint16(raw[2*(i*m.Dim()+j):]))
		}
		c := cosine(got, want)
		if c < 0.9999 {
			t.Errorf("text %d (%.40q): cosine %.7f to the gonum encoder's", i, text, c)
		}
		worst, sum = min(worst, c), sum+c
	}
	t.Logf("%d texts: cosine to the gonum encoder's min %.9f, mean %.9f", len(texts), worst, sum/float64(len(texts)))
}

// float16 decodes an IEEE 754 half-precision value.
func float16(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0 && mant == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal: mant · 2⁻²⁴
		return math.Float32frombits(sign | math.Float32bits(float32(mant)*(1.0/(1<<24))))
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
}

// TestUSELitePiecesOfLongText checks that the encoder's reading of a long
// text, which stops at the space after its first 128 pieces, gives the
// pieces of the whole text: on long texts of words, of CJK without
// spaces, with characters outside the BMP before and after the cut, with
// runs of spaces, and on short ones.
func TestUSELitePiecesOfLongText(t *testing.T) {
	m := openUSELite(t)
	s := loadEvalSet(t, "testdata/eval")
	var all strings.Builder
	for _, d := range s.Docs {
		all.WriteString(d.EmbedText())
		all.WriteString(" ")
	}
	long := all.String()
	texts := map[string]string{
		"eval texts":             long,
		"one line":               strings.ReplaceAll(long, "\n", " "),
		"cjk":                    strings.Repeat("日本語のテキスト", 200) + " " + long,
		"emoji before":           "🙂 🚀 " + long,
		"emoji after":            long + " 🙂🚀 done",
		"runs of spaces":         strings.Repeat("a  b   c\u00a0d ", 300),
		"no-break spaces only":   strings.Repeat("word\u00a0", 400),
		"short":                  "fix the login bug",
		"exactly 128 spaces":     strings.Repeat("x ", 128),
		"combining after spaces": strings.Repeat("e \u0301", 300),
	}
	for name, text := range texts {
		t.Run(name, func(t *testing.T) {
			whole := m.Pieces(text, 0)
			want := whole[:min(len(whole), 128)]
			if got := m.Pieces(text, 128); !slices.Equal(got, want) {
				t.Errorf("first pieces %v, want %v", got, want)
			}
		})
	}
}

// TestUSELiteRemembers checks that the vectors the encoder remembers
// (texts, and lines shared between texts) are the bits encoding gives,
// whatever was encoded before, and that a copy of the vector handed out
// can be changed without changing the next one.
func TestUSELiteRemembers(t *testing.T) {
	cached := openUSELite(t)
	fresh := cached.WithoutCache()
	ctx := context.Background()
	prompt := "Implement the alerts module from this spec\n# Alerts\nEach alert has a name and a level.\nLevels: info, warn, page."
	texts := []string{
		"Created src/alerts.py with alert_name\nNew file src/alerts.py.\n" + prompt,
		"Edited src/alerts.py: levels\nAdded the three levels.\n" + prompt,
		"Ran the tests\nexit code 0\n" + prompt + "\nsrc/alerts.py",
		"Created src/alerts.py with alert_name\nNew file src/alerts.py.\n" + prompt, // again
		"a single line",
		"a single line",
	}
	for i, text := range texts {
		got, err := cached.Embed(ctx, text)
		if err != nil {
			t.Fatal(err)
		}
		want, err := fresh.Embed(ctx, text)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("text %d: the remembered vector differs from the encoded one (cosine %.9f)", i, cosine(got, want))
		}
		got[0] += 1 // the caller's copy
	}
	again, _ := cached.Embed(ctx, texts[0])
	want, _ := fresh.Embed(ctx, texts[0])
	if !slices.Equal(again, want) {
		t.Error("changing a handed-out vector changed the remembered one")
	}
}

// TestUSELiteLineBudget checks that a text's lines are read up to the
// budget: lines added past it leave the vector as it was, lines within it
// change it.
func TestUSELiteLineBudget(t *testing.T) {
	m := openUSELite(t).WithoutCache()
	ctx := context.Background()
	var b strings.Builder
	for i := range 200 {
		fmt.Fprintf(&b, "line %d of a pasted specification: the alert levels are info, warn and page\n", i)
	}
	long := b.String()
	v1, err := m.Embed(ctx, long)
	if err != nil {
		t.Fatal(err)
	}
	v2, err := m.Embed(ctx, long+"an extra line about something else entirely: bake a chocolate cake\n")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(v1, v2) {
		t.Errorf("a line past the budget changed the vector (cosine %.9f)", cosine(v1, v2))
	}
	short := "a short note\nabout the alert levels"
	s1, _ := m.Embed(ctx, short)
	s2, _ := m.Embed(ctx, short+"\nbake a chocolate cake")
	if slices.Equal(s1, s2) {
		t.Error("a line within the budget left the vector as it was")
	}
}
