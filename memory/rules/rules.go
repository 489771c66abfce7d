// Package rules keeps Mnemo's block in a coding agent's rules file
// (AGENTS.md, GEMINI.md, .github/copilot-instructions.md, a Cursor or
// Windsurf rule): the project's memory between two marker lines, for the
// hosts whose hooks cannot inject context, and for any project that opts
// in. Only the bytes between the markers are ever rewritten: the rest of
// the file, its line endings and its last newline stay as they were.
//
// A file opts in by holding the markers: Write puts them in (creating the
// file if needed), Refresh rewrites the block of a file that has them and
// leaves any other file alone, Remove takes the block out again.
package rules

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/mnemo-dev/mnemo/memory/atomicfile"
)

// The marker lines. A block starts at a line beginning with BeginPrefix and
// ends at the next line that is End.
const (
	BeginPrefix = "<!-- mnemo:begin"
	Begin       = BeginPrefix + " (Mnemo's memory of this project, rewritten after each session; edit outside these markers) -->"
	End         = "<!-- mnemo:end -->"
)

// ErrMarkers is a file whose markers Mnemo cannot make sense of: a begin
// without an end, or two blocks. The file is left untouched.
var ErrMarkers = errors.New("rules file markers")

// Result says what Write, Refresh or Remove did.
type Result struct {
	// Path is the file, symlinks resolved.
	Path string
	// Changed reports whether the file was written (or deleted).
	Changed bool
	// Created reports that Write made the file.
	Created bool
	// Deleted reports that Remove deleted the file: nothing but what Mnemo
	// had written was left in it.
	Deleted bool
}

// Write puts body between the markers of the file at path: in place of the
// block when the file has one, else appended after a blank line; a missing
// file is created as head (e.g. a rule's front matter) followed by the
// block. The file is replaced atomically, keeping its mode; nothing changes
// when the block already holds body.
func Write(path, body, head string) (Result, error) {
	return edit(path, func(data []byte, exists bool) ([]byte, error) {
		if !exists {
			return []byte(head + block(body, "\n") + "\n"), nil
		}
		start, end, err := find(data)
		if err != nil {
			return nil, err
		}
		eol := lineEnding(data)
		if start < 0 {
			// Appended: after a blank line, keeping the file's last
			// newline, or its lack of one.
			switch {
			case len(data) == 0:
				return []byte(block(body, eol) + eol), nil
			case bytes.HasSuffix(data, []byte(eol)):
				return concat(data, eol, block(body, eol), eol), nil
			default:
				return concat(data, eol, eol, block(body, eol)), nil
			}
		}
		return concat(data[:start], block(body, eol), string(data[end:])), nil
	})
}

// Refresh rewrites the block of the file at path with body when the file
// has Mnemo's markers; a file without them, or no file, is left alone
// (Changed false). Bytes outside the markers are never touched.
func Refresh(path, body string) (Result, error) {
	return edit(path, func(data []byte, exists bool) ([]byte, error) {
		if !exists {
			return nil, nil
		}
		start, end, err := find(data)
		if err != nil || start < 0 {
			return nil, err
		}
		return concat(data[:start], block(body, lineEnding(data)), string(data[end:])), nil
	})
}

// Remove takes Mnemo's block out of the file at path, with its line end,
// and at the end of the file the blank line Write put before it. When nothing is left but head (what Write creates
// a file with) or blank space, the file is deleted. A missing file, or one
// without the markers, is no error.
func Remove(path, head string) (Result, error) {
	r := Result{Path: resolve(path)}
	data, err := os.ReadFile(r.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return r, nil
	}
	if err != nil {
		return r, fmt.Errorf("rules: %w", err)
	}
	start, end, err := find(data)
	if err != nil || start < 0 {
		return r, err
	}
	eol := lineEnding(data)
	pre, post := data[:start], data[end:]
	if p, ok := bytes.CutPrefix(post, []byte(eol)); ok {
		post = p
		if len(post) == 0 && bytes.HasSuffix(pre, []byte(eol+eol)) {
			// The block ended the file, after the blank line Write put.
			pre = pre[:len(pre)-len(eol)]
		}
	} else if len(post) == 0 {
		// The block ended a file that had no last newline: Write put two
		// line ends before it.
		for range 2 {
			pre, _ = bytes.CutSuffix(pre, []byte(eol))
		}
	}
	left := concat(pre, string(post))
	if rest := strings.TrimSpace(string(left)); rest == "" || rest == strings.TrimSpace(head) {
		if err := os.Remove(r.Path); err != nil {
			return r, fmt.Errorf("rules: %w", err)
		}
		if err := atomicfile.SyncDir(filepath.Dir(r.Path)); err != nil {
			return r, fmt.Errorf("rules: %w", err)
		}
		r.Changed, r.Deleted = true, true
		return r, nil
	}
	if err := writeAtomic(r.Path, left); err != nil {
		return r, err
	}
	r.Changed = true
	return r, nil
}

