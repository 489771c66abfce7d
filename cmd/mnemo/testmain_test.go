package main

import (
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/mnemo-dev/mnemo/adapters/hosts/hook"
	"github.com/mnemo-dev/mnemo/cmd/internal/daemon"
)

// TestMain makes this test binary the two commands under test: run as
// mnemo it is this package's main, run as mnemo-hook it is what
// cmd/mnemo-hook's main runs (hook.Main). testscript.Main copies it
// under both names into one folder at the head of $PATH before the tests
// run, so the scripts, the Go tests and the daemons they start all run this
// binary (race-enabled under -race) and nothing is built: the command line
// starts the daemon with its own executable (os.Executable), the hook with
// the mnemo next to its own.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"mnemo": main,
		"mnemo-hook": func() {
			os.Exit(hook.Main(os.Args[1:], daemon.Version))
		},
	})
}
