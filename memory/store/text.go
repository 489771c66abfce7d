package store

import (
	"strings"

	"github.com/mnemo-dev/mnemo/memory"
)

// The text rules the engine shares with the agents are the domain's
// (memory.Clip, memory.FirstNonEmpty, memory.FirstLine, memory.Dedupe);
// this one is the engine's own.

func required(field, v string) error {
	if strings.TrimSpace(v) == "" {
		return &memory.FieldError{Field: field, Reason: "is required"}
	}
	return nil
}
