package main_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestScripts runs the command-line scripts in testdata/script: one txtar
// per command people meet, its comment saying what it proves. `mnemo` and
// `mnemo-hook` are this test binary (TestMain). `go test ./cmd/mnemo -run
// Scripts -update` rewrites the expected files that `cmp` compares with.
//
// Every script gets its own HOME ($WORK, so Claude Code's settings are
// $WORK/.claude/settings.json) and MNEMO_HOME ($WORK/mnemo), no embedding
// model (search ranks the same on every machine), TZ=UTC, $HOSTS (the
// documented hook payloads of the other coding agents, a folder per host:
// hostPayloads), $CLAUDEMEM_SCHEMA (claude-mem's
// schema, adapters/claudemem/testdata/schema-v49.sql), and the commands
// `waitidle [n]` and `waitfile FILE REGEXP` (and `sqlite DB FILE.sql`,
// `mtime FILE`, claudemem_test.go; `scribble [-tail] GLOB`), $MODELS and the condition [models]
// (the weights fetched for the tests, when they are), and $MNEMO_PATH (a
// PATH with this test's mnemo and mnemo-hook alone). Daemons a script
// leaves running are stopped after it.
func TestScripts(t *testing.T) {
	hosts := hostPayloads(t)
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(e *testscript.Env) error {
			e.Setenv("HOSTS", hosts)
			return setupScript(e)
		},
		Cmds:                map[string]func(*testscript.TestScript, bool, []string){"waitidle": waitIdleCmd, "waitfile": waitFileCmd, "sqlite": sqliteCmd, "mtime": mtimeCmd, "scribble": scribbleCmd},
		Condition:           scriptCondition,
		UpdateScripts:       *update,
		RequireExplicitExec: true,
	})
}

// hostPayloads gathers the documented hook payloads of every host,
// adapters/<host>/testdata/documented, into a temporary folder with one
// folder per host, $HOSTS/<host>/<file>, and returns it.
func hostPayloads(t *testing.T) string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "adapters", "*", "testdata", "documented", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no documented hook payloads: %v", err)
	}
	dir := t.TempDir()
	for _, f := range files {
		host := filepath.Base(filepath.Dir(filepath.Dir(filepath.Dir(f))))
		data, err := os.ReadFile(f)
		if err == nil {
			err = os.MkdirAll(filepath.Join(dir, host), 0o755)
		}
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, host, filepath.Base(f)), data, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func setupScript(e *testscript.Env) error {
	home := filepath.Join(e.WorkDir, "mnemo")
	e.Setenv("HOME", e.WorkDir)
	e.Setenv("MNEMO_HOME", home)
	e.Setenv("MNEMO_MODELS", filepath.Join(e.WorkDir, "no-models"))
	// $MODELS: the sentence encoder's weights fetched for the tests (the
	// justfile's MNEMO_MODELS), for the scripts under [models].
	e.Setenv("MODELS", os.Getenv("MNEMO_MODELS"))
	// $MNEMO_PATH: the folder of this test's mnemo and mnemo-hook alone,
	// for a PATH on which no coding agent of this machine is found.
	e.Setenv("MNEMO_PATH", strings.Split(e.Getenv("PATH"), string(os.PathListSeparator))[0])
	e.Setenv("MNEMO_IDLE_TIMEOUT", "2m")
	e.Setenv("TZ", "UTC")
	schema, err := filepath.Abs(filepath.Join("..", "..", "adapters", "claudemem", "testdata", "schema-v49.sql"))
	if err != nil {
		return err
	}
	e.Setenv("CLAUDEMEM_SCHEMA", schema)
	// A race-enabled binary sleeps a second at exit unless told not to.
	e.Setenv("GORACE", strings.TrimSpace(e.Getenv("GORACE")+" atexit_sleep_ms=0"))
	env := append([]string(nil), e.Vars...)
	e.Defer(func() {
		// The daemons of $MNEMO_HOME and of any other home the script
		// made under $WORK (a folder with a db).
		homes := []string{home}
		dbs, _ := filepath.Glob(filepath.Join(e.WorkDir, "*", "db"))
		for _, db := range dbs {
			if h := filepath.Dir(db); h != home {
				homes = append(homes, h)
			}
		}
		var wg sync.WaitGroup
		for _, h := range homes {
			wg.Go(func() {
				cmd := exec.Command(mnemoBin, "--home", h, "daemon", "stop")
				cmd.Env = env
				if out, err := cmd.CombinedOutput(); err != nil {
					e.T().Log("stop the daemon of ", h, ": ", err, "\n", string(out))
				}
			})
		}
		wg.Wait()
	})
	return nil
}

