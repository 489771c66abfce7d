//go:build e2e

// Package harness is the shared harness of the offline end-to-end tests:
// the Claude Code, Codex, Gemini CLI and OpenCode suites under
// adapters/*/e2e and the observer's memory/observer/e2e_test.go. It finds
// the repository and Mnemo's binaries, skips outside a loopback-only
// network namespace, builds the isolated HOME/TMPDIR/MNEMO_HOME world with
// its calc project, runs a CLI as its own process group under a timeout,
// stops Mnemo's daemon and keeps Mnemo's logs among the artifacts.
//
// It is imported only by _test files behind the e2e build tag, and carries
// that tag itself, so that `go test ./...` and mnemo-hook never build it.
// What is one host's own (its CLI, its config, its scripted server) stays
// in that host's e2e package.
package harness

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/adapters/claudecode/modelserver"
)

// What the suites assume of Mnemo's command line, kept here so that a
// change there is a one-line fix.
var (
	// ContextArgs prints the context SessionStart would inject for the
	// project of the working directory.
	ContextArgs = []string{"context"}
	// StopArgs stops the daemon the hooks started.
	StopArgs = []string{"daemon", "stop"}
)

// SystemPath is the PATH every CLI gets after the test's own entries.
const SystemPath = "/usr/local/bin:/usr/bin:/bin"

// RepoRoot finds the module root above the working directory.
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.Contains(data, []byte("module github.com/mnemo-dev/mnemo\n")) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("mnemo's go.mod not found above the working directory")
		}
		dir = parent
	}
}

// RequireLoopbackOnly skips unless the test runs in a network namespace
// whose only interface is an up loopback, so that no CLI can reach the
// internet. runScript names the script that sets the namespace up.
func RequireLoopbackOnly(t testing.TB, runScript string) {
	t.Helper()
	ifaces, err := net.Interfaces()
	if err != nil {
		t.Fatalf("list network interfaces: %v", err)
	}
	up := false
	for _, ifc := range ifaces {
		if ifc.Flags&net.FlagLoopback == 0 {
			t.Skipf("network interface %s is not loopback: run inside `unshare -n` (%s does)", ifc.Name, runScript)
		}
		up = up || ifc.Flags&net.FlagUp != 0
	}
	if !up {
		t.Skipf("loopback interface is down: run `ip link set lo up` inside the namespace (%s does)", runScript)
	}
}

