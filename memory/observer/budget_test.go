package observer_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/memory/observer"
)

// clock is a settable test clock.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }

func TestLedger(t *testing.T) {
	t.Run("per day, persisted, reset at midnight", func(t *testing.T) {
		clk := &clock{time.Date(2026, 11, 22, 9, 0, 0, 0, time.Local)}
		path := filepath.Join(t.TempDir(), "state", "budget.json")
		b := observer.Budget{PerDay: 2500}
		l, err := observer.OpenLedger(path, b, clk.now)
		if err != nil {
			t.Fatal(err)
		}
		for i, sess := range []string{"a", "b"} {
			if why := l.Allow(sess); why != "" {
				t.Fatalf("run %d refused: %s", i, why)
			}
			if err := l.Add(sess, 1020); err != nil {
				t.Fatal(err)
			}
		}
		if why := l.Allow("c"); why != "" || l.Status() != "" {
			t.Fatalf("2040 of 2500 refused: %q, status %q", why, l.Status())
		}
		if err := l.Add("c", 1020); err != nil { // the run that crosses the bound counts
			t.Fatal(err)
		}
		const want = "3060 of 2500 tokens today"
		if why := l.Allow("d"); why != want {
			t.Fatalf("allow = %q, want %q", why, want)
		}
		if s := l.Status(); s != "budget spent: "+want {
			t.Fatalf("status %q", s)
		}

		// A restart reads the day's spend back.
		l2, err := observer.OpenLedger(path, b, clk.now)
		if err != nil {
			t.Fatal(err)
		}
		if why := l2.Allow("a"); why != want {
			t.Fatalf("after reopening: allow = %q, want %q", why, want)
		}
		// A new day starts from zero; what a session spent stays.
		clk.advance(16 * time.Hour)
		if why := l2.Allow("a"); why != "" || l2.Status() != "" {
			t.Fatalf("next day: allow %q, status %q", why, l2.Status())
		}
		if today, sess := l2.Spent("a"); today != 0 || sess != 1020 {
			t.Fatalf("next day: spent today %d, session a %d; want 0 and 1020", today, sess)
		}
	})

	t.Run("per session", func(t *testing.T) {
		clk := &clock{time.Date(2026, 11, 22, 9, 0, 0, 0, time.Local)}
		l, err := observer.OpenLedger("", observer.Budget{PerSession: 1000}, clk.now)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Add("cc-1", 1000); err != nil {
			t.Fatal(err)
		}
		if why := l.Allow("cc-1"); why != "1000 of 1000 tokens in session cc-1" {
			t.Fatalf("allow cc-1 = %q", why)
		}
		if why := l.Allow("cc-2"); why != "" {
			t.Fatalf("another session refused: %q", why)
		}
		if s := l.Status(); s != "" {
			t.Fatalf("status %q: a session's budget is not the day's", s)
		}
	})

	t.Run("no bounds", func(t *testing.T) {
		l, err := observer.OpenLedger("", observer.Budget{}, time.Now)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Add("s", 1<<40); err != nil {
			t.Fatal(err)
		}
		if why := l.Allow("s"); why != "" {
			t.Fatalf("refused without a budget: %q", why)
		}
	})

	t.Run("old sessions are forgotten", func(t *testing.T) {
		clk := &clock{time.Date(2026, 1, 1, 9, 0, 0, 0, time.Local)}
		path := filepath.Join(t.TempDir(), "budget.json")
		l, err := observer.OpenLedger(path, observer.Budget{PerSession: 10}, clk.now)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Add("old", 10); err != nil {
			t.Fatal(err)
		}
		clk.advance(40 * 24 * time.Hour)
		if err := l.Add("new", 1); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), `"old"`) || !strings.Contains(string(data), `"new"`) {
			t.Fatalf("saved ledger: %s", data)
		}
	})

	t.Run("a corrupt file is an error, not a fresh budget", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "budget.json")
		if err := os.WriteFile(path, []byte("{not json"), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := observer.OpenLedger(path, observer.Budget{PerDay: 1}, time.Now); err == nil {
			t.Fatal("opened a corrupt ledger")
		}
	})
}
