// Command both is a binary-size probe: Mnemo's vector package and bleve in
// one binary, as a daemon that used bleve for keywords would link them.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/blevesearch/bleve/v2"

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
	if _, err := ix.Search(ctx, vector.Query{Text: "rounding", Mode: vector.Vector}); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "bleveprobe")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	idx, err := bleve.New(dir+"/idx", bleve.NewIndexMapping())
	if err != nil {
		return err
	}
	defer idx.Close()
	if err := idx.Index("1", map[string]string{"title": "roundHalfEven", "text": "rounding of invoice totals"}); err != nil {
		return err
	}
	res, err := idx.Search(bleve.NewSearchRequest(bleve.NewMatchQuery("rounding")))
	if err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, res.Total)
	return nil
}
