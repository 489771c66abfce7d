package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/atomicfile"
	"github.com/mnemo-dev/mnemo/memory/client"
	"github.com/mnemo-dev/mnemo/memory/store"
)

func exportTo(ctx context.Context, mem *store.Memory, p memory.ExportParams) (memory.ExportResult, error) {
	if p.Format == memory.FormatMarkdown {
		return exportMarkdown(ctx, mem, p)
	}
	var res memory.ExportResult
	err := replaceFile(p.Path, func(w io.Writer) error {
		var err error
		res.Records, err = mem.Export(ctx, w, p.Vectors)
		return err
	})
	return res, err
}

// exportMarkdown writes a document per project into the folder p.Path,
// <project>.md, each replaced whole (replaceFile), so that a reader never
// sees half of one.
func exportMarkdown(ctx context.Context, mem *store.Memory, p memory.ExportParams) (memory.ExportResult, error) {
	if err := os.MkdirAll(p.Path, 0o755); err != nil {
		return memory.ExportResult{}, &memory.FieldError{Field: "path", Reason: err.Error()}
	}
	var res memory.ExportResult
	n, err := mem.ExportMarkdown(ctx, p.Project, func(project string, fill func(io.Writer) error) error {
		name := filepath.Join(p.Path, documentName(project))
		res.Files = append(res.Files, name)
		return replaceFile(name, fill)
	})
	res.Records = n
	return res, err
}

// documentName is a project's markdown file: its name, with what cannot be
// in a file's name replaced.
func documentName(project string) string {
	name := strings.Map(func(r rune) rune {
		switch {
		case r == '/' || r == '\\' || r == 0 || r < ' ':
			return '_'
		}
		return r
	}, project)
	name = strings.TrimLeft(name, ".")
	if name == "" {
		name = "project"
	}
	return name + ".md"
}

// replaceFile writes the file at path whole, the user's alone (0600):
// atomicfile.Write, so path changes only when fill and the writes succeed.
// A temporary file that cannot be made is a bad path (a FieldError).
func replaceFile(path string, fill func(io.Writer) error) error {
	made := false
	err := atomicfile.Write(path, 0o600, func(f *os.File) error {
		made = true
		return fill(f)
	})
	if err != nil && !made {
		return &memory.FieldError{Field: "path", Reason: err.Error()}
	}
	return err
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
		Usage:     "write every session, prompt, observation and summary as JSON lines (lossless), or a readable markdown document per project",
		ArgsUsage: "<file> (JSON lines) | <folder> (markdown)",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "vectors", Usage: "include the embedding vectors (JSON lines)"},
			&cli.StringFlag{Name: "format", Value: memory.FormatJSONL, Usage: "jsonl, or markdown: <folder>/<project>.md for each project, sessions newest first"},
			&cli.StringFlag{Name: "project", Usage: "only this project (markdown)"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return fmt.Errorf("export takes the file (JSON lines) or the folder (markdown) to write")
			}
			path, err := filepath.Abs(c.Args().First())
			if err != nil {
				return err
			}
			p := memory.ExportParams{Path: path, Vectors: c.Bool("vectors"), Format: c.String("format"), Project: c.String("project")}
			return call(c, bind((*client.Client).Export, p), func(w io.Writer, r *memory.ExportResult) error {
				if p.Format != memory.FormatMarkdown {
					_, err := fmt.Fprintf(w, "%d records written to %s\n", r.Records, path)
					return err
				}
				fmt.Fprintf(w, "%d records written in %d documents:\n", r.Records, len(r.Files))
				for _, f := range r.Files {
					fmt.Fprintf(w, "  %s\n", f)
				}
				return nil
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
