package memory

import (
	"strings"
	"time"
)

// Keeping memory true: a person or an agent corrects a record that is
// wrong (mnemo/correct), pins one that must be in every context of its
// project (mnemo/pin, mnemo/unpin), or forgets it (mnemo/forget). A
// correction keeps what the record said before as an Edit, so that the
// record's history survives it; the search indexes know only the
// corrected text.

// An Edit is one correction of an observation: when it was made and what
// the observation said until then (its title and its text: subtitle,
// narrative and facts).
type Edit struct {
	Time      time.Time `json:"time"`
	Title     string    `json:"title"`
	Subtitle  string    `json:"subtitle,omitempty"`
	Narrative string    `json:"narrative,omitempty"`
	Facts     []string  `json:"facts,omitempty"`
}

// Before returns o as it read until edit e: o with e's title and text.
func (o *Observation) Before(e Edit) Observation {
	old := *o
	old.Title, old.Subtitle, old.Narrative, old.Facts = e.Title, e.Subtitle, e.Narrative, e.Facts
	old.Edits = nil
	return old
}

// PastHashes returns the content hashes of every earlier version of o
// (ContentHash of o.Before each edit): the same note made or imported
// again, as it read before a correction, is not stored again.
func (o *Observation) PastHashes() []string {
	var out []string
	for _, e := range o.Edits {
		old := o.Before(e)
		out = append(out, old.ContentHash())
	}
	return out
}

// CorrectParams corrects an observation: a new title, a new text, or both.
// The text replaces the observation's narrative, subtitle and facts, which
// all said what is being corrected; what they said is kept as an Edit.
type CorrectParams struct {
	ID    uint64 `json:"id"`
	Title string `json:"title,omitempty"`
	Text  string `json:"text,omitempty"`
}

// Validate requires an id and a title or a text that is not blank.
func (p *CorrectParams) Validate() error {
	if p.ID == 0 {
		return &FieldError{"id", "is required (the observation to correct)"}
	}
	if strings.TrimSpace(p.Title) == "" && strings.TrimSpace(p.Text) == "" {
		return &FieldError{"title", "or text is required: an empty correction changes nothing"}
	}
	return nil
}

// CorrectResult is the observation as corrected, its history in Edits.
// Changed is false when the correction said what the observation already
// said: nothing was stored.
type CorrectResult struct {
	Observation Observation `json:"observation"`
	Changed     bool        `json:"changed"`
}

// PinResult says which observations a pin or an unpin changed, and which
// were already so.
type PinResult struct {
	Changed   []uint64 `json:"changed"`
	Unchanged []uint64 `json:"unchanged"`
}
