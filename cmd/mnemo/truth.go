package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mnemo-dev/mnemo/cmd/internal/daemon"
	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/client"
)

// The commands that keep memory true: remember, correct, pin, unpin and
// forget, each one mnemo/* method (the MCP tools call the same ones).

// parseIDs reads observation ids ("12" or "#12"); want says what the
// command takes when there are none.
func parseIDs(args []string, want string) ([]uint64, error) {
	if len(args) == 0 {
		return nil, fmt.Errorf("%s", want)
	}
	var ids []uint64
	for _, a := range args {
		n, err := strconv.ParseUint(strings.TrimPrefix(a, "#"), 10, 64)
		if err != nil || n == 0 {
			return nil, fmt.Errorf("%q is not an observation id", a)
		}
		ids = append(ids, n)
	}
	return ids, nil
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func hashIDs(ids []uint64) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = "#" + strconv.FormatUint(id, 10)
	}
	return strings.Join(parts, ", ")
}

func rememberCommand() *cli.Command {
	return &cli.Command{
		Name:      "remember",
		Usage:     "save a memory on purpose (as the agents' save_memory tool does); - reads it from stdin",
		ArgsUsage: "<text…>",
		Flags: []cli.Flag{
			jsonFlag,
			&cli.StringFlag{Name: "title", Usage: "a short title for the index (default: the text's first line)"},
			&cli.StringFlag{Name: "project", Usage: "the project it belongs to (default: this folder's)"},
			&cli.StringFlag{Name: "type", Usage: "note (default), decision, discovery, bugfix, feature, refactor, change or security_note"},
			&cli.StringFlag{Name: "file", Usage: "files it is about (comma-separated)"},
		},
		Action: func(c *cli.Context) error {
			text := strings.Join(c.Args().Slice(), " ")
			if text == "-" {
				b, err := io.ReadAll(io.LimitReader(c.App.Reader, memory.MaxMessageBytes+1))
				if err != nil {
					return fmt.Errorf("read the memory from stdin: %w", err)
				}
				text = string(b)
			}
			if strings.TrimSpace(text) == "" {
				return fmt.Errorf("remember takes the text to remember (or - to read it from stdin)")
			}
			// The agents may name types of their own; a type typed here
			// that no filter or reader knows is most often a slip.
			typ := strings.TrimSpace(c.String("type"))
			if typ != "" && !slices.Contains(memory.Types, typ) {
				return fmt.Errorf("--type %s: not a type of memory; the types are %s (nothing was saved)", c.String("type"), strings.Join(memory.Types, ", "))
			}
			p := memory.SaveParams{Text: text, Title: c.String("title"), Type: typ, Project: c.String("project"), Cwd: mustGetwd(), Files: daemon.SplitList(c.String("file")), By: memory.SavedByPerson}
			return withDaemon(c, true, func(ctx context.Context, cl *client.Client) error {
				res, err := cl.Save(ctx, p)
				if err != nil {
					return err
				}
				if res.Truncated {
					fmt.Fprintf(c.App.ErrWriter, "mnemo: the text is longer than %d KB, the most one memory keeps: #%d keeps its first %d KB\n", memory.MaxMessageBytes>>10, res.ID, memory.MaxMessageBytes>>10)
				}
				if c.Bool("json") {
					return printJSON(c.App.Writer, res)
				}
				got, err := cl.GetObservations(ctx, memory.IDsParams{IDs: []uint64{res.ID}})
				if err != nil || len(got.Observations) == 0 {
					fmt.Fprintf(c.App.Writer, "remembered as #%d\n", res.ID)
					return nil
				}
				o := got.Observations[0]
				fmt.Fprintf(c.App.Writer, "remembered as #%d (%s, project %s): %s\n", o.ID, o.Type, o.Project, o.Title)
				return nil
			})
		},
	}
}

func correctCommand() *cli.Command {
	return &cli.Command{
		Name:      "correct",
		Usage:     "correct an observation's title or text (what it said before is kept on the record: mnemo get <id>)",
		ArgsUsage: "<id>",
		Flags: []cli.Flag{
			jsonFlag,
			&cli.StringFlag{Name: "title", Usage: "the new title"},
			&cli.StringFlag{Name: "text", Usage: "the new text (it replaces the narrative, subtitle and facts)"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return fmt.Errorf("correct takes one observation id, and --title or --text")
			}
			ids, err := parseIDs(c.Args().Slice(), "")
			if err != nil {
				return err
			}
			if strings.TrimSpace(c.String("title")) == "" && strings.TrimSpace(c.String("text")) == "" {
				return fmt.Errorf("correct #%d: give --title, --text or both; an empty correction changes nothing", ids[0])
			}
			p := memory.CorrectParams{ID: ids[0], Title: c.String("title"), Text: c.String("text")}
			return call(c, bind((*client.Client).Correct, p), func(w io.Writer, r *memory.CorrectResult) error {
				o := &r.Observation
				if !r.Changed {
					fmt.Fprintf(w, "#%d already says that; nothing changed\n", o.ID)
					return nil
				}
				fmt.Fprintf(w, "corrected #%d (%s, project %s): %s\n", o.ID, o.Type, o.Project, o.Title)
				fmt.Fprintf(w, "what it said before is kept on the record (%s): mnemo get %d\n", memory.Count(len(o.Edits), "edit", "edits"), o.ID)
				return nil
			})
		},
	}
}

