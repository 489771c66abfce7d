//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/client"
	"github.com/mnemo-dev/mnemo/rpc"
)

// env is one Mnemo home with the binaries that serve it.
type env struct {
	bin      string // folder with mnemo and mnemo-hook
	home     string // MNEMO_HOME
	userHome string // HOME of the processes
	models   string // MNEMO_MODELS
}

// environ is the environment of every process the benchmark starts: the
// current one with its own homes, so nothing touches the real ones.
func (e *env) environ(extra ...string) []string {
	env := append(os.Environ(),
		"MNEMO_HOME="+e.home, "HOME="+e.userHome,
		"XDG_DATA_HOME="+filepath.Join(e.userHome, ".local", "share"),
		"MNEMO_MODELS="+e.models, "MNEMO_IDLE_TIMEOUT=0")
	return append(env, extra...)
}

// mnemo runs the mnemo command line and returns its stdout.
func (e *env) mnemo(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(e.bin, "mnemo"), args...)
	cmd.Env = e.environ()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("mnemo %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// daemon is a `mnemo daemon` process started by the benchmark.
type daemon struct {
	cmd    *exec.Cmd
	exited chan struct{} // closed when the process has exited
	err    error         // its exit, once exited is closed
}

// startDaemon starts `mnemo daemon` in the foreground of this process (so
// that its start is timed from exec, and its pid is known).
func (e *env) startDaemon() (*daemon, error) {
	if err := os.MkdirAll(filepath.Join(e.home, "logs"), 0o700); err != nil {
		return nil, err
	}
	cmd := exec.Command(filepath.Join(e.bin, "mnemo"), "daemon", "--log-file", filepath.Join(e.home, "logs", "daemon.log"))
	cmd.Env = e.environ()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the daemon: %w", err)
	}
	d := &daemon{cmd: cmd, exited: make(chan struct{})}
	go func() {
		d.err = cmd.Wait()
		close(d.exited)
	}()
	return d, nil
}

// waitServing polls until the daemon answers mnemo/status on its socket.
func (e *env) waitServing(ctx context.Context, d *daemon, within time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	for {
		if cl, err := e.dial(ctx); err == nil {
			_, err = client.New(cl).Status(ctx)
			cl.Close()
			if err == nil {
				return nil
			}
		}
		select {
		case <-d.exited:
			return fmt.Errorf("the daemon exited before serving: %v (see %s)", d.err, filepath.Join(e.home, "logs", "daemon.log"))
		case <-ctx.Done():
			return fmt.Errorf("the daemon did not serve within %s", within)
		case <-time.After(time.Millisecond):
		}
	}
}

// stop sends SIGTERM and waits for the daemon to exit; it does nothing
// once the daemon has exited.
func (d *daemon) stop() error {
	if d == nil {
		return nil
	}
	select {
	case <-d.exited:
		return nil
	default:
	}
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.exited:
		return nil
	case <-time.After(30 * time.Second):
		_ = d.cmd.Process.Kill()
		<-d.exited
		return errors.New("the daemon did not stop within 30s; killed")
	}
}

// rss is a process's resident memory in MiB, from /proc/<pid>/status:
// VmRSS, its anonymous (heap, stacks) and file-backed (mapped files: the
// binary, Badger's tables and value log) parts, and its peak (VmHWM).
type rss struct{ total, anon, file, peak float64 }

func (r rss) String() string {
	return fmt.Sprintf("%.0f MB (anonymous %.0f, mapped files %.0f)", r.total, r.anon, r.file)
}

// rssMB reads the daemon's resident memory.
func (d *daemon) rssMB() (rss, error) { return processRSS(d.cmd.Process.Pid) }

// processRSS reads a process's resident memory.
func processRSS(pid int) (rss, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return rss{}, err
	}
	defer f.Close()
	var r rss
	fields := map[string]*float64{"VmRSS:": &r.total, "RssAnon:": &r.anon, "RssFile:": &r.file, "VmHWM:": &r.peak}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		for name, dst := range fields {
			if v, ok := strings.CutPrefix(sc.Text(), name); ok {
				kb, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
				if err != nil {
					return rss{}, err
				}
				*dst = kb / 1024
			}
		}
	}
	if r.total == 0 {
		return r, errors.New("no VmRSS in /proc status")
	}
	return r, sc.Err()
}

// lastIndexLoad is the took= of the last "search index loaded" line of
// the daemon's log: its own time to load the index at start.
func (e *env) lastIndexLoad() string {
	b, err := os.ReadFile(filepath.Join(e.home, "logs", "daemon.log"))
	if err != nil {
		return ""
	}
	took := ""
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.Contains(line, `msg="search index loaded"`) {
			continue
		}
		if _, v, ok := strings.Cut(line, " took="); ok {
			took = strings.Fields(v)[0]
		}
	}
	return took
}

// dial connects to the daemon's socket and says hello, as a CLI client.
func (e *env) dial(ctx context.Context) (*rpc.Client, error) {
	return rpc.Connect(ctx, rpc.ConnectOptions{Home: e.home, Client: rpc.ClientCLI})
}

// status asks the daemon for its status.
func (e *env) status(ctx context.Context) (memory.Status, error) {
	cl, err := e.dial(ctx)
	if err != nil {
		return memory.Status{}, err
	}
	defer cl.Close()
	return client.New(cl).Status(ctx)
}

// search runs one search, as a client that just connected.
func (e *env) search(ctx context.Context, q query) error {
	cl, err := e.dial(ctx)
	if err != nil {
		return err
	}
	defer cl.Close()
	if _, err := client.New(cl).Search(ctx, memory.SearchParams{Query: q.Text, Project: q.Project, Limit: 20}); err != nil {
		return fmt.Errorf("search %q: %w", q.Text, err)
	}
	return nil
}

// waitIndexed waits until the daemon has loaded its search index, has no
// observation left to embed and has an empty queue.
func (e *env) waitIndexed(ctx context.Context, within time.Duration) (memory.Status, error) {
	deadline := time.Now().Add(within)
	for {
		st, err := e.status(ctx)
		if err == nil && !strings.Contains(st.Embedder, "embedding:") && !strings.Contains(st.Embedder, "loading") && st.Counts.Queued == 0 {
			return st, nil
		}
		if time.Now().After(deadline) {
			return st, fmt.Errorf("after %s the daemon still works: %s, %d queued (%v)", within, st.Embedder, st.Counts.Queued, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
