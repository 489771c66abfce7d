package daemon

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Doctor reports the hook's warnings and errors of the last week: how
// many, the last of each and where; older lines, other levels and lines
// that are not the hook's format are not counted.
func TestHookLogCheck(t *testing.T) {
	home := t.TempDir()
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	if notes, problems := hookLogCheck(home, now); notes != nil || problems != nil {
		t.Fatalf("no log: %q, %+v", notes, problems)
	}
	log := strings.Join([]string{
		`time=2026-11-01T10:00:00.000Z level=ERROR msg="hook panicked" event=Stop`,
		`time=2026-11-28T09:00:00.000Z level=WARN msg="unreadable hook payload" event=PostToolUse bytes=38 err="invalid character 'p'"`,
		`time=2026-11-28T09:30:00.000Z level=INFO msg="delivered"`,
		`garbage`,
		`time=2026-11-29T11:00:00.000Z level=WARN msg="no session_id" event=Stop`,
		`time=2026-11-29T11:30:00.000+01:00 level=ERROR msg="not delivered, and not spooled" method=mnemo/stop err="disk full"`,
	}, "\n") + "\n"
	path := filepath.Join(home, "logs", "hook.log")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	notes, problems := hookLogCheck(home, now)
	if len(notes) != 1 || !strings.HasPrefix(notes[0], "hook log: 2 warnings in the last 7 days in "+path+"; the last, at ") ||
		!strings.HasSuffix(notes[0], `: no session_id event=Stop`) {
		t.Errorf("notes = %q", notes)
	}
	if len(problems) != 1 || problems[0].Check != "hook-log" || !strings.HasPrefix(problems[0].Detail, "1 error in the last 7 days in "+path) ||
		!strings.HasSuffix(problems[0].Detail, `: not delivered, and not spooled method=mnemo/stop err="disk full"`) {
		t.Errorf("problems = %+v", problems)
	}
}
