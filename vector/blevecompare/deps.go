package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// measureDeps writes what bleve adds to the build: the modules of this
// module's graph that the main module's lacks, the non-standard packages a
// program linking bleve pulls in, and the sizes of the probe binaries in
// internal/sizeprobe. It runs the go command offline (GOPROXY=off).
func measureDeps(ctx context.Context, w io.Writer, tempDir string) error {
	here, err := goCmd(ctx, ".", "list", "-m", "-f", "{{.Dir}}")
	if err != nil {
		return err
	}
	mainDir, err := goCmd(ctx, ".", "list", "-m", "-f", "{{.Dir}}", "github.com/mnemo-dev/mnemo")
	if err != nil {
		return err
	}
	modules := func(dir string) ([]string, error) {
		out, err := goCmd(ctx, dir, "list", "-m", "all")
		if err != nil {
			return nil, err
		}
		var paths []string
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Fields(line); len(f) > 0 {
				paths = append(paths, f[0])
			}
		}
		return paths, nil
	}
	mainMods, err := modules(mainDir)
	if err != nil {
		return err
	}
	hereMods, err := modules(here)
	if err != nil {
		return err
	}
	var added []string
	for _, m := range hereMods {
		if m != "github.com/mnemo-dev/mnemo/vector/blevecompare" && !slices.Contains(mainMods, m) {
			added = append(added, m)
		}
	}

	fmt.Fprintf(w, "### Dependency weight\n\n")
	fmt.Fprintf(w, "`go list -m all`: %d lines in the main module, %d in this module, whose graph is the main module's go.mod requirements (pruned: "+
		"the main module's own test and tool dependencies are not in it) plus bleve's. Modules in this module's graph and not in the main module's: %d:\n\n",
		len(mainMods), len(hereMods), len(added))
	fmt.Fprintf(w, "%s\n\n", "`"+strings.Join(added, "`, `")+"`")

	fmt.Fprintln(w, "| probe (internal/sizeprobe) | modules linked | non-std packages linked | binary MiB | stripped (-s -w) MiB |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|")
	for _, probe := range []string{"hello", "vector", "bleve", "both"} {
		pkg := "./internal/sizeprobe/" + probe
		deps, err := goCmd(ctx, here, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}} {{.Module.Path}}{{end}}", pkg)
		if err != nil {
			return err
		}
		nonStd, linked := 0, map[string]bool{}
		for _, line := range strings.Split(deps, "\n") {
			if f := strings.Fields(line); len(f) == 2 {
				nonStd++
				linked[f[1]] = true
			}
		}
		var sizes [2]int64
		for i, flags := range [][]string{nil, {"-ldflags=-s -w"}} {
			bin := filepath.Join(tempDir, fmt.Sprintf("%s-%d", probe, i))
			args := append(append([]string{"build", "-o", bin}, flags...), pkg)
			if _, err := goCmd(ctx, here, args...); err != nil {
				return err
			}
			info, err := os.Stat(bin)
			if err != nil {
				return err
			}
			sizes[i] = info.Size()
		}
		fmt.Fprintf(w, "| %s | %d | %d | %.1f | %.1f |\n", probe, len(linked), nonStd, float64(sizes[0])/(1<<20), float64(sizes[1])/(1<<20))
	}
	fmt.Fprintln(w)
	return nil
}

// goCmd runs the go command in dir, offline, and returns its trimmed
// standard output.
func goCmd(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=readonly -buildvcs=false", "GOTOOLCHAIN=local")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(stdout.String()), nil
}
