package local

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/mnemo-dev/mnemo/memory"
)

var lookCommands = wordSet("ls", "cat", "head", "tail", "less", "more", "bat", "grep", "rg", "ag", "ack", "find", "fd", "tree", "wc", "pwd", "which", "file", "stat", "du", "df", "diff", "sed", "awk", "jq", "ps", "lsof", "curl", "wget")

// classifyCommand tells what a command does and returns the words after
// the command (and subcommand): by its name and subcommand for the tools
// knownCommand knows, else by its shape (output redirected to a file,
// sed -i, a read-only tool, a script of the project).
func classifyCommand(w []string, target string) (cmdKind, []string) {
	if len(w) == 0 {
		return kindSetup, nil
	}
	if kind, args, ok := knownCommand(w); ok {
		return kind, args
	}
	name := path.Base(w[0])
	var args []string
	if len(w) > 1 {
		args = w[1:]
	}
	if (name == "cat" || name == "echo" || name == "printf") && target != "" {
		return kindWrite, args
	}
	if name == "sed" && slices.ContainsFunc(w, func(s string) bool { return strings.HasPrefix(s, "-i") }) {
		return kindWrite, args
	}
	if lookCommands[name] {
		return kindLook, args
	}
	if strings.HasPrefix(w[0], "./") || strings.HasPrefix(w[0], "bin/") {
		if strings.Contains(name, "test") {
			return kindTest, args
		}
		return kindRun, args
	}
	return kindOther, args
}

// knownCommand classifies a command of a tool it knows (go, cargo, npm,
// make, python -m, git, mv, rm…) by its name and subcommand; ok is false
// for any other command, and for a subcommand it does not know. w is not
// empty.
func knownCommand(w []string) (kind cmdKind, args []string, ok bool) {
	name := path.Base(w[0])
	sub := ""
	if len(w) > 1 {
		sub = w[1]
	}
	rest := func(n int) []string {
		if len(w) > n {
			return w[n:]
		}
		return nil
	}
	switch name {
	case "cd", "export", "source", ".", "set", "unset", "alias", "true", "sleep", "clear":
		return kindSetup, nil, true
	case "go":
		switch sub {
		case "test":
			return kindTest, rest(2), true
		case "build", "vet", "generate":
			return kindBuild, rest(2), true
		case "run":
			return kindRun, rest(2), true
		case "get":
			return kindInstall, rest(2), true
		case "install":
			if len(w) > 2 {
				return kindInstall, rest(2), true
			}
			return kindBuild, nil, true
		}
	case "cargo":
		switch sub {
		case "test", "nextest":
			return kindTest, rest(2), true
		case "build", "check", "clippy", "fmt":
			return kindBuild, rest(2), true
		case "run":
			return kindRun, rest(2), true
		case "add":
			return kindInstall, rest(2), true
		}
	case "npm", "pnpm", "yarn", "bun":
		script := sub
		if sub == "run" || sub == "run-script" {
			script = ""
			if len(w) > 2 {
				script = w[2]
			}
		}
		switch {
		case sub == "test" || sub == "t" || strings.Contains(script, "test") || script == "e2e":
			return kindTest, rest(2), true
		case sub == "install" || sub == "i" || sub == "add" || sub == "ci":
			return kindInstall, rest(2), true
		case strings.Contains(script, "build") || strings.Contains(script, "lint") || strings.Contains(script, "typecheck") || strings.Contains(script, "check") || strings.Contains(script, "tsc"):
			return kindBuild, rest(2), true
		case sub == "start" || sub == "run" || sub == "exec" || sub == "dev":
			return kindRun, rest(2), true
		}
	case "pytest", "py.test", "jest", "vitest", "mocha", "ava", "tap", "rspec", "phpunit", "ctest", "tox", "nox", "playwright", "cypress", "karma", "bats":
		return kindTest, rest(1), true
	case "tsc", "eslint", "ruff", "mypy", "pyright", "golangci-lint", "staticcheck", "flake8", "pylint", "prettier", "gofmt", "black", "rubocop", "shellcheck", "biome", "clippy-driver", "javac", "gcc", "g++", "clang", "cmake", "ninja":
		return kindBuild, rest(1), true
	case "make", "just", "task":
		switch {
		case strings.Contains(sub, "test"):
			return kindTest, rest(2), true
		case sub == "run" || sub == "dev" || sub == "serve" || sub == "start":
			return kindRun, rest(2), true
		}
		return kindBuild, rest(1), true
	case "mvn", "gradle", "gradlew", "./gradlew", "dotnet", "swift", "mix", "sbt", "lein", "deno", "bazel":
		switch {
		case strings.Contains(sub, "test"):
			return kindTest, rest(2), true
		case sub == "run":
			return kindRun, rest(2), true
		case sub == "add":
			return kindInstall, rest(2), true
		}
		return kindBuild, rest(1), true
	case "python", "python3", "node", "ruby", "php", "perl", "java", "ts-node", "tsx":
		if sub == "-m" && len(w) > 2 {
			switch w[2] {
			case "pytest", "unittest", "nose2", "tox":
				return kindTest, rest(3), true
			case "pip":
				if len(w) > 3 && w[3] == "install" {
					return kindInstall, rest(4), true
				}
			case "mypy", "ruff", "black", "flake8", "pylint", "compileall":
				return kindBuild, rest(3), true
			}
		}
		return kindRun, rest(1), true
	case "pip", "pip3", "gem", "composer", "apt-get", "apt", "brew":
		if sub == "install" || sub == "add" || sub == "require" {
			return kindInstall, rest(2), true
		}
	case "git":
		switch sub {
		case "mv":
			return kindMove, rest(2), true
		case "rm":
			return kindRemove, rest(2), true
		case "commit":
			return kindCommit, rest(2), true
		case "log", "diff", "show", "blame", "status", "grep", "ls-files":
			return kindLook, rest(2), true
		}
	case "mv":
		return kindMove, rest(1), true
	case "rm", "rmdir", "unlink":
		return kindRemove, rest(1), true
	case "tee", "touch", "cp", "mkdir", "chmod", "ln":
		return kindOther, rest(1), true
	}
	return 0, nil, false
}

