package memory

import (
	"os"
	"path"
	"path/filepath"
	"strings"
)

// ProjectOf names the project of a working directory: the basename of the
// git top level (a linked worktree maps to its main repository), else the
// basename of the folder itself. It reads .git directly instead of running
// git, so it costs microseconds.
//
// A Windows path read on another system (a transcript back-filled
// elsewhere: C:\Users\me\will-it-rain) is named by its last folder; its
// repository cannot be looked for here.
func ProjectOf(cwd string) string {
	if cwd == "" {
		return ""
	}
	if foreignWindowsPath(cwd) {
		return path.Base(windowsSlash(cwd))
	}
	root := RootOf(cwd)
	if main := worktreeMain(filepath.Join(root, ".git")); main != "" {
		return filepath.Base(main)
	}
	return filepath.Base(root)
}

// RootOf returns the top level of the git repository holding cwd (the
// folder with .git), or cwd itself outside a repository.
func RootOf(cwd string) string {
	dir := filepath.Clean(cwd)
	for d := dir; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return dir
		}
		d = parent
	}
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

// RelPath is p relative to the folder cwd, with forward slashes, when p
// lies inside it; otherwise p cleaned. Paths that start with "$" (a
// placeholder such as $HOME) are kept as they are.
//
// Windows paths read on another system are compared as Windows compares
// them: either slash, and letters in any case.
func RelPath(cwd, p string) string {
	p = strings.TrimSpace(p)
	if p == "" {
		return ""
	}
	if foreignWindowsPath(p) || foreignWindowsPath(cwd) {
		p, c := windowsSlash(p), strings.TrimRight(windowsSlash(cwd), "/")
		switch {
		case c != "" && strings.EqualFold(p, c):
			return "."
		case c != "" && len(p) > len(c) && p[len(c)] == '/' && strings.EqualFold(p[:len(c)], c):
			return path.Clean(p[len(c)+1:])
		}
		return path.Clean(p)
	}
	p = filepath.ToSlash(p)
	if cwd != "" {
		c := strings.TrimRight(filepath.ToSlash(cwd), "/")
		switch {
		case p == c:
			return "."
		case c != "" && strings.HasPrefix(p, c+"/"):
			return path.Clean(p[len(c)+1:])
		case filepath.IsAbs(p) && filepath.IsAbs(cwd):
			if r, err := filepath.Rel(cwd, p); err == nil && !strings.HasPrefix(r, "..") {
				return filepath.ToSlash(r)
			}
		}
	}
	if !strings.HasPrefix(p, "$") {
		p = path.Clean(p)
	}
	return p
}

// foreignWindowsPath reports a Windows path (C:\…, C:/…, \\server\…) on
// a system whose paths are not Windows's.
func foreignWindowsPath(p string) bool {
	if filepath.Separator == '\\' {
		return false
	}
	if strings.HasPrefix(p, `\\`) {
		return true
	}
	return len(p) >= 3 && p[1] == ':' && (p[2] == '\\' || p[2] == '/') &&
		('a' <= p[0] && p[0] <= 'z' || 'A' <= p[0] && p[0] <= 'Z')
}

// windowsSlash is a Windows path with forward slashes.
func windowsSlash(p string) string { return strings.ReplaceAll(p, `\`, "/") }
