package memory

import (
	"fmt"
	"time"
)

// A second look for what aged. A record whose file changed since it was
// made (StateChanged) may still say what is true, or may not: nobody can
// tell from the lines alone. While something confirms it now and then, it
// stands; when nothing has for ReviewAfter, it is StateReview, and a
// person decides: keep it (mnemo/keep, stored: it stands until its file
// changes again), correct it (mnemo/correct) or forget it (mnemo/forget).
//
// What confirms a record:
//   - the same fact seen again, folded into it (LastSeen), and a person's
//     keep or correction (Kept, Edits): Observation.Confirmed is the
//     latest of these and its making;
//   - a later record that saw the file as it is now, while what the
//     record wrote is still in it (only a record that is StateChanged, not
//     StateGone, is ever in question): the work went on with the record's
//     text in view. Like a keep, it holds while the file stays as that
//     record saw it.
//
// So a record needs review when its file changed in a way Mnemo did not
// see (a pull, a colleague's change, an editor it does not watch), more
// than ReviewAfter after its last confirmation.
//
// A record that only looked (a read, a search) stays StateChanged: the
// next look says what is there now, and the context never gives one as a
// fact. The state, like every other, is computed when a record is read,
// never stored; only a person's keep is.

// StateReview: a file it saw changed since, and nothing has confirmed it
// for ReviewAfter (Observation.Confirmed): it needs a second look. The
// context marks it, as it marks StateChanged.
const StateReview = "needs-review"

// ReviewAfter is how long a record whose file changed may go without a
// confirmation before it needs review, unless the settings say otherwise
// (reviewAfterDays). docs/decisions.md says how it was chosen.
const ReviewAfter = 7 * 24 * time.Hour

// A Keep is a person's word that a record still holds though its files
// changed (mnemo/keep, or a correction): when it was given, and what the
// record's files held then. It clears the review while each file holds
// the same; once one changes again, the keep's time is its last
// confirmation.
type Keep struct {
	Time time.Time `json:"time"`
	// Hashes are the hashes (FileAnchor.Hash) of the files of the record's
	// FileAnchors, in their order, when it was kept; "" for a file that
	// could not be read.
	Hashes []string `json:"hashes"`
}

// Confirmed is when o was last confirmed by what o itself carries: made,
// the same fact seen again (LastSeen), kept or corrected by a person. A
// later record of the same file may confirm it later still (the store
// checks those).
func (o *Observation) Confirmed() time.Time {
	t := o.LastTime()
	if o.Kept != nil && o.Kept.Time.After(t) {
		t = o.Kept.Time
	}
	if n := len(o.Edits); n > 0 && o.Edits[n-1].Time.After(t) {
		t = o.Edits[n-1].Time
	}
	return t
}

// ReviewParams asks for the records that need review, newest first.
type ReviewParams struct {
	// Project keeps the list to one project; empty lists every project's.
	Project string `json:"project,omitempty"`
	// Limit bounds the list (DefaultLimit when 0, at most MaxLimit).
	Limit int `json:"limit,omitzero"`
}

// Validate checks the limit.
func (p *ReviewParams) Validate() error {
	if p.Limit < 0 || p.Limit > MaxLimit {
		return &FieldError{"limit", fmt.Sprintf("must be between 1 and %d", MaxLimit)}
	}
	return nil
}

// ReviewResult lists the records that need review (StateReview), newest
// first, each with why.
type ReviewResult struct {
	Items []ReviewItem `json:"items"`
	// Total is how many records need review, More that the limit left
	// some out.
	Total int  `json:"total"`
	More  bool `json:"more,omitzero"`
	// After is the rule in force: how long a changed record may go
	// without a confirmation, in days.
	AfterDays float64 `json:"afterDays"`
}

// A ReviewItem is one record that needs review.
type ReviewItem struct {
	Observation Observation `json:"observation"`
	// Confirmed is when it was last confirmed (made, seen again, kept,
	// corrected, or its file seen as it is now by a later record).
	Confirmed time.Time `json:"confirmed"`
	// Changed are its files that changed since it was confirmed.
	Changed []string `json:"changed"`
}
