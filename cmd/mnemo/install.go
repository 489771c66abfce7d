package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mnemo-dev/mnemo/adapters/hosts"
	"github.com/mnemo-dev/mnemo/adapters/hosts/install"
	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/client"
	"github.com/mnemo-dev/mnemo/memory/rules"
)

// envHome is the variable that moves the Mnemo home (rpc.Home).
const envHome = "MNEMO_HOME"

// installCommand is `mnemo install <host>`, one subcommand per installer
// (install.Installers), and `mnemo install` alone, which lists the hosts.
func installCommand() *cli.Command {
	cmd := &cli.Command{
		Name:      "install",
		Usage:     "connect Mnemo to a coding agent (alone: list the agents found and where Mnemo is wired)",
		ArgsUsage: "[host]",
		Action:    listHosts,
	}
	for _, in := range install.Installers {
		cmd.Subcommands = append(cmd.Subcommands, &cli.Command{
			Name:  in.Host,
			Usage: fmt.Sprintf("merge Mnemo's hooks into %s's configuration (idempotent; each file is backed up first)", in.Title),
			Flags: []cli.Flag{
				scopeFlag(in),
				&cli.StringFlag{Name: "hook", Usage: "path of the mnemo-hook binary (default: next to mnemo, else on PATH)"},
				&cli.BoolFlag{Name: "no-mcp", Usage: "do not register the MCP server (memory tools for the agent)"},
				rulesFlag(in),
			},
			Action: func(c *cli.Context) error { return installHost(c, in) },
		})
	}
	return cmd
}

func uninstallCommand() *cli.Command {
	cmd := &cli.Command{
		Name:      "uninstall",
		Usage:     "disconnect Mnemo from a coding agent",
		ArgsUsage: "<host>",
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return cli.ShowSubcommandHelp(c)
			}
			return unknownWord(c, "host", c.Args().First(), commandNames(c.Command.Subcommands))
		},
	}
	for _, in := range install.Installers {
		cmd.Subcommands = append(cmd.Subcommands, &cli.Command{
			Name:  in.Host,
			Usage: fmt.Sprintf("remove Mnemo's hooks and MCP server from %s's configuration, and nothing else", in.Title),
			Flags: []cli.Flag{
				scopeFlag(in),
				&cli.BoolFlag{Name: "rules", Usage: "also take Mnemo's block out of the project's rules file (always done with --scope project)"},
			},
			Action: func(c *cli.Context) error { return uninstallHost(c, in) },
		})
	}
	return cmd
}

func scopeFlag(in install.Installer) cli.Flag {
	what := map[string]string{
		install.ScopeUser:    "user (every project of yours)",
		install.ScopeProject: "project (this folder's, shared with it)",
		install.ScopeLocal:   "local (this folder's, yours only)",
	}
	scopes := make([]string, len(in.Scopes))
	for i, s := range in.Scopes {
		scopes[i] = what[s]
	}
	return &cli.StringFlag{Name: "scope", Value: in.Scopes[0], Usage: strings.Join(scopes, ", ")}
}

func rulesFlag(in install.Installer) cli.Flag {
	usage := "keep the project's memory in " + in.Rules + " (between Mnemo's markers; the daemon rewrites it after each session)"
	if in.NeedsRules {
		usage += "; the default with --scope project, since " + in.Title + " takes no context from its hooks"
	}
	return &cli.BoolFlag{Name: "rules", Usage: usage}
}

// hostPaths is where an installer's files are for a scope, from this
// folder and this user's home.
type hostPaths struct {
	scope, dir, home string
}

func newHostPaths(c *cli.Context, in install.Installer) (hostPaths, error) {
	p := hostPaths{scope: c.String("scope"), dir: mustGetwd()}
	if !slices.Contains(in.Scopes, p.scope) {
		return p, fmt.Errorf("%w %q for %s: use %s", install.ErrUnknownScope, p.scope, in.Host, strings.Join(in.Scopes, ", "))
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return p, err
	}
	p.home = home
	return p, nil
}

