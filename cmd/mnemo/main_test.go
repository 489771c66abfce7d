package main_test

import (
	"os"
	"path/filepath"
	"testing"
)

// mnemoBin and hookBin are the commands TestMain registers: this test
// binary, found on $PATH.
const mnemoBin, hookBin = "mnemo", "mnemo-hook"

// testEnv is a private HOME, MNEMO_HOME and project folder (a git
// repository named billing-api) for one test.
type testEnv struct {
	root, home, userHome, project string
	vars                          []string // more environment for every process of the test
}

func newTestEnv(t testing.TB) *testEnv {
	t.Helper()
	root := t.TempDir()
	e := &testEnv{
		root:     root,
		home:     filepath.Join(root, "mnemo"),
		userHome: filepath.Join(root, "home"),
		project:  filepath.Join(root, "billing-api"),
	}
	for _, d := range []string{e.userHome, filepath.Join(e.project, ".git")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// environ is the environment of a mnemo process: the current one with the
// test's folders, so nothing touches the real home.
func (e *testEnv) environ(extra ...string) []string {
	env := append(os.Environ(), "MNEMO_HOME="+e.home, "HOME="+e.userHome, "XDG_DATA_HOME="+filepath.Join(e.userHome, ".local", "share"), "MNEMO_IDLE_TIMEOUT=2m",
		// No model: the transcripts must not depend on whether the sentence
		// encoder is installed on this machine.
		"MNEMO_MODELS="+filepath.Join(e.root, "no-models"),
		// A race-enabled binary sleeps a second at exit unless told not to.
		"GORACE=atexit_sleep_ms=0")
	env = append(env, e.vars...)
	return append(env, extra...)
}
