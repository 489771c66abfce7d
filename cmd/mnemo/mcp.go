package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/urfave/cli/v2"

	"github.com/mnemo-dev/mnemo/adapters/hosts"
	"github.com/mnemo-dev/mnemo/adapters/mcp"
	"github.com/mnemo-dev/mnemo/cmd/internal/daemon"
	"github.com/mnemo-dev/mnemo/rpc"
)

func mcpCommand() *cli.Command {
	return &cli.Command{
		Name:  "mcp",
		Usage: "serve memory tools to an agent over MCP (stdio): search, timeline, get_observations, save_memory, correct_memory, pin_memory, forget",
		Description: "A Model Context Protocol server on stdin/stdout, a client of the daemon (started when\n" +
			"needed). Claude Code runs it from the plugin's .mcp.json, or from ~/.claude.json after\n" +
			"`mnemo install claude-code`. It logs to <home>/logs/mcp.log, never to stdout.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "log-file", Usage: "log here (default: <home>/logs/mcp.log)"},
			&cli.StringFlag{Name: "project", Usage: "the default project for save_memory (default: this folder's)"},
		},
		Action: func(c *cli.Context) error {
			home, err := homeDir(c)
			if err != nil {
				return err
			}
			logPath := c.String("log-file")
			if logPath == "" {
				logPath = defaultLogPath(home, "mcp")
			}
			f, err := openLogFile(logPath)
			if err != nil {
				return fmt.Errorf("open log file: %w", err)
			}
			defer f.Close()
			log := newLogger(c, f).With("pid", os.Getpid())

			// After its first connection the server carries on a session:
			// a daemon that went (an upgrade's hand-over) is replaced as
			// under an editor's sidecar (resumeConn), and a newer daemon
			// serves this older server until the agent restarts it.
			var connected atomic.Bool
			dc := mcp.NewDaemonClient(func(ctx context.Context) (*rpc.Client, error) {
				if !connected.Load() {
					cl, err := connectDaemon(ctx, home, log, rpc.ClientMCP, true)
					connected.Store(err == nil)
					return cl, err
				}
				o, err := connectOptions(home, log, rpc.ClientMCP, true)
				if err != nil {
					return nil, err
				}
				nc, err := resumeConn(ctx, o)
				if err != nil {
					return nil, err
				}
				return rpc.NewClient(nc, nil), nil
			}, log)
			defer dc.Close()
			// Warm the daemon before the first tool call; a failure here is
			// not fatal: every call dials again.
			warm, cancel := context.WithTimeout(c.Context, 10*time.Second)
			if err := dc.Connect(warm); err != nil {
				log.Warn("daemon not reachable at start; tools retry on each call", "err", err)
			}
			cancel()

			srv := mcp.NewServer(dc, mcp.Options{
				Cwd:     mustGetwd(),
				Project: c.String("project"),
				Version: daemon.Version,
				DaemonHelp: fmt.Sprintf("If it keeps failing, the user can run `mnemo daemon status` and `mnemo doctor`, "+
					"and read %s and %s.", defaultLogPath(home, "daemon"), defaultLogPath(home, "daemon-start")),
				Logger: log,
				Hosts:  hosts.Names(),
			})
			log.Info("mcp serving", "home", home, "version", daemon.Version)
			err = srv.Run(c.Context, &sdk.StdioTransport{})
			switch {
			case err == nil, errors.Is(err, io.EOF), c.Context.Err() != nil:
				log.Info("mcp stopped", "err", err)
				return nil
			default:
				log.Error("mcp stopped", "err", err)
				return err
			}
		},
	}
}
