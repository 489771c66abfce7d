package main

import (
	"context"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mnemo-dev/mnemo/cmd/internal/daemon"
	"github.com/mnemo-dev/mnemo/memory/client"
)

func daemonCommand() *cli.Command {
	return &cli.Command{
		Name:  "daemon",
		Usage: "run the daemon that owns the memory (clients start it when needed)",
		Flags: []cli.Flag{
			&cli.DurationFlag{Name: "idle-timeout", Value: daemon.DefaultIdleTimeout, Usage: "exit after this long with no client and no queued work (0: never)", EnvVars: []string{"MNEMO_IDLE_TIMEOUT"}},
			&cli.StringFlag{Name: "log-file", Usage: "log here (default: stderr)"},
			&cli.DurationFlag{Name: "binary-check", Value: time.Minute, Usage: "how often to check whether the mnemo binary was replaced (an upgrade): then the daemon exits once no client is connected, and the next client starts the new one (0: never)", EnvVars: []string{"MNEMO_BINARY_CHECK"}},
			&cli.DurationFlag{Name: "spool-interval", Value: 10 * time.Second, Usage: "how often to ingest hook events spooled while the daemon runs", EnvVars: []string{"MNEMO_SPOOL_INTERVAL"}},
		},
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				// `mnemo daemon stpo` must not run a daemon.
				return noSuchCommand(c)
			}
			home, err := homeDir(c)
			if err != nil {
				return err
			}
			logw := c.App.ErrWriter
			if p := c.String("log-file"); p != "" {
				f, err := openLogFile(p)
				if err != nil {
					return err
				}
				defer f.Close()
				logw = f
			}
			log := newLogger(c, logw).With("pid", os.Getpid())
			d := &daemon.Daemon{Main: daemon.Main{Home: home, Logger: log, LockWait: 10 * time.Second}, IdleTimeout: c.Duration("idle-timeout"), SpoolInterval: c.Duration("spool-interval"), BinaryCheck: c.Duration("binary-check")}
			return d.Run(c.Context)
		},
		Subcommands: []*cli.Command{
			{
				Name:  "status",
				Usage: "say whether the daemon runs, and its state",
				Action: func(c *cli.Context) error {
					return withDaemon(c, false, func(ctx context.Context, cl *client.Client) error {
						st, err := cl.Status(ctx)
						if err != nil {
							return err
						}
						return printStatus(c.App.Writer, &st)
					})
				},
			},
			{
				Name:  "stop",
				Usage: "stop the daemon (it finishes queued work it can, then closes the store)",
				Action: func(c *cli.Context) error {
					home, err := homeDir(c)
					if err != nil {
						return err
					}
					return stopDaemon(c.Context, home, c.App.Writer)
				},
			},
		},
	}
}
