package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mnemo-dev/mnemo/adapters/hosts"
	"github.com/mnemo-dev/mnemo/adapters/hosts/install"
	"github.com/mnemo-dev/mnemo/cmd/internal/daemon"
	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/client"
	"github.com/mnemo-dev/mnemo/rpc"
	"github.com/mnemo-dev/mnemo/vector"
)

func searchCommand() *cli.Command {
	return &cli.Command{
		Name:      "search",
		Usage:     "search memory (a compact index; `mnemo get <id>` for full records)",
		ArgsUsage: "[query words]",
		Flags: []cli.Flag{
			jsonFlag,
			&cli.StringFlag{Name: "project", Usage: "only this project"},
			&cli.StringFlag{Name: "type", Usage: "only these types (comma-separated)"},
			&cli.StringFlag{Name: "host", Usage: "only what was made in this agent's sessions (" + strings.Join(hosts.Names(), ", ") + ")"},
			&cli.StringFlag{Name: "file", Usage: "only observations touching a file containing one of these (comma-separated)"},
			&cli.StringFlag{Name: "since", Usage: "only from this time: " + memory.TimeForms},
			&cli.StringFlag{Name: "until", Usage: "only up to this time (a day: to its end)"},
			&cli.IntFlag{Name: "limit", Value: memory.DefaultLimit, Usage: "at most this many hits"},
			&cli.StringFlag{Name: "mode", Value: memory.ModeHybrid, Usage: "rank by keywords and meaning (hybrid), keywords only (keyword) or meaning only (vector)"},
			&cli.StringFlag{Name: "author", Usage: "only what this author shared through team memory (mnemo team)"},
			&cli.BoolFlag{Name: "mine", Usage: "only what was made on this machine"},
			&cli.BoolFlag{Name: "team", Usage: "only what arrived from the team server"},
		},
		Action: func(c *cli.Context) error {
			author, err := authorFilter(c)
			if err != nil {
				return err
			}
			p := memory.SearchParams{Author: author,
				Query: strings.Join(c.Args().Slice(), " "), Project: c.String("project"),
				Types: daemon.SplitList(c.String("type")), Files: daemon.SplitList(c.String("file")), Limit: c.Int("limit"),
				Host: c.String("host"), Mode: c.String("mode"),
			}
			if p.Since, err = timeFlag(c.String("since"), "since", false); err != nil {
				return err
			}
			if p.Until, err = timeFlag(c.String("until"), "until", true); err != nil {
				return err
			}
			return withDaemon(c, true, func(ctx context.Context, cl *client.Client) error {
				r, err := cl.Search(ctx, p)
				if err != nil {
					return err
				}
				if len(r.Hits) == 0 {
					// A type no observation has is most often a slip.
					for _, t := range p.Types {
						if !slices.Contains(memory.Types, t) {
							return fmt.Errorf("--type %s: no observation has this type; the types are %s", t, strings.Join(memory.Types, ", "))
						}
					}
				}
				if c.Bool("json") {
					return printJSON(c.App.Writer, r)
				}
				return printHits(c.App.Writer, &r)
			})
		},
	}
}

