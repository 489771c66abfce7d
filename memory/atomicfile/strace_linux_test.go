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
	for line := range strings.Lines(string(raw)) {
		if next < len(steps) && steps[next].MatchString(line) {
			next++
		}
	}
	if next < len(steps) {
		t.Errorf("no %s after the steps before it in:\n%s", steps[next], raw)
	}
}
