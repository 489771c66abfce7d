//go:build unix

package main_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/adapters/hosts"
	"github.com/mnemo-dev/mnemo/memory/team/pgtest"
)

// loadMachine keeps the machine busy until the test ends: a process
// spinning on each core, and one writing and fsyncing a file in a loop, so
// that the disk is busy flushing too: a load average of 2 to 3 more than
// the machine has.
func loadMachine(t *testing.T, dir string) {
	t.Helper()
	var cmds []*exec.Cmd
	for range runtime.NumCPU() {
		cmds = append(cmds, exec.Command("/bin/sh", "-c", "while :; do :; done"))
	}
	cmds = append(cmds, exec.Command("/bin/sh", "-c",
		fmt.Sprintf("while :; do dd if=/dev/zero of=%s bs=1M count=16 conv=fsync 2>/dev/null; done", filepath.Join(dir, "load.bin"))))
	for _, c := range cmds {
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, c := range cmds {
			syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
			c.Wait()
		}
	})
	time.Sleep(500 * time.Millisecond) // the load is on before anything is measured
}

// After kill -9 of the daemon, under load (a CPU spinner per core and a
// disk flushing, on top of whatever else the machine runs), the next
// SessionStart hook brings a daemon back and gets its context within a
// second, with team memory off and on; every event a hook acknowledged
// before the kill is stored once, and with team memory on reaches the
// other machine. RESTART_MODELS (a models folder) runs it with the
// sentence encoder, RESTART_BACKLOG=n with n more tool events queued
// before each kill.
func TestRestartAfterKill9UnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: kills and restarts daemons under load")
	}
	const rounds = 5
	for _, withTeam := range []bool{false, true} {
		name := "team off"
		if withTeam {
			name = "team on"
		}
		t.Run(name, func(t *testing.T) {
			var peer *teamPeer
			env := newTestEnv(t)
			t.Cleanup(func() { stopDaemon(t, env) })
			if withTeam {
				pg := pgtest.Must(t)
				peer = &teamPeer{name: "bob", env: newTestEnv(t)}
				t.Cleanup(func() { stopDaemon(t, peer.env) })
				for _, p := range []*teamPeer{{name: "alice", env: env}, peer} {
					p.mnemo(t, "team", "join", "--author", p.name, pg.URL())
				}
			}
			backlog, _ := strconv.Atoi(os.Getenv("RESTART_BACKLOG"))
			var extra []string
			if m := os.Getenv("RESTART_MODELS"); m != "" {
				extra = append(extra, "MNEMO_MODELS="+m)
			}
			var took []time.Duration
			loadMachine(t, env.root)
			for round := range rounds {
				sid := fmt.Sprintf("restart-%d", round)
				if r := runHook(env, "SessionStart", map[string]any{"session_id": sid, "cwd": env.project, "source": "startup"}, extra...); r.code != 0 {
					t.Fatalf("SessionStart: %+v", r)
				}
				runHook(env, "UserPromptSubmit", map[string]any{"session_id": sid, "cwd": env.project, "prompt": "look at restart file " + fmt.Sprint(round)}, extra...)
				file := fmt.Sprintf("restart/file%d.go", round)
				if r := runHook(env, "PostToolUse", toolPayload(env, sid, file), extra...); r.code != 0 || strings.TrimSpace(r.stdout) != "{}" {
					t.Fatalf("PostToolUse: %+v", r)
				}
				for i := range backlog {
					runHook(env, "PostToolUse", toolPayload(env, sid, fmt.Sprintf("restart/backlog%d-%d.go", round, i)), extra...)
				}
				pid := daemonStatus(t, env).PID
				start := time.Now()
				killProcess(pid)
				r := runHook(env, "SessionStart", map[string]any{"session_id": sid + "-next", "cwd": env.project, "source": "startup"}, extra...)
				back := time.Since(start)
				took = append(took, back)
				if r.code != 0 || !strings.Contains(r.stdout, "mnemo-context") {
					t.Errorf("round %d: the SessionStart after the kill got no context in %v: %+v\ndaemon log:\n%s", round, back, r, tail(env, "daemon.log"))
				}
				t.Logf("round %d: kill -9, then the next SessionStart answered with its context after %v", round, back.Round(time.Millisecond))
			}
			slices.Sort(took)
			median, worst := took[len(took)/2], took[len(took)-1]
			t.Logf("back after a kill -9: median %v, slowest %v (%d rounds)", median.Round(time.Millisecond), worst.Round(time.Millisecond), rounds)
			switch {
			case raceBuild:
				t.Log("race-enabled binaries: the bound is not asserted")
			case median > time.Second:
				t.Errorf("the daemon came back in %v (median of %d), over a second: %v", median, rounds, took)
			case worst > hosts.SessionStartBudget:
				t.Errorf("a restart took %v, over the SessionStart hook's %v: %v", worst, hosts.SessionStartBudget, took)
			}
			// Every acknowledged event is stored once.
			files := filesStoredEventually(t, env, rounds*(backlog+1), time.Minute)
			for round := range rounds {
				if n := files[fmt.Sprintf("restart/file%d.go", round)]; n != 1 {
					t.Errorf("file%d.go stored %d times, want once: %v", round, n, files)
				}
			}
			if peer == nil {
				return
			}
			waitFor(t, 20*time.Second, "alice's records at bob's", func() bool {
				n := 0
				for title := range peer.titles(t, "--team") {
					if strings.Contains(title, "file") {
						n++
					}
				}
				return n >= rounds
			})
		})
	}
}

// filesStoredEventually waits until n files are named by observations.
func filesStoredEventually(t *testing.T, env *testEnv, n int, within time.Duration) map[string]int {
	t.Helper()
	var files map[string]int
	waitFor(t, within, fmt.Sprintf("%d files stored", n), func() bool {
		files = filesStored(t, env)
		return len(files) >= n
	})
	return files
}

// tail is the end of a log file of env's.
func tail(env *testEnv, name string) string {
	b, _ := os.ReadFile(filepath.Join(env.home, "logs", name))
	if len(b) > 3000 {
		b = b[len(b)-3000:]
	}
	return string(b)
}
