package hook_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/adapters/hosts/hook"
	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/rpc"
)

// childEnv makes the test binary play a daemon started by the hook (see
// childDaemon).
const childEnv = "CLAUDECODE_TEST_DAEMON"

// TestMain lets the test binary play the daemon that the hook starts.
func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		os.Exit(childDaemon(mode))
	}
	os.Exit(m.Run())
}

// childDaemon is the test binary started by the hook in place of `mnemo`,
// with the same argv (--home <home> daemon --log-file …). It records its
// pid in <home>/child.pid. In mode "serve" it serves the socket of <home>
// like a daemon, recording every call in <home>/child-calls.jsonl; in mode
// "stall" it never listens. Either way it exits on SIGTERM, or after 30 s.
func childDaemon(mode string) int {
	home := ""
	for i, a := range os.Args {
		if a == "--home" && i+1 < len(os.Args) {
			home = os.Args[i+1]
		}
	}
	if home == "" {
		fmt.Fprintln(os.Stderr, "child daemon: no --home")
		return 2
	}
	pidf, err := os.OpenFile(filepath.Join(home, "child.pid"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, "child daemon:", err)
		return 2
	}
	fmt.Fprintln(pidf, os.Getpid())
	pidf.Close()

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	// A safety net: end with the test process, whatever happens to it.
	go func(ppid int) {
		for os.Getppid() == ppid {
			time.Sleep(50 * time.Millisecond)
		}
		cancel()
	}(os.Getppid())
	if mode != "serve" {
		<-ctx.Done()
		return 0
	}
	var mu sync.Mutex
	record := func(method string, params map[string]any) {
		mu.Lock()
		defer mu.Unlock()
		f, err := os.OpenFile(filepath.Join(home, "child-calls.jsonl"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			return
		}
		defer f.Close()
		b, _ := json.Marshal(recordedCall{Method: method, Params: params})
		f.Write(append(b, '\n'))
	}
	s := &standIn{record: record, home: home}
	ln, err := rpc.Listen(rpc.SocketPath(home))
	if err != nil {
		fmt.Fprintln(os.Stderr, "child daemon:", err)
		return 2
	}
	go func() {
		// As the daemon does, it takes the journal in as it grows.
		for ctx.Err() == nil {
			s.catchUp()
			time.Sleep(5 * time.Millisecond)
		}
	}()
	s.serve(ctx, ln)
	return 0
}

// recordedCall is one call a stand-in daemon received.
type recordedCall struct {
	Method string         `json:"method"`
	Params map[string]any `json:"params"`
}

// standIn is a daemon stand-in: a real socket served with rpc.Serve,
// rpc.RequireHello and an rpc.Mux whose handlers record each call and
// answer as the daemon would. It takes the records of the hooks' journal
// of its home as calls too, in their order: before it handles a call on
// the socket and when it is asked for its calls, as the daemon takes them
// before it answers any call.
type standIn struct {
	record func(method string, params map[string]any)
	// fail, when set, answers the method with this error instead.
	fail map[string]*rpc.Error
	home string

	mu      sync.Mutex
	calls   []recordedCall
	journal *hook.JournalReader
}

// The context the stand-in returns from mnemo/sessionStart.
const standInContext = "<mnemo-context>\n# Memory of project work\n- #12 bugfix: fix the <b>rounding</b> in calc.go & test\n</mnemo-context>"

// The recall the stand-in returns from mnemo/userPromptSubmit, for every
// prompt but an entirely private one (as the daemon would).
const standInRecall = "<mnemo-context project=\"work\" source=\"prompt\">\n- #7 · bugfix · mul returned a + b · calc.py\n</mnemo-context>\n"

// startStandIn serves a stand-in daemon on the socket of home until the
// test ends.
func startStandIn(t testing.TB, home string) *standIn {
	t.Helper()
	ln, err := rpc.Listen(rpc.SocketPath(home))
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	s := &standIn{home: home}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.serve(ctx, ln)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return s
}

func (s *standIn) serve(ctx context.Context, ln net.Listener) {
	mux := rpc.NewMux(slog.New(slog.DiscardHandler))
	for _, m := range []string{memory.MethodSessionStart, memory.MethodUserPromptSubmit,
		memory.MethodPostToolUse, memory.MethodStop, memory.MethodSessionEnd} {
		rpc.Handle(mux, m, func(ctx context.Context, p map[string]any) (any, error) { return s.handle(m, p) })
	}
	_ = rpc.ServeListener(ctx, ln, func(ctx context.Context, nc net.Conn) {
		c := rpc.Serve(ctx, nc, rpc.RequireHello(mux.Handler(), "stand-in", nil))
		<-c.Done()
	})
}

// catchUp takes the journal's new records as calls.
func (s *standIn) catchUp() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.home == "" {
		return
	}
	if s.journal == nil {
		r, err := hook.OpenJournalReader(hook.JournalPath(s.home), nil)
		if err != nil {
			panic(err)
		}
		s.journal = r
	}
	s.journal.Read(func(e hook.SpoolEntry) error {
		var p map[string]any
		if err := json.Unmarshal(e.Params, &p); err != nil {
			panic(err)
		}
		p[journaledParam] = true
		s.calls = append(s.calls, recordedCall{Method: e.Method, Params: p})
		if s.record != nil {
			s.record(e.Method, p)
		}
		return nil
	})
}

