package observer

import (
	"time"

	"github.com/mnemo-dev/mnemo/memory"
)

// The internals the external tests reach.

// CapText is capText.
func CapText(s string, max int) string { return capText(s, max) }

// Prompt is the user message a run sends for ev.
func Prompt(in memory.AgentInput, ev memory.Event, fresh bool) string { return prompt(in, ev, fresh) }

// SystemPrompt is the observer's system prompt.
func SystemPrompt(extra string) string { return systemPrompt(extra) }

// Ledger is the token ledger, for the budget tests.
type Ledger struct{ l *ledger }

// OpenLedger opens a ledger kept in path.
func OpenLedger(path string, b Budget, now func() time.Time) (*Ledger, error) {
	l, err := openLedger(path, b, now)
	return &Ledger{l}, err
}

func (l *Ledger) Allow(session string) string       { return l.l.allow(session) }
func (l *Ledger) Add(session string, n int64) error { return l.l.add(session, n) }
func (l *Ledger) Status() string                    { return l.l.status() }
func (l *Ledger) Spent(session string) (int64, int64) {
	return l.l.spent(session)
}