func pinCommand(pin bool) *cli.Command {
	if !pin {
		return flagCommand("unpin", "let pinned observations compete for the context again", "unpinned", (*client.Client).Unpin, nil)
	}
	return flagCommand("pin", "keep observations in every context of their project, first, whatever their age", "pinned", (*client.Client).Pin, nil)
}

func wrongCommand() *cli.Command {
	undo := &cli.BoolFlag{Name: "undo", Usage: "take the mark back"}
	return flagCommand("wrong", "mark observations wrong: kept and shown as wrong, never given to an agent as facts again (--undo takes it back)",
		"marked wrong", (*client.Client).MarkWrong, &flagUndo{flag: undo, method: (*client.Client).UnmarkWrong, done: "no longer marked wrong"})
}

// flagUndo is a flag command's way back: its flag, its method, its word.
type flagUndo struct {
	flag   *cli.BoolFlag
	method func(*client.Client, context.Context, memory.IDsParams) (memory.PinResult, error)
	done   string
}

// flagCommand is a command that sets one flag of observations by id
// (pin, unpin, wrong): done says what it did to them.
func flagCommand(name, usage, done string, method func(*client.Client, context.Context, memory.IDsParams) (memory.PinResult, error), undo *flagUndo) *cli.Command {
	flags := []cli.Flag{jsonFlag}
	if undo != nil {
		flags = append(flags, undo.flag)
	}
	return &cli.Command{
		Name:      name,
		Usage:     usage,
		ArgsUsage: "<id>...",
		Flags:     flags,
		Action: func(c *cli.Context) error {
			ids, err := parseIDs(c.Args().Slice(), name+" takes the ids of the observations")
			if err != nil {
				return err
			}
			m, did := method, done
			if undo != nil && c.Bool(undo.flag.Name) {
				m, did = undo.method, undo.done
			}
			return call(c, bind(m, memory.IDsParams{IDs: ids}), func(w io.Writer, r *memory.PinResult) error {
				if len(r.Changed) > 0 {
					fmt.Fprintf(w, "%s %s\n", did, hashIDs(r.Changed))
				}
				if len(r.Unchanged) > 0 {
					fmt.Fprintf(w, "already %s: %s\n", did, hashIDs(r.Unchanged))
				}
				return nil
			})
		},
	}
}

func forgetCommand() *cli.Command {
	return &cli.Command{
		Name:      "forget",
		Usage:     "delete observations for good, from every index and the files",
		ArgsUsage: "<id>...",
		Flags:     []cli.Flag{jsonFlag},
		Action: func(c *cli.Context) error {
			ids, err := parseIDs(c.Args().Slice(), "forget takes the ids of the observations to delete")
			if err != nil {
				return err
			}
			return withDaemon(c, true, func(ctx context.Context, cl *client.Client) error {
				// An id that does not exist is a mistake to hear of before
				// anything is deleted, not after.
				got, err := cl.GetObservations(ctx, memory.IDsParams{IDs: ids})
				if err != nil {
					return err
				}
				if len(got.Missing) > 0 {
					return fmt.Errorf("no observation %s (forgotten, or never recorded); nothing was forgotten", hashIDs(got.Missing))
				}
				res, err := cl.Forget(ctx, memory.IDsParams{IDs: ids})
				if err != nil {
					return err
				}
				if c.Bool("json") {
					return printJSON(c.App.Writer, res)
				}
				titles := map[uint64]string{}
				for _, o := range got.Observations {
					titles[o.ID] = fmt.Sprintf("%s (%s, project %s)", o.Title, o.Type, o.Project)
				}
				for _, id := range res.Deleted {
					fmt.Fprintf(c.App.Writer, "forgot #%d %s\n", id, titles[id])
				}
				if len(res.Missing) > 0 {
					fmt.Fprintf(c.App.Writer, "already gone: %s\n", hashIDs(res.Missing))
				}
				return nil
			})
		},
	}
}
