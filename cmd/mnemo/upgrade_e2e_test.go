//go:build e2e

package main_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/rpc"
)

// upgradeBins are mnemo and mnemo-hook builds, each pair in a folder of its
// own (the hook starts the mnemo next to it), built once for the upgrade
// tests: "old" from this repository's history, before hand-overs existed
// (stamped 0.1.0), and the current source stamped 0.1.0, 0.2.0 and 0.3.0.
var upgradeBins struct {
	once                 sync.Once
	dir                  string
	old, v1, v2, v3      string
	oldErr, err, oldSkip error
}

func buildUpgradeBins(t *testing.T) {
	t.Helper()
	upgradeBins.once.Do(func() {
		dir, err := os.MkdirTemp("", "mnemo-upgrade-")
		if err != nil {
			upgradeBins.err = err
			return
		}
		upgradeBins.dir = dir
		// -trimpath: the old source is unpacked into a new temporary folder
		// each run, and without it the folder's name is part of every
		// package's cache key, so it would be compiled anew every time.
		build := func(src, name, version string) (string, error) {
			out := filepath.Join(dir, name)
			cmd := exec.Command("go", "build", "-trimpath", "-o", out+string(filepath.Separator), "-ldflags", "-X main.Version="+version+" -X github.com/mnemo-dev/mnemo/cmd/internal/daemon.Version="+version, "./cmd/mnemo", "./cmd/mnemo-hook")
			cmd.Dir = src
			cmd.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false", "CGO_ENABLED=0")
			if b, err := cmd.CombinedOutput(); err != nil {
				return "", fmt.Errorf("build %s: %v\n%s", name, err, b)
			}
			return out, nil
		}
		root, err := filepath.Abs(filepath.Join("..", ".."))
		if err != nil {
			upgradeBins.err = err
			return
		}
		for _, b := range []struct {
			dst     *string
			version string
		}{{&upgradeBins.v1, "0.1.0"}, {&upgradeBins.v2, "0.2.0"}, {&upgradeBins.v3, "0.3.0"}} {
			if *b.dst, err = build(root, "v"+b.version, b.version); err != nil {
				upgradeBins.err = err
				return
			}
		}
		// The old binary: the source of the commit before the one that
		// brought hand-overs (rpc/handover.go), from git.
		out, err := exec.Command("git", "-C", root, "log", "--diff-filter=A", "--format=%H", "--", "rpc/handover.go").Output()
		added := strings.Fields(string(out))
		if err != nil || len(added) == 0 {
			upgradeBins.oldSkip = fmt.Errorf("no git history of rpc/handover.go here (%v): the old binary cannot be built", err)
			return
		}
		commit := added[len(added)-1] + "^"
		src := filepath.Join(dir, "old-src")
		if err := os.MkdirAll(src, 0o755); err != nil {
			upgradeBins.oldErr = err
			return
		}
		archive := exec.Command("sh", "-c", `git -C "$1" archive "$2" | tar -x -C "$3"`, "sh", root, commit, src)
		if b, err := archive.CombinedOutput(); err != nil {
			upgradeBins.oldSkip = fmt.Errorf("git archive %s: %v: %s", commit, err, b)
			return
		}
		upgradeBins.old, upgradeBins.oldErr = build(src, "old", "0.1.0")
	})
	if upgradeBins.err != nil {
		t.Fatal(upgradeBins.err)
	}
}

// removeUpgradeBins removes the builds.
func removeUpgradeBins() {
	if upgradeBins.dir != "" {
		os.RemoveAll(upgradeBins.dir)
	}
}

// upgradeHome is one Mnemo home shared by every binary of a test.
type upgradeHome struct {
	t     *testing.T
	env   *testEnv
	extra []string // more environment
}

func (h upgradeHome) environ() []string {
	return h.env.environ(append([]string{"MNEMO_SPOOL_INTERVAL=200ms"}, h.extra...)...)
}

// run runs a binary of a build folder.
func (h upgradeHome) run(bin, name string, args ...string) (string, error) {
	cmd := exec.Command(filepath.Join(bin, name), args...)
	cmd.Env = h.environ()
	cmd.Dir = h.env.project
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil {
		return out.String() + errb.String(), fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, errb.String())
	}
	return out.String(), nil
}