// EnvOr is the environment variable key, or def when it is unset or empty.
func EnvOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// Mkdir creates the folder joined from parts, with its parents, and
// returns its path.
func Mkdir(t testing.TB, parts ...string) string {
	t.Helper()
	dir := filepath.Join(parts...)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// WriteFile writes body to path, creating its folder.
func WriteFile(t testing.TB, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// CLI returns the npm-installed CLI under test, called name: the path in
// envVar, else def. It skips when the file is missing, saying to run
// setupSh and set envVar, or to use runSh.
func CLI(t testing.TB, name, envVar, def, setupSh, runSh string) string {
	t.Helper()
	bin := EnvOr(envVar, def)
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("%s not found (%v): run %s and set %s, or use %s", name, err, setupSh, envVar, runSh)
	}
	return bin
}

// Mnemo returns the absolute paths of the mnemo and mnemo-hook binaries
// under test: MNEMO_BIN and MNEMO_HOOK_BIN, else <root>/bin. It skips when
// either is missing.
func Mnemo(t testing.TB, root string) (mnemoBin, hookBin string) {
	t.Helper()
	mnemoBin = EnvOr("MNEMO_BIN", filepath.Join(root, "bin", "mnemo"))
	hookBin = EnvOr("MNEMO_HOOK_BIN", filepath.Join(root, "bin", "mnemo-hook"))
	for _, p := range []*string{&mnemoBin, &hookBin} {
		if _, err := os.Stat(*p); err != nil {
			t.Skipf("Mnemo binary missing (%v): build bin/mnemo and bin/mnemo-hook (or set MNEMO_BIN, MNEMO_HOOK_BIN)", err)
		}
		abs, err := filepath.Abs(*p)
		if err != nil {
			t.Fatal(err)
		}
		*p = abs
	}
	return mnemoBin, hookBin
}

// World is one test's isolated folders, all under one t.TempDir().
type World struct {
	Base      string // the temporary folder that holds the others
	Home      string // HOME
	Tmp       string // TMPDIR
	MnemoHome string // MNEMO_HOME
	Project   string // the calc project, a git repository (WriteProject)
}

// Home creates the isolated world of one test: home, tmp, mnemo and
// calc-project under a fresh t.TempDir(). The project is empty until
// WriteProject.
func Home(t testing.TB) World {
	t.Helper()
	base := t.TempDir()
	return World{
		Base:      base,
		Home:      Mkdir(t, base, "home"),
		Tmp:       Mkdir(t, base, "tmp"),
		MnemoHome: Mkdir(t, base, "mnemo"),
		Project:   Mkdir(t, base, "calc-project"),
	}
}

// Env is the start of a CLI's whole environment (env -i style) in w: PATH
// (path, then SystemPath), HOME, TMPDIR, LANG and MNEMO_HOME, which hooks
// inherit. Each host appends its own variables.
func (w World) Env(path ...string) []string {
	return []string{
		"PATH=" + strings.Join(append(append([]string(nil), path...), SystemPath), ":"),
		"HOME=" + w.Home,
		"TMPDIR=" + w.Tmp,
		"LANG=C.UTF-8",
		"MNEMO_HOME=" + w.MnemoHome,
	}
}

// The project: calc.py has two bugs, test.sh fails until both are fixed.
const (
	CalcPy = `def add(a, b):
    return a - b


def mul(a, b):
    return a + b
`
	TestSh = `#!/bin/sh
# Fails (exit 1) until calc.py is fixed.
cd "$(dirname "$0")" || exit 2
exec python3 -B - <<'EOF'
import calc
assert calc.add(2, 3) == 5, "add(2, 3) should be 5, got %r" % calc.add(2, 3)
assert calc.mul(2, 3) == 6, "mul(2, 3) should be 6, got %r" % calc.mul(2, 3)
print("all tests passed")
EOF
`
)

// WriteProject makes w.Project a git repository whose one commit holds
// calc.py and test.sh.
func (w World) WriteProject(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Fatalf("the e2e project's test.sh needs python3: %v", err)
	}
	for name, body := range map[string]string{"calc.py": CalcPy, "test.sh": TestSh} {
		WriteFile(t, filepath.Join(w.Project, name), body)
	}
	w.Git(t, "init", "-q", "-b", "main")
	w.Git(t, "add", "calc.py", "test.sh")
	w.Git(t, "-c", "user.name=E2E", "-c", "user.email=e2e@example.invalid", "commit", "-q", "-m", "calc: add and mul")
}

// Git runs git in the project, with no system config and w's HOME, and
// returns its combined output; it fails the test when git fails.
func (w World) Git(t testing.TB, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = w.Project
	cmd.Env = []string{"PATH=" + SystemPath, "HOME=" + w.Home, "GIT_CONFIG_NOSYSTEM=1", "LANG=C.UTF-8"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// Result is one finished CLI run.
type Result struct {
	Took   time.Duration
	Exit   int // the exit code; 0 when the run did not finish
	Stdout []byte
	Stderr []byte
}

// ErrTimeout is Run's error when ctx ended before the CLI did.
var ErrTimeout = errors.New("timed out")

// Run runs cmd, made with exec.CommandContext(ctx, …), as its own process
// group, collecting its output: when ctx ends the whole group is killed,
// the CLI with its tool shells and hooks. With keepGroup false, what is
// left of the group once the CLI exits is killed too. A non-zero exit is
// no error (see Result.Exit); a timeout is ErrTimeout.
func Run(ctx context.Context, cmd *exec.Cmd, keepGroup bool) (Result, error) {
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second

	began := time.Now()
	err := cmd.Run()
	r := Result{Took: time.Since(began), Stdout: stdout.Bytes(), Stderr: stderr.Bytes()}
	if cmd.Process != nil && !keepGroup {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // leftovers of the group, if any
	}
	var exitErr *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return r, ErrTimeout
	case errors.As(err, &exitErr):
		r.Exit = exitErr.ExitCode()
		return r, nil
	}
	return r, err
}

// Runs numbers a test's CLI runs and keeps each one's output among its
// artifacts.
type Runs struct {
	T   *testing.T
	N   int           // runs so far
	Ext string        // the extension of the stdout artifact, e.g. ".jsonl"
	Max time.Duration // the timeout of one run
}

// Run runs the command cmd makes as Run does, under r.Max, keeps its
// stdout and stderr as "NN-label<Ext>" and "NN-label.stderr", and logs its
// TIMING. It fails the test when the CLI cannot start or times out, not
// when it exits non-zero. name is how the CLI is called in messages.
func (r *Runs) Run(name, label string, keepGroup bool, cmd func(ctx context.Context) *exec.Cmd) Result {
	r.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), r.Max)
	defer cancel()
	res, err := Run(ctx, cmd(ctx), keepGroup)
	r.N++
	Save(r.T, fmt.Sprintf("%02d-%s%s", r.N, label, r.Ext), res.Stdout)
	Save(r.T, fmt.Sprintf("%02d-%s.stderr", r.N, label), res.Stderr)
	switch {
	case errors.Is(err, ErrTimeout):
		r.T.Fatalf("%s %s: timed out after %v\nstderr:\n%s", name, label, r.Max, res.Stderr)
	case err != nil:
		r.T.Fatalf("%s %s: %v", name, label, err)
	}
	r.T.Logf("TIMING %s %s: %.2fs (exit %d)", name, label, res.Took.Seconds(), res.Exit)
	return res
}