// scriptCondition knows [models]: the sentence encoder's weights are in
// $MODELS.
func scriptCondition(cond string) (bool, error) {
	if cond != "models" {
		return false, fmt.Errorf("unknown condition %q", cond)
	}
	d := os.Getenv("MNEMO_MODELS")
	if d == "" {
		return false, nil
	}
	_, err := os.Stat(filepath.Join(d, "use-lite"))
	return err == nil, nil
}

// waitIdleCmd is `waitidle [n]`: wait until the daemon of $MNEMO_HOME
// (started if none runs) holds at least n observations, has nothing
// queued and nothing left to embed, or fail after 30 s.
func waitIdleCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) > 1 {
		ts.Fatalf("usage: waitidle [observations]")
	}
	want := 0
	if len(args) == 1 {
		n, err := strconv.Atoi(args[0])
		ts.Check(err)
		want = n
	}
	var env []string
	for _, k := range []string{"PATH", "HOME", "MNEMO_HOME", "MNEMO_MODELS", "MNEMO_IDLE_TIMEOUT", "TMPDIR", "TZ", "GORACE"} {
		env = append(env, k+"="+ts.Getenv(k))
	}
	var st struct {
		status
		Embedder string `json:"embedder"`
	}
	deadline := time.Now().Add(30 * time.Second)
	for delay := 10 * time.Millisecond; ; delay = min(2*delay, 200*time.Millisecond) {
		cmd := exec.Command(mnemoBin, "status", "--json")
		cmd.Env = env
		cmd.Dir = ts.MkAbs(".")
		out, err := cmd.Output()
		if err != nil {
			ts.Fatalf("mnemo status --json: %v", err)
		}
		ts.Check(json.Unmarshal(out, &st))
		if st.Counts.Observations >= want && st.Counts.Queued == 0 && !strings.Contains(st.Embedder, "(embedding") {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("after 30s: %+v, embedder %s; want %d observations, an empty queue and nothing left to embed", st.Counts, st.Embedder, want)
		}
		time.Sleep(delay)
	}
}

// waitFileCmd is `waitfile FILE REGEXP`: wait until FILE matches the
// regular expression (multi-line mode), or fail after 30 s.
func waitFileCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: waitfile FILE REGEXP")
	}
	re, err := regexp.Compile("(?m)" + args[1])
	ts.Check(err)
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, err := os.ReadFile(ts.MkAbs(args[0]))
		if err == nil && re.Match(b) {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("after 30s %s does not match %s (%v):\n%s", args[0], args[1], err, b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// scribbleCmd is `scribble [-tail] GLOB`: write 200 random bytes into
// the middle of the first file GLOB matches (as much of them as the file
// holds), or with -tail into its end, 8 bytes before it (a table's index,
// which Badger reads as it opens the table), as a disk error or a stray
// write would: a damaged store.
func scribbleCmd(ts *testscript.TestScript, neg bool, args []string) {
	tail := len(args) == 2 && args[0] == "-tail"
	if tail {
		args = args[1:]
	}
	if neg || len(args) != 1 {
		ts.Fatalf("usage: scribble [-tail] GLOB")
	}
	files, err := filepath.Glob(ts.MkAbs(args[0]))
	ts.Check(err)
	if len(files) == 0 {
		ts.Fatalf("scribble: no file matches %s", args[0])
	}
	b, err := os.ReadFile(files[0])
	ts.Check(err)
	off := max(0, len(b)/2-100)
	if tail {
		off = max(0, len(b)-208)
	}
	for i := off; i < min(len(b), off+200); i++ {
		b[i] = byte(rand.IntN(256))
	}
	ts.Check(os.WriteFile(files[0], b, 0o600))
}