func installHost(c *cli.Context, in install.Installer) error {
	p, err := newHostPaths(c, in)
	if err != nil {
		return err
	}
	path, err := in.HooksPath(p.scope, p.dir, p.home)
	if err != nil {
		return err
	}
	hook, err := hookPath(c.String("hook"))
	if err != nil {
		return err
	}
	res, err := in.Install(path, install.Options{HookPath: hook, Home: p.home})
	printResult(c, res, cmp.Or(res.Label, "hooks")+" installed", hook, err)
	if err != nil {
		return err
	}
	if in.Note != nil {
		if note := in.Note(p.scope); note != "" {
			fmt.Fprintf(c.App.Writer, "  note: %s\n", note)
		}
	}
	if !c.Bool("no-mcp") {
		if _, err := installHostMCP(c, in, p); err != nil {
			return err
		}
	}
	switch {
	case c.Bool("rules") || (!c.IsSet("rules") && in.NeedsRules && p.scope == install.ScopeProject):
		return writeRules(c, in, p.dir)
	case in.NeedsRules:
		fmt.Fprintf(c.App.Writer, "  note: %s takes no context from its hooks; in a project, `mnemo install %s --scope project` also keeps %s up to date with its memory\n", in.Title, in.Host, in.Rules)
	}
	return nil
}

func installHostMCP(c *cli.Context, in install.Installer, p hostPaths) (install.Result, error) {
	path, why, err := in.MCPPath(p.scope, p.dir, p.home)
	if err != nil {
		return install.Result{}, err
	}
	if path == "" {
		fmt.Fprintf(c.App.Writer, "MCP server not installed: %s\n", why)
		return install.Result{}, nil
	}
	if p.scope == install.ScopeProject {
		// A project's file is shared: it names mnemo as each person has
		// it on PATH, and no home of this machine's.
		res, err := in.InstallMCP(path, install.MCPOptions{Mnemo: install.MnemoOnPath})
		printResult(c, res, "MCP server installed", install.MnemoOnPath+" mcp", err)
		if err == nil && res.Changed {
			note := "the project's file runs `mnemo mcp` from each person's PATH, with their own Mnemo home"
			if _, lerr := exec.LookPath(install.MnemoOnPath); lerr != nil {
				note += "; mnemo is not on this machine's PATH, so the server will not start here until it is"
			}
			fmt.Fprintf(c.App.Writer, "  note: %s\n", note)
		}
		return res, err
	}
	exe, err := os.Executable()
	if err != nil {
		return install.Result{}, err
	}
	o := install.MCPOptions{Mnemo: exe}
	if c.String("home") != "" || os.Getenv(envHome) != "" {
		// A home of the user's own: hosts that start MCP servers with a
		// few variables only (Codex CLI) must be told.
		home, err := homeDir(c)
		if err != nil {
			return install.Result{}, err
		}
		o.Env = map[string]string{envHome: home}
	}
	res, err := in.InstallMCP(path, o)
	printResult(c, res, "MCP server installed", exe+" mcp", err)
	return res, err
}

// writeRules puts the project's context, as the daemon gives it, between
// Mnemo's markers in the host's rules file at the project's root.
func writeRules(c *cli.Context, in install.Installer, dir string) error {
	if in.Rules == "" {
		return fmt.Errorf("%s has no rules file", in.Title)
	}
	root := memory.RootOf(dir)
	var text string
	err := withDaemon(c, true, func(ctx context.Context, cl *client.Client) error {
		r, err := cl.Context(ctx, memory.ContextParams{Cwd: root})
		text = r.Context
		return err
	})
	if err != nil {
		return fmt.Errorf("the project's memory for %s: %w", in.Rules, err)
	}
	res, err := rules.Write(filepath.Join(root, in.Rules), text, in.RulesHead)
	if err != nil {
		return err
	}
	w := c.App.Writer
	if !res.Changed {
		fmt.Fprintf(w, "%s: rules block up to date, nothing changed\n", res.Path)
		return nil
	}
	verb := "rules block written"
	if res.Created {
		verb = "rules file created"
	}
	fmt.Fprintf(w, "%s: %s (the project's memory, between Mnemo's markers; the daemon rewrites it after each session)\n", res.Path, verb)
	return nil
}

