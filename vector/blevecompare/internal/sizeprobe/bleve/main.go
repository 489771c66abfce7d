// Command bleve is a binary-size probe: it indexes and searches one memory
// with bleve, in an on-disk scorch index in a temporary folder.
package main

import (
	"fmt"
	"os"

	"github.com/blevesearch/bleve/v2"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run() error {
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
