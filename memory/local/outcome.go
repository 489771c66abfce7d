package local

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// How a run ended. The exit code a host reports is the command line's,
// and it is the runner's own only when nothing after the runner decides
// it: `go test ./... | tail -5` reports tail's, `npm test || true` and
// `cargo test; echo done` report 0 whatever the tests did, `make &`
// reports the start of a background job. The shell's rules tell when the
// reported code still says how the runner ended (`go test && echo ok`
// exits 0 only when the tests passed); when it cannot, the runner's own
// verdict in the output decides (go test's FAIL and ok, pytest's "N
// failed", cargo's "test result: FAILED", npm's errors, "error TS…",
// Maven's BUILD FAILURE…), and with no verdict the record says the
// command ran, never that it passed.

// outcome is what a run came to.
type outcome int

const (
	outcomeRan    outcome = iota // it ran; nothing says how it ended
	outcomePassed                // the runner passed
	outcomeFailed                // the runner failed
)

// exits is a set of exit statuses a command may end with.
type exits uint8

const (
	exitZero exits = 1 << iota
	exitNonZero
	exitAny = exitZero | exitNonZero
)

// judgement is how a run ended and what says so.
type judgement struct {
	outcome outcome
	// exact: the reported exit code is the runner's own (code), so that
	// it alone tells how the runner ended.
	exact bool
	code  int // the runner's exit code when exact; else the reported one, -1 when not given
	// byOutput: the outcome was read from the output, not the exit code.
	byOutput bool
	// whose names the command whose exit code was reported, when it was
	// not the runner's; background is set when the runner was left
	// running in the background.
	whose      string
	masked     bool // the line's exit code does not depend on the runner's at all
	background bool
	runner     string // the runner's name, as messages call it
	evidence   string // the output line that decided, when one did
}

// judgeRun tells how the run of segs[p], a test run, a build or a program,
// ended, from the exit code the host reported (code; given false when the
// host gave none) and the output.
func judgeRun(segs []shellCommand, p int, code int, given bool, background bool, out string) judgement {
	c := segs[p]
	j := judgement{code: -1, runner: runnerName(c)}
	if given {
		j.code = code
	}
	lines := outputLines(out)
	v := readVerdict(c, lines)
	start, end := pipelineOf(segs, p)
	pipefail := pipefailBefore(segs, start)
	bg := background || pipelineBackground(segs, end)
	if echoed, ok := echoedStatus(segs, p, end, pipefail, lines); ok && !bg {
		j.code, given = echoed, true
		j.exact = true
	} else if given && !bg {
		ifZero, ifNonZero := lineExits(segs, p, start, end, pipefail, exitZero), lineExits(segs, p, start, end, pipefail, exitNonZero)
		j.exact = ifZero == exitZero && ifNonZero == exitNonZero
		switch {
		case j.exact:
		case code == 0 && ifNonZero&exitZero == 0:
			// Nothing but a pass could end in 0 (go test && echo ok): the
			// runner's own code was 0 too.
			j.exact = true
		case code != 0 && ifZero&exitNonZero == 0:
			j.outcome = outcomeFailed // nothing but a failure could end non-zero (go test || false)
		}
		if !j.exact {
			j.whose = lastCommandName(segs)
			j.masked = ifZero == ifNonZero // the runner's status never reaches the end
		}
	}
	j.background = bg
	if bg {
		j.whose = ""
	}
	switch {
	case j.exact && j.code != 0:
		j.outcome = outcomeFailed
	case v.failed && (v.strong || !j.exact):
		// A runner's own failure summary outweighs even an exit code of
		// 0 that is its own (a Makefile that ignores a failing recipe);
		// a traceback or a compile error only an exit code that is not.
		j.outcome, j.byOutput, j.evidence = outcomeFailed, true, v.line
	case j.exact:
		j.outcome = outcomePassed
	case j.outcome != outcomeRan:
		// Read from the shell's rules above.
	case bg:
	case passShown(v, segs, p, end, lines):
		j.outcome, j.byOutput, j.evidence = outcomePassed, true, v.line
	case !v.passed() && quietPass(segs, p, end, lines):
		j.outcome, j.byOutput, j.evidence = outcomePassed, true, "printed nothing"
	case !v.passed() && isMake(c) && !c.redirected && outputReach(segs, p, end, lines, "") <= makeReach(c):
		// make ends a failed run with "make: *** [target] Error N" (in
		// parallel, other jobs may print after it).
		j.outcome, j.byOutput, j.evidence = outcomePassed, true, "no make error"
	}
	return j
}

