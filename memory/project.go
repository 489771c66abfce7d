package memory

import (
	"os"
	"path/filepath"
	"strings"
)

// ProjectOf names the project of a working directory: the basename of the
// git top level (a linked worktree maps to its main repository), else the
// basename of the folder itself. It reads .git directly instead of running
// git, so it costs microseconds.
func ProjectOf(cwd string) string {
	if cwd == "" {
		return ""
	}
	dir := filepath.Clean(cwd)
	for d := dir; ; {
		gitPath := filepath.Join(d, ".git")
		fi, err := os.Lstat(gitPath)
		if err == nil {
			if fi.IsDir() {
				return filepath.Base(d)
			}
			if main := worktreeMain(gitPath); main != "" {
				return filepath.Base(main)
			}
			return filepath.Base(d)
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	return filepath.Base(dir)
}

// worktreeMain reads a .git file ("gitdir: <main>/.git/worktrees/<name>")
// and returns the main repository's folder, or "".
func worktreeMain(gitFile string) string {
	b, err := os.ReadFile(gitFile)
	if err != nil {
		return ""
	}
	line := strings.TrimSpace(string(b))
	gitdir, ok := strings.CutPrefix(line, "gitdir:")
	if !ok {
		return ""
	}
	gitdir = strings.TrimSpace(gitdir)
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(filepath.Dir(gitFile), gitdir)
	}
	gitdir = filepath.Clean(gitdir)
	// <main>/.git/worktrees/<name>: the common dir is two levels up.
	if filepath.Base(filepath.Dir(gitdir)) == "worktrees" {
		common := filepath.Dir(filepath.Dir(gitdir))
		if filepath.Base(common) == ".git" {
			return filepath.Dir(common)
		}
		return strings.TrimSuffix(filepath.Dir(common), ".git") // bare layouts
	}
	// A submodule: <super>/.git/modules/<name> — the submodule is its own project.
	return ""
}
