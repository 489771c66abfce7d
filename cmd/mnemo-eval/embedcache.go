package main

import (
	"context"
	"crypto/sha256"
	"encoding/gob"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"sync"

	"github.com/mnemo-dev/mnemo/memory/atomicfile"
	"github.com/mnemo-dev/mnemo/vector"
)

// cachedEmbedder keeps the vectors an embedder made, by the hash of their
// text, in a file between runs (-embed-cache): the sentence encoder takes
// seconds a hundred texts on a busy machine, and tuning replays the same
// texts again and again. Its ID is the embedder's: the vectors are that
// embedder's, exactly.
type cachedEmbedder struct {
	vector.Embedder
	file  string
	mu    sync.Mutex
	vecs  map[[32]byte][]float32
	added int
}

// cacheFile is what the cache file holds.
type cacheFile struct {
	Embedder string
	Vectors  map[[32]byte][]float32
}

// newCachedEmbedder reads the cache file of emb, when there is one.
func newCachedEmbedder(emb vector.Embedder, file string) (*cachedEmbedder, error) {
	c := &cachedEmbedder{Embedder: emb, file: file, vecs: map[[32]byte][]float32{}}
	f, err := os.Open(file)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var cf cacheFile
	if err := gob.NewDecoder(f).Decode(&cf); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if cf.Embedder == emb.ID() {
		c.vecs = cf.Vectors
	}
	return c, nil
}

func (c *cachedEmbedder) Embed(ctx context.Context, text string) ([]float32, error) {
	k := sha256.Sum256([]byte(text))
	c.mu.Lock()
	v, ok := c.vecs[k]
	c.mu.Unlock()
	if ok {
		return slices.Clone(v), nil
	}
	v, err := c.Embedder.Embed(ctx, text)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.vecs[k] = slices.Clone(v)
	c.added++
	c.mu.Unlock()
	return v, nil
}

// save writes the cache file when vectors were added.
func (c *cachedEmbedder) save() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.added == 0 {
		return nil
	}
	return atomicfile.Write(c.file, 0o600, func(f *os.File) error {
		return gob.NewEncoder(f).Encode(cacheFile{Embedder: c.ID(), Vectors: c.vecs})
	})
}
