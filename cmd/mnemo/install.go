package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mnemo-dev/mnemo/adapters/claudecode"
)

func installCommand() *cli.Command {
	return &cli.Command{
		Name:  "install",
		Usage: "connect Mnemo to a client",
		Subcommands: []*cli.Command{{
			Name:  "claude-code",
			Usage: "merge Mnemo's hooks into Claude Code's settings (idempotent; the file is backed up first)",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "scope", Value: claudecode.ScopeUser, Usage: "user (~/.claude/settings.json), project (.claude/settings.json) or local (.claude/settings.local.json)"},
				&cli.StringFlag{Name: "hook", Usage: "path of the mnemo-hook binary (default: next to mnemo, else on PATH)"},
				&cli.BoolFlag{Name: "no-mcp", Usage: "do not register the MCP server (memory tools for the agent)"},
			},
			Action: func(c *cli.Context) error {
				path, err := settingsPath(c)
				if err != nil {
					return err
				}
				hook, err := hookPath(c.String("hook"))
				if err != nil {
					return err
				}
				res, err := claudecode.Install(path, claudecode.InstallOptions{HookPath: hook})
				if err != nil {
					return err
				}
				printResult(c, res, "hooks installed", hook)
				if c.Bool("no-mcp") {
					return nil
				}
				exe, err := os.Executable()
				if err != nil {
					return err
				}
				mcpPath, err := mcpConfigPath(c)
				if err != nil {
					return err
				}
				res, err = claudecode.InstallMCP(mcpPath, exe, nil)
				if err != nil {
					return err
				}
				printResult(c, res, "MCP server installed", exe+" mcp")
				return nil
			},
		}},
	}
}

func uninstallCommand() *cli.Command {
	return &cli.Command{
		Name:  "uninstall",
		Usage: "disconnect Mnemo from a client",
		Subcommands: []*cli.Command{{
			Name:  "claude-code",
			Usage: "remove Mnemo's hooks from Claude Code's settings, and nothing else",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "scope", Value: claudecode.ScopeUser, Usage: "user, project or local"},
			},
			Action: func(c *cli.Context) error {
				path, err := settingsPath(c)
				if err != nil {
					return err
				}
				res, err := claudecode.Uninstall(path)
				if err != nil {
					return err
				}
				printResult(c, res, "hooks uninstalled", "")
				mcpPath, err := mcpConfigPath(c)
				if err != nil {
					return err
				}
				res, err = claudecode.UninstallMCP(mcpPath)
				if err != nil {
					return err
				}
				printResult(c, res, "MCP server uninstalled", "")
				return nil
			},
		}},
	}
}

func settingsPath(c *cli.Context) (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return claudecode.SettingsPath(c.String("scope"), mustGetwd(), home)
}

func mcpConfigPath(c *cli.Context) (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return claudecode.MCPConfigPath(c.String("scope"), mustGetwd(), home)
}

// hookPath finds mnemo-hook: the flag, else next to this binary, else on
// PATH. Claude Code runs it by absolute path.
func hookPath(flag string) (string, error) {
	if flag != "" {
		return filepath.Abs(flag)
	}
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), claudecode.HookBinary)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p, nil
		}
	}
	p, err := exec.LookPath(claudecode.HookBinary)
	if err != nil {
		return "", errors.New("mnemo-hook not found next to mnemo nor on PATH; build it (`just build`) or pass --hook")
	}
	return filepath.Abs(p)
}

func printResult(c *cli.Context, res claudecode.Result, verb, hook string) {
	w := c.App.Writer
	if !res.Changed {
		fmt.Fprintf(w, "%s: %s already, nothing changed\n", res.Path, verb)
		return
	}
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
	if res.Backup != "" {
		fmt.Fprintf(w, "  backup: %s\n", res.Backup)
	}
}
