package vscode

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// Which saved files are worth remembering, and what git knows of a file.

// MaxTextBytes is the largest text the editor keeps and compares; a bigger
// file's saves are not remembered.
const MaxTextBytes = 1 << 20

// gitTimeout bounds one git command.
const gitTimeout = 2 * time.Second

// A skip says why a file's saves are not remembered; "" remembers them.
type skip string

const (
	skipNone      skip = ""
	skipHuge      skip = "larger than 1 MB"
	skipBinary    skip = "binary"
	skipGenerated skip = "generated"
	skipIgnored   skip = "ignored by git"
	skipVendored  skip = "under a dependency or build folder"
)

// vendoredDirs are folders of dependencies and build output.
var vendoredDirs = map[string]bool{"node_modules": true, "dist": true, "build": true, "vendor": true}

// skipPath says whether a path is under a dependency or build folder of
// the workspace (relative to cwd when inside it).
func skipPath(cwd, path string) skip {
	rel := path
	if cwd != "" {
		if r, err := filepath.Rel(cwd, path); err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			rel = r
		}
	}
	for _, part := range strings.Split(filepath.ToSlash(filepath.Dir(rel)), "/") {
		if vendoredDirs[part] {
			return skipVendored
		}
	}
	return skipNone
}

// generatedRE matches the markers of generated files in their first lines:
// Go's "Code generated … DO NOT EDIT." and the "@generated" of many tools.
var generatedRE = regexp.MustCompile(`(?m)^\W{0,4}(?:Code generated .*DO NOT EDIT|@generated\b)`)

// skipText says whether a text is not worth remembering: too big, binary,
// or generated.
func skipText(text string) skip {
	switch {
	case len(text) > MaxTextBytes:
		return skipHuge
	case isBinary(text):
		return skipBinary
	}
	head := text
	if len(head) > 2048 {
		head = head[:2048]
	}
	if generatedRE.MatchString(head) {
		return skipGenerated
	}
	return skipNone
}

// readSaved reads a saved file from disk (for clients that send no text on
// save); ok is false when it cannot be read, and skip says when it is too
// big to.
func readSaved(path string) (text string, s skip, ok bool) {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return "", skipNone, false
	}
	if fi.Size() > MaxTextBytes {
		return "", skipHuge, false
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", skipNone, false
	}
	return string(b), skipNone, true
}

// gitState is what git says of a file's last committed version.
type gitState int

const (
	gitUnknown   gitState = iota // no repository, no git, or an error
	gitCommitted                 // the text of HEAD
	gitNew                       // a repository whose HEAD has no such file
)

// gitHead reads the version of path in HEAD of its repository.
func gitHead(ctx context.Context, path string) (string, gitState) {
	out, stderr, err := git(ctx, filepath.Dir(path), "show", "HEAD:./"+filepath.Base(path))
	switch {
	case err == nil:
		return string(out), gitCommitted
	case isExit(err) && !strings.Contains(stderr, "not a git repository") &&
		(strings.Contains(stderr, "exists on disk, but not in") || strings.Contains(stderr, "does not exist in") ||
			strings.Contains(stderr, "invalid object name") || strings.Contains(stderr, "bad revision")):
		return "", gitNew
	}
	return "", gitUnknown
}

// gitIgnored reports whether git ignores path (.gitignore and the other
// exclude files); false outside a repository.
func gitIgnored(ctx context.Context, path string) bool {
	_, _, err := git(ctx, filepath.Dir(path), "check-ignore", "-q", "--", filepath.Base(path))
	return err == nil // 0: ignored; 1: not ignored; 128: no repository
}

// git runs git in dir with a short timeout and an environment that points
// it at nothing but dir.
func git(ctx context.Context, dir string, args ...string) (stdout []byte, stderr string, err error) {
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Env = gitEnv()
	noWindow(cmd)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	return out.Bytes(), errb.String(), err
}

// gitEnv is this process's environment without the variables that would
// point git at another repository than the file's.
func gitEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		switch name, _, _ := strings.Cut(kv, "="); name {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_COMMON_DIR", "GIT_PREFIX":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "GIT_OPTIONAL_LOCKS=0")
}

func isExit(err error) bool {
	var ee *exec.ExitError
	return errors.As(err, &ee)
}
