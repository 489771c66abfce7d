package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mnemo-dev/mnemo/cmd/internal/daemon"
	"github.com/mnemo-dev/mnemo/rpc"
)

// Run runs the mnemo command line with args and returns the exit status.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	app := newApp(stdin, stdout, stderr)
	onUsageErrors(app)
	err := app.RunContext(ctx, flagsFirst(app, args))
	var code exitCode
	switch {
	case err == nil:
		return 0
	case errors.As(err, &code):
		return int(code)
	default:
		fmt.Fprintf(stderr, "mnemo: %s\n", inWords(err))
		return 1
	}
}

// inWords is err as a person reads it: the daemon's answer to bad input
// or to a record that does not exist without JSON-RPC's name for it
// ("invalid params: ", "not found: "), which the exit status carries.
func inWords(err error) string {
	msg := err.Error()
	if e, ok := errors.AsType[*rpc.Error](err); ok && (e.Code == rpc.CodeInvalidParams || e.Code == rpc.CodeNotFound) {
		msg = strings.Replace(msg, e.Message, strings.TrimPrefix(e.Message, e.Code.String()+": "), 1)
	}
	return msg
}

func newApp(stdin io.Reader, stdout, stderr io.Writer) *cli.App {
	return &cli.App{
		Name:      "mnemo",
		Usage:     "persistent memory for coding agents and editors",
		Version:   daemon.Version,
		Reader:    stdin,
		Writer:    stdout,
		ErrWriter: stderr,
		// Errors are printed once, by Run; cli must not call os.Exit.
		ExitErrHandler: func(*cli.Context, error) {},
		// A word that names no command: did you mean…? (suggest.go)
		Action: noSuchCommand,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "home", Usage: "the Mnemo home (default: $MNEMO_HOME, else ${XDG_DATA_HOME:-~/.local/share}/mnemo; Windows: %LocalAppData%\\mnemo)"},
			&cli.StringFlag{Name: "log-level", Value: "info", Usage: "debug, info, warn or error", EnvVars: []string{"MNEMO_LOG_LEVEL"}},
		},
		Commands: []*cli.Command{
			serveCommand(),
			daemonCommand(),
			mcpCommand(),
			setupCommand(),
			installCommand(),
			uninstallCommand(),
			modelCommand(),
			reindexCommand(),
			exportCommand(),
			importCommand(),
			backfillCommand(),
			uiCommand(),
			searchCommand(),
			timelineCommand(),
			getCommand(),
			rememberCommand(),
			correctCommand(),
			pinCommand(true),
			pinCommand(false),
			wrongCommand(),
			reviewCommand(),
			keepCommand(),
			forgetCommand(),
			pauseCommand(true),
			pauseCommand(false),
			teamCommand(),
			contextCommand(),
			knowledgeCommand(),
			sessionsCommand(),
			statusCommand(),
			doctorCommand(),
			evalCommand(),
			recoverCommand(),
			demoCommand(),
		},
	}
}