func uninstallHost(c *cli.Context, in install.Installer) error {
	p, err := newHostPaths(c, in)
	if err != nil {
		return err
	}
	path, err := in.HooksPath(p.scope, p.dir, p.home)
	if err != nil {
		return err
	}
	res, err := in.Uninstall(path, install.Options{Home: p.home})
	printResult(c, res, cmp.Or(res.Label, "hooks")+" uninstalled", "", err)
	if err != nil {
		return err
	}
	if in.Note != nil {
		if note := in.Note(p.scope); note != "" && in.Host == hosts.VSCode {
			fmt.Fprintf(c.App.Writer, "  note: %s\n", note)
		}
	}
	mcpPath, _, err := in.MCPPath(p.scope, p.dir, p.home)
	if err != nil {
		return err
	}
	if mcpPath != "" {
		res, err = in.UninstallMCP(mcpPath)
		printResult(c, res, "MCP server uninstalled", "", err)
		if err != nil {
			return err
		}
	}
	if in.Rules != "" && (c.Bool("rules") || p.scope == install.ScopeProject) {
		r, err := rules.Remove(filepath.Join(memory.RootOf(p.dir), in.Rules), in.RulesHead)
		if err != nil {
			return err
		}
		switch {
		case r.Deleted:
			install.RemoveEmptyDirs(filepath.Dir(r.Path))
			fmt.Fprintf(c.App.Writer, "%s: rules file deleted (it held Mnemo's block only)\n", r.Path)
		case r.Changed:
			fmt.Fprintf(c.App.Writer, "%s: rules block removed\n", r.Path)
		}
	}
	return nil
}

// hookPath finds mnemo-hook: the flag, else next to this binary, else on
// PATH. Hosts run it by absolute path.
func hookPath(flag string) (string, error) {
	if flag != "" {
		return filepath.Abs(flag)
	}
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), install.HookBinary)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p, nil
		}
	}
	p, err := exec.LookPath(install.HookBinary)
	if err != nil {
		return "", errors.New("mnemo-hook not found next to mnemo nor on PATH; build it (`just build`) or pass --hook")
	}
	return filepath.Abs(p)
}

// printResult says what an install or uninstall did to a file, and to the
// other files it changed with it. err is the installer's: a file it left
// alone because of it is not said to be as wanted already (the error says
// why).
func printResult(c *cli.Context, res install.Result, verb, hook string, err error) {
	w := c.App.Writer
	if res.Path == "" {
		return
	}
	switch {
	case !res.Changed && err != nil:
	case !res.Changed:
		fmt.Fprintf(w, "%s: %s already, nothing changed\n", res.Path, verb)
	default:
		fmt.Fprintf(w, "%s: %s", res.Path, verb)
		if hook != "" {
			fmt.Fprintf(w, " (%s)", hook)
		}
		fmt.Fprintln(w)
		for _, l := range []struct {
			label string
			items []string
		}{{"added", res.Added}, {"updated", res.Updated}, {"removed", res.Removed}} {
			if len(l.items) > 0 {
				fmt.Fprintf(w, "  %s: %s\n", l.label, strings.Join(l.items, ", "))
			}
		}
		if res.Deleted {
			fmt.Fprintln(w, "  deleted: the file held nothing else")
		}
		if res.Backup != "" {
			fmt.Fprintf(w, "  backup: %s\n", res.Backup)
		}
	}
	done := verb[strings.LastIndexByte(verb, ' ')+1:]
	for _, also := range res.Also {
		printResult(c, also, also.Label+" "+done, "", err)
	}
}

// A hostRow is what `mnemo install` and `mnemo doctor` say of one host.
type hostRow struct {
	in             install.Installer
	found          string
	user, project  install.Wiring
	userErr, prErr error
	rules          bool // the project's rules file has Mnemo's block
	// viaClaude says the host's user hooks are Claude Code's settings
	// (VS Code reads them): wired there, it runs Claude Code's hooks.
	viaClaude bool
}

// userState is the row's user wiring in words, saying when it is Claude
// Code's (a host that reads Claude Code's settings shows as wired once
// Claude Code is).
func (r hostRow) userState() string {
	s := wiringState(r.user, r.userErr)
	if r.viaClaude && len(r.user.Wired) > 0 {
		s += " (Claude Code's hooks)"
	}
	return s
}

