package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mnemo-dev/mnemo/cmd/internal/daemon"
	"github.com/mnemo-dev/mnemo/rpc"
)

func serveCommand() *cli.Command {
	return &cli.Command{
		Name:  "serve",
		Usage: "serve an editor over stdio (a language server; the VS Code extension runs this)",
		Description: "With --remote=auto (the default) the editor's session is forwarded to the shared\n" +
			"daemon, which is started when needed. With --remote=none this process opens the\n" +
			"data directory itself (tests, or a single editor with nothing else running).",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "stdio", Usage: "talk LSP over stdin/stdout (the only transport; accepted because language clients add it)"},
			&cli.StringFlag{Name: "remote", Value: "auto", Usage: "auto: forward to the daemon; none: serve in this process"},
			&cli.StringFlag{Name: "log-file", Usage: "log here instead of stderr"},
		},
		Action: func(c *cli.Context) error {
			home, err := homeDir(c)
			if err != nil {
				return err
			}
			var logw io.Writer = c.App.ErrWriter
			if p := c.String("log-file"); p != "" {
				f, err := openLogFile(p)
				if err != nil {
					return fmt.Errorf("open log file: %w", err)
				}
				defer f.Close()
				logw = f
			}
			log := newLogger(c, logw)
			stdio := rpc.Stdio()
			switch c.String("remote") {
			case "none":
				return serveInProcess(c.Context, home, log, stdio)
			case "auto", "":
				return serveForwarded(c.Context, home, log, stdio)
			default:
				return fmt.Errorf("--remote=%q: want auto or none", c.String("remote"))
			}
		},
	}
}

// serveInProcess opens the data directory and serves one editor
// connection on rwc. It returns exitCode 0 after shutdown+exit, 1 for an
// exit without shutdown or a closed stream (LSP).
func serveInProcess(ctx context.Context, home string, log *slog.Logger, rwc io.ReadWriteCloser) error {
	m := &daemon.Main{Home: home, Logger: log}
	if err := m.Open(ctx); err != nil {
		return err
	}
	defer m.Close()
	if m.ServeConn(ctx, rwc) {
		return exitCode(0)
	}
	return exitCode(1)
}

// serveForwarded forwards the editor's connection to the daemon, starting
// the daemon when needed.
func serveForwarded(ctx context.Context, home string, log *slog.Logger, rwc io.ReadWriteCloser) error {
	o, err := connectOptions(home, log, rpc.ClientServe, true)
	if err != nil {
		return err
	}
	d, err := rpc.ConnectConn(ctx, o)
	if err != nil {
		return err
	}
	// A daemon that goes (an upgrade's hand-over, a crash) is replaced
	// under the editor: this sidecar connects again, resuming the session,
	// and a newer daemon serves it.
	err = rpc.ForwardResuming(ctx, rwc, d, func(ctx context.Context) (io.ReadWriteCloser, error) {
		return resumeConn(ctx, o)
	}, log)
	if err != nil {
		log.Warn("forwarding ended", "err", err)
	}
	return nil
}

func defaultLogPath(home, name string) string { return filepath.Join(home, "logs", name+".log") }

// resumeWait is how long a sidecar whose daemon went waits for another
// client to start the next one before it starts one itself.
const resumeWait = 2 * time.Second

// resumeConn connects a sidecar whose daemon went to the next one, as a
// client resuming its session (served by a newer daemon). A daemon that
// went in a hand-over is being replaced by the newer client that asked it
// to go: the sidecar waits for that one (resumeWait) rather than start
// its own, which may be older (an editor's own copy of mnemo) and would be
// asked to go in turn. Then, as after a crash, it starts one.
func resumeConn(ctx context.Context, o rpc.ConnectOptions) (net.Conn, error) {
	o.Resume = true
	wait := o
	wait.Command, wait.CommandFunc = nil, nil
	until := time.Now().Add(resumeWait)
	for {
		nc, err := rpc.ConnectConn(ctx, wait)
		if err == nil || !errors.Is(err, rpc.ErrNoDaemon) || time.Now().After(until) {
			if err == nil || !errors.Is(err, rpc.ErrNoDaemon) {
				return nc, err
			}
			break
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return rpc.ConnectConn(ctx, o)
}
