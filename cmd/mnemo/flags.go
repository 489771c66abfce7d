package main

import (
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// flagsFirst moves the options of a command that come after its
// arguments in front of them: urfave/cli stops reading options at the
// first argument, so `mnemo search rounding --json` would search for
// "rounding --json". Everything after "--" stays as it is.
func flagsFirst(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	// Find the (sub)command: the first words that name commands, after the
	// global options.
	cmds := app.Commands
	var cmd *cli.Command
	i := 1
	for i < len(args) {
		a := args[i]
		if strings.HasPrefix(a, "-") {
			if cmd != nil {
				break // the command's own options start here
			}
			if takesValue(app.Flags, a) && !strings.Contains(a, "=") {
				i++
			}
			i++
			continue
		}
		next := findCommand(cmds, a)
		if next == nil {
			break
		}
		cmd, cmds = next, next.Subcommands
		i++
	}
	if cmd == nil || i >= len(args) {
		return args
	}
	var flags, rest []string
	for j := i; j < len(args); j++ {
		a := args[j]
		switch {
		case a == "--":
			rest = append(rest, args[j:]...)
			j = len(args)
		case strings.HasPrefix(a, "-") && len(a) > 1 && knownFlag(cmd.Flags, a):
			flags = append(flags, a)
			if takesValue(cmd.Flags, a) && !strings.Contains(a, "=") && j+1 < len(args) {
				j++
				flags = append(flags, args[j])
			}
		default:
			rest = append(rest, a)
		}
	}
	return slices.Concat(args[:i], flags, rest)
}

func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.Name == name || slices.Contains(c.Aliases, name) {
			return c
		}
	}
	return nil
}

// flagName is an option's name without its dashes and value.
func flagName(arg string) string {
	name, _, _ := strings.Cut(strings.TrimLeft(arg, "-"), "=")
	return name
}

func lookupFlag(flags []cli.Flag, arg string) cli.Flag {
	name := flagName(arg)
	for _, f := range flags {
		if slices.Contains(f.Names(), name) {
			return f
		}
	}
	return nil
}

func knownFlag(flags []cli.Flag, arg string) bool { return lookupFlag(flags, arg) != nil }

// takesValue reports whether an option reads the next word as its value.
func takesValue(flags []cli.Flag, arg string) bool {
	f := lookupFlag(flags, arg)
	if f == nil {
		return false
	}
	if d, ok := f.(cli.DocGenerationFlag); ok {
		return d.TakesValue()
	}
	return true
}
