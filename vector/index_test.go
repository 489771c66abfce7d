package vector_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/vector"
)

// countingEmbedder counts the texts it embeds.
type countingEmbedder struct {
	vector.Embedder
	calls atomic.Int64
}

func (c *countingEmbedder) Embed(ctx context.Context, text string) ([]float32, error) {
	c.calls.Add(1)
	return c.Embedder.Embed(ctx, text)
}

var t0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// sampleDocs are a few memories of two projects.
func sampleDocs() []vector.Doc {
	return []vector.Doc{
		{ID: 1, Project: "api", Type: "bugfix", Time: t0, Files: []string{"src/auth/session.ts"},
			Title: "Fixed handleLoginRequest expiring sessions early",
			Text:  "The session token expired after 5 minutes because handleLoginRequest used seconds as milliseconds."},
		{ID: 2, Project: "api", Type: "bugfix", Time: t0.Add(time.Hour), Files: []string{"internal/store/migrate.go"},
			Title: "Migration 0042 failed with SQLSTATE 23505",
			Text:  "pq: duplicate key value violates unique constraint; the backfill ran twice. Made it idempotent."},
		{ID: 3, Project: "api", Type: "decision", Time: t0.Add(2 * time.Hour), Files: []string{"go.mod"},
			Title: "Use slog instead of logrus",
			Text:  "Structured logging moves to log/slog from the standard library; logrus is removed."},
		{ID: 4, Project: "web", Type: "bugfix", Time: t0.Add(3 * time.Hour), Files: []string{"src/utils/formatDate.ts"},
			Title: "formatDate showed UTC instead of local time",
			Text:  "Dates rendered in UTC for users in Chicago; formatDate now uses the browser time zone."},
		{ID: 5, Project: "web", Type: "feature", Time: t0.Add(4 * time.Hour), Files: []string{"vite.config.ts"},
			Title: "Split vendor chunks in the Vite build",
			Text:  "The bundle shrank from 1.2 MB to 400 kB by splitting React and charting libraries into chunks."},
		{ID: 6, Project: "web", Type: "bugfix", Time: t0.Add(5 * time.Hour), Files: []string{"src/api/client.ts"},
			Title: "Fetch failed with ENOENT on config load",
			Text:  "open config.json: ENOENT when the app started from another folder; paths are now resolved from the module."},
	}
}

func newTestIndex(t *testing.T, e vector.Embedder, docs ...vector.Doc) *vector.Index {
	t.Helper()
	ix := vector.NewIndex(e)
	if err := ix.Add(context.Background(), docs...); err != nil {
		t.Fatal(err)
	}
	return ix
}

