package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mnemo-dev/mnemo/cmd/internal/daemon"
	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/client"
	"github.com/mnemo-dev/mnemo/memory/team"
)

// Team memory (docs/team.md): `mnemo team join|leave|status` ask the
// daemon (mnemo/teamJoin, teamLeave, teamStatus), which keeps the server
// and the shared projects in its settings file and runs team.Sync.

func teamCommand() *cli.Command {
	projectFlag := &cli.StringFlag{Name: "project", Usage: "the project: a folder in it, or its name (default: this folder's)"}
	return &cli.Command{
		Name:   "team",
		Usage:  "share a project's memory with your other machines or a team, through PostgreSQL",
		Action: noSuchCommand,
		Subcommands: []*cli.Command{
			{
				Name:      "join",
				Usage:     "share a project through a PostgreSQL server (the URL, else $MNEMO_TEAM_URL)",
				ArgsUsage: "[postgres://user:password@host:5432/db?sslmode=verify-full]",
				Flags: []cli.Flag{projectFlag, jsonFlag,
					&cli.StringFlag{Name: "author", Usage: "your name on what you share (default: the teamAuthor setting, else $USER@host)"}},
				Action: func(c *cli.Context) error {
					if c.NArg() > 1 {
						return fmt.Errorf("team join takes one connection string")
					}
					p, err := teamParams(c)
					if err != nil {
						return err
					}
					p.URL, p.Author = c.Args().First(), c.String("author")
					if p.URL == "" {
						p.URL, p.FromEnv = os.Getenv("MNEMO_TEAM_URL"), true
					}
					if p.URL == "" {
						return fmt.Errorf("team join: give the server's connection string, or set MNEMO_TEAM_URL")
					}
					return call(c, bind((*client.Client).TeamJoin, p), printTeam)
				},
			},
			{
				Name:  "leave",
				Usage: "stop sharing a project (records that arrived stay)",
				Flags: []cli.Flag{projectFlag, jsonFlag, &cli.BoolFlag{Name: "all", Usage: "every project, and forget the server"}},
				Action: func(c *cli.Context) error {
					p, err := teamParams(c)
					if err != nil {
						return err
					}
					p.All = c.Bool("all")
					return call(c, bind((*client.Client).TeamLeave, p), printTeam)
				},
			},
			{
				Name:  "status",
				Usage: "show the server (password hidden), the shared projects and how the link is",
				Flags: []cli.Flag{jsonFlag},
				Action: func(c *cli.Context) error {
					return call(c, (*client.Client).TeamStatus, printTeam)
				},
			},
		},
	}
}

// teamParams reads --project: a folder, else a project's name.
func teamParams(c *cli.Context) (memory.TeamParams, error) {
	var p memory.TeamParams
	var err error
	p.Cwd, p.Project, err = projectFlag(c)
	return p, err
}

func printTeam(w io.Writer, s *memory.TeamStatus) error {
	if s.Server == "" {
		fmt.Fprintln(w, "team memory is off (mnemo team join <postgres-url> shares this project)")
		return nil
	}
	link := "connected"
	if !s.Connected {
		link = "not connected"
		if s.LastError != "" {
			link += ": " + s.LastError
		}
	}
	fmt.Fprintf(w, "server    %s (%s)\n", s.Server, link)
	fmt.Fprintf(w, "projects  %s\n", strings.Join(s.Projects, ", "))
	fmt.Fprintf(w, "author    %s on machine %s\n", s.Author, s.Machine)
	fmt.Fprintf(w, "outbox    %d waiting", s.Outbox)
	if s.Queued > 0 {
		fmt.Fprintf(w, " (%d existing records queued by this join)", s.Queued)
	}
	fmt.Fprintln(w)
	when := func(t time.Time) string {
		if t.IsZero() {
			return "never"
		}
		return t.Local().Format("2006-01-02 15:04:05")
	}
	fmt.Fprintf(w, "pushed    %d (last %s)\n", s.Pushed, when(s.LastPush))
	fmt.Fprintf(w, "arrived   %d (last pull %s)\n", s.Arrived, when(s.LastPull))
	if s.Skipped > 0 {
		fmt.Fprintf(w, "skipped   %d records too big to share\n", s.Skipped)
	}
	return nil
}

// authorFilter reads search's --author, --mine and --team.
func authorFilter(c *cli.Context) (string, error) {
	n := 0
	out := c.String("author")
	if out != "" {
		n++
	}
	if c.Bool("mine") {
		n, out = n+1, memory.AuthorMine
	}
	if c.Bool("team") {
		n, out = n+1, memory.AuthorTeam
	}
	if n > 1 {
		return "", fmt.Errorf("give one of --author, --mine and --team")
	}
	return out, nil
}

// checkTeam is doctor's check of the link: the server answers with a
// schema this Mnemo knows, and the daemon's outbox is not stuck.
func checkTeam(c *cli.Context, w io.Writer, cfg daemon.Config) bool {
	ctx, cancel := context.WithTimeout(c.Context, 15*time.Second)
	defer cancel()
	server := memory.RedactURL(cfg.TeamURL)
	if _, err := team.Check(ctx, cfg.TeamURL); err != nil {
		fmt.Fprintf(w, "team         %s does not serve: %v\n", server, err)
		return false
	}
	var st memory.TeamStatus
	err := withDaemon(c, true, func(ctx context.Context, cl *client.Client) error {
		var err error
		st, err = cl.TeamStatus(ctx)
		return err
	})
	if err != nil {
		fmt.Fprintf(w, "team         %s answers; the daemon's state is unknown: %v\n", server, err)
		return false
	}
	fmt.Fprintf(w, "team         %s answers (schema %d); projects %s; outbox %d waiting", server, team.SchemaVersion, strings.Join(st.Projects, ", "), st.Outbox)
	if !st.Connected && st.LastError != "" {
		fmt.Fprintf(w, "; the daemon's last error: %s\n", st.LastError)
		return false
	}
	fmt.Fprintln(w)
	return true
}