// printHits prints a search's hits, one line each and its snippet under it.
func printHits(w io.Writer, r *memory.SearchResult) error {
	if len(r.Hits) == 0 {
		fmt.Fprintln(w, "no matches")
		return nil
	}
	if r.Closest {
		fmt.Fprintln(w, "no good match: nothing holds these words; the closest in meaning:")
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, h := range r.Hits {
		by := ""
		if h.Author != "" {
			by = "  (" + h.Author + ")"
		}
		fmt.Fprintf(tw, "#%d\t%s\t%s\t%s\t%s%s%s\n", h.ID, h.Time.Local().Format("2006-01-02 15:04"), h.Project, h.Type, h.Title, memory.StateMark(h.State)+memory.SeenMark(h.Count, h.LastSeen), by)
		if h.Snippet != "" && h.Snippet != h.Title {
			fmt.Fprintf(tw, "\t\t\t\t  %s\n", h.Snippet)
		}
	}
	tw.Flush()
	if r.More {
		fmt.Fprintf(w, "(the first %d; more match: --limit %d)\n", len(r.Hits), min(2*len(r.Hits), memory.MaxLimit))
	}
	return nil
}

func timelineCommand() *cli.Command {
	return &cli.Command{
		Name:      "timeline",
		Usage:     "show the observations around an id or a time",
		ArgsUsage: "<id | time>",
		Flags: []cli.Flag{
			jsonFlag,
			&cli.IntFlag{Name: "before", Value: 5}, &cli.IntFlag{Name: "after", Value: 5},
			&cli.StringFlag{Name: "project"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return fmt.Errorf("timeline takes one anchor: an observation id or a time (%s)", memory.TimeForms)
			}
			a := c.Args().First()
			var anchor []byte
			if n, err := strconv.ParseUint(strings.TrimPrefix(a, "#"), 10, 64); err == nil {
				anchor, _ = json.Marshal(n)
			} else if t, err := memory.ParseTime(a, false, time.Now()); err == nil {
				anchor, _ = json.Marshal(t.Format(time.RFC3339Nano))
			} else {
				return fmt.Errorf("timeline's anchor %q is neither an observation id nor a time (%s)", a, memory.TimeForms)
			}
			p := memory.TimelineParams{Anchor: anchor, Before: c.Int("before"), After: c.Int("after"), Project: c.String("project")}
			return call(c, bind((*client.Client).Timeline, p), func(w io.Writer, r *memory.TimelineResult) error {
				for _, o := range r.Observations {
					mark := " "
					if o.ID == r.AnchorID {
						mark = ">"
					}
					fmt.Fprintf(w, "%s #%d  %s  %-10s %s%s\n", mark, o.ID, o.Time.Local().Format("2006-01-02 15:04"), o.Type, o.Title, memory.StateMark(o.State)+memory.SeenMark(o.Count, o.LastSeen))
				}
				return nil
			})
		},
	}
}

func getCommand() *cli.Command {
	return &cli.Command{
		Name:      "get",
		Usage:     "print full observations",
		ArgsUsage: "<id>...",
		Flags:     []cli.Flag{jsonFlag},
		Action: func(c *cli.Context) error {
			ids, err := parseIDs(c.Args().Slice(), "get takes the ids of the observations to print (mnemo search finds them)")
			if err != nil {
				return err
			}
			return withDaemon(c, true, func(ctx context.Context, cl *client.Client) error {
				r, err := cl.GetObservations(ctx, memory.IDsParams{IDs: ids})
				if err != nil {
					return err
				}
				w := c.App.Writer
				if c.Bool("json") {
					err = printJSON(w, r)
				} else {
					for i, o := range r.Observations {
						if i > 0 {
							fmt.Fprintln(w)
						}
						io.WriteString(w, o.Markdown())
					}
				}
				if err == nil && len(r.Missing) > 0 {
					// As every other command given an id: an id that names
					// nothing is an error, said after what was found.
					return fmt.Errorf("no observation %s (forgotten, or never recorded)", hashIDs(r.Missing))
				}
				return err
			})
		},
	}
}

func contextCommand() *cli.Command {
	return &cli.Command{
		Name:  "context",
		Usage: "print the context a new session in this project would get",
		Flags: []cli.Flag{jsonFlag, &cli.StringFlag{Name: "project", Usage: "the project (default: this folder's)"}, &cli.StringFlag{Name: "cwd", Usage: "the working directory (default: this one)"}},
		Action: func(c *cli.Context) error {
			p := memory.ContextParams{Project: c.String("project"), Cwd: c.String("cwd")}
			if p.Project == "" && p.Cwd == "" {
				p.Cwd = mustGetwd()
			}
			return call(c, bind((*client.Client).Context, p), func(w io.Writer, r *memory.ContextResult) error {
				_, err := io.WriteString(w, r.Context)
				return err
			})
		},
	}
}

func sessionsCommand() *cli.Command {
	return &cli.Command{
		Name:  "sessions",
		Usage: "list sessions, newest first: project, host, prompts, state, and both ids (the host's and the memory agent's)",
		Flags: []cli.Flag{jsonFlag},
		Action: func(c *cli.Context) error {
			return call(c, (*client.Client).Sessions, func(w io.Writer, r *memory.SessionsResult) error {
				if len(r.Sessions) == 0 {
					_, err := fmt.Fprintln(w, "no sessions yet: the agents' hooks record them (mnemo install lists where Mnemo is wired)")
					return err
				}
				tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tSTARTED\tPROJECT\tHOST\tPROMPTS\tSTATUS\tHOST'S SESSION ID\tMEMORY AGENT'S SESSION ID")
				for _, s := range r.Sessions {
					ms := s.MemorySessionID
					if ms == "" {
						ms = "(none yet)"
					}
					if n := len(s.MemorySessions); n > 1 {
						ms += fmt.Sprintf(" (+%d earlier)", n-1)
					}
					status := s.Status
					if s.ForceInit {
						status += ", memory agent starts afresh"
					}
					fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", s.ID, s.CreatedAt.Local().Format("2006-01-02 15:04"), s.Project, s.Platform, s.PromptCounter, status, s.ContentSessionID, ms)
				}
				return tw.Flush()
			})
		},
	}
}

func statusCommand() *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "show the daemon's state (starting it when needed)",
		Flags: []cli.Flag{jsonFlag},
		Action: func(c *cli.Context) error {
			return call(c, (*client.Client).Status, printStatus)
		},
	}
}

