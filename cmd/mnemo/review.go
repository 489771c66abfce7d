package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/client"
)

// The second look for what aged (mnemo/review): the records whose file
// changed since and that nothing confirmed for a while, and a person's
// word on each: keep (mnemo/keep), correct or forget.

func reviewCommand() *cli.Command {
	return &cli.Command{
		Name:  "review",
		Usage: "list the records that need review: their file changed since and nothing confirmed them for a while (then mnemo keep, correct or forget each)",
		Flags: []cli.Flag{
			jsonFlag,
			&cli.StringFlag{Name: "project", Usage: "only this project"},
			&cli.IntFlag{Name: "limit", Value: memory.DefaultLimit, Usage: "at most this many records"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return fmt.Errorf("review takes no arguments (--project, --limit); keep, correct or forget a record with mnemo keep|correct|forget <id>")
			}
			p := memory.ReviewParams{Project: c.String("project"), Limit: c.Int("limit")}
			return call(c, bind((*client.Client).Review, p), printReview)
		},
	}
}

func printReview(w io.Writer, r *memory.ReviewResult) error {
	after := "at once"
	if r.AfterDays > 0 {
		after = "for " + memory.Count(int(r.AfterDays), "day", "days")
	}
	if r.Total == 0 {
		fmt.Fprintf(w, "nothing needs review (a record whose file changed needs it when nothing confirmed it %s)\n", after)
		return nil
	}
	for _, it := range r.Items {
		o := &it.Observation
		fmt.Fprintf(w, "#%d  %s  %s  %s  %s\n", o.ID, o.Time.Local().Format("2006-01-02 15:04"), o.Project, o.Type, o.Title)
		fmt.Fprintf(w, "    %s changed since; last confirmed %s\n", strings.Join(it.Changed, ", "), it.Confirmed.Local().Format("2006-01-02 15:04"))
	}
	shown := ""
	if r.More {
		shown = ", " + strconv.Itoa(len(r.Items)) + " shown (--limit)"
	}
	verb := "need"
	if r.Total == 1 {
		verb = "needs"
	}
	fmt.Fprintf(w, "%s %s review (its file changed, nothing confirmed it %s)%s\n", memory.Count(r.Total, "record", "records"), verb, after, shown)
	fmt.Fprintln(w, "still true: mnemo keep <id> · say what is true now: mnemo correct <id> --text … · no longer true: mnemo forget <id>")
	return nil
}

func keepCommand() *cli.Command {
	return flagCommand("keep", "say that observations still hold though their files changed: clears their review until a file changes again",
		"kept", (*client.Client).Keep, nil)
}
