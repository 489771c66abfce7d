package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/client"
)

// The opt-outs: `mnemo pause` and `mnemo resume` change what a project
// does without (mnemo/pause, mnemo/resume; the daemon keeps it in the
// settings file); MNEMO_PAUSE pauses one session, in the hook.

var pauseFlags = []cli.Flag{
	&cli.StringFlag{Name: "project", Usage: "the project: a folder in it, or its name (default: this folder's)"},
	&cli.BoolFlag{Name: "capture", Usage: "only capture: nothing new is stored from its sessions and editors"},
	&cli.BoolFlag{Name: "inject", Usage: "only injection: no context when a session starts, no memories for its prompts"},
	&cli.BoolFlag{Name: "all", Usage: "capture and injection (the default)"},
	jsonFlag,
}

func pauseCommand(pause bool) *cli.Command {
	name, usage, method := "pause", "stop capturing a project's work, or giving it memory, or both (until mnemo resume)", (*client.Client).Pause
	if !pause {
		name, usage, method = "resume", "undo mnemo pause for a project", (*client.Client).Resume
	}
	return &cli.Command{
		Name:  name,
		Usage: usage,
		Flags: pauseFlags,
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return fmt.Errorf("%s takes no arguments; name the project with --project", name)
			}
			p, err := pauseParams(c)
			if err != nil {
				return err
			}
			return call(c, bind(method, p), func(w io.Writer, r *memory.PauseResult) error {
				switch {
				case r.Pause == (memory.Pause{}):
					fmt.Fprintf(w, "project %s: capture and injection are on\n", r.Project)
				default:
					fmt.Fprintf(w, "project %s: %s paused\n", r.Project, pauseWords(r.Pause))
				}
				return nil
			})
		},
	}
}

// projectFlag reads --project: a folder (cwd, made absolute), else a
// project's name; without it, the working folder.
func projectFlag(c *cli.Context) (cwd, project string, err error) {
	switch p := c.String("project"); {
	case p == "":
		return mustGetwd(), "", nil
	default:
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			abs, err := filepath.Abs(p)
			return abs, "", err
		}
		if strings.ContainsRune(p, filepath.Separator) {
			return "", "", fmt.Errorf("--project %s: no such folder", p)
		}
		return "", p, nil
	}
}

// pauseParams reads --project (a folder, else a project's name) and what
// to pause.
func pauseParams(c *cli.Context) (memory.PauseParams, error) {
	var p memory.PauseParams
	var err error
	if p.Cwd, p.Project, err = projectFlag(c); err != nil {
		return p, err
	}
	capture, inject := c.Bool("capture"), c.Bool("inject")
	switch {
	case c.Bool("all") || capture == inject:
		p.What = memory.PauseAll
	case capture:
		p.What = memory.PauseCapture
	default:
		p.What = memory.PauseInject
	}
	return p, nil
}

// pauseWords says what a pause turns off, for people.
func pauseWords(p memory.Pause) string {
	switch {
	case p.Capture && p.Inject:
		return "capture and injection"
	case p.Capture:
		return "capture"
	case p.Inject:
		return "injection"
	}
	return "nothing"
}