func printStatus(w io.Writer, st *memory.Status) error {
	fmt.Fprintf(w, "daemon       running (pid %d), Mnemo %s, protocol %d\n", st.PID, st.Version, st.ProtocolVersion)
	fmt.Fprintf(w, "data         %s\n", st.DataDir)
	fmt.Fprintf(w, "memory       %s, %s, %s, %s\n", memory.Count(st.Counts.Observations, "observation", "observations"), memory.Count(st.Counts.Summaries, "summary", "summaries"),
		memory.Count(st.Counts.Sessions, "session", "sessions"), memory.Count(st.Counts.Prompts, "prompt", "prompts"))
	fmt.Fprintf(w, "queue        %s waiting\n", memory.Count(st.Counts.Queued, "event", "events"))
	fmt.Fprintf(w, "agent        %s\n", st.Agent)
	if st.Embedder != "" {
		fmt.Fprintf(w, "embedder     %s\n", st.Embedder)
	}
	if st.Notice != "" {
		fmt.Fprintf(w, "notice       %s\n", st.Notice)
	}
	for _, p := range st.Paused {
		fmt.Fprintf(w, "paused       project %s: %s (mnemo resume --project %s)\n", p.Project, pauseWords(p.Pause), p.Project)
	}
	if v, ok := os.LookupEnv(memory.PauseEnv); ok {
		if p, err := memory.ParsePause(v); err != nil {
			fmt.Fprintf(w, "this shell   %s=%s cannot be read (%v): the sessions started from here are neither recorded nor given memory\n", memory.PauseEnv, v, err)
		} else if p != (memory.Pause{}) {
			fmt.Fprintf(w, "this shell   %s=%s: the sessions started from here have %s paused\n", memory.PauseEnv, v, pauseWords(p))
		}
	}
	return nil
}

