//go:build e2e

package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/mnemo-dev/mnemo/adapters/claudecode/modelserver"
)

// Bounds of an interactive session.
const (
	startWait = 60 * time.Second // the CLI's first screen
	quietTurn = 3 * time.Second  // no request for this long after an end_turn reply: the turn is over
	quietBg   = 10 * time.Second // the same, after a turn that started background work
)

// interactive runs the CLI as a person would: in a terminal (tmux), typing
// each turn and pressing Enter, a long prompt pasted (bracketed paste),
// then /exit. A turn is over when the model server's last reply ended the
// turn and no request followed for a while.
func (r *recorder) interactive(label string, turns []turn, args ...string) error {
	sock := fmt.Sprintf("ccrec-%d-%s", os.Getpid(), label)
	tm := func(a ...string) ([]byte, error) {
		cmd := exec.Command("tmux", append([]string{"-u", "-L", sock}, a...)...)
		cmd.Env = append(os.Environ(), "LANG=C.UTF-8")
		return cmd.CombinedOutput()
	}
	logs := filepath.Join(r.base, "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return err
	}
	exited := filepath.Join(logs, label+".exited")
	var launch strings.Builder
	launch.WriteString("cd " + shellQuote(r.project) + " && env -i")
	for _, kv := range append(r.env(), "TERM=xterm-256color") {
		launch.WriteString(" " + shellQuote(kv))
	}
	launch.WriteString(" " + shellQuote(r.cli))
	for _, a := range append(append([]string(nil), r.perm...), args...) {
		launch.WriteString(" " + shellQuote(a))
	}
	launch.WriteString(" 2>" + shellQuote(filepath.Join(logs, label+".stderr")))
	launch.WriteString("; echo $? > " + shellQuote(exited) + "; sleep 600\n")
	script := filepath.Join(logs, label+".launch.sh")
	if err := os.WriteFile(script, []byte(launch.String()), 0o755); err != nil {
		return err
	}
	r.logf("%s: interactive claude %q", label, args)
	if out, err := tm("new-session", "-d", "-s", "cc", "-x", "200", "-y", "50", "sh "+shellQuote(script)); err != nil {
		return fmt.Errorf("%s: tmux: %v: %s", label, err, out)
	}
	stop := func() { tm("kill-server") }
	started.Store("tmux "+sock, stop)
	defer func() {
		stop()
		started.Delete("tmux " + sock)
	}()
	screen := func() string {
		out, _ := tm("capture-pane", "-p", "-t", "cc")
		return string(out)
	}
	snap := func(name string) {
		os.WriteFile(filepath.Join(logs, label+"."+name+".screen"), []byte(screen()), 0o644)
	}

	// The first screen: wait until it shows something and stays put.
	if err := waitStable(screen, startWait); err != nil {
		snap("start")
		return fmt.Errorf("%s: %w: %w", label, errNoStart, err)
	}
	for i, t := range turns {
		// Type only into an idle prompt: keys sent while the CLI is still
		// busy (redrawing after a compaction) are lost.
		if err := waitIdle(screen, 30*time.Second); err != nil {
			r.note("%s turn %d: %v", label, i, err)
		}
		from := len(r.srv.Requests())
		r.beginTurn(label, i)
		first, rest, pasted := t.Text, "", false
		if j := strings.Index(t.Text, "\n\n"); j > 0 && len(t.Text) > 2000 {
			first, rest, pasted = t.Text[:j], t.Text[j:], true
		}
		if out, err := tm("send-keys", "-t", "cc", "-l", "--", first); err != nil {
			return fmt.Errorf("%s: type turn %d: %v: %s", label, i, err, out)
		}
		if pasted {
			buf := filepath.Join(logs, label+".paste")
			if err := os.WriteFile(buf, []byte(rest), 0o644); err != nil {
				return err
			}
			time.Sleep(300 * time.Millisecond)
			if out, err := tm("load-buffer", "-b", "paste", buf); err != nil {
				return fmt.Errorf("%s: load the paste: %v: %s", label, err, out)
			}
			if out, err := tm("paste-buffer", "-p", "-d", "-b", "paste", "-t", "cc"); err != nil {
				return fmt.Errorf("%s: paste: %v: %s", label, err, out)
			}
			time.Sleep(2 * time.Second)
		}
		time.Sleep(700 * time.Millisecond)
		if strings.HasPrefix(t.Text, "/") {
			// A slash command's menu takes the first Enter on some versions.
			time.Sleep(500 * time.Millisecond)
		}
		if out, err := tm("send-keys", "-t", "cc", "Enter"); err != nil {
			return fmt.Errorf("%s: enter turn %d: %v: %s", label, i, err, out)
		}
		quiet := quietTurn
		if t.Settle {
			quiet = quietBg
		}
		// An Enter can be lost: a slash command's menu takes it on some
		// versions, and a screen still being redrawn (after a compaction)
		// drops it. Without a request to the model soon, press it again.
		wait := 6 * time.Second
		if pasted {
			wait = 30 * time.Second // a paste of tens of KB is slow to take in
		}
		for try := 0; try < 8 && !r.waitRequest(from, t, wait); try++ {
			wait = 6 * time.Second
			snap(fmt.Sprintf("turn%d-enter%d", i, try))
			tm("send-keys", "-t", "cc", "Enter")
		}
		if err := r.waitTurn(from, quiet, turnWait); err != nil {
			// A turn the version refuses (a skill it lets only the model
			// invoke) is part of what is recorded: go on with the next.
			snap(fmt.Sprintf("turn%d", i))
			r.note("%s turn %d (%.40q): %v", label, i, t.Text, err)
			continue
		}
		snap(fmt.Sprintf("turn%d", i))
	}
	time.Sleep(time.Second)
	tm("send-keys", "-t", "cc", "-l", "--", "/exit")
	time.Sleep(700 * time.Millisecond)
	tm("send-keys", "-t", "cc", "Enter")
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(exited); err == nil {
			snap("exit")
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	snap("exit")
	r.note("%s: the CLI did not exit on /exit; stopped", label)
	tm("send-keys", "-t", "cc", "C-c")
	time.Sleep(300 * time.Millisecond)
	tm("send-keys", "-t", "cc", "C-c")
	time.Sleep(2 * time.Second)
	return nil
}

// errNoStart: the CLI showed nothing; the session can be tried again.
var errNoStart = errors.New("the CLI did not start")

// waitTurn waits until the server has answered at least one request of
// the conversation (one that offers tools, or a compaction) after from,
// the last of them ended the turn, and no request came for quiet.
func (r *recorder) waitTurn(from int, quiet, max time.Duration) error {
	deadline := time.Now().Add(max)
	for time.Now().Before(deadline) {
		reqs := r.srv.Requests()
		var last *modelserver.Recorded
		for i := from; i < len(reqs); i++ {
			if conversation(reqs[i]) {
				last = &reqs[i]
			}
		}
		if last != nil && last.Reply.StopReason != "tool_use" && time.Since(reqs[len(reqs)-1].Time) > quiet {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("the turn did not end within %v", max)
}

// conversation reports a request of the session's conversation, not a
// side request (a title, a summary: no tools).
func conversation(r modelserver.Recorded) bool {
	return r.Kind == modelserver.KindCompaction || r.Request != nil && len(r.Request.Tools) > 0
}

// waitRequest reports whether the turn's first request (its script's, or
// a compaction) came after from, within max.
func (r *recorder) waitRequest(from int, t turn, max time.Duration) bool {
	want := scriptOf(t)
	deadline := time.Now().Add(max)
	for time.Now().Before(deadline) {
		reqs := r.srv.Requests()
		for _, q := range reqs[min(from, len(reqs)):] {
			if want == "" && q.Kind == modelserver.KindCompaction || want != "" && q.Script == want && conversation(q) {
				return true
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return false
}

// waitIdle waits until the screen shows no work in progress (the
// spinner's "esc to interrupt") and stays the same for a second and a
// half.
func waitIdle(screen func() string, max time.Duration) error {
	deadline := time.Now().Add(max)
	last, since := "", time.Now()
	for time.Now().Before(deadline) {
		s := screen()
		busy := strings.Contains(s, "esc to interrupt") || strings.Contains(s, "Compacting")
		if s != last || busy {
			last, since = s, time.Now()
		} else if time.Since(since) > 1500*time.Millisecond {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("the CLI still looks busy after %v", max)
}

// waitStable waits until the screen shows something and stays the same
// for two seconds.
func waitStable(screen func() string, max time.Duration) error {
	deadline := time.Now().Add(max)
	last, since := "", time.Now()
	for time.Now().Before(deadline) {
		s := screen()
		if s != last {
			last, since = s, time.Now()
		} else if strings.TrimSpace(s) != "" && time.Since(since) > 2*time.Second {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("the first screen did not settle within %v:\n%s", max, last)
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
