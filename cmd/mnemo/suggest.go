package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"
)

// A word that names no command gets an error that says the closest one:
// `mnemo serach` → did you mean search? urfave/cli's own answer is its
// help command's "No help topic for 'serach'", and a command with
// subcommands and its own action (mnemo daemon) would run it.

// noSuchCommand is the action of the app and of a command whose
// subcommands are what it takes: alone it prints the help; given a word,
// it says that the word is no command, and the closest one.
func noSuchCommand(c *cli.Context) error {
	if !c.Args().Present() {
		if c.Command.Name == c.App.Name {
			return cli.ShowAppHelp(c)
		}
		return cli.ShowSubcommandHelp(c)
	}
	return unknownWord(c, "command", c.Args().First(), commandNames(c.Command.Subcommands))
}

// unknownWord is the error for word, which is not one of names (what
// c's command takes): what it is not, the closest of names when one is
// close, and the names (a few) or where they are listed.
func unknownWord(c *cli.Context, what, word string, names []string) error {
	path := c.Command.HelpName
	msg := fmt.Sprintf("%q is not a %s %s", word, path, what)
	if s := closest(word, names); s != "" {
		msg += fmt.Sprintf("; did you mean %s?", s)
	}
	if len(names) <= 10 {
		return fmt.Errorf("%s (one of %s)", msg, strings.Join(names, ", "))
	}
	return fmt.Errorf("%s (%s --help lists them)", msg, path)
}

func commandNames(cmds []*cli.Command) []string {
	var names []string
	for _, c := range cmds {
		if c.Hidden || c.Name == "help" {
			continue
		}
		names = append(names, c.Names()...)
	}
	return names
}

// closest returns the name nearest to word: the one word begins, if only
// one, else the one fewest edits away (a letter added, dropped, changed or
// two swapped), if that is at most a third of the word; "" when none is
// close.
func closest(word string, names []string) string {
	word = strings.ToLower(word)
	var prefixed []string
	for _, n := range names {
		if strings.HasPrefix(n, word) {
			prefixed = append(prefixed, n)
		}
	}
	if len(prefixed) == 1 {
		return prefixed[0]
	}
	best, bestD := "", max(1, len(word)/3)+1
	for _, n := range names {
		if d := editDistance(word, n); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance between a and b:
// insertions, deletions, substitutions and swaps of neighbours, each one.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// An option a command does not take gets the same kind of error, on
// stderr alone: urfave/cli's own answer is "Incorrect Usage" and the
// command's whole help on stdout, before Run's line with the error.

// onUsageErrors sets every command's answer to options it cannot read
// (usageError), its subcommands' too.
func onUsageErrors(app *cli.App) {
	app.OnUsageError = usageError(app.Name, app.Flags)
	var walk func(path string, cmds []*cli.Command)
	walk = func(path string, cmds []*cli.Command) {
		for _, c := range cmds {
			p := path + " " + c.Name
			c.OnUsageError = usageError(p, c.Flags)
			walk(p, c.Subcommands)
		}
	}
	walk(app.Name, app.Commands)
}

// usageError is the error for options the command at path cannot read:
// an unknown one is named with the closest of flags, and where they are
// listed; a bad value keeps the parser's words.
func usageError(path string, flags []cli.Flag) cli.OnUsageErrorFunc {
	return func(_ *cli.Context, err error, _ bool) error {
		word, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: ")
		if !ok {
			return fmt.Errorf("%w (%s --help lists its options)", err, path)
		}
		word = strings.TrimLeft(word, "-")
		var names []string
		for _, f := range flags {
			names = append(names, f.Names()...)
		}
		msg := fmt.Sprintf("%s is not an option of %s", dashed(word), path)
		if s := closest(word, names); s != "" {
			msg += fmt.Sprintf("; did you mean %s?", dashed(s))
		}
		return fmt.Errorf("%s (%s --help lists them)", msg, path)
	}
}

// dashed is a flag's name as it is typed: -h, --json.
func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}
