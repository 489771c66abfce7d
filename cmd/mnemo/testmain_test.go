package main

import (
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/mnemo-dev/mnemo/adapters/hosts/hook"
)

// TestMain makes this test binary the two commands under test: run as
// mnemo it is this package's main, run as mnemo-hook it is
// cmd/mnemo-hook's. testscript.Main copies it under both names into one
// folder at the head of $PATH before the tests run, so the scripts, the Go
// tests and the daemons they start all run this binary (race-enabled under
// -race) and nothing is built: the command line starts the daemon with its
// own executable (os.Executable), the hook with the mnemo next to its own.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"mnemo":      main,
		"mnemo-hook": hookMain,
	})
}

// hookMain is cmd/mnemo-hook's main, which a test cannot import (it is
// package main of another folder). TestHookMainMatchesMnemoHook keeps the
// two alike.
func hookMain() {
	os.Exit(hook.Main(os.Args[1:], Version))
}

// The scripts test cmd/mnemo-hook's main through hookMain: the two must
// say the same.
func TestHookMainMatchesMnemoHook(t *testing.T) {
	body := func(file, name string) string {
		t.Helper()
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.Name == name {
				var b strings.Builder
				if err := printer.Fprint(&b, fset, fn.Body); err != nil {
					t.Fatal(err)
				}
				return b.String()
			}
		}
		t.Fatalf("%s has no func %s", file, name)
		return ""
	}
	if got, want := body("testmain_test.go", "hookMain"), body("../mnemo-hook/main.go", "main"); got != want {
		t.Errorf("hookMain differs from cmd/mnemo-hook's main; make it the same:\n%s", want)
	}
}
