package daemon

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/mnemo-dev/mnemo/adapters/hosts/hook"
	"github.com/mnemo-dev/mnemo/memory"
)

// The hook never fails its host, so what goes wrong in it is seen only in
// its log: doctor reads the log's end and reports the warnings and errors
// of the last days, how many, and the last of each.
const (
	// hookLogWindow is how far back doctor looks.
	hookLogWindow = 7 * 24 * time.Hour
	// hookLogTail bounds what doctor reads of the log: its end.
	hookLogTail = 1 << 20
)

// hookLogCheck reads the end of the hook's log in home and returns, for
// doctor, a note on its warnings of the last hookLogWindow and a problem
// for its errors (none when there are none, or no log). The lines it
// quotes carry ids and sizes only: the hook logs no prompt or tool text.
func hookLogCheck(home string, now time.Time) (notes []string, problems []memory.Problem) {
	path := hook.LogPath(home)
	f, err := os.Open(path)
	if err != nil {
		return nil, nil
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > hookLogTail {
		f.Seek(fi.Size()-hookLogTail, io.SeekStart)
	}
	type seen struct {
		n    int
		last string
		at   time.Time
	}
	var warn, errs seen
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		at, level, rest, ok := parseLogLine(sc.Bytes())
		if !ok || now.Sub(at) > hookLogWindow {
			continue
		}
		s := &warn
		switch level {
		case "WARN":
		case "ERROR":
			s = &errs
		default:
			continue
		}
		s.n++
		s.last, s.at = rest, at
	}
	say := func(s seen, one, many string) string {
		return fmt.Sprintf("%s in the last %d days in %s; the last, at %s: %s", memory.Count(s.n, one, many), int(hookLogWindow.Hours()/24),
			path, s.at.Local().Format("2006-01-02 15:04"), memory.Clip(s.last, 300))
	}
	if warn.n > 0 {
		notes = append(notes, "hook log: "+say(warn, "warning", "warnings"))
	}
	if errs.n > 0 {
		problems = append(problems, memory.Problem{Check: "hook-log", Detail: say(errs, "error", "errors")})
	}
	return notes, problems
}

// parseLogLine reads a line of log/slog's text format: its time, its
// level, and what follows (the message unquoted, then the attributes).
func parseLogLine(line []byte) (at time.Time, level, rest string, ok bool) {
	field := func(name string) (string, bool) {
		if !bytes.HasPrefix(line, []byte(name+"=")) {
			return "", false
		}
		line = line[len(name)+1:]
		v := line
		if i := bytes.IndexByte(line, ' '); i >= 0 {
			v, line = line[:i], line[i+1:]
		} else {
			line = nil
		}
		return string(v), true
	}
	ts, ok1 := field("time")
	level, ok2 := field("level")
	if !ok1 || !ok2 {
		return at, "", "", false
	}
	at, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return at, "", "", false
	}
	rest = string(line)
	if m, ok := strings.CutPrefix(rest, "msg="); ok {
		if q, err := strconv.QuotedPrefix(m); err == nil {
			msg, _ := strconv.Unquote(q)
			rest = strings.TrimSpace(msg + " " + strings.TrimSpace(m[len(q):]))
		}
	}
	return at, level, rest, true
}
