package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/client"
	"github.com/mnemo-dev/mnemo/memory/store"
)

func exportTo(ctx context.Context, mem *store.Memory, p memory.ExportParams) (memory.ExportResult, error) {
	tmp, err := os.CreateTemp(filepath.Dir(p.Path), ".mnemo-export-*")
	if err != nil {
		return memory.ExportResult{}, &memory.FieldError{Field: "path", Reason: err.Error()}
	}
	defer os.Remove(tmp.Name())
	n, err := mem.Export(ctx, tmp, p.Vectors)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), p.Path)
	}
	return memory.ExportResult{Records: n}, err
}

func importFrom(ctx context.Context, mem *store.Memory, p memory.ImportParams) (memory.ImportResult, error) {
	f, err := os.Open(p.Path)
	if err != nil {
		return memory.ImportResult{}, &memory.FieldError{Field: "path", Reason: err.Error()}
	}
	defer f.Close()
	done := bulkWork() // gc.go
	res, err := mem.Import(ctx, f, nil)
	done()
	if err != nil {
		return res, &memory.FieldError{Field: "path", Reason: err.Error()}
	}
	return res, nil
}

func exportCommand() *cli.Command {
	return &cli.Command{
		Name:      "export",
		Usage:     "write every session, prompt, observation and summary as JSON lines",
		ArgsUsage: "<file>",
		Flags:     []cli.Flag{&cli.BoolFlag{Name: "vectors", Usage: "include the embedding vectors"}},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return fmt.Errorf("export takes the file to write")
			}
			path, err := filepath.Abs(c.Args().First())
			if err != nil {
				return err
			}
			return call(c, bind((*client.Client).Export, memory.ExportParams{Path: path, Vectors: c.Bool("vectors")}), func(w io.Writer, r *memory.ExportResult) error {
				_, err := fmt.Fprintf(w, "%d records written to %s\n", r.Records, path)
				return err
			})
		},
	}
}

func importCommand() *cli.Command {
	return &cli.Command{
		Name:      "import",
		Usage:     "read an export (sessions already here are kept; nothing is stored twice)",
		ArgsUsage: "<file>",
		// `mnemo import claude-mem` reads claude-mem's database (claudemem.go).
		Subcommands: []*cli.Command{importClaudeMemCommand()},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return fmt.Errorf("import takes the file to read")
			}
			path, err := filepath.Abs(c.Args().First())
			if err != nil {
				return err
			}
			return call(c, bind((*client.Client).Import, memory.ImportParams{Path: path}), func(w io.Writer, r *memory.ImportResult) error {
				_, err := fmt.Fprintf(w, "imported %d sessions, %d prompts, %d observations, %d summaries (%d duplicates skipped)\n",
					r.Sessions, r.Prompts, r.Observations, r.Summaries, r.Duplicates)
				return err
			})
		},
	}
}