// operands returns the non-flag arguments.
func operands(args []string) []string {
	var out []string
	for _, a := range args {
		if a == "" || strings.HasPrefix(a, "-") {
			continue
		}
		out = append(out, a)
	}
	return out
}

// valueFlags are, by command, the short options that take the next word
// as their value ("tail -n 12 log", "grep -A 2 -e pat file").
var valueFlags = map[string]string{
	"head": "nc", "tail": "nc",
	"grep": "ABCmefd", "egrep": "ABCmefd", "fgrep": "ABCmefd",
	"rg": "ABCmegtTfM", "ag": "ABCmG", "ack": "ABCm",
	"find": "", "fd": "edtES",
}

// operandsOf is operands for a known command: an option that takes a
// value consumes the next word. grep's -e names the pattern, which comes
// first.
func operandsOf(name string, args []string) []string {
	takes, known := valueFlags[name]
	if !known {
		return operands(args)
	}
	var out, patterns []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "" {
			continue
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			out = append(out, a)
			continue
		}
		if len(a) == 2 && strings.ContainsRune(takes, rune(a[1])) && i+1 < len(args) {
			i++
			if a[1] == 'e' {
				patterns = append(patterns, args[i])
			}
		}
	}
	return append(patterns, out...)
}

// observeCommand describes a shell command by its primary segment: an
// interrupted or failed run, a passing test or build, a move, a deletion,
// a commit, an install, a file written from the shell, a look around, or
// any other command.
func observeCommand(n *draft, t *toolEvent, request string, turn []memory.Observation) bool {
	line := strings.TrimSpace(t.in.Command)
	if line == "" {
		return false
	}
	c := primaryCommand(line)
	core := c.String()
	if core == "" || c.kind <= kindLook {
		// Nothing specific: the command line as typed says most.
		core = memory.Clip(memory.FirstLine(line), 80)
	}
	out := t.output()
	code, failed := exitStatus(t.out)
	// A host that gives the output alone: the output says whether the
	// command failed, and no exit code is made up.
	unknown := t.out.ExitUnknown && t.out.ExitCode == nil && t.out.Error == "" && !t.out.IsError
	if unknown {
		code, failed = -1, outputFails(c, out)
	}
	interrupted := t.out.Interrupted || strings.Contains(t.out.Error, "interrupted by user")
	n.fact("$ %s", memory.FirstLine(line)+ellipsisIf(strings.Contains(line, "\n")))
	switch {
	case interrupted:
		n.fact("interrupted by the user")
	case code >= 0:
		n.fact("exit code %d", code)
	case failed:
		n.fact("exit code %s failed", unknownExit)
	case (c.kind == kindTest || c.kind == kindBuild) && resultLine(out) != "":
		n.fact("exit code %s passed", unknownExit)
	}
	n.tags = commandTags(c)
	if c.kind == kindTest || c.kind == kindBuild {
		for _, op := range operands(c.args) {
			switch {
			case strings.HasPrefix(op, "Test") || strings.HasPrefix(op, "test_"):
				n.symbols = append(n.symbols, op)
			case strings.ContainsAny(op, "/."):
				n.tags = append(n.tags, Concepts(strings.TrimRight(t.rel(op), "./"))...)
			}
		}
	}

	if interrupted {
		n.Type = memory.TypeChange
		n.Title = "Interrupted: " + core
		n.Narrative = asSentence(t.in.Description)
		return true
	}
	if failed {
		failedCommand(n, t, c, core, code, out)
		return true
	}
	switch c.kind {
	case kindTest, kindBuild:
		if unknown && resultLine(out) == "" {
			// Nothing failed, nothing says it passed.
			ranCommand(n, t, core, out)
			break
		}
		passedCheck(n, c, core, out, turn)
	case kindMove:
		if !movedFiles(n, t, c) {
			ranCommand(n, t, core, out)
		}
	case kindRemove:
		if !deletedFiles(n, t, c) {
			ranCommand(n, t, core, out)
		}
	case kindCommit:
		committedChanges(n, t, c)
	case kindInstall:
		addedDependencies(n, c, core)
	case kindWrite:
		if !wroteFile(n, t, c) {
			ranCommand(n, t, core, out)
		}
	case kindLook:
		lookedAt(n, t, c, core, out)
	default:
		ranCommand(n, t, core, out)
	}
	return true
}

