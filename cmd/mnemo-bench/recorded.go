//go:build unix

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/mnemo-dev/mnemo/memory"
)

// recordedResult is the daemon's CPU while it remembers real work: the
// recorded Claude Code transcripts back-filled into a fresh home.
type recordedResult struct {
	versions   int
	toolEvents int // as the back-fill counted them
	turns      int
	counts     memory.Counts
	cpu        time.Duration // the daemon's, from the first back-fill to caught up
	caughtUp   time.Duration
	embedder   string
}

// backfilledRe reads the back-fill's summary line: "back-filled 5
// sessions: 21 prompts, 29 tool events, 24 turns".
var backfilledRe = regexp.MustCompile(`back-filled \d+ sessions?: \d+ prompts?, (\d+) tool events?, (\d+) turns?`)

// measureRecorded back-fills each version's recorded transcripts (dir/
// <version>/projects, as adapters/claudecode/testdata/transcripts holds
// them: real sessions of the Claude Code CLI, a pasted 40 KB spec among
// their prompts) with `mnemo backfill claude-code` into one fresh home
// whose daemon the benchmark starts, and reads the daemon's CPU time
// (utime + stime of /proc/<pid>/stat) from the first back-fill until the
// store caught up.
func measureRecorded(ctx context.Context, e *env, dir string) (recordedResult, error) {
	var res recordedResult
	entries, err := os.ReadDir(dir)
	if err != nil {
		return res, err
	}
	var versions []string
	for _, v := range entries {
		if _, err := os.Stat(filepath.Join(dir, v.Name(), "projects")); err == nil {
			versions = append(versions, v.Name())
		}
	}
	if len(versions) == 0 {
		return res, fmt.Errorf("no recorded transcripts (<version>/projects) in %s", dir)
	}
	d, err := e.startDaemon()
	if err != nil {
		return res, err
	}
	defer d.stop()
	if err := e.waitServing(ctx, d, 30*time.Second); err != nil {
		return res, err
	}
	if _, err := e.waitIndexed(ctx, time.Minute); err != nil {
		return res, err
	}
	pid := d.cmd.Process.Pid
	cpu0, err := processCPU(pid)
	if err != nil {
		return res, err
	}
	start := time.Now()
	for _, v := range versions {
		cmd := exec.CommandContext(ctx, filepath.Join(e.bin, "mnemo"), "backfill", "claude-code")
		cmd.Env = e.environ("CLAUDE_CONFIG_DIR=" + filepath.Join(dir, v))
		out, err := cmd.CombinedOutput()
		if err != nil {
			return res, fmt.Errorf("backfill %s: %w: %s", v, err, strings.TrimSpace(string(out)))
		}
		m := backfilledRe.FindSubmatch(out)
		if m == nil {
			return res, fmt.Errorf("backfill %s: no summary line in %q", v, out)
		}
		tools, _ := strconv.Atoi(string(m[1]))
		turns, _ := strconv.Atoi(string(m[2]))
		res.toolEvents += tools
		res.turns += turns
		res.versions++
	}
	st, err := e.waitIndexed(ctx, 10*time.Minute)
	if err != nil {
		return res, err
	}
	res.caughtUp = time.Since(start)
	cpu1, err := processCPU(pid)
	if err != nil {
		return res, err
	}
	res.cpu, res.counts, res.embedder = cpu1-cpu0, st.Counts, st.Embedder
	return res, nil
}

// processCPU is a process's CPU time (user and system), from
// /proc/<pid>/stat.
func processCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The fields after the command's name, which is in parentheses.
	_, rest, ok := strings.Cut(string(b), ") ")
	f := strings.Fields(rest)
	if !ok || len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected %q", pid, b)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected %q", pid, b)
	}
	return time.Duration(utime+stime) * time.Second / clockTicks, nil
}

// clockTicks is USER_HZ, the unit of /proc's times: 100 on Linux.
const clockTicks = 100

// rows are the recorded back-fill's rows.
func (r recordedResult) rows() []row {
	c := r.counts
	records := c.Observations + c.Summaries
	per := r.cpu / time.Duration(max(1, r.toolEvents))
	return []row{{
		"daemon CPU per tool event, back-filling the recorded Claude Code transcripts",
		ms(per), "≤ 100 ms", verdict(per <= 100*time.Millisecond),
		fmt.Sprintf("%d versions' real sessions (adapters/claudecode/testdata/transcripts; the same sessions in each, so later versions' facts mostly fold into the first's): %d tool events and %d turns → %d observations and %d summaries in %d sessions; the daemon's CPU %.2f s (%s per record kept), caught up %.1f s after the first back-fill began; %s",
			r.versions, r.toolEvents, r.turns, c.Observations, c.Summaries, c.Sessions, r.cpu.Seconds(), ms(r.cpu/time.Duration(max(1, records))), r.caughtUp.Seconds(), r.embedder),
	}}
}
