//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mnemo-dev/mnemo/adapters/hosts"
	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/client"
	"github.com/mnemo-dev/mnemo/rpc"
)

// soak is one run: its home, its actors' records, and the counts.
type soak struct {
	o   options
	log *slog.Logger

	root, home, userHome, project string
	runID                         string

	mu       sync.Mutex
	hooks    []hookRun
	edits    []editorEvent
	sessions map[string]bool // every content session a client opened
	ended    map[string]bool // sessions whose SessionEnd hook ran
	searches struct{ ok, failed int }
	kills    int
	restarts int
	freezes  int
	serves   int // mnemo serve processes the editor started
	// syncLag is the longest a daemon took to sync an acknowledged write
	// (memory.SyncStatus), read before each kill and at the end, of the
	// daemons never frozen (a frozen one syncs late, as any would).
	syncLag, syncStart, syncMax float64
	frozen                      map[int]bool

	eventTarget int // the steady mode's hook events; 0: no count
}

// hookRun is one mnemo-hook process.
type hookRun struct {
	event, session, marker string
	elapsed                time.Duration
	code                   int
	out                    string
	err                    error
	// killed: the run killed it (-kill-hooks) before it exited; its
	// event was never acknowledged.
	killed bool
}

// editorEvent is one didOpen or didSave the editor sent, and whether a
// later answer on the same connection acknowledged it.
type editorEvent struct {
	kind, marker, session string
	acked                 bool
}

