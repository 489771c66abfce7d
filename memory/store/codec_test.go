package store_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/store"
)

// Dictionary 1 never changes: the frames written with it could not be
// read again. A better dictionary is a new one, with its own id.
func TestFrameDictionaryNeverChanges(t *testing.T) {
	sum := sha256.Sum256(store.FrameDict1)
	if got, want := hex.EncodeToString(sum[:]), "4597eef25cca3defb9fa8acb2364deb2f912668368049e7988fdf12e70b7e9e1"; got != want {
		t.Fatalf("frame dictionary 1 changed (sha256 %s, want %s): add a dictionary 2 instead", got, want)
	}
}

// A value goes into a frame when that is smaller, comes back byte for
// byte, and a plain JSON value (schema 1) reads as itself.
func TestValueFrames(t *testing.T) {
	obs := `{"id":7,"sessionId":3,"project":"shop","type":"bugfix","title":"go test fails: the cart total rounds down","narrative":"The cart total was rounded down before the tax was added; it is now rounded after.","facts":["$ go test ./cart/...","exit code 1"],"filesModified":["cart/total.go"],"evidence":"--- FAIL: TestTotal (0.00s)\n    total_test.go:31: Total() = 10.99, want 11.00"}`
	for _, tc := range []struct {
		name, value string
		framed      bool
	}{
		{"observation", obs, true},
		{"tiny", `{"n":7}`, false},
		{"empty", ``, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stored := store.EncodeValue([]byte(tc.value))
			if framed := !bytes.Equal(stored, []byte(tc.value)); framed != tc.framed {
				t.Fatalf("framed = %t (%d → %d bytes), want %t", framed, len(tc.value), len(stored), tc.framed)
			}
			if tc.framed && bytes.Contains(stored, []byte("rounded after")) {
				t.Fatal("the frame holds the text as plain bytes: nothing is compressed")
			}
			got, err := store.DecodeValue(stored)
			if err != nil || string(got) != tc.value {
				t.Fatalf("decode = %q, %v; want %q", got, err, tc.value)
			}
		})
	}
	t.Logf("an observation of %d bytes is stored in %d", len(obs), len(store.EncodeValue([]byte(obs))))
}

// Frames finds every frame in a file's bytes, between other bytes, and
// gives what a cut-off frame holds up to the cut.
func TestFramesFindsEveryFrame(t *testing.T) {
	a := store.EncodeValue([]byte(strings.Repeat("the first value names ALPHAMARK and ", 8)))
	b := store.EncodeValue([]byte(strings.Repeat("the second value names BETAMARK and ", 8)))
	file := append(append(append([]byte("header\x00"), a...), "\x01\x02 some key "...), b...)
	frames := store.Frames(file)
	if len(frames) != 2 || !bytes.Contains(frames[0], []byte("ALPHAMARK")) || !bytes.Contains(frames[1], []byte("BETAMARK")) {
		t.Fatalf("frames = %q", frames)
	}
	long := store.EncodeValue([]byte("CUTMARK at the start, " + strings.Repeat("then words that do not repeat much: 0123456789 ", 200)))
	if frames := store.Frames(long[:len(long)/2]); len(frames) != 1 || !bytes.HasPrefix(frames[0], []byte("CUTMARK")) {
		t.Fatalf("a cut-off frame gives %d frames", len(frames))
	}
}

// The audit of the files is not vacuous: a stored text is not in the raw
// bytes of any file (its value is compressed), and the audit, which
// inflates the frames, finds it.
func TestAuditFindsCompressedText(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	m := MustOpen(t, store.Options{Dir: dir})
	ctx := context.Background()
	text := "The staging credentials rotate through AUDITMARK-5521 every Monday; ask ops before touching the vault, and note the rotation in the runbook."
	if _, err := m.Save(ctx, memory.SaveParams{Project: "shop", Text: text}); err != nil {
		t.Fatal(err)
	}
	m.Close()
	var raw []string
	filepath.Walk(filepath.Dir(dir), func(path string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			if b, _ := os.ReadFile(path); bytes.Contains(b, []byte("every Monday; ask ops")) {
				raw = append(raw, path)
			}
		}
		return nil
	})
	if len(raw) > 0 {
		t.Errorf("the saved text is plain in %v: it was not compressed, and this test proves nothing about the frames", raw)
	}
	if !onDisk(t, filepath.Dir(dir), "AUDITMARK-5521") {
		t.Fatal("the audit does not find a text the store holds")
	}
}

