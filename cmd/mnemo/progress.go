package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// progress tells how far a long command has come, on stderr: on a
// terminal one line redrawn in place (a bar, the count, the rate, what
// else the command counts), at most ten times a second; elsewhere (a
// file, a pipe, a CI log) a plain line at most every few seconds, and one
// at the end.
type progress struct {
	w           io.Writer
	tty         bool
	label, unit string
	total       int
	// detail, if set, says what else has been done ("3,400 tool events").
	detail func() string
	// every is the least time between two plain lines.
	every time.Duration

	began, last time.Time
	drawn       bool // a line is on the terminal, not yet ended
	now         func() time.Time
}

func newProgress(w io.Writer, label, unit string, total int) *progress {
	return &progress{w: w, tty: isTerminal(w), label: label, unit: unit, total: total,
		every: 5 * time.Second, now: time.Now}
}

// isTerminal reports whether w is a character device that can redraw a
// line: a terminal, TERM not "dumb".
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("TERM") == "dumb" {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// Set says done of total are done.
func (p *progress) Set(done int) {
	now := p.now()
	if p.began.IsZero() {
		p.began, p.last = now, now
		if p.tty {
			p.print(done, now) // at once: the person sees it started
		}
		return
	}
	gap := p.every
	if p.tty {
		gap = 100 * time.Millisecond
	}
	if now.Sub(p.last) < gap {
		return
	}
	p.last = now
	p.print(done, now)
}

// Done ends the report: the last count, and a newline on a terminal. A
// command that never called Set (it had nothing to do) prints nothing.
func (p *progress) Done(done int) {
	now := p.now()
	if p.began.IsZero() {
		return
	}
	p.print(done, now)
	if p.tty {
		fmt.Fprintln(p.w)
		p.drawn = false
	}
}

func (p *progress) print(done int, now time.Time) {
	var b strings.Builder
	b.WriteString(p.label)
	b.WriteString(": ")
	if p.tty {
		const width = 24
		filled := 0
		if p.total > 0 {
			filled = min(width, done*width/p.total)
		}
		b.WriteString("[" + strings.Repeat("#", filled) + strings.Repeat(".", width-filled) + "] ")
	}
	fmt.Fprintf(&b, "%d/%d %s", done, p.total, p.unit)
	if p.detail != nil {
		if d := p.detail(); d != "" {
			b.WriteString(", " + d)
		}
	}
	if secs := now.Sub(p.began).Seconds(); secs >= 1 {
		fmt.Fprintf(&b, " (%.1f %s/s)", float64(done)/secs, p.unit)
	}
	if p.tty {
		// Back to the line's start, the line, the rest of it cleared.
		fmt.Fprintf(p.w, "\r%s\x1b[K", b.String())
		p.drawn = true
		return
	}
	fmt.Fprintln(p.w, b.String())
}
