package local

import (
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/mnemo-dev/mnemo/memory"
)

// A command names no file in its input, yet its output often points at
// the files it is about: a compiler error's position, a failing
// assertion's file:line, a stack trace's frames. outputFiles reads those
// positions, so that the observation of a failing run names the files a
// person would open.

// filePositionRE matches a path with a position after it, in the shapes
// compilers, test runners and tracebacks print: path:12, path:12:5,
// path(12,5), and Python's File "path", line 12.
var filePositionRE = regexp.MustCompile(`(?:File "([^"\n]+)", line \d+|(?:^|[\s("'\[=>])((?:\.{0,2}/)?(?:[\w.@+-]+/)*[\w.@+-]+\.[A-Za-z][A-Za-z0-9]{0,5})(?::\d+|\(\d+,\d+\)))`)

// failedFileRE matches a file named on a failure line without a
// position: pytest's "ERROR tests/test_api.py - …" and
// "FAILED tests/test_api.py::test_x", jest's "FAIL src/x.test.ts".
var failedFileRE = regexp.MustCompile(`(?m)^\s*(?:ERROR|FAILED|FAIL|PASS|ok|E)\s+((?:[\w.@+-]+/)*[\w.@+-]+\.[A-Za-z][A-Za-z0-9]{0,5})(?:::|\s|$)`)

// goPackageRE matches go test's per-package result line.
var goPackageRE = regexp.MustCompile(`(?m)^(?:FAIL|ok|---)\s+(\S+/\S+)\s`)

// maxOutputFiles bounds the files an output adds to an observation.
const maxOutputFiles = 4

// outputFiles lists the project files that an event's output points at,
// project-relative, at most maxOutputFiles, in order of appearance. Files
// outside the project (the standard library, dependencies) are left out;
// a bare file name is placed in the directory of a Go package the output
// names, or of a file the turn already touched, when one fits.
func outputFiles(t *toolEvent, turn []memory.Observation) []string {
	out := headTail(t.output())
	if out == "" {
		return nil
	}
	dirs := packageDirs(out, t.Cwd)
	var found []string
	for _, m := range filePositionRE.FindAllStringSubmatch(out, 64) {
		found = append(found, memory.FirstNonEmpty(m[1], m[2]))
	}
	for _, m := range failedFileRE.FindAllStringSubmatch(out, 16) {
		found = append(found, m[1])
	}
	var files []string
	for _, p := range found {
		if p == "" || outsideProject(p) {
			continue
		}
		rel := t.rel(p)
		if strings.HasPrefix(rel, "/") || strings.HasPrefix(rel, "../") || strings.HasPrefix(rel, "$") {
			continue // outside the project folder
		}
		if !strings.Contains(rel, "/") {
			rel = placeBareName(rel, dirs, turn)
		}
		if !slices.Contains(files, rel) {
			files = append(files, rel)
			if len(files) == maxOutputFiles {
				break
			}
		}
	}
	return files
}

// outsideProject reports paths of dependencies and toolchains.
func outsideProject(p string) bool {
	for _, s := range []string{"node_modules/", "site-packages/", "dist-packages/", "/usr/", "/go/src/", "/pkg/mod/", ".cargo/registry", "/rustc/", "<frozen", "/lib/python", "internal/process/", "__pycache__/", ".venv/"} {
		if strings.Contains(p, s) {
			return true
		}
	}
	// Build output is not what a person opens.
	for _, s := range []string{".next/", "dist/", "build/", "target/", "out/", "coverage/"} {
		if strings.HasPrefix(p, s) || strings.Contains(p, "/"+s) {
			return true
		}
	}
	return false
}

// packageDirs lists the project-relative folders of the Go packages an
// output reports on ("FAIL\tgithub.com/acme/shop/cart\t0.01s" in a folder
// named shop gives "cart").
func packageDirs(out, cwd string) []string {
	project := path.Base(strings.TrimRight(strings.ReplaceAll(cwd, `\`, "/"), "/"))
	if project == "" || project == "." || project == "/" {
		return nil
	}
	var dirs []string
	for _, m := range goPackageRE.FindAllStringSubmatch(out, 16) {
		parts := strings.Split(m[1], "/")
		if i := slices.Index(parts, project); i >= 0 && i < len(parts)-1 {
			if d := strings.Join(parts[i+1:], "/"); !slices.Contains(dirs, d) {
				dirs = append(dirs, d)
			}
		}
	}
	return dirs
}

// placeBareName puts a file name printed without its folder into the one
// folder it fits: the only Go package the output names, or the folder of
// a file of that name the turn touched. Otherwise the name stays bare.
func placeBareName(name string, dirs []string, turn []memory.Observation) string {
	for i := len(turn) - 1; i >= 0; i-- {
		for _, f := range turn[i].Files() {
			if path.Base(f) == name {
				return f
			}
		}
	}
	if len(dirs) == 1 {
		return dirs[0] + "/" + name
	}
	return name
}
