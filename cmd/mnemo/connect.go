package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mnemo-dev/mnemo/cmd/internal/daemon"
	"github.com/mnemo-dev/mnemo/memory/client"
	"github.com/mnemo-dev/mnemo/rpc"
)

// What every command shares: its home and its log, how it reaches the
// daemon, how it prints a method's result, and how it sets its exit status.

// homeDir is --home, else rpc.Home(): $MNEMO_HOME, else
// ${XDG_DATA_HOME:-~/.local/share}/mnemo (on Windows %LocalAppData%\mnemo).
func homeDir(c *cli.Context) (string, error) {
	if h := c.String("home"); h != "" {
		return filepath.Abs(h)
	}
	return rpc.Home()
}

// newLogger logs to w at the level named by --log-level. Logs never go to
// stdout: stdout carries protocol frames.
func newLogger(c *cli.Context, w io.Writer) *slog.Logger {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.String("log-level"))); err != nil {
		level = slog.LevelInfo
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}

// openLogFile opens (appending) a log file, creating its folder.
func openLogFile(path string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	return os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
}

func mustGetwd() string {
	wd, err := os.Getwd()
	if err != nil {
		return "."
	}
	return wd
}

// connectOptions say how this program reaches the daemon of home as a
// client of the given kind (rpc.ClientCLI…), starting it with this mnemo
// binary when start is true.
func connectOptions(home string, log *slog.Logger, kind string, start bool) (rpc.ConnectOptions, error) {
	o := rpc.ConnectOptions{Home: home, Client: kind, Logger: log, Version: daemon.Version}
	if start {
		exe, err := os.Executable()
		if err != nil {
			return o, fmt.Errorf("find the mnemo binary: %w", err)
		}
		o.Command = rpc.DaemonCommand(exe, home)
	}
	return o, nil
}

// connectDaemon connects to the daemon of home (rpc.Connect), starting it
// when start is true.
func connectDaemon(ctx context.Context, home string, log *slog.Logger, kind string, start bool) (*rpc.Client, error) {
	o, err := connectOptions(home, log, kind, start)
	if err != nil {
		return nil, err
	}
	return rpc.Connect(ctx, o)
}

// withDaemon runs fn with a client of the daemon.
func withDaemon(c *cli.Context, start bool, fn func(context.Context, *client.Client) error) error {
	home, err := homeDir(c)
	if err != nil {
		return err
	}
	cl, err := connectDaemon(c.Context, home, newLogger(c, c.App.ErrWriter), rpc.ClientCLI, start)
	if errors.Is(err, rpc.ErrDaemonStart) {
		// A daemon that panicked on a damaged store left a stack in its
		// log, not the file: the store is checked here, no one holding it.
		if verr := daemon.VerifyStore(home); errors.Is(verr, daemon.ErrDamaged) {
			return fmt.Errorf("the daemon did not start: %w\n`mnemo recover` rescues what can be read into a fresh store and keeps the damaged one aside; `mnemo doctor` says what is damaged", verr)
		}
	}
	if errors.Is(err, rpc.ErrNoDaemon) {
		return fmt.Errorf("%w\nNo Mnemo daemon runs for %s; any mnemo command that needs one starts it (e.g. `mnemo status`)", err, home)
	}
	if err != nil {
		return err
	}
	defer cl.Close()
	err = fn(c.Context, client.New(cl))
	if rpc.CodeOf(err) == rpc.CodeInternal {
		// The daemon keeps the details of its failures to its log.
		return fmt.Errorf("%w (the daemon's log says why: %s)", err, filepath.Join(home, "logs", "daemon.log"))
	}
	return err
}

// stopDaemon stops the daemon (rpc.Terminate: SIGTERM on Unix, which it
// answers with an orderly shutdown; killed on Windows) and waits up to 10s
// for its process to be gone.
func stopDaemon(ctx context.Context, home string, out interface{ Write([]byte) (int, error) }) error {
	// No version in the hello: an older mnemo stops a newer daemon (what
	// the refusal of a downgrade tells people to do).
	o, err := connectOptions(home, slog.New(slog.DiscardHandler), rpc.ClientCLI, false)
	if err != nil {
		return err
	}
	o.Version = ""
	cl, err := rpc.Connect(ctx, o)
	if errors.Is(err, rpc.ErrNoDaemon) {
		fmt.Fprintln(out, "no daemon running")
		return nil
	}
	if err != nil {
		return err
	}
	st, err := client.New(cl).Status(ctx)
	cl.Close()
	if err != nil {
		return err
	}
	if err := rpc.Terminate(st.PID); err != nil {
		return fmt.Errorf("signal daemon %d: %w", st.PID, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if !rpc.ProcessAlive(st.PID) {
			fmt.Fprintf(out, "daemon %d stopped\n", st.PID)
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return fmt.Errorf("daemon %d is still running after 10s", st.PID)
}

var jsonFlag = &cli.BoolFlag{Name: "json", Usage: "print JSON"}

// call runs one method of the daemon (starting it when needed), given as
// a method expression such as (*client.Client).Sessions, or bound to its
// params with bind, and prints the result: JSON with --json, else through
// text.
func call[R any](c *cli.Context, method func(*client.Client, context.Context) (R, error), text func(io.Writer, *R) error) error {
	return withDaemon(c, true, func(ctx context.Context, cl *client.Client) error {
		res, err := method(cl, ctx)
		if err != nil {
			return err
		}
		if c.Bool("json") {
			enc := json.NewEncoder(c.App.Writer)
			enc.SetIndent("", "  ")
			return enc.Encode(res)
		}
		return text(c.App.Writer, &res)
	})
}

// bind binds a method of the client to its params for call, e.g.
// bind((*client.Client).Search, p).
func bind[P, R any](method func(*client.Client, context.Context, P) (R, error), p P) func(*client.Client, context.Context) (R, error) {
	return func(cl *client.Client, ctx context.Context) (R, error) { return method(cl, ctx, p) }
}

// exitCode is an error that ends the process with a given status.
type exitCode int

func (c exitCode) Error() string { return fmt.Sprintf("exit status %d", int(c)) }
