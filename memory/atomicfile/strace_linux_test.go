package atomicfile_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mnemo-dev/mnemo/memory/atomicfile"
)

// The system calls, as strace(1) sees them when it is installed: the
// temporary file is fsynced, renamed over the target, and then the folder
// is fsynced.
func TestTheSystemCallsInOrder(t *testing.T) {
	if dir := os.Getenv("ATOMICFILE_STRACED"); dir != "" {
		if err := atomicfile.WriteFile(filepath.Join(dir, "setup.json"), []byte("{}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return
	}
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("strace is not installed")
	}
	dir := t.TempDir()
	log := filepath.Join(t.TempDir(), "strace.log")
	cmd := exec.Command(strace, "-f", "-y", "-s", "4096", "-o", log, "-e", "trace=fsync,fdatasync,rename,renameat,renameat2",
		os.Args[0], "-test.run=^TestTheSystemCallsInOrder$", "-test.count=1")
	cmd.Env = append(os.Environ(), "ATOMICFILE_STRACED="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		if strings.Contains(string(out), "ptrace") {
			t.Skipf("strace cannot trace here: %s", out)
		}
		t.Fatalf("%v: %s", err, out)
	}
	raw, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dir, "setup.json")
	tmp := regexp.QuoteMeta(filepath.Join(dir, ".setup.json.tmp-")) + `\d+`
	steps := []*regexp.Regexp{
		regexp.MustCompile(`f(data)?sync\(\d+<` + tmp + `>\) = 0`),
		regexp.MustCompile(`rename(at2?)?\(.*"` + tmp + `".*"` + regexp.QuoteMeta(target) + `".*\) = 0`),
		regexp.MustCompile(`f(data)?sync\(\d+<` + regexp.QuoteMeta(dir) + `>\) = 0`),
	}
	next := 0
	for _, line := range calls(string(raw)) {
		if next < len(steps) && steps[next].MatchString(line) {
			next++
		}
	}
	if next < len(steps) {
		t.Errorf("no %s after the steps before it in:\n%s", steps[next], raw)
	}
}

var (
	unfinished = regexp.MustCompile(`^(\d+)\s+(.*) <unfinished \.\.\.>$`)
	resumed    = regexp.MustCompile(`^(\d+)\s+<\.\.\. \w+ resumed>(.*)$`)
	// padding is how strace aligns a resumed call's result.
	padding = regexp.MustCompile(`^\)\s+= `)
)

// calls returns strace's log a call a line: with -f, a call that another
// thread's event (Go's preemption signal, say) interrupted is logged as
// "<unfinished ...>" and, later, "<... fsync resumed>) = 0"; the two halves
// are joined into the line the call would have had (without the padding
// strace puts before a resumed call's result).
func calls(log string) []string {
	var out []string
	pending := map[string]string{} // by pid, the first half
	for line := range strings.Lines(log) {
		line = strings.TrimRight(line, "\n")
		if m := unfinished.FindStringSubmatch(line); m != nil {
			pending[m[1]] = m[2]
			continue
		}
		if m := resumed.FindStringSubmatch(line); m != nil {
			if first, ok := pending[m[1]]; ok {
				delete(pending, m[1])
				line = m[1] + "  " + first + padding.ReplaceAllString(m[2], ") = ")
			}
		}
		out = append(out, line)
	}
	return out
}

// A call interrupted in strace's log is read as one line.
func TestCallsJoinsInterruptedCalls(t *testing.T) {
	log := "5683  fsync(5</d/.setup.json.tmp-7> <unfinished ...>\n" +
		"5673  --- SIGURG {si_signo=SIGURG, si_code=SI_TKILL, si_pid=5673, si_uid=0} ---\n" +
		"5683  <... fsync resumed>)              = 0\n" +
		"5683  fsync(5</d>) = 0\n"
	got := calls(log)
	want := []string{
		"5673  --- SIGURG {si_signo=SIGURG, si_code=SI_TKILL, si_pid=5673, si_uid=0} ---",
		"5683  fsync(5</d/.setup.json.tmp-7>) = 0",
		"5683  fsync(5</d>) = 0",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("calls =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
