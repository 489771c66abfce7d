package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/client"
)

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
				_, err := fmt.Fprintf(w, "imported %s, %s, %s, %s (%s skipped)\n",
					memory.Count(r.Sessions, "session", "sessions"), memory.Count(r.Prompts, "prompt", "prompts"), memory.Count(r.Observations, "observation", "observations"),
					memory.Count(r.Summaries, "summary", "summaries"), memory.Count(r.Duplicates, "duplicate", "duplicates"))
				return err
			})
		},
	}
}