// deletedFiles describes rm and git rm of files; false when it names none.
func deletedFiles(n *draft, t *toolEvent, c shellCommand) bool {
	files := relAll(t, operands(c.args))
	if len(files) == 0 {
		return false
	}
	n.Type = memory.TypeChange
	n.Title = "Deleted " + listMore(files, 3, len(files))
	n.FilesModified = firstN(files, 8)
	return true
}

// committedChanges describes git commit: its subject line, the commit
// and the branch, and the changed-files line of its output.
func committedChanges(n *draft, t *toolEvent, c shellCommand) {
	n.Type = memory.TypeChange
	msg := commitMessage(c.args)
	n.Title = "Committed: " + memory.FirstNonEmpty(msg, "changes")
	for l := range strings.Lines(headTail(t.out.Stdout + "\n" + t.outText)) {
		l = strings.TrimSpace(l)
		if m := commitHeadRE.FindStringSubmatch(l); m != nil {
			n.fact("commit %s on %s", m[2], m[1])
		} else if strings.Contains(l, "changed") && (strings.Contains(l, "insertion") || strings.Contains(l, "deletion") || strings.Contains(l, "file")) {
			n.fact("%s", l)
		}
	}
}

// addedDependencies describes an install: the packages it names, or the
// command that installed the project's dependencies.
func addedDependencies(n *draft, c shellCommand, core string) {
	n.Type = memory.TypeChange
	pkgs := operands(c.args)
	switch {
	case len(pkgs) == 0:
		n.Title = "Installed dependencies: " + core
	case len(pkgs) == 1:
		n.Title = "Added dependency " + pkgs[0]
	default:
		n.Title = "Added dependencies " + listMore(pkgs, 3, len(pkgs))
	}
	for _, p := range firstN(pkgs, 5) {
		n.fact("dependency: %s", p)
		n.symbols = append(n.symbols, path.Base(strings.SplitN(p, "@", 2)[0]))
	}
}

// wroteFile describes a file written from the shell (cat, echo or printf
// redirected to it, sed -i); false when no file can be named.
func wroteFile(n *draft, t *toolEvent, c shellCommand) bool {
	file := ""
	if c.target != "" {
		file = t.rel(c.target)
	} else if ops := operands(c.args); len(ops) > 0 {
		file = t.rel(ops[len(ops)-1])
	}
	if file == "" {
		return false
	}
	n.Type = memory.TypeChange
	n.Title = "Wrote " + file + " from the shell"
	n.FilesModified = []string{file}
	n.tags = append(n.tags, fileTags(file)...)
	return true
}

var commitHeadRE = regexp.MustCompile(`^\[([^\s\]]+)(?: \(root-commit\))? ([0-9a-f]{7,40})\]`)