// Quantizing is idempotent, byte for byte, and close to the vector.
func TestQuantizeVector(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		dim := 1 + rnd.IntN(600)
		v := make([]float32, dim)
		scale := float32(math.Pow(10, rnd.Float64()*8-4))
		var ss float64
		for j := range v {
			v[j] = float32(rnd.NormFloat64()) * scale
			ss += float64(v[j]) * float64(v[j])
		}
		q := store.QuantizeVector(v)
		if len(q) != 4+dim {
			t.Fatalf("%d dimensions stored in %d bytes", dim, len(q))
		}
		back := store.DequantizeVector(q)
		if again := store.QuantizeVector(back); !bytes.Equal(again, q) {
			t.Fatalf("vector %d (dim %d, scale %g): quantize(dequantize(q)) != q", i, dim, scale)
		}
		var dot, bb float64
		for j := range v {
			dot += float64(v[j]) * float64(back[j])
			bb += float64(back[j]) * float64(back[j])
		}
		if cos := dot / math.Sqrt(ss*bb); dim >= 16 && cos < 0.999 {
			t.Fatalf("vector %d: cosine to the original %.5f", i, cos)
		}
		got, err := store.DecodeVector(q, dim)
		if err != nil || fmt.Sprint(got) != fmt.Sprint(back) {
			t.Fatalf("decode: %v", err)
		}
	}
	if q := store.QuantizeVector(make([]float32, 8)); !bytes.Equal(store.QuantizeVector(store.DequantizeVector(q)), q) {
		t.Fatal("the zero vector")
	}
}

// A store written before frames and int8 vectors (schema 1) opens, reads
// as before, finds by meaning with its float32 vectors, and is schema 2.
func TestSchema1StoreReads(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	m := MustOpen(t, store.Options{Dir: dir})
	ctx := context.Background()
	mustPrompt(t, m, "cc-old", "fix the cart total")
	mustTool(t, m, "cc-old", "Read", readInput, readResponse)
	waitIdle(t, m)
	saved, _ := m.Save(ctx, memory.SaveParams{Project: "shop", Text: "the tax is rounded after the discount, not before"})
	before, _ := m.Get(ctx, memory.IDsParams{IDs: []uint64{saved.ID}})
	search := memory.SearchParams{Query: "tax rounding", Mode: "vector"}
	hitsBefore, _ := m.Search(ctx, search)
	if err := store.Downgrade(m); err != nil {
		t.Fatal(err)
	}
	m.Close()

	m = MustOpen(t, store.Options{Dir: dir})
	if v, err := store.Schema(m); err != nil || v != fmt.Sprint(store.SchemaVersion) {
		t.Fatalf("schema after open = %q, %v", v, err)
	}
	after, err := m.Get(ctx, memory.IDsParams{IDs: []uint64{saved.ID}})
	if err != nil || fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("get after the upgrade = %+v, %v; want %+v", after, err, before)
	}
	hits, err := m.Search(ctx, search)
	if err != nil || len(hits.Hits) == 0 || hits.Hits[0].ID != hitsBefore.Hits[0].ID {
		t.Fatalf("vector search after the upgrade = %+v, %v; before %+v", hits, err, hitsBefore)
	}
	if s := mustSession(t, m, "cc-old"); s.PromptCounter != 1 {
		t.Fatalf("session after the upgrade = %+v", s)
	}
	if res, _ := m.Doctor(ctx); len(res.Problems) != 0 {
		t.Fatalf("doctor after the upgrade: %v", res.Problems)
	}
}
