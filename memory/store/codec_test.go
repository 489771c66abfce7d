package store_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
	framed := storedBytes(t, m)
	if err := store.Downgrade(m); err != nil {
		t.Fatal(err)
	}
	plain := storedBytes(t, m)
	if plain["observations"] <= framed["observations"] || plain["vectors"] != 4*framed["vectors"]-16*int64(framedVectors(framed)) {
		t.Fatalf("downgraded values: %v, framed: %v", plain, framed)
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
	// In the background, the old values are rewritten as schema 2 writes
	// them.
	for deadline := time.Now().Add(10 * time.Second); store.Reframing(m); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the values of schema 1 were not rewritten within 10 s")
		}
	}
	got := storedBytes(t, m)
	// The session changed since (the start marks it), in its new form.
	if got["sessions"] >= plain["sessions"] {
		t.Errorf("the session's value is %d bytes, as plain (%d)", got["sessions"], plain["sessions"])
	}
	delete(got, "sessions")
	delete(framed, "sessions")
	if fmt.Sprint(got) != fmt.Sprint(framed) {
		t.Fatalf("values after the rewrite: %v, want %v as schema 2 wrote them", got, framed)
	}
	if again, err := m.Get(ctx, memory.IDsParams{IDs: []uint64{saved.ID}}); err != nil || fmt.Sprint(again) != fmt.Sprint(before) {
		t.Fatalf("get after the rewrite = %+v, %v", again, err)
	}
}

// storedBytes is the value bytes of the families that hold records.
func storedBytes(t *testing.T, m *store.Memory) map[string]int64 {
	t.Helper()
	fams, err := m.Footprint(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, f := range fams {
		switch f.Name {
		case "sessions", "prompts", "observations", "summaries", "vectors":
			out[f.Name] = f.ValueBytes
			out[f.Name+" keys"] = int64(f.Keys)
		}
	}
	return out
}

// framedVectors is how many vectors storedBytes counted.
func framedVectors(b map[string]int64) int64 { return b["vectors keys"] }

// benchObservation is an observation as the local agent makes them, with
// its evidence: 1.8 KB of JSON, the mean on the replayed eval data.
var benchObservation = memory.Observation{
	ID: 48213, SessionID: 1207, ContentSessionID: "7f7a7adc-5cac-42ee-bc52-71136a975402", MemorySessionID: "82041a06-0045-4b07-9869-23e6aa4c0426",
	PromptNumber: 3, Project: "chatbridge", Type: "bugfix", Title: "cargo build fails: error[E0597]: `guard` does not live long enough",
	Subtitle: "error[E0597]: `guard` does not live long enough",
	Facts:    []string{"$ cargo build", "exit code 101", "error: error[E0597]: `guard` does not live long enough"},
	Narrative: "cargo build failed with exit code 101: error[E0597]: `guard` does not live long enough. The lookup returned a &str borrowed " +
		"from the read guard; it now clones the Arc<str> out of the map before the guard drops.",
	Concepts:  []string{"build", "relay", "threads"},
	FilesRead: []string{"src/relay/threads.rs"},
	Evidence: "$ cargo build\nerror[E0597]: `guard` does not live long enough\n  --> src/relay/threads.rs:39:9\n   |\n37 |     let guard = self.inner.read().await;\n" +
		"38 |     guard.get(slack_ts).map(|t| t.matrix_event_id.as_str())\n   |     ^^^^^ borrowed value does not live long enough\n" +
		"For more information about this error, try `rustc --explain E0597`.\nerror: could not compile `chatbridge` (lib) due to 1 previous error\n" +
		"v0.7.3 home/dev/src/chatbridge src/relay/threads.rs:39:9 slack_ts self.inner.read guard.get t.matrix_event_id.as_str Exit code Compiling " +
		"async lookup Option call lifetime reference await binding declared here borrowed value returning requires dropped still ThreadCache " +
		"RwLock HashMap insert evict capacity 4096 matrix_room_id slack_channel_id relay_message thread_ts parent_event",
	Tool: "Bash", ToolUseID: "toolu_01ndhgWfgjkaJWTf23lPCZEtjr",
	Request: "I'm adding a thread cache so Slack replies land in the right Matrix thread. ThreadCache::lookup won't compile, can you fix it? " +
		"Ideally without allocating a new String on every message, this is the hot path.",
	Source: "agent", Hash: "9aeba8248891b250697b2ed7e176cc6f",
}

// The cost of the value frames on one observation: writing (marshal and
// compress) and reading (inflate and unmarshal), against plain JSON.
func BenchmarkObservationValue(b *testing.B) {
	plain, _ := json.Marshal(benchObservation)
	framed := store.EncodeValue(plain)
	for _, tc := range []struct {
		name   string
		stored []byte
	}{{"plain", plain}, {"frame", framed}} {
		b.Run("read/"+tc.name, func(b *testing.B) {
			for b.Loop() {
				var o memory.Observation
				if err := store.UnmarshalValue(tc.stored, &o); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(tc.stored)), "stored-bytes")
		})
	}
	b.Run("write/frame", func(b *testing.B) {
		for b.Loop() {
			p, _ := json.Marshal(benchObservation)
			store.EncodeValue(p)
		}
		b.ReportMetric(float64(len(plain))/float64(len(framed)), "ratio")
	})
}

// A closed store's footprint is read without opening the memory, and the
// store compacts alone; neither loses a record.
func TestDirFootprintAndCompactDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	m := MustOpen(t, store.Options{Dir: dir})
	ctx := context.Background()
	for i := range 20 {
		m.Save(ctx, memory.SaveParams{Project: "shop", Text: fmt.Sprintf("note %d about the cart total and its rounding", i)})
	}
	want, _ := m.Footprint(ctx)
	m.Close()
	for _, step := range []string{"closed", "compacted"} {
		if step == "compacted" {
			if err := store.CompactDir(dir); err != nil {
				t.Fatal(err)
			}
		}
		got, err := store.DirFootprint(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if want[i].Name == "observations" && (got[i].Keys != 20 || got[i].ValueBytes != want[i].ValueBytes) {
				t.Errorf("%s: observations %+v, want %+v", step, got[i], want[i])
			}
		}
	}
	m = MustOpen(t, store.Options{Dir: dir})
	if c, _ := m.Counts(ctx); c.Observations != 20 {
		t.Fatalf("after compaction: %+v", c)
	}
}
