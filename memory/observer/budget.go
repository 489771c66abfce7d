package observer

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/mnemo-dev/mnemo/memory/atomicfile"
)

// sessionSpendTTL is how long a session's spend is kept after its last run.
const sessionSpendTTL = 30 * 24 * time.Hour

// ledger counts the tokens an agent spent and holds it to its Budget. It
// is saved to a file after every change (when it has one), so that a
// daemon restart does not reset the day.
type ledger struct {
	mu     sync.Mutex
	limits Budget
	path   string
	now    func() time.Time
	st     ledgerState
}

type ledgerState struct {
	Day      string                  `json:"day"` // local date, 2006-01-02
	Today    int64                   `json:"today"`
	Sessions map[string]sessionSpend `json:"sessions,omitempty"`
}

type sessionSpend struct {
	Tokens int64     `json:"tokens"`
	Last   time.Time `json:"last"`
}

// openLedger loads the ledger kept in path ("" keeps it in memory only).
func openLedger(path string, limits Budget, now func() time.Time) (*ledger, error) {
	l := &ledger{limits: limits, path: path, now: now, st: ledgerState{Sessions: map[string]sessionSpend{}}}
	if path == "" {
		return l, nil
	}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return l, nil
	case err != nil:
		return nil, fmt.Errorf("read token budget: %w", err)
	}
	if err := json.Unmarshal(data, &l.st); err != nil {
		return nil, fmt.Errorf("read token budget %s: %w", path, err)
	}
	if l.st.Sessions == nil {
		l.st.Sessions = map[string]sessionSpend{}
	}
	return l, nil
}

// roll starts a new day when the date changed. The caller holds mu.
func (l *ledger) roll() {
	if day := l.now().Format(time.DateOnly); day != l.st.Day {
		l.st.Day, l.st.Today = day, 0
	}
}

// allow returns "" while the budget lasts, else what is spent: "N of M
// tokens today" or "N of M tokens in session S".
func (l *ledger) allow(session string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.roll()
	if d := l.limits.PerDay; d > 0 && l.st.Today >= d {
		return fmt.Sprintf("%d of %d tokens today", l.st.Today, d)
	}
	if s := l.limits.PerSession; s > 0 && l.st.Sessions[session].Tokens >= s {
		return fmt.Sprintf("%d of %d tokens in session %s", l.st.Sessions[session].Tokens, s, session)
	}
	return ""
}

// add counts tokens spent by a session and saves the ledger.
func (l *ledger) add(session string, tokens int64) error {
	if tokens <= 0 {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.roll()
	now := l.now()
	l.st.Today += tokens
	sp := l.st.Sessions[session]
	sp.Tokens += tokens
	sp.Last = now
	l.st.Sessions[session] = sp
	for id, s := range l.st.Sessions {
		if now.Sub(s.Last) > sessionSpendTTL {
			delete(l.st.Sessions, id)
		}
	}
	return l.save()
}

// spent returns the tokens spent today and by a session.
func (l *ledger) spent(session string) (today, inSession int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.roll()
	return l.st.Today, l.st.Sessions[session].Tokens
}

// status is "budget spent: N of M tokens today" once the day's budget is
// spent, else "".
func (l *ledger) status() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.roll()
	if d := l.limits.PerDay; d > 0 && l.st.Today >= d {
		return fmt.Sprintf("budget spent: %d of %d tokens today", l.st.Today, d)
	}
	return ""
}

// save writes the ledger to a temporary file and renames it into place.
// The caller holds mu.
func (l *ledger) save() error {
	if l.path == "" {
		return nil
	}
	data, err := json.Marshal(l.st)
	if err != nil {
		return err
	}
	if err := writeFileAtomic(l.path, data); err != nil {
		return fmt.Errorf("save token budget: %w", err)
	}
	return nil
}

// writeFileAtomic replaces path with data, the user's alone
// (atomicfile.WriteFile), making its folder first.
func writeFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return atomicfile.WriteFile(path, data, 0o600)
}