// quietRunners print nothing when all is well and their errors when not:
// for them silence is a pass.
func quietRunner(c shellCommand) bool {
	if len(c.words) == 0 {
		return false
	}
	sub := ""
	if len(c.words) > 1 {
		sub = c.words[1]
	}
	switch path.Base(c.words[0]) {
	case "go":
		return sub == "build" || sub == "vet"
	case "tsc":
		return !slices.ContainsFunc(c.words[1:], func(w string) bool {
			return w == "-w" || w == "--watch" || w == "-v" || w == "--version" || w == "--listFiles" || w == "--showConfig" || w == "--help"
		})
	case "mvn", "mvnw":
		return slices.Contains(c.words[1:], "-q") || slices.Contains(c.words[1:], "--quiet")
	}
	return false
}

func isMake(c shellCommand) bool {
	return len(c.words) > 0 && (path.Base(c.words[0]) == "make" || path.Base(c.words[0]) == "gmake")
}

// makeReach is how much of make's output must be seen for the absence of
// its error line to tell: its end, or all of it when jobs run in parallel.
func makeReach(c shellCommand) int {
	if slices.ContainsFunc(c.words[1:], func(w string) bool { return strings.HasPrefix(w, "-j") || strings.HasPrefix(w, "--jobs") }) {
		return reachAll
	}
	return reachTail
}

// quietPass reports whether a quiet runner printed nothing that reached
// the output: not redirected away, through no filter but head, tail or
// tee, and no line in the output but what echo printed after it.
func quietPass(segs []shellCommand, p, end int, lines []string) bool {
	c := segs[p]
	if !quietRunner(c) || c.redirected {
		return false
	}
	for _, m := range segs[p+1 : end+1] {
		if len(m.words) == 0 {
			continue
		}
		switch path.Base(m.words[0]) {
		case "head", "tail":
			if _, ok := lineCountArg(m.words[1:]); !ok {
				return false
			}
		case "tee", "cat", "less", "more":
		default:
			return false
		}
	}
	var echoed []string
	for i, s := range segs {
		if (i < p || i > end) && len(s.words) > 0 && s.words[0] == "echo" {
			args := s.words[1:]
			for len(args) > 0 && strings.HasPrefix(args[0], "-") {
				args = args[1:]
			}
			echoed = append(echoed, strings.Join(args, " "))
		}
	}
	for _, l := range lines {
		if !slices.Contains(echoed, strings.TrimSpace(l)) {
			return false
		}
	}
	return true
}

// exitFact is the fact that says how the run ended, "" when nothing can be
// said of its exit code.
func (j judgement) exitFact(given bool) string {
	verdict := ""
	switch j.outcome {
	case outcomeFailed:
		verdict = "failed"
	case outcomePassed:
		verdict = "passed"
	}
	switch {
	case j.exact:
		return fmt.Sprintf("exit code %d", j.code)
	case !given && !j.background:
		if verdict == "" {
			return ""
		}
		return "exit code " + unknownExit + " " + verdict
	}
	var b strings.Builder
	switch {
	case j.background && j.code < 0:
		fmt.Fprintf(&b, "%s ran in the background", j.runner)
	case j.background:
		fmt.Fprintf(&b, "exit code %d is the shell's, %s ran in the background", j.code, j.runner)
	case j.masked:
		fmt.Fprintf(&b, "exit code %d is %s's", j.code, j.whose)
	default:
		fmt.Fprintf(&b, "exit code %d is the whole line's", j.code)
	}
	switch {
	case verdict == "":
		b.WriteString("; the output does not tell")
	case j.byOutput:
		b.WriteString("; the output shows it " + verdict)
	default:
		b.WriteString("; so " + j.runner + " " + verdict)
	}
	return b.String()
}

// hidden says, for a narrative, why the exit code does not tell: "its exit
// code was tail's", "it ran in the background"; "" when it does.
func (j judgement) hidden() string {
	switch {
	case j.exact:
		return ""
	case j.background:
		return "it was left running in the background"
	case j.masked && j.code >= 0:
		return fmt.Sprintf("the exit code %d was %s's", j.code, j.whose)
	case j.code >= 0:
		return fmt.Sprintf("the exit code %d was the whole line's", j.code)
	}
	return ""
}