// hostRows examines every installer's files for this user and the project
// in dir.
func hostRows(dir string) ([]hostRow, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return nil, err
	}
	var rows []hostRow
	for _, in := range install.Installers {
		row := hostRow{in: in, found: in.Found(home)}
		wiring := func(scope string) (install.Wiring, error) {
			path, err := in.HooksPath(scope, dir, home)
			if err != nil || path == "" {
				return install.Wiring{}, err
			}
			return in.Wired(path)
		}
		row.user, row.userErr = wiring(install.ScopeUser)
		if claude, err := install.SettingsPath(install.ScopeUser, dir, home); err == nil && in.Host != hosts.ClaudeCode {
			row.viaClaude = row.user.Path == claude
		}
		row.project, row.prErr = wiring(install.ScopeProject)
		if in.Rules != "" {
			row.rules = rules.Marked(filepath.Join(memory.RootOf(dir), in.Rules))
		}
		rows = append(rows, row)
	}
	return rows, nil
}

func wiringState(w install.Wiring, err error) string {
	switch {
	case err != nil:
		return "unreadable"
	case w.Path == "":
		return "-"
	}
	return w.State()
}

// listHosts is `mnemo install` alone: the hosts, whether each is on this
// machine, and whether Mnemo is wired into it for this user and for the
// project in this folder.
func listHosts(c *cli.Context) error {
	if c.NArg() > 0 {
		return unknownWord(c, "host", c.Args().First(), commandNames(c.Command.Subcommands))
	}
	dir := mustGetwd()
	rows, err := hostRows(dir)
	if err != nil {
		return err
	}
	w := c.App.Writer
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "HOST\tFOUND\tUSER\tPROJECT\tRULES FILE")
	for _, r := range rows {
		found := r.found
		if found == "" {
			found = "-"
		}
		rulesFile := "-"
		if r.rules {
			rulesFile = r.in.Rules
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.in.Host, found, r.userState(), wiringState(r.project, r.prErr), rulesFile)
	}
	tw.Flush()
	fmt.Fprintf(w, "project: %s\n", dir)
	for _, r := range rows {
		for i, err := range []error{r.userErr, r.prErr} {
			if err != nil && (i == 0 || r.userErr == nil || err.Error() != r.userErr.Error()) {
				fmt.Fprintf(w, "%s: %v\n", r.in.Host, err)
			}
		}
	}
	fmt.Fprintln(w, "`mnemo install <host> [--scope user|project]` wires one; `mnemo uninstall <host>` takes it out again.")
	return nil
}

func installerNames() string {
	all := install.Installers
	names := make([]string, len(all))
	for i, in := range all {
		names[i] = in.Host
	}
	return strings.Join(names, ", ")
}

// printHosts is doctor's part on the hosts: for each host found or wired,
// where Mnemo is wired, and when the host's last event arrived (its newest
// session).
func printHosts(w io.Writer, rows []hostRow, sessions []memory.Session) {
	last := map[string]memory.Session{}
	for _, s := range sessions {
		if cur, ok := last[s.Platform]; !ok || lastEvent(s).After(lastEvent(cur)) {
			last[s.Platform] = s
		}
	}
	fmt.Fprintln(w, "hosts")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  HOST\tUSER\tPROJECT\tLAST EVENT")
	for _, r := range rows {
		s, seen := last[r.in.Host]
		if r.found == "" && !seen && len(r.user.Wired) == 0 && len(r.project.Wired) == 0 {
			continue
		}
		event := "never"
		if seen {
			event = fmt.Sprintf("%s (%s)", lastEvent(s).Local().Format("2006-01-02 15:04"), s.Project)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", r.in.Host, r.userState(), wiringState(r.project, r.prErr), event)
	}
	tw.Flush()
}

// lastEvent is when a session last changed: its end, its last update or
// its start.
func lastEvent(s memory.Session) time.Time {
	t := s.CreatedAt
	for _, u := range []time.Time{s.UpdatedAt, s.CompletedAt} {
		if u.After(t) {
			t = u
		}
	}
	return t
}