func ids(hits []vector.Hit) []uint64 {
	out := make([]uint64, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out
}

func search(t *testing.T, ix *vector.Index, q vector.Query) []vector.Hit {
	t.Helper()
	hits, err := ix.Search(context.Background(), q)
	if err != nil {
		t.Fatalf("Search(%+v): %v", q, err)
	}
	return hits
}

func TestIndexSearch(t *testing.T) {
	ix := newTestIndex(t, vector.NewHashEmbedder(), sampleDocs()...)
	if ix.Len() != 6 || ix.EmbedderID() != vector.HashEmbedderID {
		t.Fatalf("Len %d EmbedderID %q", ix.Len(), ix.EmbedderID())
	}
	tests := []struct {
		name  string
		q     vector.Query
		first uint64 // expected best hit
		only  []uint64
	}{
		{name: "identifier", q: vector.Query{Text: "handleLoginRequest"}, first: 1},
		{name: "identifier part", q: vector.Query{Text: "login request", Mode: vector.Keyword}, first: 1},
		{name: "error code", q: vector.Query{Text: "SQLSTATE 23505"}, first: 2},
		{name: "errno", q: vector.Query{Text: "ENOENT"}, first: 6},
		{name: "path", q: vector.Query{Text: "src/utils/formatDate.ts"}, first: 4},
		{name: "path fragment", q: vector.Query{Text: "formatDate.ts", Mode: vector.Keyword}, first: 4},
		{name: "vector mode", q: vector.Query{Text: "structured logging with slog", Mode: vector.Vector}, first: 3},
		{name: "project filter", q: vector.Query{Text: "bugfix failed", Project: "web"}, only: []uint64{4, 5, 6}},
		{name: "type filter", q: vector.Query{Text: "failed", Types: []string{"decision", "feature"}}, only: []uint64{3, 5}},
		{name: "files filter ignores case", q: vector.Query{Text: "fixed", Files: []string{"SRC/AUTH/"}}, only: []uint64{1}},
		{name: "time filter", q: vector.Query{Text: "failed bugfix", Since: t0.Add(time.Hour), Until: t0.Add(3 * time.Hour)}, only: []uint64{2, 3}},
		{name: "filter matching nothing", q: vector.Query{Text: "login", Project: "nope"}, only: []uint64{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hits := search(t, ix, tt.q)
			got := ids(hits)
			if tt.first != 0 && (len(got) == 0 || got[0] != tt.first) {
				t.Errorf("hits %v, want %d first", got, tt.first)
			}
			if tt.only != nil {
				for _, id := range got {
					if !slices.Contains(tt.only, id) {
						t.Errorf("hits %v, want only ids from %v", got, tt.only)
					}
				}
			}
			for _, h := range hits {
				switch tt.q.Mode {
				case vector.Keyword:
					if h.KeywordRank == 0 || h.VectorRank != 0 {
						t.Errorf("keyword hit %+v", h)
					}
				case vector.Vector:
					if h.VectorRank == 0 || h.KeywordRank != 0 {
						t.Errorf("vector hit %+v", h)
					}
				}
			}
			if !slices.IsSortedFunc(hits, func(a, b vector.Hit) int { return -compareFloat(a.Score, b.Score) }) {
				t.Errorf("hits not sorted by score: %+v", hits)
			}
		})
	}
}

func compareFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func TestIndexHybridRanks(t *testing.T) {
	ix := newTestIndex(t, vector.NewHashEmbedder(), sampleDocs()...)
	hits := search(t, ix, vector.Query{Text: "session token expired handleLoginRequest"})
	if len(hits) == 0 || hits[0].ID != 1 {
		t.Fatalf("hits %+v, want 1 first", hits)
	}
	if hits[0].KeywordRank != 1 || hits[0].VectorRank != 1 {
		t.Errorf("best hit ranks: keyword %d vector %d, want 1 and 1", hits[0].KeywordRank, hits[0].VectorRank)
	}
	// The relevance floor: documents that hold none of the query's words
	// and are not close to it in meaning are left out.
	for _, h := range hits {
		if h.ID == 3 || h.ID == 5 {
			t.Errorf("hit %d shares nothing with the query: %+v", h.ID, hits)
		}
	}
	if all := search(t, ix, vector.Query{Text: "session token expired handleLoginRequest", Mode: vector.Vector}); len(all) != 6 {
		t.Errorf("vector search: %d hits, want all 6: it has no floor", len(all))
	}
}

// A question that nothing answers returns nothing from keyword and hybrid
// search, though its words are common ones some documents hold.
func TestIndexRelevanceFloor(t *testing.T) {
	ix := newTestIndex(t, vector.NewHashEmbedder(), sampleDocs()...)
	for _, mode := range []vector.Mode{vector.Hybrid, vector.Keyword} {
		hits := search(t, ix, vector.Query{Text: "how do we rotate the kubernetes cluster certificates", Mode: mode})
		if len(hits) != 0 {
			t.Errorf("%s: %d hits for a question nothing answers: %+v", mode, len(hits), hits)
		}
		hits = search(t, ix, vector.Query{Text: "unique constraint SQLSTATE 23505", Mode: mode})
		if len(hits) == 0 || hits[0].ID != 2 {
			t.Errorf("%s: %+v, want 2 first", mode, hits)
		}
	}
}

func TestIndexSnippet(t *testing.T) {
	long := strings.Repeat("Unrelated words about the weather and lunch plans. ", 20) +
		"The retry loop in gateway/retry.go ignored Retry-After on HTTP 429 responses. " +
		strings.Repeat("More filler text that says nothing at all here. ", 20)
	ix := newTestIndex(t, vector.NewHashEmbedder(), vector.Doc{ID: 9, Title: "Retry fix", Text: long})
	hits := search(t, ix, vector.Query{Text: "HTTP 429 Retry-After", Mode: vector.Keyword})
	if len(hits) != 1 {
		t.Fatalf("hits %+v", hits)
	}
	if hits[0].ID != 9 {
		t.Fatalf("hits %+v", hits)
	}
	s := ix.Snippets("HTTP 429 Retry-After")("Retry fix", long)
	if !strings.Contains(s, "HTTP 429") || !strings.Contains(s, "Retry-After") {
		t.Errorf("snippet %q does not show the matching terms", s)
	}
	if !strings.HasPrefix(s, "…") || !strings.HasSuffix(s, "…") {
		t.Errorf("snippet %q should be marked as cut on both ends", s)
	}
	if n := len([]rune(s)); n > 200 {
		t.Errorf("snippet has %d runes: %q", n, s)
	}
	if strings.Contains(s, "  ") || strings.Contains(s, "\n") {
		t.Errorf("snippet %q has uncollapsed whitespace", s)
	}
}

func TestIndexVectors(t *testing.T) {
	ctx := context.Background()
	e := &countingEmbedder{Embedder: vector.NewHashEmbedder()}
	ix := vector.NewIndex(e)
	docs := sampleDocs()
	if err := ix.Add(ctx, docs...); err != nil {
		t.Fatal(err)
	}
	if got := e.calls.Load(); got != int64(len(docs)) {
		t.Errorf("%d embeddings for %d docs", got, len(docs))
	}
	for _, d := range docs {
		if len(d.Vector) != 512 {
			t.Fatalf("doc %d: Vector has %d values after Add, want 512", d.ID, len(d.Vector))
		}
	}

	t.Run("stored vectors are reused", func(t *testing.T) {
		e2 := &countingEmbedder{Embedder: vector.NewHashEmbedder()}
		ix2 := vector.NewIndex(e2)
		if err := ix2.Add(ctx, docs...); err != nil {
			t.Fatal(err)
		}
		if got := e2.calls.Load(); got != 0 {
			t.Errorf("%d embeddings for docs that carried vectors", got)
		}
		a := ids(search(t, ix, vector.Query{Text: "time zone dates", Mode: vector.Vector}))
		b := ids(search(t, ix2, vector.Query{Text: "time zone dates", Mode: vector.Vector}))
		if !slices.Equal(a, b) {
			t.Errorf("rankings differ: %v and %v", a, b)
		}
	})
	t.Run("unusable vectors are replaced", func(t *testing.T) {
		e3 := &countingEmbedder{Embedder: vector.NewHashEmbedder()}
		bad := []vector.Doc{
			{ID: 1, Title: "short vector", Vector: []float32{1, 0, 0}},
			{ID: 2, Title: "zero vector", Vector: make([]float32, 512)},
		}
		if err := vector.NewIndex(e3).Add(ctx, bad...); err != nil {
			t.Fatal(err)
		}
		if got := e3.calls.Load(); got != 2 {
			t.Errorf("%d embeddings, want 2", got)
		}
		for _, d := range bad {
			if len(d.Vector) != 512 || d.Vector[0] == 1 {
				t.Errorf("doc %d: vector not replaced", d.ID)
			}
		}
	})
	t.Run("nothing to embed", func(t *testing.T) {
		ix := newTestIndex(t, vector.NewHashEmbedder(), vector.Doc{ID: 7, Title: "!!!"}, vector.Doc{ID: 8, Title: "ok words"})
		if ix.Len() != 2 {
			t.Errorf("Len %d, want 2", ix.Len())
		}
		hits := search(t, ix, vector.Query{Text: "words", Mode: vector.Vector})
		if got := ids(hits); !slices.Equal(got, []uint64{8}) {
			t.Errorf("vector hits %v, want [8]", got)
		}
	})
	t.Run("embedding error adds nothing", func(t *testing.T) {
		ix := vector.NewIndex(failingEmbedder{})
		err := ix.Add(ctx, vector.Doc{ID: 1, Title: "a title"})
		if err == nil || ix.Len() != 0 {
			t.Errorf("Add error %v, Len %d; want an error and nothing added", err, ix.Len())
		}
	})
}

type failingEmbedder struct{ vector.HashEmbedder }

func (failingEmbedder) Embed(context.Context, string) ([]float32, error) {
	return nil, errors.New("service down")
}

func TestIndexRemoveAndReplace(t *testing.T) {
	ix := newTestIndex(t, vector.NewHashEmbedder(), sampleDocs()...)
	ix.Remove(1, 999)
	if ix.Len() != 5 {
		t.Errorf("Len %d after removing one, want 5", ix.Len())
	}
	for _, mode := range []vector.Mode{vector.Hybrid, vector.Keyword, vector.Vector} {
		if got := ids(search(t, ix, vector.Query{Text: "handleLoginRequest session", Mode: mode})); slices.Contains(got, 1) {
			t.Errorf("%v search found removed doc: %v", mode, got)
		}
	}
	// Re-adding an id replaces the document.
	err := ix.Add(context.Background(), vector.Doc{ID: 2, Project: "api", Title: "Migration rewritten", Text: "now uses goose"})
	if err != nil {
		t.Fatal(err)
	}
	if ix.Len() != 5 {
		t.Errorf("Len %d after replacing, want 5", ix.Len())
	}
	if got := ids(search(t, ix, vector.Query{Text: "SQLSTATE 23505", Mode: vector.Keyword})); len(got) != 0 {
		t.Errorf("old text still found: %v", got)
	}
	if got := ids(search(t, ix, vector.Query{Text: "goose"})); len(got) == 0 || got[0] != 2 {
		t.Errorf("new text not found first: %v", got)
	}
}

// TestIndexChurn removes and re-adds many documents, so that dead postings are
// compacted and slots reused, and checks searches against a plain model.
func TestIndexChurn(t *testing.T) {
	ctx := context.Background()
	ix := vector.NewIndex(vector.NewHashEmbedder())
	rng := rand.New(rand.NewPCG(1, 2))
	live := map[uint64]string{}
	// word gives each id a plain word of its own that no stemming changes.
	word := func(id uint64) string {
		w := []byte("w")
		for _, c := range fmt.Sprint(id) {
			w = append(w, "bcfhjkmnpq"[c-'0'])
		}
		return string(w) + "x"
	}
	for round := range 5 {
		var docs []vector.Doc
		for range 300 {
			id := uint64(rng.IntN(600))
			live[id] = word(id)
			docs = append(docs, vector.Doc{ID: id, Project: "p", Title: word(id), Text: fmt.Sprintf("round %d common text", round)})
		}
		if err := ix.Add(ctx, docs...); err != nil {
			t.Fatal(err)
		}
		var gone []uint64
		for id := range live {
			if rng.IntN(3) == 0 {
				gone = append(gone, id)
				delete(live, id)
			}
		}
		ix.Remove(gone...)
		if ix.Len() != len(live) {
			t.Fatalf("round %d: Len %d, want %d", round, ix.Len(), len(live))
		}
		for id := range 600 {
			got := ids(search(t, ix, vector.Query{Text: word(uint64(id)), Mode: vector.Keyword}))
			_, alive := live[uint64(id)]
			if alive != slices.Contains(got, uint64(id)) || len(got) > 1 {
				t.Fatalf("round %d: search for %s = %v, alive %v", round, word(uint64(id)), got, alive)
			}
		}
		all := search(t, ix, vector.Query{Text: "common text", Mode: vector.Keyword, Limit: vector.MaxLimit})
		if len(all) != len(live) {
			t.Fatalf("round %d: %d hits for text every doc has, want %d", round, len(all), len(live))
		}
	}
}

// TestIndexFiltersBeforeCut checks that a selective filter still fills the
// page in every mode, though better matches outside the filter abound.
func TestIndexFiltersBeforeCut(t *testing.T) {
	var docs []vector.Doc
	for i := range 400 {
		d := vector.Doc{ID: uint64(i + 1), Project: "big", Type: "change", Time: t0.Add(time.Duration(i) * time.Minute),
			Title: "cache invalidation on price change", Text: "the product cache is invalidated whenever a price changes"}
		if i%50 == 0 {
			d.Type = "decision"
			d.Title, d.Text = "cache policy", "we decided how long entries live once a price is invalidated"
		}
		docs = append(docs, d)
	}
	docs = append(docs, vector.Doc{ID: 1000, Project: "small", Type: "change", Title: "cache warmup", Text: "warm the cache at start, and again once a price is invalidated"})
	ix := newTestIndex(t, vector.NewHashEmbedder(), docs...)
	for _, mode := range []vector.Mode{vector.Hybrid, vector.Keyword, vector.Vector} {
		t.Run(mode.String(), func(t *testing.T) {
			hits := search(t, ix, vector.Query{Text: "cache invalidated price", Types: []string{"decision"}, Mode: mode, Limit: 5})
			if len(hits) != 5 {
				t.Errorf("type filter: %d hits, want 5", len(hits))
			}
			hits = search(t, ix, vector.Query{Text: "cache invalidated price", Project: "small", Mode: mode})
			if got := ids(hits); !slices.Equal(got, []uint64{1000}) {
				t.Errorf("project filter: %v, want [1000]", got)
			}
			hits = search(t, ix, vector.Query{Text: "cache invalidated price", Since: t0.Add(390 * time.Minute), Mode: mode, Limit: 20})
			if len(hits) != 10 {
				t.Errorf("time filter: %d hits, want the 10 newest", len(hits))
			}
		})
	}
}

func TestIndexListing(t *testing.T) {
	ix := newTestIndex(t, vector.NewHashEmbedder(), sampleDocs()...)
	hits := search(t, ix, vector.Query{Project: "web", Limit: 2})
	if got := ids(hits); !slices.Equal(got, []uint64{6, 5}) {
		t.Errorf("listing %v, want the two newest of web: [6 5]", got)
	}
	if hits[0].Score != 0 {
		t.Errorf("listing hit %+v", hits[0])
	}
}

func TestIndexEmpty(t *testing.T) {
	ix := vector.NewIndex(vector.NewHashEmbedder())
	for _, mode := range []vector.Mode{vector.Hybrid, vector.Keyword, vector.Vector} {
		hits, err := ix.Search(context.Background(), vector.Query{Text: "anything", Mode: mode, Limit: vector.MaxLimit})
		if err != nil || len(hits) != 0 {
			t.Errorf("%v on empty index: %v, %v", mode, hits, err)
		}
	}
	if err := ix.Add(context.Background()); err != nil {
		t.Errorf("Add of nothing: %v", err)
	}
}

func TestIndexBadQuery(t *testing.T) {
	ix := newTestIndex(t, vector.NewHashEmbedder(), sampleDocs()...)
	for _, q := range []vector.Query{
		{Text: "x", Limit: -1},
		{Text: "x", Limit: vector.MaxLimit + 1},
		{Text: "x", Mode: vector.Mode(7)},
	} {
		if _, err := ix.Search(context.Background(), q); !errors.Is(err, vector.ErrBadQuery) {
			t.Errorf("Search(%+v) error %v, want ErrBadQuery", q, err)
		}
	}
}

func TestParseMode(t *testing.T) {
	for in, want := range map[string]vector.Mode{"": vector.Hybrid, "hybrid": vector.Hybrid, "Keyword": vector.Keyword, "vector": vector.Vector, "semantic": vector.Vector} {
		if got, err := vector.ParseMode(in); err != nil || got != want {
			t.Errorf("ParseMode(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := vector.ParseMode("fuzzy"); !errors.Is(err, vector.ErrBadQuery) {
		t.Errorf("ParseMode(fuzzy) error %v", err)
	}
}

func TestIndexConcurrent(t *testing.T) {
	ctx := context.Background()
	ix := newTestIndex(t, vector.NewHashEmbedder(), sampleDocs()...)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := range 50 {
				id := uint64(100 + w*100 + i)
				if err := ix.Add(ctx, vector.Doc{ID: id, Project: "c", Title: fmt.Sprintf("note %d about caching", i)}); err != nil {
					t.Error(err)
					return
				}
				if i%3 == 0 {
					ix.Remove(id)
				}
			}
		}()
		go func() {
			defer wg.Done()
			for range 50 {
				if _, err := ix.Search(ctx, vector.Query{Text: "caching note"}); err != nil {
					t.Error(err)
					return
				}
				_ = ix.Len()
			}
		}()
	}
	wg.Wait()
	if want := 6 + 4*33; ix.Len() != want {
		t.Errorf("Len %d, want %d", ix.Len(), want)
	}
}

// TestIndexPrefilterMatchesExhaustive runs every evaluation query through
// both vector search paths: chromem-go's exhaustive scan and the sign-code
// prefilter. When the prefilter passes every document on (a small store),
// the hits and their similarities are the same; with filters too.
func TestIndexPrefilterMatchesExhaustive(t *testing.T) {
	ctx := context.Background()
	s := loadEvalSet(t, "testdata/eval")
	ix := vector.NewIndex(vector.NewHashEmbedder())
	if err := ix.Add(ctx, s.Docs...); err != nil {
		t.Fatal(err)
	}
	// A document whose vector is not of unit length is normalized alike.
	long := s.Docs[0]
	long.ID, long.Vector = 1000, slices.Clone(s.Docs[0].Vector)
	for i := range long.Vector {
		long.Vector[i] *= 3
	}
	if err := ix.Add(ctx, long); err != nil {
		t.Fatal(err)
	}
	variants := []struct {
		name string
		set  func(q *vector.Query)
	}{
		{"as labelled", func(q *vector.Query) {}},
		{"all projects", func(q *vector.Query) { q.Project = "" }},
		{"bugfixes", func(q *vector.Query) { q.Types = []string{"bugfix"} }},
		{"a file", func(q *vector.Query) { q.Project, q.Files = "", []string{"internal/"} }},
		{"a time window", func(q *vector.Query) { q.Since, q.Until = s.Docs[20].Time, s.Docs[120].Time }},
	}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			for _, eq := range s.Queries {
				q := vector.Query{Text: eq.Query, Project: eq.Project, Limit: 20, Mode: vector.Vector}
				v.set(&q)
				ix.SetPrefilterMin(math.MaxInt)
				want, err := ix.Search(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				ix.SetPrefilterMin(0)
				got, err := ix.Search(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != len(want) {
					t.Fatalf("%q: %d hits with the prefilter, %d without", q.Text, len(got), len(want))
				}
				for i := range want {
					if math.Abs(got[i].Score-want[i].Score) > 1e-5 {
						t.Fatalf("%q hit %d: similarity %.6f with the prefilter, %.6f without", q.Text, i, got[i].Score, want[i].Score)
					}
					// Equal similarities may come in either order.
					if got[i].ID != want[i].ID && math.Abs(got[i].Score-want[(i+1)%len(want)].Score) > 1e-5 && (i == 0 || math.Abs(got[i].Score-want[i-1].Score) > 1e-5) {
						t.Fatalf("%q hit %d: doc %d with the prefilter, %d without", q.Text, i, got[i].ID, want[i].ID)
					}
				}
			}
		})
	}
}

