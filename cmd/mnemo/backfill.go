package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mnemo-dev/mnemo/adapters/claudecode"
	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/client"
	"github.com/mnemo-dev/mnemo/rpc"
)

func backfillCommand() *cli.Command {
	return &cli.Command{
		Name:  "backfill",
		Usage: "feed an agent's past sessions to the memory, from its transcripts",
		Subcommands: []*cli.Command{{
			Name:  "claude-code",
			Usage: "back-fill Claude Code's transcripts (~/.claude/projects, or $CLAUDE_CONFIG_DIR/projects)",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "project", Usage: "only the sessions run in this folder or below it"},
				&cli.StringFlag{Name: "since", Usage: "only the transcripts written since this date (2006-01-02 or RFC 3339)"},
				&cli.BoolFlag{Name: "dry-run", Usage: "count what would be sent, send nothing"},
			},
			Action: backfillClaudeCode,
		}},
	}
}

// backfillState is what `mnemo backfill` remembers in
// <home>/backfill/claude-code.json: the sessions it began ("started") and
// finished ("done"). A session the daemon has that the back-fill never
// began was captured live and is skipped; one it began and did not finish
// (killed) is sent again, and the event keys keep each record once.
type backfillState map[string]string

func backfillStatePath(home string) string {
	return filepath.Join(home, "backfill", "claude-code.json")
}

func loadBackfillState(home string) (backfillState, error) {
	st := backfillState{}
	b, err := os.ReadFile(backfillStatePath(home))
	if errors.Is(err, os.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("%s: %w", backfillStatePath(home), err)
	}
	return st, nil
}

// save writes the state atomically (a temporary file renamed over it).
func (st backfillState) save(home string) error {
	path := backfillStatePath(home)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".claude-code-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err = tmp.Write(b); err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func parseSince(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	t, err := time.ParseInLocation("2006-01-02", s, time.Local)
	if err != nil {
		return t, fmt.Errorf("--since %q: want a date (2006-01-02) or RFC 3339", s)
	}
	return t, nil
}

// within reports whether path is dir or inside it.
func within(path, dir string) bool {
	path, dir = filepath.Clean(path), filepath.Clean(dir)
	return path == dir || strings.HasPrefix(path, dir+string(filepath.Separator))
}

func backfillClaudeCode(c *cli.Context) error {
	home, err := homeDir(c)
	if err != nil {
		return err
	}
	since, err := parseSince(c.String("since"))
	if err != nil {
		return err
	}
	project := c.String("project")
	if project != "" {
		if project, err = filepath.Abs(project); err != nil {
			return err
		}
	}
	root, err := claudecode.TranscriptsRoot()
	if err != nil {
		return err
	}
	files, err := claudecode.FindTranscripts(root)
	if err != nil {
		return err
	}
	dry := c.Bool("dry-run")
	w := c.App.Writer
	fmt.Fprintf(w, "%d Claude Code transcripts in %s\n", len(files), root)

	run := func(ctx context.Context, cl *client.Client) error {
		b := &backfiller{w: w, home: home, cl: cl, dry: dry, project: project, since: since, skipped: map[string]int{}}
		return b.run(ctx, files)
	}
	if !dry {
		return withDaemon(c, true, run)
	}
	// A dry run starts no daemon; one that runs tells which sessions it has.
	cl, err := connectDaemon(c.Context, home, newLogger(c, c.App.ErrWriter), rpc.ClientCLI, false)
	if errors.Is(err, rpc.ErrNoDaemon) {
		return run(c.Context, nil)
	}
	if err != nil {
		return err
	}
	defer cl.Close()
	return run(c.Context, client.New(cl))
}

// backfiller is one run of `mnemo backfill claude-code`.
type backfiller struct {
	w       io.Writer
	home    string
	cl      *client.Client // nil: a dry run without a daemon
	dry     bool
	project string
	since   time.Time

	total   claudecode.BackfillCounts
	skipped map[string]int // why → sessions
}