// Marked reports whether the file at path holds Mnemo's markers.
func Marked(path string) bool {
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	start, _, err := find(data)
	return err == nil && start >= 0
}

// edit reads the file, lets change make its new content (nil: leave it),
// and writes it atomically if it differs.
func edit(path string, change func(data []byte, exists bool) ([]byte, error)) (Result, error) {
	r := Result{Path: resolve(path)}
	data, err := os.ReadFile(r.Path)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return r, fmt.Errorf("rules: %w", err)
	}
	out, err := change(data, exists)
	if err != nil {
		return r, fmt.Errorf("%s: %w", r.Path, err)
	}
	if out == nil || (exists && bytes.Equal(out, data)) {
		return r, nil
	}
	if err := writeAtomic(r.Path, out); err != nil {
		return r, err
	}
	r.Changed, r.Created = true, !exists
	return r, nil
}

// find returns the byte span of the block, from the start of its begin line
// to the end of its end marker (its line end excluded); -1 when there is
// none.
func find(data []byte) (start, end int, err error) {
	start, end = -1, -1
	line := 1
	for off := 0; off < len(data); line++ {
		next := bytes.IndexByte(data[off:], '\n')
		stop := len(data)
		if next >= 0 {
			stop = off + next
		}
		text := strings.TrimRight(string(data[off:stop]), "\r")
		trimmed := strings.TrimSpace(text)
		switch {
		case strings.HasPrefix(trimmed, BeginPrefix):
			if start >= 0 {
				return -1, -1, fmt.Errorf("%w: a second begin marker at line %d (fix it by hand; nothing was changed)", ErrMarkers, line)
			}
			start = off
		case trimmed == End && start >= 0 && end < 0:
			end = off + len(text)
		}
		if next < 0 {
			break
		}
		off = stop + 1
	}
	if start >= 0 && end < 0 {
		return -1, -1, fmt.Errorf("%w: %q without %q (fix it by hand; nothing was changed)", ErrMarkers, BeginPrefix+" -->", End)
	}
	return start, end, nil
}

// block is the markers around body, with eol between lines and no line end
// after the end marker. A marker line inside body is defused.
func block(body, eol string) string {
	body = strings.ReplaceAll(body, "\r\n", "\n")
	body = strings.ReplaceAll(body, "<!-- mnemo:", "<!-- mnemo :")
	body = strings.TrimRight(body, "\n")
	lines := []string{Begin}
	if body != "" {
		lines = append(lines, strings.Split(body, "\n")...)
	}
	lines = append(lines, End)
	return strings.Join(lines, eol)
}

// lineEnding is the file's line end: CRLF when its first line ends so.
func lineEnding(data []byte) string {
	if i := bytes.IndexByte(data, '\n'); i > 0 && data[i-1] == '\r' {
		return "\r\n"
	}
	return "\n"
}

func concat[T ~[]byte | ~string](first T, rest ...string) []byte {
	out := append([]byte(nil), first...)
	for _, s := range rest {
		out = append(out, s...)
	}
	return out
}

// resolve follows a symlink to the file it names, so that the link stays.
func resolve(path string) string {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		return real
	}
	return path
}

// writeAtomic replaces path with data (atomicfile.WriteFile) with the old
// file's mode (0644 for a new one), making its folder first.
func writeAtomic(path string, data []byte) error {
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("rules: %w", err)
	}
	if err := atomicfile.WriteFile(path, data, mode); err != nil {
		return fmt.Errorf("rules: write %s: %w", path, err)
	}
	return nil
}

// Outside returns the text of a rules file without Mnemo's block: what the
// project itself says (all of it when the markers cannot be made sense of,
// or there are none).
func Outside(data []byte) string {
	start, end, err := find(data)
	if err != nil || start < 0 {
		return string(data)
	}
	return string(data[:start]) + string(data[end:])
}
