package vector_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/vector"
)

// churnDocs are n documents over three projects, one of them big enough to
// leave chromem-go, with repeated and unique terms and vectors.
func churnDocs(n int) []vector.Doc {
	r := rand.New(rand.NewPCG(7, 7))
	words := []string{"invoice", "retry", "session", "token", "cursor", "ledger", "webhook", "backoff", "coupon", "export"}
	var docs []vector.Doc
	for i := range n {
		project := []string{"api", "web", "infra"}[min(i%7, 2)]
		w1, w2 := words[r.IntN(len(words))], words[r.IntN(len(words))]
		docs = append(docs, vector.Doc{
			ID: uint64(i + 1), Project: project, Type: []string{"bugfix", "feature", "discovery"}[i%3],
			Time:     t0.Add(time.Duration(i) * time.Minute),
			Files:    []string{fmt.Sprintf("src/%s/%sHandler.go", w1, w2)},
			Title:    fmt.Sprintf("Fixed %s%s in %s", w1, w2, project),
			Text:     fmt.Sprintf("The %s %s failed with code E%04d after %d retries.", w1, w2, r.IntN(10000), r.IntN(9)),
			Evidence: fmt.Sprintf("$ go test ./%s\nrequest_id=%08x took=%dms", w1, r.Uint32(), r.IntN(999)),
		})
	}
	return docs
}

func snapshotOf(t *testing.T, ix *vector.Index) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := ix.WriteSnapshot(&b, 42); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func all(asOf, _ uint64) bool {
	if asOf != 42 {
		panic("asOf is not what WriteSnapshot was given")
	}
	return true
}

func TestSnapshotSearchesAlike(t *testing.T) {
	ctx := context.Background()
	docs := churnDocs(3000)
	ix := vector.NewIndex(vector.NewHashEmbedder())
	if err := ix.Add(ctx, docs...); err != nil {
		t.Fatal(err)
	}
	// Dead documents and reused slots: what the snapshot must leave out.
	ix.Remove(5, 6, 7, 100, 2999)
	if err := ix.Add(ctx, docs[4]); err != nil {
		t.Fatal(err)
	}
	snap := snapshotOf(t, ix)
	loaded := vector.NewIndex(vector.NewHashEmbedder())
	n, asOf, err := loaded.LoadSnapshot(bytes.NewReader(snap), all)
	if err != nil {
		t.Fatal(err)
	}
	if asOf != 42 {
		t.Errorf("asOf %d, want 42", asOf)
	}
	if n != ix.Len() || loaded.Len() != ix.Len() {
		t.Fatalf("loaded %d documents (Len %d), want %d", n, loaded.Len(), ix.Len())
	}
	queries := []vector.Query{
		{Text: "invoice retry"},
		{Text: "E0042 webhook", Mode: vector.Keyword},
		{Text: "session token", Mode: vector.Vector, Limit: 30},
		{Text: "cursor ledger", Project: "web"},
		{Text: "coupon", Project: "api", Types: []string{"bugfix"}, Files: []string{"handler"}},
		{Text: "export backoff", Since: t0.Add(time.Hour), Until: t0.Add(20 * time.Hour)},
		{Project: "infra", Limit: 5},
	}
	for _, q := range queries {
		want := search(t, ix, q)
		got := search(t, loaded, q)
		if !slices.Equal(ids(got), ids(want)) {
			t.Errorf("%+v: after the snapshot %v, before %v", q, ids(got), ids(want))
		}
	}
	// A snapshot of the loaded index is the same bytes: nothing is lost or
	// added by a round trip.
	if again := snapshotOf(t, loaded); !bytes.Equal(again, snap) {
		t.Errorf("a snapshot of the loaded index differs (%d bytes, want %d)", len(again), len(snap))
	}
	// The loaded index takes new documents and removals as any other.
	if err := loaded.Add(ctx, vector.Doc{ID: 9001, Project: "api", Title: "zanzibar quokka"}); err != nil {
		t.Fatal(err)
	}
	if got := ids(search(t, loaded, vector.Query{Text: "zanzibar"})); !slices.Equal(got, []uint64{9001}) {
		t.Errorf("new document: %v", got)
	}
	loaded.Remove(9001, 1, 2, 3)
	if got := search(t, loaded, vector.Query{Text: "zanzibar"}); len(got) != 0 {
		t.Errorf("removed document still found: %v", ids(got))
	}
}

func TestSnapshotLeavesOutWhatIsNotCurrent(t *testing.T) {
	docs := churnDocs(200)
	ix := newTestIndex(t, vector.NewHashEmbedder(), docs...)
	snap := snapshotOf(t, ix)
	loaded := vector.NewIndex(vector.NewHashEmbedder())
	n, _, err := loaded.LoadSnapshot(bytes.NewReader(snap), func(_, id uint64) bool { return id%2 == 0 })
	if err != nil {
		t.Fatal(err)
	}
	if n != 100 {
		t.Fatalf("loaded %d, want the 100 even ids", n)
	}
	for _, h := range search(t, loaded, vector.Query{Text: "invoice retry session", Limit: 200}) {
		if h.ID%2 != 0 {
			t.Errorf("hit %d was not current", h.ID)
		}
	}
}