func doctorCommand() *cli.Command {
	return &cli.Command{
		Name:  "doctor",
		Usage: "check the memory's invariants and the setup",
		Flags: []cli.Flag{jsonFlag},
		Action: func(c *cli.Context) error {
			home, err := homeDir(c)
			if err != nil {
				return err
			}
			var failed bool
			cfg, source, cerr := daemon.LoadConfig(home)
			w := c.App.Writer
			fmt.Fprintf(w, "home         %s\n", home)
			fmt.Fprintf(w, "socket       %s\n", rpc.SocketPath(home))
			fmt.Fprintf(w, "settings     %s (flags, then MNEMO_* variables, then this file)\n", daemon.SettingsFile(home))
			if cerr != nil {
				fmt.Fprintf(w, "  problem: %v\n", cerr)
				return exitCode(1)
			}
			for _, line := range cfg.Describe(source) {
				fmt.Fprintf(w, "  %s\n", line)
			}
			if emb, notice := vector.DefaultEmbedder(daemon.ModelsDir(home)); notice != "" {
				fmt.Fprintf(w, "model        %s\n", notice)
			} else {
				fmt.Fprintf(w, "model        %s in %s\n", emb.ID(), daemon.ModelsDir(home))
				if st, err := runningStatus(c.Context, home); err == nil && embedderOf(st) != emb.ID() && (cfg.Embedder == "" || cfg.Embedder == "default") {
					fmt.Fprintf(w, "  the daemon was started before it was installed and runs %s: `mnemo reindex` restarts it on the model\n", embedderOf(st))
				}
			}
			// A daemon that cannot start may have a damaged store: said here,
			// with what to do.
			if _, err := runningStatus(c.Context, home); errors.Is(err, rpc.ErrNoDaemon) {
				if verr := daemon.VerifyStore(home); errors.Is(verr, daemon.ErrDamaged) {
					fmt.Fprintf(w, "store        %v\n", verr)
					fmt.Fprintln(w, "  `mnemo recover` rescues what can be read into a fresh store, keeping the damaged one aside")
					return exitCode(1)
				}
			}
			if err := daemon.CheckAgent(c.Context, cfg, home); err != nil {
				failed = true
				fmt.Fprintf(w, "agent        %s cannot run: %v\n", cfg.Agent, err)
			} else {
				fmt.Fprintf(w, "agent        %s ok\n", cfg.Agent)
			}
			if rows, err := hostRows(mustGetwd()); err != nil {
				fmt.Fprintf(w, "hosts        %v\n", err)
			} else {
				var sessions []memory.Session
				serr := withDaemon(c, true, func(ctx context.Context, cl *client.Client) error {
					r, err := cl.Sessions(ctx)
					sessions = r.Sessions
					return err
				})
				printHosts(w, rows, sessions)
				if serr != nil {
					fmt.Fprintf(w, "  (no last events: %v)\n", serr)
				}
			}
			printAutoMemory(w)
			if cfg.TeamURL != "" && len(cfg.TeamProjects) > 0 {
				if !checkTeam(c, w, cfg) {
					failed = true
				}
			}
			err = call(c, (*client.Client).Doctor, func(w io.Writer, r *memory.DoctorResult) error {
				for _, n := range r.Notes {
					fmt.Fprintf(w, "note         %s\n", n)
				}
				if len(r.Problems) == 0 {
					fmt.Fprintln(w, "invariants   ok: every observation's memory session is registered to its session, no memory session is shared, no queue entry is stale")
					return nil
				}
				failed = true
				fmt.Fprintf(w, "invariants   %d problems:\n", len(r.Problems))
				for _, p := range r.Problems {
					fmt.Fprintf(w, "  [%s] %s\n", p.Check, p.Detail)
				}
				return nil
			})
			if err == nil && failed {
				return exitCode(1)
			}
			return err
		},
	}
}

// printAutoMemory says whether Claude Code's own memory (auto memory) is
// on for sessions in this folder's project, and what decides it. Mnemo
// lives beside it and never turns it off.
func printAutoMemory(w io.Writer) {
	home, err := os.UserHomeDir()
	if err != nil {
		fmt.Fprintf(w, "claude code  auto memory: cannot tell (%v)\n", err)
		return
	}
	am, err := install.ClaudeAutoMemory(memory.RootOf(mustGetwd()), home, os.Getenv)
	switch {
	case err != nil:
		fmt.Fprintf(w, "claude code  auto memory: cannot tell (%v)\n", err)
	case am.On:
		fmt.Fprintf(w, "claude code  auto memory on (%s): its own notes load beside Mnemo's context; Mnemo never turns it off\n", am.By)
	default:
		fmt.Fprintf(w, "claude code  auto memory off (%s): not by Mnemo, which never turns it off\n", am.By)
	}
}