// runnerName is what messages call the runner: "go test", "cargo test",
// "pytest", "jest".
func runnerName(c shellCommand) string {
	if len(c.words) == 0 {
		return ""
	}
	name := path.Base(c.words[0])
	sub := ""
	if len(c.words) > 1 {
		sub = c.words[1]
	}
	switch name {
	case "python", "python3", "py":
		if sub == "-m" && len(c.words) > 2 {
			return c.words[2]
		}
	case "go", "cargo", "npm", "pnpm", "yarn", "bun", "make", "just", "mvn", "gradle", "gradlew", "dotnet", "deno", "swift", "mix":
		if sub != "" && !strings.HasPrefix(sub, "-") {
			return name + " " + sub
		}
	}
	return name
}

// pipelineOf returns the first and the last segment of the pipeline that
// holds segs[p].
func pipelineOf(segs []shellCommand, p int) (start, end int) {
	start, end = p, p
	for start > 0 && segs[start-1].sep == "|" {
		start--
	}
	for end < len(segs)-1 && segs[end].sep == "|" {
		end++
	}
	return start, end
}

// pipefailBefore reports whether `set -o pipefail` (or set -euo pipefail)
// ran before segment i.
func pipefailBefore(segs []shellCommand, i int) bool {
	on := false
	for _, c := range segs[:i] {
		if len(c.words) < 2 || c.words[0] != "set" {
			continue
		}
		for k, w := range c.words[1:] {
			if w == "pipefail" && k > 0 {
				on = strings.HasPrefix(c.words[k], "-")
			}
		}
	}
	return on
}

// pipelineBackground reports whether the pipeline ending at segs[end] was
// sent to the background, itself or with the && || list that holds it.
func pipelineBackground(segs []shellCommand, end int) bool {
	k := end
	for k < len(segs)-1 && (segs[k].sep == "|" || segs[k].sep == "&&" || segs[k].sep == "||") {
		k++
	}
	return segs[k].sep == "&"
}

// lastCommandName names the command whose exit status ends the line.
func lastCommandName(segs []shellCommand) string {
	for i := len(segs) - 1; i >= 0; i-- {
		w := segs[i].words
		for len(w) > 0 && shellKeywords[w[0]] {
			w = w[1:]
		}
		if len(w) > 0 {
			if name := strings.Trim(path.Base(w[0]), "(){}"); name != "" {
				return name
			}
		}
	}
	return "the shell"
}

var shellKeywords = wordSet("do", "done", "then", "fi", "else", "esac", "{", "}", "(", ")", "!")

// exitOf is the set of exit statuses a command may end with, for the
// commands whose status is known whatever they read: echo and tail end in
// 0, false in 1; grep's depends on what it found.
func exitOf(c shellCommand) exits {
	if len(c.words) == 0 {
		return exitZero
	}
	switch path.Base(c.words[0]) {
	case "true", ":", "echo", "printf", "tail", "head", "tee", "cat", "sort", "uniq", "wc", "less", "more", "cut", "tr", "column", "nl", "fold", "sleep":
		return exitZero
	case "false":
		return exitNonZero
	case "exit":
		if len(c.words) > 1 {
			if n, err := strconv.Atoi(c.words[1]); err == nil {
				if n == 0 {
					return exitZero
				}
				return exitNonZero
			}
		}
	}
	return exitAny
}

// pipelineExit is the set of statuses the pipeline segs[start..end] may
// end with, when its segment p (the runner) ends with r (p < 0: no
// runner in it).
func pipelineExit(segs []shellCommand, p, start, end int, pipefail bool, r exits) exits {
	if !pipefail {
		if p == end {
			return r
		}
		return exitOf(segs[end])
	}
	// pipefail: the last non-zero status of any of them.
	st := exitZero
	for i := start; i <= end; i++ {
		s := exitOf(segs[i])
		if i == p {
			s = r
		}
		if s&exitNonZero != 0 {
			if s == exitNonZero {
				return exitNonZero
			}
			st = exitAny
		}
	}
	return st
}

