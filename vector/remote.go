package vector

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	chromem "github.com/philippgille/chromem-go"
)

// RemoteTimeout bounds one call to a remote embedding service when the
// caller's context has no earlier deadline (chromem-go's HTTP clients have no
// timeout of their own).
const RemoteTimeout = 30 * time.Second

// remoteEmbedder is an embedding service reached through chromem-go.
type remoteEmbedder struct {
	id  string
	dim int
	fn  chromem.EmbeddingFunc
}

// OpenOllama returns an embedder that calls an Ollama server's embeddings
// API at baseURL (for example "http://127.0.0.1:11434/api") with model (for
// example "nomic-embed-text"). It embeds one probe text to learn the
// dimension, so it fails early when the server or the model is not there.
func OpenOllama(ctx context.Context, baseURL, model string) (Embedder, error) {
	if model == "" {
		return nil, fmt.Errorf("open ollama: no model given")
	}
	return openRemote(ctx, "ollama:"+model, chromem.NewEmbeddingFuncOllama(model, baseURL))
}

// OpenOpenAICompat returns an embedder that calls an OpenAI-compatible
// embeddings API (LM Studio, vLLM, LiteLLM, Ollama's /v1, …) at baseURL (for
// example "http://127.0.0.1:1234/v1") with model; apiKey may be empty for
// local servers. It embeds one probe text to learn the dimension.
func OpenOpenAICompat(ctx context.Context, baseURL, apiKey, model string) (Embedder, error) {
	if baseURL == "" || model == "" {
		return nil, fmt.Errorf("open openai-compatible embedder: base URL and model are required")
	}
	return openRemote(ctx, "openai-compat:"+model, chromem.NewEmbeddingFuncOpenAICompat(baseURL, apiKey, model, nil))
}

func openRemote(ctx context.Context, name string, fn chromem.EmbeddingFunc) (Embedder, error) {
	r := &remoteEmbedder{fn: fn}
	v, err := r.call(ctx, "dimension probe")
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", name, err)
	}
	r.dim = len(v)
	r.id = name + "/" + strconv.Itoa(r.dim)
	return r, nil
}

// ID implements Embedder: the service kind, the model and the dimension.
func (r *remoteEmbedder) ID() string { return r.id }

// Dim implements Embedder.
func (r *remoteEmbedder) Dim() int { return r.dim }

// Embed implements Embedder.
func (r *remoteEmbedder) Embed(ctx context.Context, text string) ([]float32, error) {
	if strings.TrimSpace(text) == "" {
		return nil, ErrNoText
	}
	v, err := r.call(ctx, text)
	if err != nil {
		return nil, fmt.Errorf("embed with %s: %w", r.id, err)
	}
	if len(v) != r.dim {
		return nil, fmt.Errorf("embed with %s: got %d dimensions, want %d", r.id, len(v), r.dim)
	}
	return v, nil
}

func (r *remoteEmbedder) call(ctx context.Context, text string) ([]float32, error) {
	ctx, cancel := context.WithTimeout(ctx, RemoteTimeout)
	defer cancel()
	v, err := r.fn(ctx, text)
	if err != nil {
		return nil, err
	}
	if len(v) == 0 {
		return nil, fmt.Errorf("empty embedding")
	}
	out := make([]float32, len(v))
	copy(out, v)
	if !normalize(out) {
		return nil, fmt.Errorf("embedding has no length")
	}
	return out, nil
}