// journaledParam marks the params of a call the stand-in took from the
// journal; Calls leaves it out unless asked (journaled).
const journaledParam = "(journaled)"

// journaled reports whether c came through the journal, and takes the
// mark off its params.
func journaled(c recordedCall) bool {
	j, _ := c.Params[journaledParam].(bool)
	delete(c.Params, journaledParam)
	return j
}

func (s *standIn) handle(method string, p map[string]any) (any, error) {
	s.catchUp()
	s.mu.Lock()
	s.calls = append(s.calls, recordedCall{Method: method, Params: p})
	fail := s.fail[method]
	s.mu.Unlock()
	if s.record != nil {
		s.record(method, p)
	}
	if fail != nil {
		return nil, fail
	}
	switch method {
	case memory.MethodSessionStart:
		return map[string]any{"sessionId": 1, "project": "work", "context": standInContext, "observationIds": []int{12}, "bytes": len(standInContext)}, nil
	case memory.MethodUserPromptSubmit:
		if p["prompt"] == hook.PrivateMarker {
			return map[string]any{"sessionId": 1, "promptNumber": 1, "private": true}, nil
		}
		return map[string]any{"sessionId": 1, "promptNumber": 1, "private": false, "context": standInRecall, "observationIds": []int{7}}, nil
	case memory.MethodSessionEnd:
		return map[string]any{"status": "completed"}, nil
	}
	return map[string]any{"queued": true}, nil
}

// failWith makes the stand-in answer method with e.
func (s *standIn) failWith(method string, e *rpc.Error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail == nil {
		s.fail = map[string]*rpc.Error{}
	}
	s.fail[method] = e
}

// Calls returns the calls received so far, the journal's records
// included (the mark of those is taken off: see journaledCalls).
func (s *standIn) Calls() []recordedCall {
	calls := s.journaledCalls()
	for _, c := range calls {
		journaled(c)
	}
	return calls
}

// journaledCalls returns the calls received so far, with the journal's
// new records taken in; the params of those carry journaledParam.
func (s *standIn) journaledCalls() []recordedCall {
	s.catchUp()
	s.mu.Lock()
	defer s.mu.Unlock()
	calls := make([]recordedCall, len(s.calls))
	for i, c := range s.calls {
		p := make(map[string]any, len(c.Params))
		for k, v := range c.Params {
			p[k] = v
		}
		calls[i] = recordedCall{Method: c.Method, Params: p}
	}
	return calls
}

// hangingDaemon listens on the socket of home, accepts connections and
// never reads from them nor answers.
func hangingDaemon(t *testing.T, home string) {
	t.Helper()
	ln, err := rpc.Listen(rpc.SocketPath(home))
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
		wg    sync.WaitGroup
	)
	wg.Go(func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, nc)
			mu.Unlock()
		}
	})
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
		mu.Lock()
		for _, nc := range conns {
			nc.Close()
		}
		mu.Unlock()
	})
}