// lineExits is the set of statuses the whole command line may end with
// when the runner, segs[p] in the pipeline segs[start..end], ends with r:
// what comes after it by && || ; and & decides.
func lineExits(segs []shellCommand, p, start, end int, pipefail bool, r exits) exits {
	st := pipelineExit(segs, p, start, end, pipefail, r)
	for i := end + 1; i < len(segs); {
		op := segs[i-1].sep
		s, e := i, i
		for e < len(segs)-1 && segs[e].sep == "|" {
			e++
		}
		next := pipelineExit(segs, -1, s, e, pipefailBefore(segs, s), exitAny)
		switch op {
		case "&&":
			out := exits(0)
			if st&exitZero != 0 {
				out |= next
			}
			if st&exitNonZero != 0 {
				out |= exitNonZero
			}
			st = out
		case "||":
			out := exits(0)
			if st&exitNonZero != 0 {
				out |= next
			}
			if st&exitZero != 0 {
				out |= exitZero
			}
			st = out
		default: // ; & and new lines
			st = next
		}
		if segs[e].sep == "&" {
			st = exitZero // the list so far went to the background
		}
		i = e + 1
	}
	return st
}

// echoedStatus reads the runner's exit code where the line prints it
// right after the runner (`go test ./...; echo "exit: $?"`) and the
// output holds that line.
func echoedStatus(segs []shellCommand, p, end int, pipefail bool, lines []string) (int, bool) {
	if (p != end && !pipefail) || end+1 >= len(segs) || segs[end].sep != ";" {
		return 0, false
	}
	e := segs[end+1]
	if len(e.words) < 2 || e.words[0] != "echo" || e.target != "" {
		return 0, false
	}
	args := e.words[1:]
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		args = args[1:]
	}
	text := strings.Join(args, " ")
	if strings.Count(text, "$?") != 1 {
		return 0, false
	}
	before, after, _ := strings.Cut(text, "$?")
	re, err := regexp.Compile(`^` + regexp.QuoteMeta(strings.TrimSpace(before)) + `\s*(\d+)` + regexp.QuoteMeta(strings.TrimRight(after, " ")) + `$`)
	if err != nil {
		return 0, false
	}
	for i := len(lines) - 1; i >= 0; i-- {
		if m := re.FindStringSubmatch(strings.TrimSpace(lines[i])); m != nil {
			n, err := strconv.Atoi(m[1])
			return n, err == nil
		}
	}
	return 0, false
}

// How much of a runner's output reached the record, and how much a pass
// verdict needs: a summary of the whole run (pytest's, jest's) is good in
// any part of the output; cargo's "test result: ok" of one test binary in
// its tail too (cargo stops after a failing binary and ends its output
// with the error); go test's "ok" of one package only in all of it.
const (
	reachAll  = iota // the whole output
	reachTail        // its end (| tail -n N)
	reachPart        // any part of it (| grep, | head, a file, the background)
)

// outputReach tells how much of the runner's output the record holds; a
// grep that would keep failLine (a line a failing run prints) takes
// nothing away that tells.
func outputReach(segs []shellCommand, p, end int, lines []string, failLine string) int {
	if segs[p].target != "" {
		return reachPart // its output went to a file
	}
	reach := reachAll
	for _, m := range segs[p+1 : end+1] {
		if len(m.words) == 0 {
			continue
		}
		switch name := path.Base(m.words[0]); name {
		case "tee", "cat", "sort", "less", "more":
		case "tail", "head":
			n, ok := lineCountArg(m.words[1:])
			if !ok || len(lines) >= n {
				if name == "tail" {
					reach = max(reach, reachTail)
				} else {
					reach = reachPart
				}
			}
		case "grep", "egrep", "fgrep", "rg":
			if failLine == "" || !grepKeeps(m, failLine) {
				reach = reachPart
			}
		default:
			reach = reachPart
		}
	}
	return reach
}

