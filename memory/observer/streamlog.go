package observer

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// streamLog appends the raw lines of agent runs to
// <AgentsDir>/<memorySessionId>/stream.log, one timestamped line each,
// never replacing what earlier runs wrote (rule 7). A nil *streamLog
// writes nothing.
type streamLog struct {
	mu  sync.Mutex
	f   *os.File
	now func() time.Time
	err error
}

// openStreamLog opens the log of a memory session; nil when agentsDir is
// empty.
func openStreamLog(agentsDir, memorySessionID string, now func() time.Time) (*streamLog, error) {
	if agentsDir == "" {
		return nil, nil
	}
	dir := filepath.Join(agentsDir, filepath.Base(memorySessionID))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("open stream log: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, "stream.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open stream log: %w", err)
	}
	return &streamLog{f: f, now: now}, nil
}

// write appends "<time> <kind> <text>"; a text of several lines gets one
// line each.
func (l *streamLog) write(kind, text string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return
	}
	ts := l.now().UTC().Format(time.RFC3339Nano)
	var b strings.Builder
	for _, ln := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		fmt.Fprintf(&b, "%s %s %s\n", ts, kind, strings.TrimRight(ln, "\r"))
	}
	_, l.err = l.f.WriteString(b.String())
}

// Close closes the file and reports the first write error.
func (l *streamLog) Close() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	err := l.f.Close()
	if l.err != nil {
		return fmt.Errorf("write stream log: %w", l.err)
	}
	return err
}
