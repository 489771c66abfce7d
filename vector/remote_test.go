package vector_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/vector"
)

// embeddingServer stands in for Ollama and OpenAI-compatible servers on
// loopback: it embeds a text as its letter counts over a, b, c, d.
func embeddingServer(t *testing.T, delay time.Duration) *httptest.Server {
	t.Helper()
	vec := func(text string) []float32 {
		v := []float32{1, 0, 0, 0}
		for _, r := range strings.ToLower(text) {
			if r >= 'a' && r <= 'd' {
				v[r-'a'] += 2
			}
		}
		return v
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Model, Prompt, Input string }
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model != "m" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
		switch r.URL.Path {
		case "/api/embeddings":
			json.NewEncoder(w).Encode(map[string]any{"embedding": vec(req.Prompt)})
		case "/v1/embeddings":
			json.NewEncoder(w).Encode(map[string]any{"data": []any{map[string]any{"embedding": vec(req.Input)}}})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestRemoteEmbedders(t *testing.T) {
	ctx := context.Background()
	srv := embeddingServer(t, 0)
	open := map[string]func(ctx context.Context, model string) (vector.Embedder, error){
		"ollama": func(ctx context.Context, model string) (vector.Embedder, error) {
			return vector.OpenOllama(ctx, srv.URL+"/api", model)
		},
		"openai-compat": func(ctx context.Context, model string) (vector.Embedder, error) {
			return vector.OpenOpenAICompat(ctx, srv.URL+"/v1", "", model)
		},
	}
	for name, open := range open {
		t.Run(name, func(t *testing.T) {
			e, err := open(ctx, "m")
			if err != nil {
				t.Fatal(err)
			}
			if e.Dim() != 4 || e.ID() != name+":m/4" {
				t.Errorf("Dim %d ID %q", e.Dim(), e.ID())
			}
			v, err := e.Embed(ctx, "abba")
			if err != nil {
				t.Fatal(err)
			}
			var ss float64
			for _, x := range v {
				ss += float64(x) * float64(x)
			}
			if math.Abs(ss-1) > 1e-5 {
				t.Errorf("vector %v is not unit length", v)
			}
			if _, err := e.Embed(ctx, " "); !errors.Is(err, vector.ErrNoText) {
				t.Errorf("blank text: %v, want ErrNoText", err)
			}
			// An index over a remote embedder.
			ix := newTestIndex(t, e, vector.Doc{ID: 1, Title: "aaaa"}, vector.Doc{ID: 2, Title: "dddd"})
			if got := ids(search(t, ix, vector.Query{Text: "ddd", Mode: vector.Vector})); len(got) == 0 || got[0] != 2 {
				t.Errorf("vector hits %v, want 2 first", got)
			}
			if _, err := open(ctx, "unknown-model"); err == nil {
				t.Error("opening an unknown model succeeded")
			}
		})
	}
}

func TestRemoteEmbedderDeadline(t *testing.T) {
	srv := embeddingServer(t, 2*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := vector.OpenOllama(ctx, srv.URL+"/api", "m")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v, want the deadline", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("took %v despite a 100ms deadline", d)
	}
}