// grepKeeps reports whether the grep m would print line: its patterns
// (-e, -E, -F, -i and the basic syntax read; -v, -c, -l, -o, -q, -w or -x
// answer no).
func grepKeeps(m shellCommand, line string) bool {
	name := path.Base(m.words[0])
	extended, fixed, fold := name == "egrep" || name == "rg", name == "fgrep", false
	var patterns []string
	args := m.words[1:]
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-e" || a == "--regexp":
			if i+1 < len(args) {
				i++
				patterns = append(patterns, args[i])
			}
		case strings.HasPrefix(a, "--regexp="):
			patterns = append(patterns, strings.TrimPrefix(a, "--regexp="))
		case a == "-A" || a == "-B" || a == "-C" || a == "-m" || a == "--max-count":
			i++
		case strings.HasPrefix(a, "--"):
			switch a {
			case "--extended-regexp":
				extended = true
			case "--fixed-strings":
				fixed = true
			case "--ignore-case":
				fold = true
			case "--color", "--colour", "--color=never", "--color=always", "--line-number", "--no-filename", "--with-filename", "--text":
			default:
				return false
			}
		case strings.HasPrefix(a, "-") && len(a) > 1:
			for _, f := range a[1:] {
				switch f {
				case 'E':
					extended = true
				case 'F':
					fixed = true
				case 'i':
					fold = true
				case 'n', 'H', 'h', 's', 'a', 'r', 'R', 'I', 'P':
				case 'A', 'B', 'C', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
					// context lines: the count is in this word or the next
				default:
					return false
				}
			}
			if last := a[len(a)-1]; (last == 'A' || last == 'B' || last == 'C') && i+1 < len(args) {
				i++
			}
		case len(patterns) == 0 && !slices.Contains(args[:i], "-e"):
			patterns = append(patterns, a)
		}
	}
	for _, p := range patterns {
		expr := p
		switch {
		case fixed:
			expr = regexp.QuoteMeta(p)
		case !extended:
			expr = basicToExtended(p)
		}
		if fold {
			expr = "(?i)" + expr
		}
		re, err := regexp.Compile(expr)
		if err == nil && re.MatchString(line) {
			return true
		}
	}
	return false
}

