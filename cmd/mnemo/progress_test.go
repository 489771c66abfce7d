package main

import (
	"strings"
	"testing"
	"time"
)

// On a terminal the line is redrawn in place, at most ten times a second,
// and ended with a newline; elsewhere a plain line comes at most every
// five seconds, and one at the end.
func TestProgress(t *testing.T) {
	clock := time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC)
	now := func() time.Time { return clock }
	tick := func(d time.Duration) { clock = clock.Add(d) }

	var tty strings.Builder
	p := newProgress(&tty, "backfill codex", "sessions", 8)
	p.tty, p.now = true, now
	p.detail = func() string { return "3 prompts" }
	p.Set(0)
	tick(50 * time.Millisecond)
	p.Set(1) // too soon: not drawn
	tick(2 * time.Second)
	p.Set(4)
	p.Done(8)
	want := "\rbackfill codex: [........................] 0/8 sessions, 3 prompts\x1b[K" +
		"\rbackfill codex: [############............] 4/8 sessions, 3 prompts (2.0 sessions/s)\x1b[K" +
		"\rbackfill codex: [########################] 8/8 sessions, 3 prompts (3.9 sessions/s)\x1b[K\n"
	if tty.String() != want {
		t.Errorf("terminal:\n%q\nwant\n%q", tty.String(), want)
	}

	var plain strings.Builder
	p = newProgress(&plain, "claude-mem", "rows", 3000)
	p.now = now
	p.Set(1000) // the start: nothing yet
	tick(time.Second)
	p.Set(2000) // within five seconds: nothing
	tick(5 * time.Second)
	p.Set(2500)
	p.Done(3000)
	want = "claude-mem: 2500/3000 rows (416.7 rows/s)\nclaude-mem: 3000/3000 rows (500.0 rows/s)\n"
	if plain.String() != want {
		t.Errorf("plain:\n%q\nwant\n%q", plain.String(), want)
	}

	var none strings.Builder
	p = newProgress(&none, "backfill gemini", "sessions", 0)
	p.Done(0)
	if none.Len() != 0 {
		t.Errorf("nothing to do printed %q", none.String())
	}
}