func ellipsisIf(b bool) string {
	if b {
		return " …"
	}
	return ""
}

func commandTags(c shellCommand) []string {
	switch c.kind {
	case kindTest:
		return []string{"testing"}
	case kindBuild:
		return []string{"build"}
	case kindInstall:
		return []string{"dependencies"}
	case kindCommit, kindMove, kindRemove:
		if len(c.words) > 0 && c.words[0] == "git" {
			return []string{"git"}
		}
	}
	return nil
}

func relAll(t *toolEvent, ps []string) []string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		out = append(out, t.rel(p))
	}
	return out
}

// failedCommand describes a run that exited non-zero: a test failure names
// its tests and the assertion, a build failure its first error.
func failedCommand(n *draft, t *toolEvent, c shellCommand, core string, code int, out string) {
	n.Type = memory.TypeDiscovery
	msg := errorLine(out)
	short := stripPosition(msg)
	var names []string
	if c.kind == kindTest {
		names = failingTests(out)
	}
	for _, name := range firstN(names, 3) {
		n.fact("failing test: %s", name)
		n.symbols = append(n.symbols, name)
	}
	if msg != "" {
		n.fact("error: %s", msg)
	}
	status := fmt.Sprintf("exit code %d", code)
	if code < 0 {
		status = "failed" // the host gave no exit code
	}
	n.Subtitle = memory.FirstNonEmpty(msg, status)
	switch {
	case len(names) > 0:
		verb := " fails"
		if len(names) > 1 {
			verb = " fail"
		}
		n.Title = listMore(names, 2, len(names)) + verb
		if short != "" {
			n.Title += ": " + short
		}
	case c.kind == kindTest || c.kind == kindBuild || c.kind == kindRun || errorScore(msg) >= 80:
		n.Title = core + " fails"
		if short != "" {
			n.Title += ": " + short
		}
	default:
		n.Title = "Command failed: " + core
	}
	var b strings.Builder
	if code >= 0 {
		fmt.Fprintf(&b, "%s failed with exit code %d", core, code)
	} else {
		fmt.Fprintf(&b, "%s failed", core)
	}
	if len(names) > 0 {
		fmt.Fprintf(&b, " in %s", listMore(names, 3, len(names)))
	}
	if msg != "" {
		fmt.Fprintf(&b, ": %s", msg)
	}
	n.Narrative = asSentence(b.String())
}

