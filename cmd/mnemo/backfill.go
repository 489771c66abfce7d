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

	"github.com/mnemo-dev/mnemo/adapters/hosts"
	"github.com/mnemo-dev/mnemo/adapters/hosts/backfill"
	"github.com/mnemo-dev/mnemo/adapters/hosts/hook"
	"github.com/mnemo-dev/mnemo/cmd/internal/daemon"
	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/client"
	"github.com/mnemo-dev/mnemo/rpc"
)

func backfillCommand() *cli.Command {
	cmd := &cli.Command{
		Name:  "backfill",
		Usage: "feed an agent's past sessions to the memory, from its transcripts",
		Description: "Each session is replayed through the hooks' own stages, dated when its work happened,\n" +
			"skipping Mnemo's observer and the sessions captured live; a rerun (also after a kill,\n" +
			"however much later) stores nothing twice, and tops up a session that went on since.",
	}
	for _, src := range backfill.Sources() {
		cmd.Subcommands = append(cmd.Subcommands, &cli.Command{
			Name:  src.Host,
			Usage: "back-fill " + hostTitle(src.Host) + "'s transcripts (" + src.Where + ")",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "project", Usage: "only the sessions run in this folder or below it"},
				&cli.StringFlag{Name: "since", Usage: "only the transcripts written since this time: " + memory.TimeForms},
				&cli.BoolFlag{Name: "dry-run", Usage: "count what would be sent, send nothing"},
			},
			Action: func(c *cli.Context) error { return backfillHost(c, src) },
		})
	}
	return cmd
}

func hostTitle(name string) string {
	if h, ok := hosts.Named(name); ok {
		return h.Title
	}
	return name
}

// backfillEntry is what `mnemo backfill` remembers of one session: that
// it began ("started") or finished ("done") sending it, and at "done" the
// transcript's size and the prompts it sent, so that a session that went
// on since is topped up, and one that went on live is left alone.
type backfillEntry struct {
	Status  string `json:"status"`
	Size    int64  `json:"size,omitempty"`
	Prompts int    `json:"prompts,omitempty"`
}

// UnmarshalJSON also reads the state of earlier versions: the status alone.
func (e *backfillEntry) UnmarshalJSON(b []byte) error {
	var status string
	if json.Unmarshal(b, &status) == nil {
		*e = backfillEntry{Status: status}
		return nil
	}
	type plain backfillEntry
	return json.Unmarshal(b, (*plain)(e))
}

// backfillState is what `mnemo backfill HOST` remembers in
// <home>/backfill/HOST.json, by session id. A session the daemon has that
// the back-fill never began was captured live and is skipped; one it
// began and did not finish (killed) is sent again, and the event keys
// keep each record once.
type backfillState map[string]backfillEntry

func backfillStatePath(home, host string) string {
	return filepath.Join(home, "backfill", host+".json")
}

func loadBackfillState(home, host string) (backfillState, error) {
	st := backfillState{}
	path := backfillStatePath(home, host)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return st, nil
}

