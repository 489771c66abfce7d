// Command mnemo is persistent memory for coding agents and editors: the
// daemon that owns the memory, the stdio sidecar editors spawn, and the
// command line people use. This package holds the commands (urfave/cli,
// app.go lists them); what runs the memory is cmd/internal/daemon.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := Run(ctx, os.Args, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