func TestSnapshotHoldsNoForgottenPaths(t *testing.T) {
	docs := churnDocs(50)
	docs[7].Files = []string{"src/secret/zebraPlanHandler.go"}
	ix := newTestIndex(t, vector.NewHashEmbedder(), docs...)
	if !bytes.Contains(snapshotOf(t, ix), []byte("zebraplanhandler")) {
		t.Fatal("the snapshot should hold the lowercased paths of its documents")
	}
	ix.Remove(docs[7].ID)
	if bytes.Contains(snapshotOf(t, ix), []byte("zebraplan")) {
		t.Error("a removed document's path is still in the snapshot")
	}
}

func TestSnapshotRefusesDamage(t *testing.T) {
	ix := newTestIndex(t, vector.NewHashEmbedder(), churnDocs(300)...)
	snap := snapshotOf(t, ix)
	cases := map[string][]byte{
		"empty":     nil,
		"truncated": snap[:len(snap)/2],
		"no crc":    snap[:len(snap)-4],
		"trailing":  append(slices.Clone(snap), 0),
		"flipped": func() []byte {
			b := slices.Clone(snap)
			b[len(b)/3] ^= 0x40
			return b
		}(),
		"not one": []byte("mnemo index snapshot?\x01\x00\x00\x00"),
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			loaded := vector.NewIndex(vector.NewHashEmbedder())
			_, _, err := loaded.LoadSnapshot(bytes.NewReader(b), all)
			if !errors.Is(err, vector.ErrSnapshot) {
				t.Fatalf("err %v, want ErrSnapshot", err)
			}
			if loaded.Len() != 0 {
				t.Errorf("a refused snapshot left %d documents", loaded.Len())
			}
			if err := loaded.Add(context.Background(), sampleDocs()...); err != nil {
				t.Fatal(err)
			}
			if got := search(t, loaded, vector.Query{Text: "SQLSTATE 23505"}); len(got) == 0 || got[0].ID != 2 {
				t.Errorf("after a refused snapshot: %v", ids(got))
			}
		})
	}
	t.Run("another embedder", func(t *testing.T) {
		loaded := vector.NewIndex(renamedEmbedder{vector.NewHashEmbedder()})
		if _, _, err := loaded.LoadSnapshot(bytes.NewReader(snap), all); !errors.Is(err, vector.ErrSnapshot) {
			t.Fatalf("err %v, want ErrSnapshot", err)
		}
	})
	t.Run("not empty", func(t *testing.T) {
		loaded := newTestIndex(t, vector.NewHashEmbedder(), sampleDocs()...)
		if _, _, err := loaded.LoadSnapshot(bytes.NewReader(snap), all); err == nil {
			t.Fatal("loaded a snapshot into an index with documents")
		}
	})
}

func TestQuantizeIsIdempotent(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for range 100 {
		v := make([]float32, 512)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		q, s := vector.Quantize(v)
		q2, s2 := vector.Quantize(vector.Dequantize(q, s))
		if !slices.Equal(q, q2) {
			t.Fatalf("quantizing a dequantized vector changed it (scale %g → %g)", s, s2)
		}
	}
}

// renamedEmbedder is the hashing embedder under another id.
type renamedEmbedder struct{ vector.Embedder }

func (renamedEmbedder) ID() string { return "renamed" }

// A project that grew past chromem-go's collections and shrank back keeps
// every vector searchable, old and new.
func TestIndexProjectShrinksBack(t *testing.T) {
	ctx := context.Background()
	var docs []vector.Doc
	for i := range 1030 {
		docs = append(docs, vector.Doc{ID: uint64(i + 1), Project: "big", Title: fmt.Sprintf("note %d about item%d", i, i)})
	}
	ix := newTestIndex(t, vector.NewHashEmbedder(), docs...)
	var gone []uint64
	for i := range 30 {
		gone = append(gone, uint64(i+1))
	}
	ix.Remove(gone...)
	if err := ix.Add(ctx, vector.Doc{ID: 5000, Project: "big", Title: "zanzibar quokka"}); err != nil {
		t.Fatal(err)
	}
	for _, q := range []vector.Query{
		{Text: "note 500 about item500", Project: "big", Mode: vector.Vector},
		{Text: "note 500 about item500", Mode: vector.Vector},
	} {
		if got := search(t, ix, q); len(got) == 0 || got[0].ID != 501 {
			t.Errorf("%+v: %v, want 501 first", q, ids(got))
		}
	}
	if got := search(t, ix, vector.Query{Text: "zanzibar quokka", Project: "big", Mode: vector.Vector}); len(got) == 0 || got[0].ID != 5000 {
		t.Errorf("the new document: %v", ids(got))
	}
}

func TestSignCodeOfQuantized(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	for range 50 {
		v := make([]float32, 100)
		for i := range v {
			if r.IntN(4) > 0 {
				v[i] = float32(r.NormFloat64())
			}
		}
		q, s := vector.Quantize(v)
		if got, want := vector.SignCodeQ(q), vector.SignCode(vector.Dequantize(q, s)); !slices.Equal(got, want) {
			t.Fatalf("code %x, want the float vector's %x", got, want)
		}
	}
}
