package observer

import (
	"fmt"
	"sync"
	"time"

	"github.com/mnemo-dev/mnemo/memory"
)

// gate remembers why an agent declines runs: a spent budget (until the
// budget allows again) or an unavailable model (runs decline at once for
// a cooldown, without trying).
type gate struct {
	name     string
	now      func() time.Time
	cooldown time.Duration

	mu        sync.Mutex
	decline   string    // why runs are declined now; "" when they are not
	downUntil time.Time // runs decline at once until then
}

// available returns an error wrapping ErrUnavailable during a cooldown.
func (g *gate) available() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.now().Before(g.downUntil) {
		return fmt.Errorf("%s: %w: %s", g.name, ErrUnavailable, g.decline)
	}
	return nil
}

// down starts a cooldown and returns the error that declines the run.
func (g *gate) down(why string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.decline, g.downUntil = why, g.now().Add(g.cooldown)
	return fmt.Errorf("%s: %w: %s", g.name, ErrUnavailable, why)
}

// spent records a spent budget and returns the error that declines the
// run.
func (g *gate) spent(what string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.decline = "budget spent: " + what
	return fmt.Errorf("%s: %w: %s", g.name, ErrBudgetSpent, what)
}

// ok records a run that worked.
func (g *gate) ok() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.decline, g.downUntil = "", time.Time{}
}

// status is why runs are declined, or "".
func (g *gate) status() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.decline
}

// spending is what both remote agents keep: the token ledger and the gate
// that declines runs while the agent is unavailable.
type spending struct {
	ledger *ledger
	gate   *gate
}

// AgentStatus implements memory.AgentReporter: "budget spent: N of M
// tokens today", or why the last run was declined, or "".
func (s spending) AgentStatus() string {
	if st := s.ledger.status(); st != "" {
		return st
	}
	return s.gate.status()
}

// Spent returns the tokens spent today and by a content session.
func (s spending) Spent(contentSessionID string) (today, inSession int64) {
	return s.ledger.spent(contentSessionID)
}

// admit is the start every remote run shares: the memory session it runs
// under (resume when in.ResumeID is set), then the gate and the budget,
// which decline with errors wrapping memory.ErrFallback.
func (s spending) admit(agent string, in memory.AgentInput) (id string, resume bool, err error) {
	id, resume = in.NewID, false
	if in.ResumeID != "" {
		id, resume = in.ResumeID, true
	}
	if id == "" || len(in.Events) == 0 {
		return "", false, fmt.Errorf("%s: a run needs a memory session id and events", agent)
	}
	if err := s.gate.available(); err != nil {
		return "", false, err
	}
	if spent := s.ledger.allow(in.Session.ContentSessionID); spent != "" {
		return "", false, s.gate.spent(spent)
	}
	return id, resume, nil
}
