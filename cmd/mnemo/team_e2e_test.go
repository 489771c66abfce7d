//go:build e2e && unix

package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/client"
	"github.com/mnemo-dev/mnemo/memory/team/pgtest"
	"github.com/mnemo-dev/mnemo/rpc"
)

// teamOutage is how long the server is down in TestTeamTwoDaemons: a
// minute, or MNEMO_TEST_TEAM_OUTAGE (a Go duration) to try it quicker.
func teamOutage(t *testing.T) time.Duration {
	if s := os.Getenv("MNEMO_TEST_TEAM_OUTAGE"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("MNEMO_TEST_TEAM_OUTAGE=%q: %v", s, err)
		}
		return d
	}
	return time.Minute
}

// teamPeer is one machine: its own HOME and MNEMO_HOME, its daemon.
type teamPeer struct {
	name string
	env  *testEnv
}

func (p *teamPeer) mnemo(t *testing.T, args ...string) string {
	t.Helper()
	return mnemo(t, p.env, args...)
}

// titles lists the titles of the records the peer finds in the project
// (with no query: filters alone, all of them), with their counts.
func (p *teamPeer) titles(t *testing.T, filter string) map[string]int {
	t.Helper()
	var r memory.SearchResult
	args := []string{"search", "--json", "--project", "billing-api", "--limit", "1000"}
	if filter != "" {
		args = append(args, filter)
	}
	if err := json.Unmarshal([]byte(p.mnemo(t, args...)), &r); err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, h := range r.Hits {
		out[h.Title]++
	}
	return out
}

func (p *teamPeer) status(t *testing.T) memory.TeamStatus {
	t.Helper()
	var st memory.TeamStatus
	if err := json.Unmarshal([]byte(p.mnemo(t, "team", "status", "--json")), &st); err != nil {
		t.Fatal(err)
	}
	return st
}

func (p *teamPeer) save(t *testing.T, title string) uint64 {
	t.Helper()
	var r memory.SaveResult
	if err := json.Unmarshal([]byte(p.mnemo(t, "remember", "--json", "--title", title, "the body of "+title)), &r); err != nil {
		t.Fatal(err)
	}
	return r.ID
}

func waitFor(t *testing.T, within time.Duration, what string, ok func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !ok() {
		if time.Since(start) > within {
			t.Fatalf("not within %v: %s", within, what)
		}
		time.Sleep(time.Millisecond)
	}
	return time.Since(start)
}

