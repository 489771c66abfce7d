package main

import (
	"context"
	"fmt"

	"github.com/mnemo-dev/mnemo/vector"
	"github.com/mnemo-dev/mnemo/vector/internal/evalset"
)

// corpus makes n realistic memories from the evaluation set, as the vector
// package's benchmarks do (evalset.Corpus), with the hashing embedder's
// vectors set before any timing, as the daemon loads them from Badger.
func corpus(ctx context.Context, s *evalset.Set, n int) ([]vector.Doc, error) {
	docs := s.Corpus(n)
	if err := evalset.Embed(ctx, vector.NewHashEmbedder(), docs); err != nil {
		return nil, fmt.Errorf("corpus: %w", err)
	}
	return docs, nil
}
