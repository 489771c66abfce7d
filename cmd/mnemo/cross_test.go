package main_test

import (
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// `just cross` vets and builds for fewer platforms than Mnemo is released
// for (.ci/release.sh): each one costs a compile of the whole module. That
// is enough when every source file that some released platform compiles
// is compiled by this machine's build or by one of the cross targets, so
// that a file that breaks on any platform breaks one of them. This test
// holds the justfile's targets to that, file by file (build constraints
// and _GOOS/_GOARCH names, without cgo, as the releases are built).
func TestCrossTargetsCoverEveryFile(t *testing.T) {
	t.Parallel()
	justfile, err := os.ReadFile("../../justfile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^cross:\n(?:[ \t]+.*\n)*?[ \t]+for t in ([^;]+); do`).FindSubmatch(justfile)
	if m == nil {
		t.Fatal("the justfile's cross recipe has no `for t in <GOOS/GOARCH>...; do` loop")
	}
	built := append([]string{runtime.GOOS + "/" + runtime.GOARCH}, strings.Fields(string(m[1]))...)

	release, err := os.ReadFile("../../.ci/release.sh")
	if err != nil {
		t.Fatal(err)
	}
	rm := regexp.MustCompile(`(?m)^targets="([^"]+)"`).FindSubmatch(release)
	if rm == nil {
		t.Fatal(`.ci/release.sh has no targets="<GOOS/GOARCH:platform>..." line`)
	}
	var released []string
	for _, f := range strings.Fields(string(rm[1])) {
		target, _, _ := strings.Cut(f, ":")
		released = append(released, target)
	}

	compiles := func(target, dir, name string) bool {
		ctx := build.Default
		ctx.GOOS, ctx.GOARCH, _ = strings.Cut(target, "/")
		ctx.CgoEnabled = false
		ok, err := ctx.MatchFile(dir, name)
		if err != nil {
			t.Fatalf("%s: %v", filepath.Join(dir, name), err)
		}
		return ok
	}
	files := 0
	err = filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != "../.." && (name == "testdata" || name == "node_modules" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, ".s") {
			return nil
		}
		files++
		dir := filepath.Dir(path)
		var by []string
		for _, target := range released {
			if compiles(target, dir, name) {
				by = append(by, target)
			}
		}
		if len(by) == 0 {
			return nil // a file of a build tag (e2e, race) or of no released platform
		}
		for _, target := range built {
			if compiles(target, dir, name) {
				return nil
			}
		}
		rel, _ := filepath.Rel("../..", path)
		t.Errorf("%s is compiled for %s, but neither here (%s) nor by `just cross` (%s): add one of them to the cross recipe",
			rel, strings.Join(by, ", "), built[0], strings.Join(built[1:], " "))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("only %d Go and assembly files found from cmd/mnemo/../..", files)
	}
}