// Lines decodes out, one JSON value a line (blank lines skipped), and
// hands each line's bytes to raw, when it is not nil, to keep. what names
// the output in failures.
func Lines[T any](t testing.TB, what string, out []byte, raw func(*T, json.RawMessage)) []T {
	t.Helper()
	var values []T
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var v T
		if err := json.Unmarshal(line, &v); err != nil {
			t.Fatalf("%s line %q: %v", what, line, err)
		}
		if raw != nil {
			raw(&v, append(json.RawMessage(nil), line...))
		}
		values = append(values, v)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read %s: %v", what, err)
	}
	return values
}

// Save writes an artifact file into t's folder under MNEMO_E2E_ARTIFACTS,
// when it is set; a failure to write is logged, never fails the test.
func Save(t testing.TB, name string, data []byte) { modelserver.SaveArtifact(t, name, data) }

// Command runs a mnemo command line (or any short command) in dir with the
// whole environment env and returns its combined output.
func Command(ctx context.Context, dir string, env []string, bin string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// MnemoFunc runs the mnemo binary bin with args, in the test's project and
// with its CLI's environment, and returns the combined output.
type MnemoFunc func(ctx context.Context, bin string, args ...string) (string, error)

// StopDaemonAtEnd stops, when the test ends, the daemon the hooks started,
// by `mnemo daemon stop` (StopArgs) through mnemo, and keeps Mnemo's logs
// among the artifacts as mnemo-logs-<path>.
func StopDaemonAtEnd(t *testing.T, mnemoHome, mnemoBin string, mnemo MnemoFunc) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if out, err := mnemo(ctx, mnemoBin, StopArgs...); err != nil {
			t.Logf("mnemo %s: %v\n%s", strings.Join(StopArgs, " "), err, out)
		}
		for name, body := range Logs(t, mnemoHome) {
			Save(t, "mnemo-logs-"+strings.ReplaceAll(name, string(filepath.Separator), "_"), []byte(body))
		}
	})
}

// Logs returns every file under $MNEMO_HOME/logs (hook.log among them), by
// path relative to that folder.
func Logs(t testing.TB, mnemoHome string) map[string]string {
	t.Helper()
	logs := map[string]string{}
	dir := filepath.Join(mnemoHome, "logs")
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		logs[rel] = string(data)
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Errorf("read Mnemo's logs: %v", err)
	}
	return logs
}

// errorLine and warnLine match records of slog's text or JSON handler.
var (
	errorLine = regexp.MustCompile(`level=ERROR|"level":"ERROR"`)
	warnLine  = regexp.MustCompile(`level=WARN|"level":"WARN"`)
)

// CheckLogs fails on error records in Mnemo's logs; with logWarnings it
// logs the warnings.
func CheckLogs(t testing.TB, mnemoHome string, logWarnings bool) {
	t.Helper()
	for name, body := range Logs(t, mnemoHome) {
		for _, line := range strings.Split(body, "\n") {
			switch {
			case errorLine.MatchString(line):
				t.Errorf("%s: %s", name, line)
			case logWarnings && warnLine.MatchString(line):
				t.Logf("%s: %s", name, line)
			}
		}
	}
}

// WaitForContext polls `mnemo context` (ContextArgs) through mnemo until
// its output names want, for at most wait, logs how long that took and
// returns the output.
func WaitForContext(t testing.TB, wait time.Duration, want, mnemoBin string, mnemo MnemoFunc) string {
	t.Helper()
	began := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	var out string
	var err error
	for ctx.Err() == nil {
		out, err = mnemo(ctx, mnemoBin, ContextArgs...)
		if err == nil && strings.Contains(out, want) {
			t.Logf("TIMING memory: `mnemo context` named %s %.2fs after the session", want, time.Since(began).Seconds())
			return out
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
	t.Fatalf("mnemo %s did not name %s within %v (last error %v):\n%s",
		strings.Join(ContextArgs, " "), want, wait, err, out)
	return ""
}