// passedCheck describes a passing test run or build, and what it confirms
// when an earlier run of the turn failed.
func passedCheck(n *draft, c shellCommand, core string, out string, turn []memory.Observation) {
	n.Type = memory.TypeChange
	verb := " passes"
	if c.kind == kindBuild {
		verb = " succeeds"
	}
	result := resultLine(out)
	if result != "" {
		n.fact("result: %s", result)
	}
	n.Subtitle = memory.FirstNonEmpty(result, "exit code 0")
	n.Title = core + verb
	fail, i := lastFailureAt(turn)
	if fail == nil {
		return
	}
	var fixed, touched []string
	for _, o := range turn[i+1:] {
		touched = append(touched, o.FilesModified...)
		if o.Type == memory.TypeBugfix {
			fixed = append(fixed, o.FilesModified...)
		}
	}
	if len(fixed) == 0 {
		fixed = touched
	}
	fixed = memory.Dedupe(fixed, 8)
	cause := fail.cause()
	if len(fixed) == 0 {
		n.Narrative = fmt.Sprintf("%s passes; earlier in this turn %s failed.", core, memory.FirstNonEmpty(cause, fail.command()))
		return
	}
	n.Type = memory.TypeBugfix
	n.Title = core + verb + " after fixing " + listMore(fixed, 2, len(fixed))
	if cause != "" {
		n.fact("fixes: %s", cause)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s%s again after the change to %s", core, verb, listMore(fixed, 3, len(fixed)))
	if cause != "" {
		fmt.Fprintf(&b, "; %s had failed", cause)
		if msg := fail.errorMessage(); msg != "" {
			fmt.Fprintf(&b, " (%s)", msg)
		}
	}
	n.Narrative = asSentence(b.String())
}

// movedFiles describes git mv and mv: a rename within a folder, a move
// across folders.
func movedFiles(n *draft, t *toolEvent, c shellCommand) bool {
	ops := operands(c.args)
	if len(ops) < 2 {
		return false
	}
	srcs, dst := relAll(t, ops[:len(ops)-1]), t.rel(ops[len(ops)-1])
	n.Type = memory.TypeRefactor
	n.tags = append(n.tags, "rename")
	how := "with " + strings.Join(firstN(c.words, 2), " ")
	if len(c.words) > 0 && c.words[0] != "git" {
		how = "with mv"
	}
	if len(srcs) == 1 {
		src := srcs[0]
		into := strings.HasSuffix(ops[len(ops)-1], "/") || (path.Ext(dst) == "" && path.Ext(src) != "")
		if into {
			dst = path.Join(dst, path.Base(src))
		}
		if path.Dir(src) == path.Dir(dst) {
			n.Title = "Renamed " + src + " to " + path.Base(dst)
		} else {
			n.Title = "Moved " + src + " to " + dst
		}
		n.FilesModified = []string{src, dst}
		n.fact("%s → %s", src, dst)
		n.Narrative = fmt.Sprintf("%s %s.", strings.Fields(n.Title)[0]+" "+src+" to "+dst, how)
		return true
	}
	n.Title = "Moved " + listMore(srcs, 3, len(srcs)) + " to " + dst
	for _, s := range firstN(srcs, 7) {
		n.FilesModified = append(n.FilesModified, s)
		n.fact("%s → %s", s, path.Join(dst, path.Base(s)))
	}
	n.FilesModified = append(n.FilesModified, dst)
	return true
}

// lookedAt describes a read-only command: cat of a file is a read, grep a
// search, git log a look at the history.
func lookedAt(n *draft, t *toolEvent, c shellCommand, core string, out string) {
	n.Type = memory.TypeDiscovery
	name := path.Base(c.words[0])
	ops := operandsOf(name, c.args)
	switch name {
	case "cat", "head", "tail", "less", "more", "bat", "wc":
		files := relAll(t, ops)
		if len(files) > 0 {
			n.Title = "Read " + listMore(files, 2, len(files))
			n.FilesRead = firstN(files, 8)
			for _, f := range files {
				n.tags = append(n.tags, fileTags(f)...)
			}
			n.Subtitle = firstMeaningfulLine(out)
			return
		}
	case "grep", "rg", "ag", "ack":
		if len(ops) > 0 {
			n.Title = "Searched for " + inQuotes(ops[0])
			if len(ops) > 1 {
				n.Title += " in " + listMore(relAll(t, ops[1:]), 2, len(ops)-1)
			}
			n.symbols = identifiersIn(ops[0], 3)
			files := filesInGrepLines(t, out, 8)
			n.FilesRead = files
			if len(files) > 0 {
				n.fact("matches in: %s", strings.Join(files, ", "))
			} else if strings.TrimSpace(out) == "" {
				n.Title = "No matches for " + inQuotes(ops[0])
			}
			return
		}
	case "ls", "tree", "find", "fd", "du":
		where := "."
		if len(ops) > 0 {
			where = t.rel(ops[0])
		}
		n.Title = "Listed " + where
		if name == "find" || name == "fd" {
			n.Title = "Looked for files in " + where
		}
		n.Subtitle = firstMeaningfulLine(out)
		return
	case "git":
		sub := ""
		if len(c.words) > 1 {
			sub = c.words[1]
		}
		files := relAll(t, pathLike(ops))
		n.Title = "Checked git " + sub
		if len(files) > 0 {
			n.Title += " of " + listMore(files, 2, len(files))
			n.FilesRead = firstN(files, 8)
		}
		n.Subtitle = firstMeaningfulLine(out)
		return
	}
	ranCommand(n, t, core, out)
	n.Type = memory.TypeDiscovery
}

// pathLike keeps the operands that look like files.
func pathLike(ops []string) []string {
	var out []string
	for _, o := range ops {
		if strings.Contains(o, "/") || strings.Contains(path.Base(o), ".") && !strings.Contains(o, "..") {
			out = append(out, o)
		}
	}
	return out
}

// ranCommand describes any other successful command, its title from the
// description Claude gave it ("Print hello" → "Printed hello").
func ranCommand(n *draft, t *toolEvent, core string, out string) {
	if n.Type == "" {
		n.Type = memory.TypeChange
	}
	n.Title = "Ran " + core
	if d := pastTense(t.in.Description); d != "" {
		n.Title = d
	} else if t.in.Description != "" {
		n.Narrative = asSentence(t.in.Description)
	}
	n.Subtitle = firstMeaningfulLine(out)
}

// pastTense turns an imperative description into a past-tense title, or
// returns "" when its first word is not a verb it knows.
func pastTense(desc string) string {
	desc = strings.TrimSpace(desc)
	verb, rest, _ := strings.Cut(desc, " ")
	past, ok := pastTenses[strings.ToLower(verb)]
	if !ok {
		return ""
	}
	return strings.TrimRight(strings.TrimSpace(past+" "+rest), ".")
}

var pastTenses = map[string]string{
	"add": "Added", "apply": "Applied", "benchmark": "Benchmarked", "build": "Built", "check": "Checked",
	"clean": "Cleaned", "clone": "Cloned", "commit": "Committed", "compare": "Compared", "compile": "Compiled",
	"confirm": "Confirmed", "copy": "Copied", "count": "Counted", "create": "Created", "debug": "Debugged",
	"delete": "Deleted", "deploy": "Deployed", "display": "Displayed", "download": "Downloaded", "echo": "Echoed",
	"ensure": "Ensured", "execute": "Executed", "extract": "Extracted", "fetch": "Fetched", "find": "Found",
	"fix": "Fixed", "format": "Formatted", "generate": "Generated", "get": "Got", "init": "Initialized",
	"initialize": "Initialized", "inspect": "Inspected", "install": "Installed", "kill": "Killed", "lint": "Linted",
	"list": "Listed", "load": "Loaded", "look": "Looked", "make": "Made", "measure": "Measured", "move": "Moved",
	"open": "Opened", "print": "Printed", "profile": "Profiled", "pull": "Pulled", "push": "Pushed",
	"query": "Queried", "read": "Read", "remove": "Removed", "rename": "Renamed", "reproduce": "Reproduced",
	"restart": "Restarted", "retry": "Retried", "run": "Ran", "save": "Saved", "search": "Searched", "set": "Set",
	"show": "Showed", "sort": "Sorted", "stage": "Staged", "start": "Started", "stop": "Stopped", "test": "Tested",
	"tidy": "Tidied", "trace": "Traced", "try": "Tried", "update": "Updated", "upgrade": "Upgraded",
	"verify": "Verified", "view": "Viewed", "wait": "Waited", "write": "Wrote",
}

// commitMessage reads -m/--message, including Claude Code's heredoc form
// (-m "$(cat <<'EOF' … EOF)"): the subject line.
func commitMessage(args []string) string {
	for i, a := range args {
		var msg string
		switch {
		case (a == "-m" || a == "--message") && i+1 < len(args):
			msg = args[i+1]
		case strings.HasPrefix(a, "--message="):
			msg = strings.TrimPrefix(a, "--message=")
		case strings.HasPrefix(a, "-m") && len(a) > 2 && !strings.HasPrefix(a, "--"):
			msg = a[2:]
		case strings.HasPrefix(a, "-") && strings.HasSuffix(a, "m") && !strings.HasPrefix(a, "--") && i+1 < len(args): // -am
			msg = args[i+1]
		default:
			continue
		}
		lines := strings.Split(msg, "\n")
		if strings.Contains(lines[0], "<<") {
			lines = lines[1:]
		}
		for _, l := range lines {
			if l = strings.TrimSpace(l); l != "" && l != "EOF" && l != ")" {
				return memory.Clip(l, 90)
			}
		}
	}
	return ""
}

// unknownExit begins the exit code fact of a command whose host did not
// give its exit code: "exit code not given; the output shows it failed".
const unknownExit = "not given; the output shows it"

// outputFails reports whether a command's output shows that it failed:
// a failing test, or an error line that is surely one.
func outputFails(c shellCommand, out string) bool {
	if c.kind == kindTest && len(failingTests(out)) > 0 {
		return true
	}
	return errorScore(errorLine(out)) >= 80
}

func exitStatus(res toolOutput) (int, bool) {
	if res.ExitCode != nil {
		return *res.ExitCode, *res.ExitCode != 0
	}
	if rest, ok := strings.CutPrefix(strings.TrimSpace(res.Error), "Exit code "); ok {
		end := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
		if end < 0 {
			end = len(rest)
		}
		if n, err := strconv.Atoi(rest[:end]); err == nil {
			return n, n != 0
		}
	}
	if res.Error != "" || res.IsError {
		return 1, true
	}
	return 0, false
}
