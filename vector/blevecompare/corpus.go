package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/mnemo-dev/mnemo/vector"
)

// corpus makes n realistic memories from the evaluation set, exactly as
// benchCorpus in vector/bench_test.go does: each is an observation of the
// set, in one of 10 projects, with a fact of its own naming made-up
// functions and files, so that the vocabulary grows with n as a real
// store's does. Vectors come from the hashing embedder and are set before
// any timing, as the daemon loads them from Badger.
func corpus(ctx context.Context, s *evalSet, n int) ([]vector.Doc, error) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	rng := rand.New(rand.NewPCG(uint64(n), 7))
	docs := make([]vector.Doc, n)
	for i := range docs {
		base := s.docs[i%len(s.docs)]
		d := base
		d.ID = uint64(i + 1)
		d.Project = projectName(i)
		d.Time = t0.Add(time.Duration(i) * time.Minute)
		fn := fmt.Sprintf("handle%sRequest%d", []string{"Login", "Invoice", "Refund", "Upload", "Export"}[rng.IntN(5)], rng.IntN(n))
		file := fmt.Sprintf("internal/pkg%d/file%d.go", rng.IntN(200), rng.IntN(n))
		d.Text += fmt.Sprintf("\n%s in %s returned error E%04d after %d ms.", fn, file, rng.IntN(10000), rng.IntN(5000))
		d.Files = append(slices.Clone(base.Files), file)
		docs[i] = d
	}
	e := vector.NewHashEmbedder()
	workers := runtime.GOMAXPROCS(0)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += workers {
				v, err := e.Embed(ctx, docs[i].Title+"\n"+docs[i].Text)
				if err != nil {
					errs[w] = err
					return
				}
				docs[i].Vector = v
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("corpus: embed: %w", err)
		}
	}
	return docs, nil
}

// projectName is the project of the i-th memory of a corpus, and of the i-th
// query searched within a project.
func projectName(i int) string { return fmt.Sprintf("project-%d", i%10) }