// Two daemons, each with its own home, share the project billing-api
// through a throw-away PostgreSQL: a record made in one is found in the
// other within 2 s, with its author; a forget in one removes it in both;
// a private turn never reaches the server (every row of every table is
// read); with the server stopped for a minute while both write, every
// record arrives exactly once after it starts again; kill -9 of a daemon
// in the middle of pushing loses nothing and sends nothing twice.
func TestTeamTwoDaemons(t *testing.T) {
	pg := pgtest.Must(t)
	t.Parallel() // a minute of it is the outage: the other slow tests run meanwhile
	// A password the trust authentication ignores: it must show nowhere.
	url := strings.Replace(pg.URL(), "mnemo@", "mnemo:pw-s3cret-9@", 1)
	peers := []*teamPeer{{name: "alice", env: newTestEnv(t)}, {name: "bob", env: newTestEnv(t)}}
	for _, p := range peers {
		p.env.vars = []string{"MNEMO_TEAM_PUSH_BATCH=1"}
		env := p.env
		t.Cleanup(func() { stopDaemon(t, env) })
		out := p.mnemo(t, "team", "join", "--author", p.name, url)
		if strings.Contains(out, "pw-s3cret-9") || !strings.Contains(out, "xxxxx") {
			t.Fatalf("join printed:\n%s", out)
		}
	}
	a, b := peers[0], peers[1]
	waitFor(t, 10*time.Second, "both connected", func() bool { return a.status(t).Connected && b.status(t).Connected })

	// Made in one, searchable in the other within 2 s.
	id := a.save(t, "zebra crossing rule")
	took := waitFor(t, 2*time.Second, "alice's record in bob's search", func() bool { return b.titles(t, "--team")["zebra crossing rule"] == 1 })
	t.Logf("alice's record was searchable at bob's after %v", took)
	var hits memory.SearchResult
	json.Unmarshal([]byte(b.mnemo(t, "search", "--json", "zebra", "crossing")), &hits)
	if len(hits.Hits) != 1 || hits.Hits[0].Author != "alice" {
		t.Fatalf("bob's search: %+v", hits.Hits)
	}
	if got := a.titles(t, "--team"); len(got) != 0 {
		t.Errorf("alice's own record came back to her as arrived: %v", got)
	}

	// Forget in one removes it in both.
	a.mnemo(t, "forget", fmt.Sprint(id))
	took = waitFor(t, 3*time.Second, "the forget at bob's", func() bool { return b.titles(t, "")["zebra crossing rule"] == 0 })
	t.Logf("the forget reached bob's after %v", took)

	// A private turn, and a private part of a turn, never reach the server.
	c := startServe(t, a.env)
	c.call("initialize", map[string]any{"processId": nil, "rootUri": nil, "capabilities": map[string]any{}})
	c.call(memory.MethodUserPromptSubmit, map[string]any{"contentSessionId": "cc-private", "cwd": a.env.project, "prompt": "<private>TURN-SECRET-QX7 rotate the keys</private>"})
	c.call(memory.MethodPostToolUse, map[string]any{"contentSessionId": "cc-private", "cwd": a.env.project, "toolName": "Bash", "toolUseId": "tu-1",
		"toolInput": map[string]any{"command": "echo TURN-SECRET-QX7"}, "toolResponse": map[string]any{"stdout": "TURN-SECRET-QX7"}})
	c.call(memory.MethodUserPromptSubmit, map[string]any{"contentSessionId": "cc-private", "cwd": a.env.project, "prompt": "fix the invoice rounding <private>PART-SECRET-ZK4</private>"})
	c.call(memory.MethodPostToolUse, map[string]any{"contentSessionId": "cc-private", "cwd": a.env.project, "toolName": "Bash", "toolUseId": "tu-2",
		"toolInput": map[string]any{"command": "go test ./invoice/..."}, "toolResponse": map[string]any{"stdout": "FAIL TestRounding <private>PART-SECRET-ZK4</private>"}})
	a.save(t, "private check done")
	waitFor(t, 10*time.Second, "the turn's records at bob's", func() bool { return b.titles(t, "--team")["private check done"] == 1 })
	waitFor(t, 10*time.Second, "alice's outbox empty", func() bool { st := a.status(t); return st.Outbox == 0 && daemonStatus(t, a.env).Counts.Queued == 0 })
	dump, err := pg.Dump(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(dump, "invoice") {
		t.Errorf("the turn that was not private did not reach the server:\n%s", dump)
	}
	for _, secret := range []string{"TURN-SECRET-QX7", "PART-SECRET-ZK4", "pw-s3cret-9"} {
		if strings.Contains(dump, secret) {
			t.Errorf("the server holds %q", secret)
		}
	}

	// The server away while both write; every record arrives once.
	ctx := context.Background()
	if err := pg.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	outage := teamOutage(t)
	start := time.Now()
	var wrote [2][]string
	var wg sync.WaitGroup
	for i, p := range peers {
		wg.Go(func() {
			for n := 0; time.Since(start) < outage; n++ {
				title := fmt.Sprintf("outage note %s %d", p.name, n)
				p.save(t, title)
				wrote[i] = append(wrote[i], title)
				time.Sleep(outage / 20)
			}
		})
	}
	wg.Wait()
	st := a.status(t)
	if st.Connected || st.Outbox == 0 {
		t.Errorf("during the outage alice's team status says connected %v, outbox %d", st.Connected, st.Outbox)
	}
	if err := pg.StartAgain(ctx); err != nil {
		t.Fatal(err)
	}
	took = waitFor(t, 30*time.Second, "every record on the other side", func() bool {
		for i, p := range peers {
			got := peers[1-i].titles(t, "--team")
			for _, title := range wrote[i] {
				if got[title] != 1 {
					return false
				}
			}
			_ = p
		}
		return true
	})
	t.Logf("after %v of outage (%d and %d records written), all arrived %v after the server started", outage, len(wrote[0]), len(wrote[1]), took)
	for i := range peers {
		for title, n := range peers[1-i].titles(t, "") {
			if n != 1 {
				t.Errorf("%s has %q %d times", peers[1-i].name, title, n)
			}
		}
	}

	// kill -9 in the middle of pushing: a burst queued while the server
	// is away, then pushed one record per transaction (MNEMO_TEAM_PUSH_BATCH
	// above), and the daemon killed once some are pushed and some not.
	const burst = 300
	if err := pg.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	c2 := startServe(t, a.env)
	c2.call("initialize", map[string]any{"processId": nil, "rootUri": nil, "capabilities": map[string]any{}})
	for n := range burst {
		c2.call(memory.MethodSave, map[string]any{"project": "billing-api", "title": fmt.Sprintf("burst %d", n), "text": fmt.Sprintf("burst record number %d", n)})
	}
	c2.cmd.Process.Kill()
	c2.cmd.Wait()
	if err := pg.StartAgain(ctx); err != nil {
		t.Fatal(err)
	}
	// Watched over the socket, not through the command line: a poll
	// every millisecond, so that the kill lands while it pushes.
	pid := daemonStatus(t, a.env).PID
	rc, err := rpc.Connect(ctx, rpc.ConnectOptions{Home: a.env.home, Client: rpc.ClientCLI})
	if err != nil {
		t.Fatal(err)
	}
	var outbox int
	waitFor(t, 30*time.Second, "alice's daemon pushing", func() bool {
		st, err := client.New(rc).TeamStatus(ctx)
		if err != nil {
			t.Fatal(err)
		}
		outbox = st.Outbox
		return outbox < burst
	})
	killProcess(pid)
	rc.Close()
	for range 100 {
		if exec.Command("kill", "-0", fmt.Sprint(pid)).Run() != nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	left := a.status(t).Outbox // starts a new daemon
	t.Logf("kill -9 when %d of %d burst records were left to push; %d at restart", outbox, burst, left)
	if left == 0 {
		t.Log("the push had finished before the kill landed: this run did not test a kill in the middle")
	}
	waitFor(t, 60*time.Second, "every burst record at bob's", func() bool {
		got := b.titles(t, "--team")
		for n := range burst {
			if got[fmt.Sprintf("burst %d", n)] != 1 {
				return false
			}
		}
		return true
	})
	conn, err := pgx.Connect(ctx, pg.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var rows, gids int
	if err := conn.QueryRow(ctx, `SELECT count(*), count(DISTINCT gid) FROM mnemo.ops WHERE op = 'put' AND body->>'title' LIKE 'burst %'`).Scan(&rows, &gids); err != nil {
		t.Fatal(err)
	}
	if rows != burst || gids != burst {
		t.Errorf("the server holds %d puts of %d records, want %d of %d", rows, gids, burst, burst)
	}
	// doctor checks the link; leave stops sharing and forgets the server.
	doctor := exec.Command(mnemoBin, "doctor")
	doctor.Env, doctor.Dir = b.env.environ(), b.env.project
	out, _ := doctor.CombinedOutput()
	if !strings.Contains(string(out), "team         postgres://mnemo:xxxxx@127.0.0.1") || !strings.Contains(string(out), "answers") || strings.Contains(string(out), "pw-s3cret-9") {
		t.Errorf("doctor says:\n%s", out)
	}
	if out := b.mnemo(t, "team", "leave"); !strings.Contains(out, "team memory is off") {
		t.Errorf("leave says:\n%s", out)
	}
	if settings, _ := os.ReadFile(filepath.Join(b.env.home, "settings.json")); strings.Contains(string(settings), "teamUrl") {
		t.Errorf("the settings keep the server after the last project left:\n%s", settings)
	}
	logs, _ := filepath.Glob(filepath.Join(a.env.home, "logs", "*"))
	more, _ := filepath.Glob(filepath.Join(b.env.home, "logs", "*"))
	if len(logs)+len(more) == 0 {
		t.Error("no daemon log to check for the password")
	}
	for _, l := range append(logs, more...) {
		if b, _ := os.ReadFile(l); strings.Contains(string(b), "pw-s3cret-9") {
			t.Errorf("%s holds the password", l)
		}
	}
}
