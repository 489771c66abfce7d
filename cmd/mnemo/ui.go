package main

import (
	"fmt"
	"os/exec"
	"runtime"

	"github.com/urfave/cli/v2"

	"github.com/mnemo-dev/mnemo/memory/client"
	"github.com/mnemo-dev/mnemo/rpc"
)

func uiCommand() *cli.Command {
	return &cli.Command{
		Name:  "ui",
		Usage: "open the memory viewer in the browser (the daemon serves it on 127.0.0.1)",
		Description: "The viewer shows what Mnemo remembers as it is made, finds it, shows a record whole,\n" +
			"previews the next session's context and why, and forgets what is wrong. Its address\n" +
			"carries this user's secret token once; the browser keeps it in a cookie.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "no-open", Usage: "print the address only, on one line, and open nothing"},
		},
		Action: func(c *cli.Context) error {
			home, err := homeDir(c)
			if err != nil {
				return err
			}
			cl, err := connectDaemon(c.Context, home, newLogger(c, c.App.ErrWriter), rpc.ClientCLI, true)
			if err != nil {
				return err
			}
			defer cl.Close()
			res, err := client.New(cl).Viewer(c.Context)
			if err != nil {
				return fmt.Errorf("start the viewer: %w", err)
			}
			if c.Bool("no-open") {
				fmt.Fprintln(c.App.Writer, res.URL)
				return nil
			}
			if err := openBrowser(res.URL); err != nil {
				fmt.Fprintf(c.App.ErrWriter, "mnemo: could not open a browser (%v); open this address:\n", err)
				fmt.Fprintln(c.App.Writer, res.URL)
				return nil
			}
			fmt.Fprintf(c.App.Writer, "opened %s\n", res.URL)
			return nil
		},
	}
}

// openBrowser asks the desktop to open url.
func openBrowser(url string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", url)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		cmd = exec.Command("xdg-open", url)
	}
	return cmd.Run()
}
