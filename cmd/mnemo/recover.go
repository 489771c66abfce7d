package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mnemo-dev/mnemo/cmd/internal/daemon"
	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/client"
	"github.com/mnemo-dev/mnemo/rpc"
)

func recoverCommand() *cli.Command {
	return &cli.Command{
		Name:  "recover",
		Usage: "rescue what can be read of a damaged store into a fresh one, keeping the damaged one aside",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "force", Usage: "copy the store into a fresh one even when it reads as sound"},
		},
		Action: func(c *cli.Context) error {
			home, err := homeDir(c)
			if err != nil {
				return err
			}
			if _, err := runningStatus(c.Context, home); !errors.Is(err, rpc.ErrNoDaemon) {
				if err == nil {
					return fmt.Errorf("a daemon runs for %s, so its store opened; `mnemo doctor` checks it, and `mnemo daemon stop` first lets recover copy it anyway (--force)", home)
				}
				return err
			}
			w := c.App.Writer
			verr := daemon.VerifyStore(home)
			switch {
			case verr == nil && !c.Bool("force"):
				fmt.Fprintf(w, "the store in %s reads whole: nothing to recover (--force copies it into a fresh one anyway)\n", daemon.StoreDir(home))
				return nil
			case verr != nil && !errors.Is(verr, daemon.ErrDamaged):
				return verr
			case verr != nil:
				fmt.Fprintf(w, "%v\n", verr)
			}
			rep, err := daemon.Recover(home, time.Now())
			if err != nil {
				return err
			}
			if verr == nil {
				// --force on a store that reads whole: it is not damaged.
				fmt.Fprintf(w, "the old store is kept, whole, in %s\n", rep.Aside)
			} else {
				fmt.Fprintf(w, "the damaged store is kept, whole, in %s\n", rep.Aside)
			}
			fmt.Fprintf(w, "rescued %s into a fresh store", memory.Count(rep.Keys, "key", "keys"))
			if rep.Tables {
				fmt.Fprint(w, " (read table by table: Badger could not open the store)")
			}
			fmt.Fprintln(w)
			if rep.Lost > 0 {
				fmt.Fprintf(w, "could not read %s\n", memory.Count(rep.Lost, "value", "values"))
			}
			for _, u := range rep.Unread {
				fmt.Fprintf(w, "  unread: %s\n", u)
			}
			// The new daemon opens the fresh store, rebuilds the search
			// index and ingests the hooks' spool.
			return withDaemon(c, true, func(ctx context.Context, cl *client.Client) error {
				st, err := cl.Status(ctx)
				if err != nil {
					return err
				}
				fmt.Fprintf(w, "the daemon runs on it: %s, %s, %s, %s (the hooks' spool ingested)\n",
					memory.Count(st.Counts.Observations, "observation", "observations"), memory.Count(st.Counts.Summaries, "summary", "summaries"),
					memory.Count(st.Counts.Sessions, "session", "sessions"), memory.Count(st.Counts.Prompts, "prompt", "prompts"))
				doc, err := cl.Doctor(ctx)
				if err != nil {
					return err
				}
				if len(doc.Problems) > 0 {
					fmt.Fprintf(w, "mnemo doctor finds %s in what was rescued:\n", memory.Count(len(doc.Problems), "problem", "problems"))
					for _, p := range doc.Problems {
						fmt.Fprintf(w, "  [%s] %s\n", p.Check, p.Detail)
					}
				}
				return nil
			})
		},
	}
}