// shortQueryEmbedder embeds documents as the hashing embedder does and
// queries with a vector one value short, as a misconfigured server might.
type shortQueryEmbedder struct{ vector.Embedder }

func (s shortQueryEmbedder) Embed(ctx context.Context, text string) ([]float32, error) {
	v, err := s.Embedder.Embed(ctx, text)
	if err != nil || !strings.HasPrefix(text, "query:") {
		return v, err
	}
	return v[:len(v)-1], nil
}

func TestIndexRefusesAQueryVectorOfAnotherLength(t *testing.T) {
	ctx := context.Background()
	ix := vector.NewIndex(shortQueryEmbedder{vector.NewHashEmbedder()})
	if err := ix.Add(ctx, sampleDocs()...); err != nil {
		t.Fatal(err)
	}
	for _, min := range []int{0, math.MaxInt} { // the prefilter, chromem-go
		ix.SetPrefilterMin(min)
		_, err := ix.Search(ctx, vector.Query{Text: "query: session token", Mode: vector.Vector})
		if err == nil || !strings.Contains(err.Error(), "dimensions for the query") {
			t.Errorf("prefilter from %d: err = %v, want the dimensions named", min, err)
		}
	}
}

// The code of a vector holds two bits per component: the low one for a
// positive component, the high one for a negative one, neither for zero.
func TestSignCode(t *testing.T) {
	negZero := float32(math.Copysign(0, -1))
	v := make([]float32, 40)
	v[0], v[1], v[2], v[3] = 0.5, -0.25, 0, negZero
	v[31], v[32], v[39] = -1e-30, 3, -2
	got := vector.SignCode(v)
	want := []uint64{1<<0 | 1<<3 | 1<<63, 1<<0 | 1<<15}
	if !slices.Equal(got, want) {
		t.Errorf("SignCode = %#x, want %#x", got, want)
	}
}