// save writes the state atomically (a temporary file renamed over it).
func (st backfillState) save(home, host string) error {
	path := backfillStatePath(home, host)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return daemon.ReplaceFile(path, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}

// within reports whether path is dir or inside it.
func within(path, dir string) bool {
	path, dir = filepath.Clean(path), filepath.Clean(dir)
	return path == dir || strings.HasPrefix(path, dir+string(filepath.Separator))
}

func backfillHost(c *cli.Context, src backfill.Source) error {
	home, err := homeDir(c)
	if err != nil {
		return err
	}
	since, err := timeFlag(c.String("since"), "since", false)
	if err != nil {
		return err
	}
	project := c.String("project")
	if project != "" {
		if project, err = filepath.Abs(project); err != nil {
			return err
		}
	}
	root, err := src.Root()
	if err != nil {
		return err
	}
	files, err := src.Find(root)
	if err != nil {
		return err
	}
	dry := c.Bool("dry-run")
	w := c.App.Writer
	fmt.Fprintf(w, "%d %s transcripts in %s\n", len(files), hostTitle(src.Host), root)

	run := func(ctx context.Context, cl *client.Client) error {
		b := &backfiller{w: w, progress: newProgress(c.App.ErrWriter, "backfill "+src.Host, "sessions", len(files)),
			src: src, home: home, cl: cl, dry: dry, project: project, since: since, skipped: map[string]int{}}
		b.progress.detail = func() string {
			return fmt.Sprintf("%d prompts, %d tool events", b.total.Prompts, b.total.ToolEvents)
		}
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

// backfiller is one run of `mnemo backfill HOST`.
type backfiller struct {
	w        io.Writer
	progress *progress
	src      backfill.Source
	home     string
	cl       *client.Client // nil: a dry run without a daemon
	dry      bool
	project  string
	since    time.Time

	total   backfill.Counts
	skipped map[string]int // why → sessions
	topped  int            // sessions topped up
}

// The reasons a session is not back-filled, in the order the final count
// gives them.
const (
	skipLive     = "captured live"
	skipDone     = "already back-filled"
	skipObserver = "Mnemo's observer"
	skipProject  = "outside --project"
	skipSince    = "before --since"
	skipNoPrompt = "no prompt"
	skipNotRead  = "not a session this Mnemo reads"
)

var skipOrder = []string{skipLive, skipDone, skipObserver, skipProject, skipSince, skipNoPrompt, skipNotRead}

func (b *backfiller) run(ctx context.Context, files []backfill.Transcript) error {
	known := map[string]memory.Session{}
	if b.cl != nil {
		res, err := b.cl.Sessions(ctx)
		if err != nil {
			return fmt.Errorf("list the daemon's sessions: %w", err)
		}
		for _, s := range res.Sessions {
			known[s.ContentSessionID] = s
		}
	}
	host := b.src.Host
	state, err := loadBackfillState(b.home, host)
	if err != nil {
		return err
	}
	agents := filepath.Join(b.home, "agents")
	for i, f := range files {
		if err := ctx.Err(); err != nil {
			return err
		}
		b.progress.Set(i)
		why, topUp, err := b.skip(f, agents, known, state)
		if err != nil {
			return err
		}
		if why != "" {
			b.skipped[why]++
			continue
		}
		if !b.dry {
			state[f.SessionID] = backfillEntry{Status: "started"}
			if err := state.save(b.home, host); err != nil {
				return err
			}
		}
		n, err := b.src.Backfill(f, backfill.Options{SkipTools: hook.SkipTools()}, func(call backfill.Call) error {
			if b.dry {
				return nil
			}
			return b.send(ctx, call)
		})
		if err != nil {
			return fmt.Errorf("session %s (%s): %w", f.SessionID, f.Path, err)
		}
		if n.Sessions == 0 {
			b.skipped[skipNoPrompt]++
		}
		if !b.dry {
			state[f.SessionID] = backfillEntry{Status: "done", Size: f.Size, Prompts: n.Prompts}
			if err := state.save(b.home, host); err != nil {
				return err
			}
		}
		if topUp {
			b.topped++
		}
		b.total.Add(n)
	}
	b.progress.Done(len(files))
	verb := "back-filled"
	if b.dry {
		verb = "would back-fill (dry run)"
	}
	fmt.Fprintf(b.w, "%s %s: %s, %s, %s", verb, memory.Count(b.total.Sessions, "session", "sessions"), memory.Count(b.total.Prompts, "prompt", "prompts"),
		memory.Count(b.total.ToolEvents, "tool event", "tool events"), memory.Count(b.total.Turns, "turn", "turns"))
	if b.total.SkippedTools > 0 {
		fmt.Fprintf(b.w, " (%d tool runs on the skip list)", b.total.SkippedTools)
	}
	if b.topped > 0 {
		fmt.Fprintf(b.w, "; %d of them topped up (they went on since the last back-fill)", b.topped)
	}
	fmt.Fprintln(b.w)
	var skips []string
	for _, why := range skipOrder {
		if n := b.skipped[why]; n > 0 {
			skips = append(skips, fmt.Sprintf("%d %s", n, why))
		}
	}
	if len(skips) > 0 {
		fmt.Fprintf(b.w, "skipped sessions: %s\n", strings.Join(skips, ", "))
	}
	return nil
}

// skip says why a transcript is not back-filled, "" when it is, and
// whether it is a top-up: a session back-filled before whose transcript
// has grown since, and to which nothing else (its live hooks) has added
// prompts.
func (b *backfiller) skip(f backfill.Transcript, agents string, known map[string]memory.Session, state backfillState) (why string, topUp bool, err error) {
	if f.SessionID == "" {
		return skipNotRead, false, nil
	}
	if !b.since.IsZero() && f.ModTime.Before(b.since) {
		return skipSince, false, nil
	}
	cwd, err := b.src.Cwd(f)
	if err != nil {
		return "", false, err
	}
	if cwd != "" && within(cwd, agents) {
		return skipObserver, false, nil
	}
	if b.project != "" && (cwd == "" || !within(cwd, b.project)) {
		return skipProject, false, nil
	}
	s, ok := known[f.SessionID]
	if !ok {
		return "", false, nil
	}
	switch e := state[f.SessionID]; e.Status {
	case "done":
		if e.Size > 0 && f.Size > e.Size && s.PromptCounter <= e.Prompts {
			return "", true, nil
		}
		return skipDone, false, nil
	case "started":
		return "", false, nil // killed midway: the event keys keep each record once
	}
	return skipLive, false, nil
}

// send makes one call. A back-fill shows nothing to an agent: no context
// is built at a session's start and no recall searched for a prompt.
func (b *backfiller) send(ctx context.Context, call backfill.Call) error {
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
