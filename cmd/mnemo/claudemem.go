package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mnemo-dev/mnemo/adapters/claudemem"
	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/client"
)

// importClaudeMemCommand is `mnemo import claude-mem`: it reads claude-mem's
// database (read-only) into a temporary export in Mnemo's home, and only
// once all of it was read does it ask the daemon to import that file, so a
// damaged, locked or unknown database leaves the store as it was.
func importClaudeMemCommand() *cli.Command {
	return &cli.Command{
		Name:  "claude-mem",
		Usage: "import claude-mem's database (sessions, prompts, observations, summaries); it is only read",
		Description: "The database is ~/.claude-mem/claude-mem.db, or claude-mem.db in $CLAUDE_MEM_DATA_DIR when that is set.\n" +
			"Importing twice adds nothing; a schema version this Mnemo does not know is refused before anything is written.",
		Flags: []cli.Flag{
			jsonFlag,
			&cli.StringFlag{Name: "db", Usage: "the claude-mem database to read"},
			&cli.BoolFlag{Name: "dry-run", Usage: "read and count, write nothing"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 0 {
				return fmt.Errorf("import claude-mem takes no arguments (the database is --db)")
			}
			path := c.String("db")
			if path == "" {
				p, err := claudemem.DefaultPath()
				if err != nil {
					return err
				}
				path = p
			}
			return importClaudeMem(c, path, c.Bool("dry-run"))
		},
	}
}

// claudeMemResult is what `mnemo import claude-mem --json` prints.
type claudeMemResult struct {
	Database string              `json:"database"`
	DryRun   bool                `json:"dryRun"`
	Source   claudemem.Counts    `json:"source"`
	Records  int                 `json:"records"`
	Imported memory.ImportResult `json:"imported"`
	Refused  []claudemem.Refusal `json:"refused"`
}

func importClaudeMem(c *cli.Context, path string, dryRun bool) error {
	ctx := c.Context
	progress := c.App.ErrWriter
	db, err := claudemem.Open(ctx, path)
	if err != nil {
		return err
	}
	defer db.Close()
	counts := db.Counts()
	res := claudeMemResult{Database: path, DryRun: dryRun, Source: counts, Refused: []claudemem.Refusal{}}
	fmt.Fprintf(progress, "claude-mem: %s (schema version %d): %d sessions, %d prompts, %d observations, %d summaries\n",
		path, counts.Version, counts.Sessions, counts.Prompts, counts.Observations, counts.Summaries)

	var (
		enc *json.Encoder
		bw  *bufio.Writer
		tmp *os.File
	)
	if !dryRun {
		home, err := homeDir(c)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(home, 0o700); err != nil {
			return err
		}
		tmp, err = os.CreateTemp(home, ".claude-mem-import-*.jsonl")
		if err != nil {
			return err
		}
		defer os.Remove(tmp.Name())
		defer tmp.Close()
		bw = bufio.NewWriterSize(tmp, 1<<20)
		enc = json.NewEncoder(bw)
	}
	var tally memory.ImportResult // what dry-run would import
	yield := func(rec memory.Record) error {
		res.Records++
		switch rec.Kind {
		case "session":
			tally.Sessions++
		case "prompt":
			tally.Prompts++
		case "observation":
			tally.Observations++
		case "summary":
			tally.Summaries++
		}
		if enc == nil {
			return nil
		}
		return enc.Encode(rec)
	}
	refuse := func(r claudemem.Refusal) { res.Refused = append(res.Refused, r) }
	total := counts.Total()
	bar := newProgress(progress, "claude-mem", "rows", total)
	bar.detail = func() string {
		if len(res.Refused) == 0 {
			return ""
		}
		return fmt.Sprintf("%d refused", len(res.Refused))
	}
	if err := db.Read(ctx, yield, refuse, bar.Set); err != nil {
		return err
	}
	bar.Done(total)
	if dryRun {
		res.Imported = tally
		return printClaudeMem(c, &res)
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	fmt.Fprintf(progress, "claude-mem: importing %d records\n", res.Records)
	name, _ := filepath.Abs(tmp.Name())
	return withDaemon(c, true, func(ctx context.Context, cl *client.Client) error {
		r, err := cl.Import(ctx, memory.ImportParams{Path: name})
		if err != nil {
			return err
		}
		res.Imported = r
		return printClaudeMem(c, &res)
	})
}

func printClaudeMem(c *cli.Context, r *claudeMemResult) error {
	w := c.App.Writer
	if c.Bool("json") {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	i := r.Imported
	verb := "imported"
	if r.DryRun {
		verb = "dry run: would import at most"
	}
	fmt.Fprintf(w, "%s %s, %s, %s, %s", verb, memory.Count(i.Sessions, "session", "sessions"), memory.Count(i.Prompts, "prompt", "prompts"),
		memory.Count(i.Observations, "observation", "observations"), memory.Count(i.Summaries, "summary", "summaries"))
	if r.DryRun {
		fmt.Fprintf(w, " (nothing written)\n")
	} else {
		fmt.Fprintf(w, "; skipped %d already there\n", i.Duplicates)
	}
	fmt.Fprintf(w, "refused %d%s\n", len(r.Refused), refusalReasons(r.Refused))
	return nil
}

// refusalReasons groups the refused rows by table and reason.
func refusalReasons(rs []claudemem.Refusal) string {
	if len(rs) == 0 {
		return ""
	}
	n := map[string]int{}
	for _, r := range rs {
		n[r.Table+": "+r.Reason]++
	}
	keys := make([]string, 0, len(n))
	for k := range n {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "\n  %d %s", n[k], k)
	}
	return b.String()
}
