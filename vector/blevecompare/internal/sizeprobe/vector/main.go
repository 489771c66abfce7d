// Command vector is a binary-size probe: it indexes and searches one memory
// with Mnemo's vector package, as the daemon links it.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/mnemo-dev/mnemo/vector"
)

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	ix := vector.NewIndex(vector.NewHashEmbedder())
	if err := ix.Add(ctx, vector.Doc{ID: 1, Project: "p", Title: "roundHalfEven", Text: "rounding of invoice totals"}); err != nil {
		return err
	}
	hits, err := ix.Search(ctx, vector.Query{Text: "rounding", Mode: vector.Keyword})
	fmt.Fprintln(os.Stderr, len(hits))
	return err
}