// testHome makes a temporary HOME and MNEMO_HOME for one test and returns
// the Mnemo home.
func testHome(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	home := filepath.Join(dir, "mnemo")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", filepath.Join(dir, "home"))
	t.Setenv("MNEMO_HOME", home)
	t.Setenv("MNEMO_SKIP_TOOLS", "")
	t.Setenv("MNEMO_LOG_LEVEL", "")
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	return home
}

// childDaemonCommand is DaemonCommand(home) with the test binary playing
// mnemo in mode (see childDaemon). Every child it starts is stopped when
// the test ends.
func childDaemonCommand(t *testing.T, home, mode string) []string {
	t.Helper()
	t.Setenv(childEnv, mode)
	t.Cleanup(func() { stopChildren(t, home) })
	cmd := hook.DaemonCommand(home)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd[0] = exe
	return cmd
}

// childPIDs reads the pids the child daemons of home recorded.
func childPIDs(t *testing.T, home string) []int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(home, "child.pid"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, f := range strings.Fields(string(data)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("child.pid: %v", err)
		}
		pids = append(pids, pid)
	}
	return pids
}

// waitChildPIDs waits until n child daemons of home have recorded their
// pid: a child started by the hook may not have got that far when the
// hook gave up on it.
func waitChildPIDs(t *testing.T, home string, n int) []int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		pids := childPIDs(t, home)
		if len(pids) >= n || time.Now().After(deadline) {
			return pids
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitChildCalls waits until a "serve" child daemon recorded n calls (it
// takes the journal in a few milliseconds after a hook wrote it) and
// returns them.
func waitChildCalls(t *testing.T, home string, n int) []recordedCall {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		calls := childCalls(t, home)
		if len(calls) >= n || time.Now().After(deadline) {
			return calls
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// childCalls reads the calls a "serve" child daemon recorded.
func childCalls(t *testing.T, home string) []recordedCall {
	t.Helper()
	f, err := os.Open(filepath.Join(home, "child-calls.jsonl"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var calls []recordedCall
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var c recordedCall
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("child-calls.jsonl: %v", err)
		}
		calls = append(calls, c)
	}
	return calls
}

// claudeData is a path under Claude Code's test data,
// adapters/claudecode/testdata: its recorded payloads, the goldens, a
// transcript.
func claudeData(parts ...string) string {
	return filepath.Join(append([]string{"..", "..", "claudecode", "testdata"}, parts...)...)
}

// hostData is a path under a host's test data, adapters/<host>/testdata:
// documented/ (payloads built from the host's documentation) and payloads/
// (recorded from the real host). host may be a pattern ("*").
func hostData(host string, parts ...string) string {
	return filepath.Join(append([]string{"..", "..", host, "testdata"}, parts...)...)
}

// readPayloadFile returns a recorded payload of Claude Code's
// (adapters/claudecode/testdata/payloads).
func readPayloadFile(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(claudeData("payloads", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// readSpool returns the entries of the live spool of home, without taking
// them.
func readSpool(t *testing.T, home string) []hook.SpoolEntry {
	t.Helper()
	data, err := os.ReadFile(hook.SpoolPath(home))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var entries []hook.SpoolEntry
	for line := range bytes.Lines(data) {
		var e hook.SpoolEntry
		if err := json.Unmarshal(line, &e); err != nil {
			t.Fatalf("spool line %q: %v", line, err)
		}
		entries = append(entries, e)
	}
	return entries
}

// readJournal returns the records of the journal of home, from its
// start.
func readJournal(t *testing.T, home string) []hook.SpoolEntry {
	t.Helper()
	r, err := hook.OpenJournalReader(hook.JournalPath(home), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var entries []hook.SpoolEntry
	if _, err := r.Read(func(e hook.SpoolEntry) error { entries = append(entries, e); return nil }); err != nil {
		t.Fatal(err)
	}
	return entries
}

// hookLog returns <home>/logs/hook.log, "" when there is none.
func hookLog(t *testing.T, home string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(home, "logs", "hook.log"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return string(data)
}
