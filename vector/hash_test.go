package vector_test

import (
	"context"
	"errors"
	"math"
	"sync"
	"testing"

	"github.com/mnemo-dev/mnemo/vector"
)

func TestHashEmbedder(t *testing.T) {
	ctx := context.Background()
	e := vector.NewHashEmbedder()
	if e.ID() != "hash-512-v1" || e.Dim() != 512 {
		t.Fatalf("ID %q Dim %d, want hash-512-v1 and 512", e.ID(), e.Dim())
	}
	embed := func(text string) []float32 {
		t.Helper()
		v, err := e.Embed(ctx, text)
		if err != nil {
			t.Fatalf("Embed(%q): %v", text, err)
		}
		return v
	}

	t.Run("unit length", func(t *testing.T) {
		for _, text := range []string{"fix the login bug in auth.ts", "x", "the of and", "日本語のテキスト", "E0425"} {
			v := embed(text)
			var ss float64
			for _, x := range v {
				ss += float64(x) * float64(x)
			}
			if len(v) != 512 || math.Abs(ss-1) > 1e-5 {
				t.Errorf("Embed(%q): %d dims, squared norm %v", text, len(v), ss)
			}
		}
	})
	t.Run("deterministic", func(t *testing.T) {
		a, b := embed("handleLoginRequest failed"), embed("handleLoginRequest failed")
		if cosine(a, b) < 0.999999 {
			t.Errorf("same text, cosine %v", cosine(a, b))
		}
	})
	t.Run("shared words and identifiers count", func(t *testing.T) {
		doc := embed("Fixed handleLoginRequest returning 401 when the session token expired")
		near := embed("handle login request token expired")
		far := embed("bake a chocolate cake for the party")
		if cn, cf := cosine(doc, near), cosine(doc, far); cn <= cf+0.1 {
			t.Errorf("cosine to related %v, to unrelated %v", cn, cf)
		}
	})
	t.Run("nothing to embed", func(t *testing.T) {
		for _, text := range []string{"", "  ", "!!! ---"} {
			if _, err := e.Embed(ctx, text); !errors.Is(err, vector.ErrNoText) {
				t.Errorf("Embed(%q) error %v, want ErrNoText", text, err)
			}
		}
	})
	t.Run("context", func(t *testing.T) {
		ctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := e.Embed(ctx, "text"); !errors.Is(err, context.Canceled) {
			t.Errorf("error %v, want context.Canceled", err)
		}
	})
	t.Run("concurrent", func(t *testing.T) {
		want := embed("concurrent use of the hashing embedder")
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 50 {
					v, err := e.Embed(ctx, "concurrent use of the hashing embedder")
					if err != nil || cosine(v, want) < 0.999999 {
						t.Errorf("concurrent Embed: %v, cosine %v", err, cosine(v, want))
						return
					}
				}
			}()
		}
		wg.Wait()
	})
}