func (b *backfiller) run(ctx context.Context, files []claudecode.TranscriptFile) error {
	known := map[string]bool{}
	if b.cl != nil {
		res, err := b.cl.Sessions(ctx)
		if err != nil {
			return fmt.Errorf("list the daemon's sessions: %w", err)
		}
		for _, s := range res.Sessions {
			known[s.ContentSessionID] = true
		}
	}
	state, err := loadBackfillState(b.home)
	if err != nil {
		return err
	}
	agents := filepath.Join(b.home, "agents")
	for i, f := range files {
		if err := ctx.Err(); err != nil {
			return err
		}
		why, err := b.skip(f, agents, known, state)
		if err != nil {
			return err
		}
		if why != "" {
			b.skipped[why]++
			continue
		}
		if !b.dry {
			state[f.SessionID] = "started"
			if err := state.save(b.home); err != nil {
				return err
			}
		}
		n, err := claudecode.Backfill(f.SessionID, f.Path, claudecode.BackfillOptions{SkipTools: claudecode.SkipTools()}, func(call claudecode.BackfillCall) error {
			if b.dry {
				return nil
			}
			return b.send(ctx, call)
		})
		if err != nil {
			return fmt.Errorf("session %s (%s): %w", f.SessionID, f.Path, err)
		}
		if n.Sessions == 0 {
			b.skipped["no prompt"]++
		}
		if !b.dry {
			state[f.SessionID] = "done"
			if err := state.save(b.home); err != nil {
				return err
			}
		}
		b.total.Add(n)
		if n.Sessions > 0 {
			fmt.Fprintf(b.w, "[%d/%d] %s: %d prompts, %d tool events, %d turns\n", i+1, len(files), f.SessionID, n.Prompts, n.ToolEvents, n.Turns)
		}
	}
	verb := "back-filled"
	if b.dry {
		verb = "would back-fill (dry run)"
	}
	fmt.Fprintf(b.w, "%s %d sessions: %d prompts, %d tool events, %d turns", verb, b.total.Sessions, b.total.Prompts, b.total.ToolEvents, b.total.Turns)
	if b.total.SkippedTools > 0 {
		fmt.Fprintf(b.w, " (%d tool runs on the skip list)", b.total.SkippedTools)
	}
	fmt.Fprintln(b.w)
	var skips []string
	for _, why := range []string{"captured live", "already back-filled", "Mnemo's observer", "outside --project", "before --since", "no prompt"} {
		if n := b.skipped[why]; n > 0 {
			skips = append(skips, fmt.Sprintf("%d %s", n, why))
		}
	}
	if len(skips) > 0 {
		fmt.Fprintf(b.w, "skipped sessions: %s\n", strings.Join(skips, ", "))
	}
	return nil
}

// skip says why a transcript is not back-filled, "" when it is.
func (b *backfiller) skip(f claudecode.TranscriptFile, agents string, known map[string]bool, state backfillState) (string, error) {
	if !b.since.IsZero() && f.ModTime.Before(b.since) {
		return "before --since", nil
	}
	cwd, err := claudecode.TranscriptCwd(f.Path)
	if err != nil {
		return "", err
	}
	if cwd != "" && within(cwd, agents) {
		return "Mnemo's observer", nil
	}
	if b.project != "" && (cwd == "" || !within(cwd, b.project)) {
		return "outside --project", nil
	}
	if known[f.SessionID] {
		switch state[f.SessionID] {
		case "done":
			return "already back-filled", nil
		case "started":
			return "", nil // killed midway: the event keys keep each record once
		}
		return "captured live", nil
	}
	return "", nil
}

// send makes one call. A back-fill shows nothing to an agent: no context
// is built at a session's start and no recall searched for a prompt.
func (b *backfiller) send(ctx context.Context, call claudecode.BackfillCall) error {
	var err error
	switch p := call.Params.(type) {
	case *memory.SessionStartParams:
		p.NoContext = true
		_, err = b.cl.SessionStart(ctx, *p)
	case *memory.UserPromptParams:
		p.NoRecall = true
		_, err = b.cl.UserPromptSubmit(ctx, *p)
	case *memory.ToolUseParams:
		_, err = b.cl.PostToolUse(ctx, *p)
	case *memory.StopParams:
		_, err = b.cl.Stop(ctx, *p)
	case *memory.SessionEndParams:
		_, err = b.cl.SessionEnd(ctx, *p)
	default:
		err = fmt.Errorf("no call for %T", call.Params)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", call.Method, err)
	}
	return nil
}
