package memory

import "path/filepath"

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

// ExportParams names the file an export goes to.
type ExportParams struct {
	Path    string `json:"path"`
	Vectors bool   `json:"vectors,omitempty"`
}

// Validate requires an absolute path.
func (p *ExportParams) Validate() error {
	if !filepath.IsAbs(p.Path) {
		return &FieldError{Field: "path", Reason: "must be an absolute path"}
	}
	return nil
}

// ExportResult counts the records written.
type ExportResult struct {
	Records int `json:"records"`
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