func newSoak(o options, log *slog.Logger) (*soak, error) {
	var err error
	if o.bin, err = filepath.Abs(o.bin); err != nil {
		return nil, err
	}
	for _, f := range []string{"mnemo", "mnemo-hook"} {
		if _, err := os.Stat(filepath.Join(o.bin, f)); err != nil {
			return nil, fmt.Errorf("%w (build with `go build -o %s/%s ./cmd/%s`)", err, o.bin, f, f)
		}
	}
	root, err := os.MkdirTemp("", "mnemo-soak-")
	if err != nil {
		return nil, err
	}
	s := &soak{
		o: o, log: log, root: root,
		home: filepath.Join(root, "mnemo"), userHome: filepath.Join(root, "home"), project: filepath.Join(root, "src", "billing-api"),
		runID:    fmt.Sprintf("%x", o.seed&0xffffff),
		sessions: map[string]bool{}, ended: map[string]bool{}, frozen: map[int]bool{},
	}
	if o.steady != "" {
		if s.o.steady, err = filepath.Abs(o.steady); err != nil {
			return nil, err
		}
	}
	if o.models == "" {
		s.o.models = filepath.Join(root, "no-models")
	} else if s.o.models, err = filepath.Abs(o.models); err != nil {
		return nil, err
	}
	for _, d := range []string{s.userHome, filepath.Join(s.project, ".git")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// cleanup stops the daemon, if one still runs, and removes the home.
func (s *soak) cleanup() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := s.mnemo(ctx, "daemon", "stop"); err != nil {
		s.log.Warn("stop the daemon", "err", err)
	}
	if s.o.keep {
		s.log.Info("keeping the home", "root", s.root)
		return
	}
	os.RemoveAll(s.root)
}

// environ is the environment of every process of the run: its own homes,
// a quick spool ingestion, no idle exit during the run.
func (s *soak) environ() []string {
	return append(os.Environ(),
		"MNEMO_HOME="+s.home, "HOME="+s.userHome,
		"XDG_DATA_HOME="+filepath.Join(s.userHome, ".local", "share"),
		"MNEMO_MODELS="+s.o.models, "MNEMO_IDLE_TIMEOUT=10m", "MNEMO_SPOOL_INTERVAL=2s")
}

// mnemo runs the mnemo command line and returns its stdout.
func (s *soak) mnemo(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(s.o.bin, "mnemo"), args...)
	cmd.Env = s.environ()
	cmd.Dir = s.project
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("mnemo %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// call calls a method of the running daemon over its socket, without
// starting one, e.g. call(ctx, s, time.Minute, (*client.Client).Doctor).
func call[R any](ctx context.Context, s *soak, within time.Duration, method func(*client.Client, context.Context) (R, error)) (R, error) {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	cl, err := rpc.Connect(ctx, rpc.ConnectOptions{Home: s.home, Client: rpc.ClientCLI})
	if err != nil {
		var zero R
		return zero, err
	}
	defer cl.Close()
	return method(client.New(cl), ctx)
}

// daemonPID asks the running daemon for its pid, without starting one.
func (s *soak) daemonPID(ctx context.Context) (int, error) {
	st, err := call(ctx, s, 3*time.Second, (*client.Client).Status)
	return st.PID, err
}

// run starts the actors, stops them after the duration, restarts the
// daemon and checks what it stored.
func (s *soak) run(ctx context.Context) (*report, error) {
	s.log.Info("soak", "duration", s.o.duration, "agents", s.o.agents, "seed", s.o.seed, "home", s.home, "models", s.o.models)
	if _, err := s.mnemo(ctx, "status"); err != nil { // the first daemon
		return nil, err
	}
	load, stop := context.WithTimeout(ctx, s.o.duration)
	defer stop()
	var wg sync.WaitGroup
	for a := range s.o.agents {
		r := rand.New(rand.NewPCG(s.o.seed, uint64(a)))
		wg.Go(func() { s.agent(load, a, r) })
	}
	wg.Go(func() { s.editor(load, rand.New(rand.NewPCG(s.o.seed, 100))) })
	wg.Go(func() { s.searcher(load, rand.New(rand.NewPCG(s.o.seed, 101))) })
	wg.Go(func() { s.killer(load, rand.New(rand.NewPCG(s.o.seed, 102))) })
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.log.Info("load done; restarting the daemon so that it ingests the spool", "hooks", len(s.hooks), "editorEvents", len(s.edits), "kills", s.kills)
	return s.verify(ctx)
}

// agent plays Claude Code sessions one after another until ctx ends; the
// session under way when it ends is finished without pauses.
func (s *soak) agent(ctx context.Context, a int, r *rand.Rand) {
	for k := 0; ctx.Err() == nil && !s.eventsDone(); k++ {
		s.session(ctx, fmt.Sprintf("soak-%s-cc-%d-%d", s.runID, a, k), r)
	}
}

// session runs the hooks of one Claude Code session: SessionStart, then
// turns of a prompt, tool uses and a Stop, then SessionEnd.
func (s *soak) session(ctx context.Context, sid string, r *rand.Rand) {
	pause := func() {
		if ctx.Err() == nil {
			lo := s.o.pace / 6
			time.Sleep(lo + time.Duration(r.Int64N(int64(s.o.pace-lo)+1)))
		}
	}
	base := map[string]any{"session_id": sid, "cwd": s.project, "transcript_path": filepath.Join(s.userHome, sid+".jsonl"), "permission_mode": "default"}
	with := func(kv ...any) map[string]any {
		m := make(map[string]any, len(base)+len(kv)/2)
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	s.mu.Lock()
	s.sessions[sid] = true
	s.mu.Unlock()
	s.hook(r, hosts.EventSessionStart, sid, "", with("source", "startup", "model", "claude-sonnet-4-5"))
	pause()
	turns := 1 + r.IntN(3)
	for turn := 1; turn <= turns; turn++ {
		marker := fmt.Sprintf("%s-p%d", sid, turn)
		s.hook(r, hosts.EventUserPromptSubmit, sid, marker, with("prompt", marker+": the invoice totals drift by a cent after the retry; fix it and add a test"))
		pause()
		for i := range 2 + r.IntN(4) {
			marker := fmt.Sprintf("%s-t%d-e%d", sid, turn, i)
			file := filepath.Join(s.project, "soak", marker+".go")
			var tool string
			var input, response any
			switch r.IntN(3) {
			case 0:
				tool = "Read"
				input = map[string]any{"file_path": file}
				response = map[string]any{"type": "text", "file": map[string]any{"filePath": file, "content": "package soak\n\nfunc total() int { return 1 }\n", "numLines": 3, "startLine": 1, "totalLines": 3}}
			case 1:
				tool = "Edit"
				input = map[string]any{"file_path": file, "old_string": "return 1", "new_string": "return 2", "replace_all": false}
				response = map[string]any{"filePath": file, "oldString": "return 1", "newString": "return 2", "originalFile": "package soak\n\nfunc total() int { return 1 }\n",
					"structuredPatch": []any{map[string]any{"oldStart": 3, "oldLines": 1, "newStart": 3, "newLines": 1, "lines": []string{"-func total() int { return 1 }", "+func total() int { return 2 }"}}}}
			default:
				tool = "Bash"
				input = map[string]any{"command": "go vet ./soak/" + marker + "/...", "description": "Vet the package"}
				response = map[string]any{"stdout": "", "stderr": "", "interrupted": false, "isImage": false}
			}
			s.hook(r, hosts.EventPostToolUse, sid, marker, with("tool_name", tool, "tool_input", input, "tool_response", response,
				"tool_use_id", "toolu_"+strings.ReplaceAll(marker, "-", "_"), "duration_ms", 20))
			pause()
		}
		marker = fmt.Sprintf("%s-s%d", sid, turn)
		s.hook(r, hosts.EventStop, sid, marker, with("stop_hook_active", false, "last_assistant_message", marker+" The totals are rounded once now."))
		pause()
	}
	if h := s.hook(r, hosts.EventSessionEnd, sid, "", with("reason", "other")); !h.killed {
		s.mu.Lock()
		s.ended[sid] = true
		s.mu.Unlock()
	}
}

// hook runs mnemo-hook for one event, as Claude Code does, and records it.
// With -kill-hooks, some runs are killed at a random moment of their first
// 40 ms (before, while or after they write their event: a hook takes
// 5–30 ms here) as a crash or an agent killed with them would.
func (s *soak) hook(r *rand.Rand, event, sid, marker string, payload map[string]any) hookRun {
	payload["hook_event_name"] = event
	body, _ := json.Marshal(payload)
	cmd := exec.Command(filepath.Join(s.o.bin, "mnemo-hook"), event)
	cmd.Env = s.environ()
	cmd.Dir = s.project
	cmd.Stdin = bytes.NewReader(body)
	var out bytes.Buffer
	cmd.Stdout = &out
	kill := r.Float64() < s.o.killHooks
	after := time.Duration(r.Int64N(int64(40 * time.Millisecond)))
	start := time.Now()
	err := cmd.Start()
	if err == nil {
		if kill {
			t := time.AfterFunc(after, func() { cmd.Process.Kill() })
			defer t.Stop()
		}
		err = cmd.Wait()
	}
	h := hookRun{event: event, session: sid, marker: marker, elapsed: time.Since(start), out: out.String()}
	if ee, ok := errors.AsType[*exec.ExitError](err); ok {
		h.code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			h.killed, h.code = true, 0
		}
	} else {
		h.err = err
	}
	s.mu.Lock()
	s.hooks = append(s.hooks, h)
	s.mu.Unlock()
	return h
}

// searcher runs `mnemo search` now and then.
func (s *soak) searcher(ctx context.Context, r *rand.Rand) {
	words := []string{"invoice totals", "soak", "rounded once", "Vet the package", "retry", "total"}
	for ctx.Err() == nil {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_, err := s.mnemo(cctx, "search", "--json", "--limit", "5", words[r.IntN(len(words))])
		cancel()
		s.mu.Lock()
		if err != nil {
			s.searches.failed++
		} else {
			s.searches.ok++
		}
		s.mu.Unlock()
		sleep(ctx, time.Duration(100+r.IntN(400))*time.Millisecond)
	}
}

// killer hurts the daemon at random moments. Two times in three it sends
// SIGKILL, and then half of the time it starts a new daemon at once, else
// the next client does. Otherwise it freezes the daemon (SIGSTOP) for 1.5
// to 3 s: the hooks then miss their deadlines and spool calls that the
// daemon, once thawed, may still carry out, so the spool's replay must not
// store them twice.
func (s *soak) killer(ctx context.Context, r *rand.Rand) {
	for {
		wait := s.o.killMin + time.Duration(r.Int64N(int64(s.o.killMax-s.o.killMin)+1))
		if !sleep(ctx, wait) {
			return
		}
		st, err := call(ctx, s, 3*time.Second, (*client.Client).Status)
		if err != nil {
			s.log.Debug("no daemon to kill", "err", err)
			continue
		}
		pid := st.PID
		s.noteSync(st)
		if r.IntN(3) == 0 {
			freeze := 1500*time.Millisecond + time.Duration(r.Int64N(int64(1500*time.Millisecond)))
			if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
				s.log.Warn("freeze the daemon", "pid", pid, "err", err)
				continue
			}
			s.log.Info("froze the daemon", "pid", pid, "for", freeze)
			s.mu.Lock()
			s.frozen[pid] = true
			s.mu.Unlock()
			time.Sleep(freeze) // not cut short: the daemon must be thawed
			if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
				s.log.Warn("thaw the daemon", "pid", pid, "err", err)
			}
			s.mu.Lock()
			s.freezes++
			s.mu.Unlock()
			continue
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			s.log.Warn("kill the daemon", "pid", pid, "err", err)
			continue
		}
		s.mu.Lock()
		s.kills++
		s.mu.Unlock()
		s.log.Info("killed the daemon", "pid", pid)
		if r.IntN(2) == 0 {
			if _, err := s.mnemo(ctx, "status"); err == nil {
				s.mu.Lock()
				s.restarts++
				s.mu.Unlock()
			}
		}
	}
}

// noteSync keeps the longest sync lag a daemon reports.
func (s *soak) noteSync(st memory.Status) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st.Sync != nil && !s.frozen[st.PID] {
		s.syncLag = max(s.syncLag, st.Sync.MaxLagMs)
		s.syncStart = max(s.syncStart, st.Sync.MaxStartMs)
		s.syncMax = max(s.syncMax, st.Sync.MaxSyncMs)
	}
}

// sleep waits d or until ctx ends; it reports whether it waited d.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