// basicToExtended rewrites a POSIX basic regular expression in the
// syntax of regexp: \| \( \) \{ \} \+ \? are operators there, their bare
// characters literals; \< and \> are word boundaries.
func basicToExtended(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\\' && i+1 < len(p):
			i++
			switch n := p[i]; n {
			case '|', '(', ')', '{', '}', '+', '?':
				b.WriteByte(n)
			case '<', '>':
				b.WriteString(`\b`)
			default:
				b.WriteByte('\\')
				b.WriteByte(n)
			}
		case strings.IndexByte("|(){}+?", c) >= 0:
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// lineCountArg reads head's and tail's line count (-n 20, -20, -n20,
// --lines=20; 10 by default); false for a count from the start (+N) or
// bytes.
func lineCountArg(args []string) (int, bool) {
	for i, a := range args {
		v := ""
		switch {
		case a == "-n" || a == "--lines":
			if i+1 < len(args) {
				v = args[i+1]
			}
		case strings.HasPrefix(a, "--lines="):
			v = strings.TrimPrefix(a, "--lines=")
		case strings.HasPrefix(a, "-n"):
			v = a[2:]
		case a == "-c" || strings.HasPrefix(a, "-c") || strings.HasPrefix(a, "--bytes"):
			return 0, false
		case len(a) > 1 && a[0] == '-' && a[1] >= '0' && a[1] <= '9':
			v = a[1:]
		default:
			continue
		}
		n, err := strconv.Atoi(v)
		return n, err == nil && n >= 0
	}
	return 10, true
}

// verdict is what a runner's own lines in the output say.
type verdict struct {
	failed bool
	strong bool // a runner's own failure line, not a traceback or a compile error alone
	// passes holds, by family of pass line (go test's "ok", cargo's "test
	// result: ok."…), the least output such lines speak for (reachAll…).
	passes map[string]int
	line   string // the line that decided
}

func (v verdict) passed() bool { return len(v.passes) > 0 }

// failureLines are, by family of pass line, a line that a failing run of
// the same runner always prints: a filter (grep) that would keep it keeps
// the failure in sight, so that what it let through still tells.
var failureLines = map[string]string{
	"go":          "FAIL\texample.com/m/pkg\t0.012s",
	"tap":         "not ok 1 - a test",
	"cargo":       "test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s",
	"cargo build": "error: could not compile `app` (bin \"app\") due to 1 previous error",
	"jest":        "Test Suites: 1 failed, 1 passed, 2 total",
	"vitest":      "Test Files  1 failed | 1 passed (2)",
	"mocha":       "1 failing",
	"junit":       "[ERROR] Tests run: 2, Failures: 1, Errors: 0, Skipped: 0",
}

var (
	// Summary lines that count tests: pytest's "2 failed, 1 passed in
	// 0.08s" (with or without ===), jest's "Tests: 1 failed, 1 passed, 2
	// total", vitest's "Tests  1 failed | 1 passed (2)", rspec's "2
	// examples, 1 failure", mocha's "3 passing".
	summaryRE   = regexp.MustCompile(`^(?:=+ |Tests:\s|Test Suites:\s|Tests\s|Test Files\s)?\s*(?:\d+ \w+(?:, | \| )?)*\d+ (?:passed|failed|failures?|errors?|examples?|skipped|failing|passing|deselected|xfailed|xpassed|warnings?|total)\b`)
	failCountRE = regexp.MustCompile(`\b[1-9]\d* (?:failed|failures?|errors?|failing)\b|\b(?:Failures|Errors): [1-9]`)
	passCountRE = regexp.MustCompile(`\b[1-9]\d* (?:passed|passing)\b|^\d+ examples?, 0 failures\b|Tests run: [1-9]\d*, Failures: 0, Errors: 0\b`)

	makeErrorRE    = regexp.MustCompile(`^g?make(?:\[\d+\])?: \*\*\* (?:.*\bError \d+$|No rule to make target)`)
	cargoErrorRE   = regexp.MustCompile(`^error\[E\d+\]: |^error: could not compile|^error: test failed|^error: \d+ targets? failed`)
	cFamilyErrorRE = regexp.MustCompile(`^[\w./\\-]+:\d+:\d+: (?:fatal )?error: `)
	tsErrorRE      = regexp.MustCompile(`\berror TS\d+:`)
	goPositionRE   = regexp.MustCompile(`^(?:vet: )?[\w./\\-]+\.go:\d+:\d+: \S`)
	unittestFailRE = regexp.MustCompile(`^FAILED \((?:failures|errors)=\d+|^(?:FAIL|ERROR): \w+ \(`)
	rspecFailRE    = regexp.MustCompile(`^rspec \S+:\d+ # `)
	cargoTestRE    = regexp.MustCompile(`^test \S+ \.\.\. FAILED$`)
	nodeErrorRE    = regexp.MustCompile(`^(?:\w+\.)*\w*(?:Error|Exception)(?: \[\w+\])?: \S`)
	unittestOKRE   = regexp.MustCompile(`^OK(?: \(.*\))?$`)
	pytestFailRE   = regexp.MustCompile(`^(?:FAILED|ERROR) \S+(?:::|\.py\b)`)
	tapOKRE        = regexp.MustCompile(`^ok \d+\b`)
)

// readVerdict reads the runners' own verdicts in the lines of a run's
// output: a failure anywhere wins over a pass.
func readVerdict(c shellCommand, lines []string) verdict {
	v := verdict{passes: map[string]int{}}
	fail := func(line string, strong bool) {
		if !v.failed || strong && !v.strong {
			v.failed, v.line = true, strings.TrimSpace(line)
		}
		v.strong = v.strong || strong
	}
	pass := func(line, family string, reach int) {
		if r, ok := v.passes[family]; !ok || reach < r {
			v.passes[family] = reach
		}
		if !v.failed && v.line == "" {
			v.line = strings.TrimSpace(line)
		}
	}
	name := runnerName(c)
	maven := strings.HasPrefix(name, "mvn")
	ranTests, suitesClean, filesClean := false, false, false
	for i, l := range lines {
		t := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(t, "--- FAIL:"), t == "FAIL", strings.HasPrefix(t, "FAIL\t"), strings.HasPrefix(t, "FAIL "),
			strings.HasPrefix(t, "not ok "), pytestFailRE.MatchString(t):
			fail(l, true)
		case strings.Contains(t, "test result: FAILED"), cargoTestRE.MatchString(t):
			fail(l, true)
		case strings.HasPrefix(t, "test result: ok."):
			pass(l, "cargo", reachTail) // one test binary's
		case cargoErrorRE.MatchString(t) && !strings.HasPrefix(l, " "):
			fail(l, true)
		case strings.HasPrefix(t, "npm ERR!"), strings.HasPrefix(t, "npm error "):
			fail(l, true)
		case tsErrorRE.MatchString(t):
			fail(l, true)
		case strings.Contains(t, "BUILD FAILURE"), strings.Contains(t, "BUILD FAILED"), strings.HasPrefix(t, "FAILURE: Build failed"),
			strings.HasPrefix(t, "> Task ") && strings.HasSuffix(t, " FAILED"):
			fail(l, true)
		case strings.Contains(t, "BUILD SUCCESS"):
			pass(l, "build", reachPart)
		case makeErrorRE.MatchString(t) && !strings.HasSuffix(t, "(ignored)"), strings.HasPrefix(t, "make: Target") && strings.Contains(t, "not remade because of errors"),
			strings.Contains(t, "*** Waiting for unfinished jobs"):
			fail(l, true)
		case unittestFailRE.MatchString(t), rspecFailRE.MatchString(t):
			fail(l, true)
		case maven && strings.HasPrefix(t, "[ERROR]"):
			fail(l, true)
		case summaryRE.MatchString(t), strings.HasPrefix(t, "Tests run:"), strings.HasPrefix(t, "[ERROR] Tests run:"), strings.HasPrefix(t, "[INFO] Tests run:"):
			switch {
			case failCountRE.MatchString(t):
				fail(l, true)
			case !passCountRE.MatchString(t):
			case strings.HasPrefix(t, "Test Suites:"):
				suitesClean = true
			case strings.HasPrefix(t, "Test Files"):
				filesClean = true
			case strings.HasPrefix(t, "Tests:"):
				// Jest counts tests; a suite that failed to load is
				// counted apart, on Test Suites.
				pass(l, "jest", reachTail)
			case strings.HasPrefix(t, "Tests "):
				pass(l, "vitest", reachTail)
			case strings.Contains(t, "Tests run:"):
				pass(l, "junit", reachAll) // one test class's
			case strings.Contains(t, " passing"):
				pass(l, "mocha", reachTail) // "N failing" follows on a line of its own
			default:
				pass(l, "summary", reachPart) // pytest's, rspec's: the whole run on one line
			}
		case strings.HasPrefix(t, "Ran ") && strings.Contains(t, " test"):
			ranTests = true
		case unittestOKRE.MatchString(t) && (ranTests || name == "unittest"):
			pass(l, "summary", reachPart)
		case tapOKRE.MatchString(t):
			pass(l, "tap", reachAll) // one test's
		case strings.HasPrefix(t, "ok ") || strings.HasPrefix(t, "ok\t"):
			reach := reachAll // one package's
			if onePackage(c) {
				reach = reachPart
			}
			pass(l, "go", reach)
		case strings.HasPrefix(t, "Finished ") && strings.Contains(t, "target(s) in") && cargoBuilds(c):
			pass(l, "cargo build", reachTail)
		case goPositionRE.MatchString(l), cFamilyErrorRE.MatchString(l), strings.HasPrefix(l, "panic: "), strings.HasPrefix(l, "error: "):
			fail(l, false)
		case strings.HasPrefix(l, "Traceback (most recent call last):"):
			fail(l, false)
		case nodeErrorRE.MatchString(l) && i+1 < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i+1]), "at "):
			fail(l, false)
		case strings.Contains(t, "Segmentation fault"), strings.Contains(t, "core dumped"), strings.HasPrefix(t, "Failed to compile"):
			fail(l, false)
		}
	}
	if r, ok := v.passes["jest"]; ok && suitesClean {
		v.passes["jest"] = max(r, reachPart)
	}
	if r, ok := v.passes["vitest"]; ok && filesClean {
		v.passes["vitest"] = max(r, reachPart)
	}
	return v
}

// passShown reports whether every pass line of v speaks for as much of
// the output as reached the record.
func passShown(v verdict, segs []shellCommand, p, end int, lines []string) bool {
	if !v.passed() || v.failed {
		return false
	}
	for family, reach := range v.passes {
		if reach < outputReach(segs, p, end, lines, failureLines[family]) {
			return false
		}
	}
	return true
}

// onePackage reports whether a go test run names at most one package, so
// that its one "ok" line speaks for the whole run.
func onePackage(c shellCommand) bool {
	if len(c.words) < 2 || path.Base(c.words[0]) != "go" {
		return false
	}
	n := 0
	for _, a := range operands(c.args) {
		if strings.Contains(a, "...") {
			return false
		}
		n++
	}
	return n <= 1
}

// cargoBuilds reports whether c is a cargo build, check or clippy, whose
// "Finished" line says it compiled (cargo test's says only that the tests
// compiled).
func cargoBuilds(c shellCommand) bool {
	if len(c.words) < 2 || path.Base(c.words[0]) != "cargo" {
		return false
	}
	switch c.words[1] {
	case "build", "check", "clippy", "b", "c":
		return true
	}
	return false
}
