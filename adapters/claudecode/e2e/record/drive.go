//go:build e2e

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"time"
)

// Bounds of one CLI run.
const (
	turnWait   = 2 * time.Minute  // a turn's result line
	settleWait = 20 * time.Second // more result lines after a background task
	exitWait   = time.Minute      // the CLI's exit once its input is closed
)

// outLine is the part of a stream-json output line the recorder reads.
type outLine struct {
	Type      string   `json:"type"`
	Subtype   string   `json:"subtype"`
	SessionID string   `json:"session_id"`
	Tools     []string `json:"tools"`
	Skills    []any    `json:"skills"`
	Commands  []string `json:"slash_commands"`
	IsError   bool     `json:"is_error"`
	Result    string   `json:"result"`
}

// runOut is what one CLI run printed.
type runOut struct {
	SessionIDs []string // every session id its lines named, first first
	Init       *outLine
	Results    []outLine
	Exit       int
}

func (o *runOut) note(l outLine) {
	if l.SessionID != "" && (len(o.SessionIDs) == 0 || o.SessionIDs[len(o.SessionIDs)-1] != l.SessionID) {
		o.SessionIDs = append(o.SessionIDs, l.SessionID)
	}
	switch {
	case l.Type == "system" && l.Subtype == "init" && o.Init == nil:
		o.Init = &l
	case l.Type == "result":
		o.Results = append(o.Results, l)
	}
}

// claude runs the CLI in the project with args, as its own process group.
// With turns, it runs with stream-json input and sends each turn once the
// one before has printed its result lines; without, stdin is empty. The
// CLI's stdout and stderr are kept in the scratch folder's logs as
// label.jsonl and label.stderr.
//
// Versions that refuse --dangerously-skip-permissions to root (1.0.30,
// whatever IS_SANDBOX says) are run again with the tools allowed by name.
func (r *recorder) claude(label string, turns []turn, args ...string) (*runOut, error) {
	for try := 0; ; try++ {
		out, err := r.claudeOnce(label, turns, args...)
		if out == nil || out.Exit == 0 || len(out.Results) > 0 || try == 2 {
			return out, err
		}
		stderr, _ := os.ReadFile(filepath.Join(r.base, "logs", label+".stderr"))
		switch {
		case bytes.Contains(stderr, []byte("cannot be used with root")) && r.perm[0] == "--dangerously-skip-permissions":
			r.note("--dangerously-skip-permissions is refused to root: tools are allowed by name (--allowedTools)")
			r.perm = []string{"--allowedTools", "Bash,Read,Edit,MultiEdit,Write,Task,Agent,Skill,Glob,Grep,LS,TodoWrite,NotebookEdit,BashOutput,KillBash"}
		case bytes.Contains(stderr, []byte("exactly one item")):
			// 1.0.30 takes one content block per message: no pasted image.
			r.note("%s: a message of text and an image is refused (%s): sent without the image", label, bytes.TrimSpace(stderr))
			for i := range turns {
				turns[i].Image = false
			}
		default:
			return out, err
		}
		r.marks = slices.DeleteFunc(r.marks, func(m mark) bool { return m.Label == label })
	}
}

func (r *recorder) claudeOnce(label string, turns []turn, args ...string) (*runOut, error) {
	// The permission flags last: --allowedTools takes every word after it.
	args = append(append([]string{"-p", "--output-format", "stream-json", "--verbose"}, args...), r.perm...)
	if turns != nil {
		args = append(args, "--input-format", "stream-json")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(len(turns)+1)*(turnWait+settleWait)+exitWait)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.cli, args...)
	cmd.Dir = r.project
	cmd.Env = r.env()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	logs := filepath.Join(r.base, "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return nil, err
	}
	stdoutLog, err := os.Create(filepath.Join(logs, label+".jsonl"))
	if err != nil {
		return nil, err
	}
	defer stdoutLog.Close()
	stderrLog, err := os.Create(filepath.Join(logs, label+".stderr"))
	if err != nil {
		return nil, err
	}
	defer stderrLog.Close()
	cmd.Stderr = stderrLog
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	r.logf("%s: claude %q", label, args)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	pgid := cmd.Process.Pid
	stop := func() { syscall.Kill(-pgid, syscall.SIGKILL) }
	started.Store(fmt.Sprintf("pgid %d", pgid), stop)
	defer func() {
		stop() // what is left of the group
		started.Delete(fmt.Sprintf("pgid %d", pgid))
	}()

	lines := make(chan outLine, 64)
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		defer close(lines)
		br := bufio.NewReaderSize(stdout, 1<<20)
		for {
			raw, err := br.ReadBytes('\n')
			if len(raw) > 0 {
				stdoutLog.Write(raw)
				var l outLine
				if json.Unmarshal(raw, &l) == nil {
					lines <- l
				}
			}
			if err != nil {
				return
			}
		}
	}()

	out := &runOut{}
	// wait reads lines until n more result lines came, or for settle
	// with no line at all; it reports whether the output ended.
	wait := func(n int, d time.Duration, settle bool) (ended bool, err error) {
		timer := time.NewTimer(d)
		defer timer.Stop()
		for got := 0; settle || got < n; {
			select {
			case l, ok := <-lines:
				if !ok {
					return true, nil
				}
				out.note(l)
				if l.Type == "result" {
					got++
					r.logf("%s: result %d: error=%v %.80q", label, len(out.Results), l.IsError, l.Result)
				}
				if settle {
					timer.Reset(d)
				}
			case <-timer.C:
				if settle {
					return false, nil
				}
				return false, fmt.Errorf("%s: no result line within %v", label, d)
			}
		}
		return false, nil
	}

	var runErr error
	for i, t := range turns {
		msg, err := t.message(r)
		if err != nil {
			runErr = err
			break
		}
		r.beginTurn(label, i)
		if _, err := stdin.Write(msg); err != nil {
			runErr = fmt.Errorf("%s: send turn %d: %w", label, i, err)
			break
		}
		n := t.Results
		if n == 0 {
			n = 1
		}
		ended, err := wait(n, turnWait, false)
		if err == nil && !ended && t.Settle {
			ended, err = wait(0, settleWait, true)
		}
		if err != nil {
			runErr = err
			break
		}
		if ended {
			runErr = fmt.Errorf("%s: the output ended at turn %d", label, i)
			break
		}
	}
	if turns == nil {
		r.beginTurn(label, 0)
	}
	stdin.Close()
	for l := range lines {
		out.note(l)
	}
	<-readDone
	err = cmd.Wait()
	var exitErr *exec.ExitError
	switch {
	case ctx.Err() != nil:
		runErr = errors.Join(runErr, fmt.Errorf("%s: timed out", label))
	case errors.As(err, &exitErr):
		out.Exit = exitErr.ExitCode()
	case err != nil:
		runErr = errors.Join(runErr, err)
	}
	r.logf("%s: exit %d, sessions %v, %d results", label, out.Exit, out.SessionIDs, len(out.Results))
	return out, runErr
}

// message is the turn as one line of stream-json input.
func (t turn) message(r *recorder) ([]byte, error) {
	var content any = t.Text
	if t.Image {
		content = []any{
			map[string]any{"type": "text", "text": t.Text},
			map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": "image/png", "data": logoBase64()}},
		}
	}
	b, err := json.Marshal(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": content}})
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// copyFile copies src to dst, creating dst's folder.
func copyFile(dst, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