// daemon reports the running daemon's version and pid (`mnemo status
// --json` of bin, which starts one when none runs).
func (h upgradeHome) daemon(bin string) (version string, pid int) {
	h.t.Helper()
	out, err := h.run(bin, "mnemo", "status", "--json")
	if err != nil {
		h.t.Fatal(err)
	}
	var st struct {
		Version string `json:"version"`
		PID     int    `json:"pid"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		h.t.Fatalf("status: %v: %s", err, out)
	}
	return st.Version, st.PID
}

// prompt fires bin's mnemo-hook on a UserPromptSubmit, as Claude Code
// does: a stage that calls the daemon (a PostToolUse hands its event over
// by the journal), so the one where a newer hook hands the daemon over.
// It returns how long the process took.
func (h upgradeHome) prompt(bin, session string) time.Duration {
	h.t.Helper()
	body, _ := json.Marshal(map[string]any{
		"session_id":      session,
		"cwd":             h.env.project,
		"hook_event_name": "UserPromptSubmit",
		"transcript_path": filepath.Join(h.env.root, session+".jsonl"),
		"prompt":          "carry on with the upgrade",
	})
	cmd := exec.Command(filepath.Join(bin, "mnemo-hook"), "UserPromptSubmit")
	cmd.Env = h.environ()
	cmd.Dir = h.env.project
	cmd.Stdin = bytes.NewReader(body)
	start := time.Now()
	if err := cmd.Run(); err != nil {
		h.t.Fatalf("mnemo-hook: %v", err)
	}
	return time.Since(start)
}

// hook fires bin's mnemo-hook on a PostToolUse edit of file, as Claude
// Code does, and returns how long the process took.
func (h upgradeHome) hook(bin, session, file string) time.Duration {
	h.t.Helper()
	path := filepath.Join(h.env.project, file)
	body, _ := json.Marshal(map[string]any{
		"session_id":      session,
		"cwd":             h.env.project,
		"hook_event_name": "PostToolUse",
		"transcript_path": filepath.Join(h.env.root, session+".jsonl"),
		"tool_name":       "Edit",
		"tool_use_id":     "toolu_" + strings.NewReplacer("/", "_", ".", "_").Replace(file),
		"tool_input":      map[string]any{"file_path": path, "old_string": "old " + file, "new_string": "new " + file},
		"tool_response":   map[string]any{"filePath": path, "oldString": "old " + file, "newString": "new " + file},
	})
	cmd := exec.Command(filepath.Join(bin, "mnemo-hook"), "PostToolUse")
	cmd.Env = h.environ()
	cmd.Dir = h.env.project
	cmd.Stdin = bytes.NewReader(body)
	var out bytes.Buffer
	cmd.Stdout = &out
	start := time.Now()
	if err := cmd.Run(); err != nil {
		h.t.Fatalf("mnemo-hook: %v", err)
	}
	return time.Since(start)
}

// sidecar starts bin's `mnemo serve --stdio` (forwarding to the daemon)
// and opens an editor session on it.
func (h upgradeHome) sidecar(bin, session string) *stdioClient {
	h.t.Helper()
	cmd := exec.Command(filepath.Join(bin, "mnemo"), "serve", "--stdio")
	cmd.Env = h.environ()
	cmd.Dir = h.env.project
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() {
		in.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	c := &stdioClient{t: h.t, cmd: cmd, in: in, out: bufio.NewReader(out), stderr: stderr}
	c.call("initialize", map[string]any{
		"processId": nil, "rootUri": "file://" + h.env.project, "capabilities": map[string]any{},
		"initializationOptions": map[string]any{"clientKind": "vscode", "protocolVersion": 1, "contentSessionId": session, "cwd": h.env.project},
	})
	c.notify("initialized", map[string]any{})
	return c
}

// sidecarEvent sends an edit through the sidecar, as a call: it is
// acknowledged.
func sidecarEvent(c *stdioClient, h upgradeHome, session, file string) {
	c.t.Helper()
	res := c.call(memory.MethodPostToolUse, map[string]any{
		"contentSessionId": session, "cwd": h.env.project, "toolName": "Edit",
		"toolInput": map[string]any{"file_path": filepath.Join(h.env.project, file), "old_string": "old " + file, "new_string": "new " + file},
	})
	var ack struct {
		Queued bool `json:"queued"`
	}
	if json.Unmarshal(res, &ack); !ack.Queued {
		c.t.Fatalf("%s not queued: %s", file, res)
	}
}

// count waits until the memory holds want observations of files under
// up/ (asked through c) and the queue is empty, and fails past 30 s.
func count(t *testing.T, c *stdioClient, want int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var found struct {
			Hits []struct {
				Files []string `json:"files"`
			} `json:"hits"`
		}
		json.Unmarshal(c.call(memory.MethodSearch, map[string]any{"files": []string{"up/"}, "limit": 1000}), &found)
		if len(found.Hits) == want {
			return
		}
		if len(found.Hits) > want {
			t.Fatalf("%d observations of %d events: one was stored twice", len(found.Hits), want)
		}
		if time.Now().After(deadline) {
			var files []string
			for _, h := range found.Hits {
				files = append(files, h.Files...)
			}
			t.Fatalf("after 30 s, %d of %d events are observations: %v", len(found.Hits), want, files)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestUpgradeHandsOver runs old and new binaries against one home: an
// older daemon runs with an editor's sidecar attached; a newer hook fires,
// its event is answered, and the old daemon hands over to the new one
// within the hook's budget; the sidecar resumes its session on the new
// daemon by itself; every event, of the hook and of the sidecar, before
// and after, is stored once. The old daemon is the strongest case, a build
// of this repository from before hand-overs existed (skipped without git
// history); then the current source stamped as two versions. A downgrade
// is refused: an older command line with a message naming both versions,
// an older hook's events spooled and ingested by the newer daemon.
func TestUpgradeHandsOver(t *testing.T) {
	if testing.Short() {
		t.Skip("builds four mnemo binaries")
	}
	t.Parallel()
	buildUpgradeBins(t)
	t.Cleanup(removeUpgradeBins)

	scenario := func(t *testing.T, oldDaemon, sidecar, newer, newVersion string) {
		h := upgradeHome{t: t, env: newTestEnv(t)}
		t.Cleanup(func() { h.run(newer, "mnemo", "daemon", "stop") })
		_, oldPID := h.daemon(oldDaemon)
		side := h.sidecar(sidecar, "editor-up")
		events := 0
		for i := range 3 {
			h.hook(oldDaemon, "cc-up", fmt.Sprintf("up/before-hook-%d.go", i))
			sidecarEvent(side, h, "editor-up", fmt.Sprintf("up/before-side-%d.go", i))
			events += 2
		}

		took := h.prompt(newer, "cc-up")
		h.hook(newer, "cc-up", "up/handover.go")
		events++
		version, pid := h.daemon(newer)
		if version != newVersion || pid == oldPID {
			t.Fatalf("after the newer hook: daemon %s (pid %d), want %s in place of pid %d", version, pid, newVersion, oldPID)
		}
		// The hook's budget for UserPromptSubmit is 1 s from its payload.
		t.Logf("hook that handed over: %v, start to exit", took.Round(time.Millisecond))
		if took > 3*time.Second {
			t.Errorf("the hand-over took the hook %v", took)
		}

		for i := range 3 {
			sidecarEvent(side, h, "editor-up", fmt.Sprintf("up/after-side-%d.go", i))
			h.hook(newer, "cc-up", fmt.Sprintf("up/after-hook-%d.go", i))
			events += 2
		}
		count(t, side, events)
		if v, p := h.daemon(newer); v != newVersion || p != pid {
			t.Errorf("the daemon changed again: %s (pid %d)", v, p)
		}
	}

	t.Run("from the git history", func(t *testing.T) {
		if upgradeBins.oldSkip != nil {
			t.Skip(upgradeBins.oldSkip)
		}
		if upgradeBins.oldErr != nil {
			t.Fatal(upgradeBins.oldErr)
		}
		// The sidecar: the current source as 0.1.0, which resumes; an
		// old sidecar ends with its daemon, as before.
		scenario(t, upgradeBins.old, upgradeBins.v1, upgradeBins.v2, "0.2.0")
	})
	t.Run("same protocol, stamped versions", func(t *testing.T) {
		scenario(t, upgradeBins.v2, upgradeBins.v2, upgradeBins.v3, "0.3.0")
	})
	t.Run("the daemon notices its binary replaced", func(t *testing.T) {
		h := upgradeHome{t: t, env: newTestEnv(t), extra: []string{"MNEMO_BINARY_CHECK=100ms"}}
		inst := filepath.Join(t.TempDir(), "bin")
		copyBin := func(from, name, to string) {
			b, err := os.ReadFile(filepath.Join(from, name))
			if err != nil {
				t.Fatal(err)
			}
			tmp := filepath.Join(inst, "."+name+".new")
			if err := os.WriteFile(tmp, b, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(tmp, filepath.Join(inst, to)); err != nil {
				t.Fatal(err)
			}
		}
		os.MkdirAll(inst, 0o755)
		copyBin(upgradeBins.v2, "mnemo", "mnemo")
		t.Cleanup(func() { h.run(inst, "mnemo", "daemon", "stop") })
		_, pid := h.daemon(inst)
		copyBin(upgradeBins.v3, "mnemo", "mnemo") // as go install replaces it
		deadline := time.Now().Add(10 * time.Second)
		for rpc.ProcessAlive(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("the daemon (pid %d) still runs 10 s after its binary was replaced", pid)
			}
			time.Sleep(20 * time.Millisecond)
		}
		if v, _ := h.daemon(inst); v != "0.3.0" {
			t.Errorf("the next daemon is %s, want 0.3.0", v)
		}
	})
	t.Run("a mismatched install hands over once", func(t *testing.T) {
		// mnemo-hook 0.3.0 next to mnemo 0.2.0: the hand-over starts a
		// daemon as old as the one it stopped; it says so, and is not
		// tried again at every hook.
		h := upgradeHome{t: t, env: newTestEnv(t)}
		mixed := filepath.Join(t.TempDir(), "bin")
		os.MkdirAll(mixed, 0o755)
		for from, name := range map[string]string{upgradeBins.v2: "mnemo", upgradeBins.v3: "mnemo-hook"} {
			b, err := os.ReadFile(filepath.Join(from, name))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(mixed, name), b, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		t.Cleanup(func() { h.run(mixed, "mnemo", "daemon", "stop") })
		_, first := h.daemon(mixed)
		h.prompt(mixed, "cc-mixed")
		h.hook(mixed, "cc-mixed", "up/mixed-0.go")
		_, second := h.daemon(mixed)
		if second == first {
			t.Fatalf("no hand-over: pid %d", first)
		}
		for i := 1; i < 4; i++ {
			h.prompt(mixed, "cc-mixed")
			h.hook(mixed, "cc-mixed", fmt.Sprintf("up/mixed-%d.go", i))
		}
		if _, pid := h.daemon(mixed); pid != second {
			t.Errorf("handed over again: pid %d, then %d", second, pid)
		}
		if b, _ := os.ReadFile(filepath.Join(h.env.home, "logs", "hook.log")); !bytes.Contains(b, []byte("is mnemo 0.2.0, older than this client (mnemo 0.3.0)")) {
			t.Errorf("hook.log does not say why:\n%s", b)
		}
		count(t, h.sidecar(mixed, "editor-mixed"), 4)
	})
	t.Run("a downgrade is refused", func(t *testing.T) {
		h := upgradeHome{t: t, env: newTestEnv(t)}
		t.Cleanup(func() { h.run(upgradeBins.v2, "mnemo", "daemon", "stop") })
		_, pid := h.daemon(upgradeBins.v3)
		out, err := h.run(upgradeBins.v2, "mnemo", "status")
		if err == nil || !strings.Contains(out, fmt.Sprintf("this client is mnemo 0.2.0, older than the running daemon (mnemo 0.3.0, pid %d)", pid)) ||
			!strings.Contains(out, `stop the daemon with "mnemo daemon stop" to run 0.2.0 again`) {
			t.Fatalf("an older mnemo status: %v\n%s", err, out)
		}
		// An older hook is refused too: it journals its call, and the
		// newer daemon takes it in, as it takes the older hooks' tool
		// events.
		h.prompt(upgradeBins.v2, "cc-down")
		for i := range 3 {
			h.hook(upgradeBins.v2, "cc-down", fmt.Sprintf("up/down-%d.go", i))
		}
		if v, p := h.daemon(upgradeBins.v3); v != "0.3.0" || p != pid {
			t.Fatalf("the daemon is now %s (pid %d)", v, p)
		}
		side := h.sidecar(upgradeBins.v3, "editor-down")
		count(t, side, 3)
		if b, _ := os.ReadFile(filepath.Join(h.env.home, "logs", "hook.log")); !bytes.Contains(b, []byte("older than the running daemon")) {
			t.Errorf("hook.log does not say why:\n%s", b)
		}
		side.in.Close() // the editor goes, so no sidecar resumes below
		side.cmd.Wait()
		// What the refusal says to do: the older mnemo stops the newer
		// daemon, and then runs its own.
		if out, err := h.run(upgradeBins.v2, "mnemo", "daemon", "stop"); err != nil {
			t.Fatalf("an older mnemo daemon stop: %v\n%s", err, out)
		}
		if v, _ := h.daemon(upgradeBins.v2); v != "0.2.0" {
			t.Errorf("after the stop, the daemon is %s, want 0.2.0", v)
		}
	})
}
