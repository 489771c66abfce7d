package daemon

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/atomicfile"
	"github.com/mnemo-dev/mnemo/memory/store"
)

func exportTo(ctx context.Context, mem *store.Memory, p memory.ExportParams) (memory.ExportResult, error) {
	if p.Format == memory.FormatMarkdown {
		return exportMarkdown(ctx, mem, p)
	}
	var res memory.ExportResult
	err := ReplaceFile(p.Path, func(w io.Writer) error {
		var err error
		res.Records, err = mem.Export(ctx, w, p.Vectors)
		return err
	})
	return res, err
}

// exportMarkdown writes a document per project into the folder p.Path,
// <project>.md, each replaced whole (ReplaceFile), so that a reader never
// sees half of one.
func exportMarkdown(ctx context.Context, mem *store.Memory, p memory.ExportParams) (memory.ExportResult, error) {
	if err := os.MkdirAll(p.Path, 0o755); err != nil {
		return memory.ExportResult{}, &memory.FieldError{Field: "path", Reason: err.Error()}
	}
	var res memory.ExportResult
	n, err := mem.ExportMarkdown(ctx, p.Project, func(project string, fill func(io.Writer) error) error {
		name := filepath.Join(p.Path, documentName(project))
		res.Files = append(res.Files, name)
		return ReplaceFile(name, fill)
	})
	res.Records = n
	return res, err
}

// documentName is a project's markdown file: its name, with what cannot be
// in a file's name replaced.
func documentName(project string) string {
	name := strings.Map(func(r rune) rune {
		switch {
		case r == '/' || r == '\\' || r == 0 || r < ' ':
			return '_'
		}
		return r
	}, project)
	name = strings.TrimLeft(name, ".")
	if name == "" {
		name = "project"
	}
	return name + ".md"
}

// ReplaceFile writes the file at path whole, the user's alone (0600), with
// atomicfile.Write: path changes only when fill and the writes succeed, and
// the file and its folder are synced. A temporary file that cannot be made is
// a bad path (a FieldError). The daemon writes its exports, settings and
// viewer state with it, the commands their setup record and back-fill state.
func ReplaceFile(path string, fill func(io.Writer) error) error {
	made := false
	err := atomicfile.Write(path, 0o600, func(f *os.File) error {
		made = true
		return fill(f)
	})
	if err != nil && !made {
		return &memory.FieldError{Field: "path", Reason: err.Error()}
	}
	return err
}

func importFrom(ctx context.Context, mem *store.Memory, p memory.ImportParams) (memory.ImportResult, error) {
	f, err := os.Open(p.Path)
	if err != nil {
		return memory.ImportResult{}, badFile{err}
	}
	defer f.Close()
	done := bulkWork() // gc.go
	res, err := mem.Import(ctx, f, nil)
	done()
	if err != nil {
		return res, badFile{fmt.Errorf("%s: %w", p.Path, err)}
	}
	return res, nil
}

// badFile is a file given to import that cannot be read, or holds a line
// that is not a record: bad input (memory.ErrInvalid) in the words of the
// error that says why, which name the file.
type badFile struct{ err error }

func (e badFile) Error() string        { return e.err.Error() }
func (e badFile) Unwrap() error        { return e.err }
func (e badFile) Is(target error) bool { return target == memory.ErrInvalid }
