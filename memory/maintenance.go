package memory

import (
	"fmt"
	"path/filepath"
)

// The maintenance methods' params and results. The daemon owns the store,
// so it reads and writes the files of an export or import; the client
// names them.

// ReindexResult says how many observations are being embedded again.
type ReindexResult struct {
	Observations int `json:"observations"`
}

// SessionsResult lists sessions for `mnemo sessions`.
type SessionsResult struct {
	Sessions []Session `json:"sessions"`
}

// DoctorResult is what `mnemo doctor` found in the store: broken
// invariants (Problems), and what is worth knowing but not wrong (Notes).
type DoctorResult struct {
	Problems []Problem `json:"problems"`
	Notes    []string  `json:"notes,omitempty"`
}

// ExportParams names where an export goes and in what form.
type ExportParams struct {
	// Path is the file of a JSON lines export, the folder of a markdown
	// one (a document per project, <project>.md).
	Path    string `json:"path"`
	Vectors bool   `json:"vectors,omitempty"`
	// Format is FormatJSONL (the default: every record, lossless) or
	// FormatMarkdown (for people and version control).
	Format string `json:"format,omitempty"`
	// Project, with FormatMarkdown, keeps one project.
	Project string `json:"project,omitempty"`
}

// The export formats.
const (
	FormatJSONL    = "jsonl"
	FormatMarkdown = "markdown"
)

// Validate requires an absolute path and a known format.
func (p *ExportParams) Validate() error {
	if !filepath.IsAbs(p.Path) {
		return &FieldError{Field: "path", Reason: "must be an absolute path"}
	}
	switch p.Format {
	case "", FormatJSONL:
		if p.Project != "" {
			return &FieldError{Field: "project", Reason: "is for the markdown format; a JSON lines export holds every project"}
		}
	case FormatMarkdown:
		if p.Vectors {
			return &FieldError{Field: "vectors", Reason: "are for the JSON lines format"}
		}
	default:
		return &FieldError{Field: "format", Reason: fmt.Sprintf("is %q; want %s or %s", p.Format, FormatJSONL, FormatMarkdown)}
	}
	return nil
}

// ExportResult counts the records written, and names the documents of a
// markdown export.
type ExportResult struct {
	Records int      `json:"records"`
	Files   []string `json:"files,omitempty"`
}

// ImportParams names the file to import.
type ImportParams struct {
	Path string `json:"path"`
}

// Validate requires an absolute path.
func (p *ImportParams) Validate() error {
	if !filepath.IsAbs(p.Path) {
		return &FieldError{Field: "path", Reason: "must be an absolute path"}
	}
	return nil
}
