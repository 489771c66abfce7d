package main

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/client"
	"github.com/mnemo-dev/mnemo/memory/knowledge"
)

// knowledgeCommand prints what a project's records add up to
// (mnemo/knowledge), derived again now unless --stored.
func knowledgeCommand() *cli.Command {
	return &cli.Command{
		Name:  "knowledge",
		Usage: "print what this project's records add up to: how to work here, what keeps failing and what fixed it, files that change together, decisions in force",
		Flags: []cli.Flag{jsonFlag,
			&cli.StringFlag{Name: "project", Usage: "the project (default: this folder's)"},
			&cli.StringFlag{Name: "cwd", Usage: "the working directory (default: this one)"},
			&cli.BoolFlag{Name: "stored", Usage: "print what was derived last (after the last session ended), without deriving it again"},
		},
		Action: func(c *cli.Context) error {
			p := memory.KnowledgeParams{Project: c.String("project"), Cwd: c.String("cwd"), Refresh: !c.Bool("stored")}
			if p.Project == "" && p.Cwd == "" {
				p.Cwd = mustGetwd()
			}
			return call(c, bind((*client.Client).Knowledge, p), printKnowledge)
		},
	}
}

func printKnowledge(w io.Writer, k *memory.Knowledge) error {
	fmt.Fprintf(w, "Project knowledge of %s, derived %s from %d records (ids in brackets: mnemo get <id>)\n",
		k.Project, k.Computed.Local().Format("2006-01-02 15:04"), k.Records)
	if len(k.Lines) == 0 {
		_, err := fmt.Fprintln(w, "\nNothing adds up yet: a command must pass, an error come back in another session, files change together in two sessions, or a decision be made.")
		return err
	}
	kind := ""
	for _, l := range k.Lines {
		if l.Kind != kind {
			fmt.Fprintf(w, "\n%s\n", knowledge.Heading(l.Kind))
			kind = l.Kind
		}
		io.WriteString(w, knowledge.Row(l))
	}
	if len(k.Replaced) > 0 {
		fmt.Fprintf(w, "\nNo longer offered:\n")
		for _, l := range k.Replaced {
			io.WriteString(w, knowledge.Row(l))
		}
	}
	return nil
}
