package store

import (
	"strings"

	"github.com/mnemo-dev/mnemo/memory"
)

// The engine's text helpers are the local compressor's (local.Clip,
// local.FirstNonEmpty, local.FirstLine, local.Dedupe); this one is the
// engine's own.

func required(field, v string) error {
	if strings.TrimSpace(v) == "" {
		return &memory.FieldError{Field: field, Reason: "is required"}
	}
	return nil
}
