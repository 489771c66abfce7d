//go:build unix

package team_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/store"
	"github.com/mnemo-dev/mnemo/memory/team"
	"github.com/mnemo-dev/mnemo/memory/team/pgtest"
)

// peer is one machine: an in-memory store and its Sync.
type peer struct {
	mem  *store.Memory
	sync *team.Sync
}

func newPeer(t *testing.T, url, author string, projects ...string) *peer {
	t.Helper()
	mem, err := store.Open(context.Background(), store.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	mem.SetShared(projects)
	s, err := team.Start(mem, team.Options{URL: url, Author: author, Poll: 200 * time.Millisecond, RetryMax: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Close()
		mem.Close()
	})
	return &peer{mem: mem, sync: s}
}

func (p *peer) find(t *testing.T, text string) []memory.Hit {
	t.Helper()
	r, err := p.mem.Search(context.Background(), memory.SearchParams{Query: text, Project: "proj", Mode: memory.ModeKeyword})
	if err != nil {
		t.Fatal(err)
	}
	var out []memory.Hit
	for _, h := range r.Hits {
		if strings.Contains(h.Title, text) {
			out = append(out, h)
		}
	}
	return out
}

func eventually(t *testing.T, within time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", within, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A record saved on one machine arrives on the other with its author, a
// forget travels back, a private part never reaches the server, and a
// record of a project not shared stays home.
func TestShareForgetPrivate(t *testing.T) {
	pg := pgtest.Must(t)
	a := newPeer(t, pg.URL(), "alice", "proj")
	b := newPeer(t, pg.URL(), "bob", "proj")
	ctx := context.Background()

	saved, err := a.mem.Save(ctx, memory.SaveParams{Project: "proj", Title: "zebra migration plan", Text: "move the zebras <private>PRIVATE-XYZZY</private> on monday"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.mem.Save(ctx, memory.SaveParams{Project: "other", Title: "zebra elsewhere", Text: "not shared OTHER-PLUGH"}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*time.Second, "the record arrives", func() bool { return len(b.find(t, "zebra migration")) == 1 })
	h := b.find(t, "zebra migration")[0]
	if h.Author != "alice" {
		t.Errorf("arrived hit's author = %q, want alice", h.Author)
	}
	// Filters by author.
	for who, want := range map[string]int{memory.AuthorTeam: 1, memory.AuthorMine: 0, "alice": 1, "bob": 0} {
		r, err := b.mem.Search(ctx, memory.SearchParams{Query: "zebra", Author: who, Mode: memory.ModeKeyword})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Hits) != want {
			t.Errorf("author %q: %d hits, want %d", who, len(r.Hits), want)
		}
	}
	// The context of the project gives it, with its author.
	cr, err := b.mem.Context(ctx, memory.ContextParams{Project: "proj"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(cr.Context, "zebra migration plan — alice") {
		t.Errorf("bob's context:\n%s", cr.Context)
	}
	// No echo: b pushed nothing.
	if n := b.mem.OutboxLen(); n != 0 {
		t.Errorf("b's outbox holds %d after an arrival", n)
	}

	// A correction at bob's of alice's record travels back to her, and a
	// second one at hers back to him: the newer wins on both.
	if _, err := b.mem.Correct(ctx, memory.CorrectParams{ID: h.ID, Title: "zebra migration plan, moved to tuesday"}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*time.Second, "bob's correction at alice's", func() bool { return len(a.find(t, "moved to tuesday")) == 1 })
	if got := a.find(t, "zebra migration"); len(got) != 1 || got[0].ID != saved.ID || got[0].Author != "" {
		t.Errorf("alice's record after bob's correction: %+v", got)
	}
	if _, err := a.mem.Correct(ctx, memory.CorrectParams{ID: saved.ID, Title: "zebra migration plan, moved to friday"}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*time.Second, "alice's correction at bob's", func() bool { return len(b.find(t, "moved to friday")) == 1 })
	time.Sleep(300 * time.Millisecond)
	for _, p := range []*peer{a, b} {
		if got := p.find(t, "zebra migration"); len(got) != 1 || !strings.Contains(got[0].Title, "friday") {
			t.Errorf("after both corrections: %+v", got)
		}
	}

	if _, err := a.mem.Forget(ctx, memory.IDsParams{IDs: []uint64{saved.ID}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*time.Second, "the forget arrives", func() bool { return len(b.find(t, "zebra migration")) == 0 })

	dump, err := pg.Dump(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(dump, "forget") {
		t.Fatalf("the dump holds no record at all:\n%s", dump)
	}
	for _, secret := range []string{"PRIVATE-XYZZY", "OTHER-PLUGH", "move the zebras", "zebra migration", "moved to"} {
		if strings.Contains(dump, secret) {
			t.Errorf("the server holds %q", secret)
		}
	}
}

// Bad input gets clear errors.
func TestCheckErrors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := team.Check(ctx, "postgres://u:s3cret@[::1"); err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("malformed URL: %v", err)
	}
	if _, err := team.Check(ctx, "postgres://u:s3cret@127.0.0.1:1/db?sslmode=disable&connect_timeout=2"); err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("unreachable server: %v", err)
	}
	pg := pgtest.Must(t)
	if _, err := team.Check(ctx, pg.URL()); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, pg.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `UPDATE mnemo.meta SET value = '99' WHERE key = 'version'`); err != nil {
		t.Fatal(err)
	}
	if _, err := team.Check(ctx, pg.URL()); err == nil || !strings.Contains(err.Error(), "upgrade mnemo") {
		t.Errorf("newer schema: %v", err)
	}
}

// A push that took its sequence number first but commits last is not
// skipped: the cursor is (transaction, seq) and a pull reads only rows of
// transactions that have all ended.
func TestLateCommitIsNotSkipped(t *testing.T) {
	pg := pgtest.Must(t)
	ctx := context.Background()
	if _, err := team.Check(ctx, pg.URL()); err != nil {
		t.Fatal(err)
	}
	b := newPeer(t, pg.URL(), "bob", "proj")
	insert := `INSERT INTO mnemo.ops (op_id, op, gid, project, author, machine, revised, body) VALUES ($1, 'put', $1, 'proj', 'carol', 'm1', now(), $2)`
	body := func(title string) string {
		return `{"project":"proj","type":"note","title":"` + title + `","narrative":"n"}`
	}
	c1, err := pgx.Connect(ctx, pg.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer c1.Close(ctx)
	c2, err := pgx.Connect(ctx, pg.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close(ctx)
	slow, err := c1.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := slow.Exec(ctx, insert, "m1/1", body("zebra early seq late commit")); err != nil {
		t.Fatal(err)
	}
	if _, err := c2.Exec(ctx, insert, "m1/2", body("zebra later seq first commit")); err != nil {
		t.Fatal(err)
	}
	var seqs []int64
	rows, _ := c2.Query(ctx, `SELECT seq FROM mnemo.ops ORDER BY seq`)
	seqs, _ = pgx.CollectRows(rows, pgx.RowTo[int64])
	t.Logf("committed seqs %v; one more is in flight", seqs)
	// While the slow transaction runs, nothing after it is read either:
	// the committed row waits for it.
	time.Sleep(600 * time.Millisecond)
	if n := len(b.find(t, "zebra")); n != 0 {
		t.Errorf("%d records read while an older transaction was open", n)
	}
	if _, err := c2.Exec(ctx, `SELECT pg_notify('mnemo_ops', 'x')`); err != nil {
		t.Fatal(err)
	}
	if err := slow.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	eventually(t, 3*time.Second, "both records, the late commit too", func() bool { return len(b.find(t, "zebra")) == 2 })
}

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://alice:pw@db.example:5432/mnemo?sslmode=require":  "postgres://alice:xxxxx@db.example:5432/mnemo?sslmode=require",
		"postgres://alice@db/mnemo":                                  "postgres://alice@db/mnemo",
		"postgres://db/mnemo?user=a&password=pw&sslmode=verify-full": "postgres://db/mnemo?user=a&password=xxxxx&sslmode=verify-full",
		"host=db user=a password=pw dbname=m":                        "host=db user=a password=xxxxx dbname=m",
		"postgresql://a:p%40ss@h/d":                                  "postgresql://a:xxxxx@h/d",
	} {
		if got := memory.RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// The roles of docs/team.md §8 are enough: the owner makes the schema, a
// member pushes, pulls and forgets and can delete nothing; a member on a
// server without the schema is told to join as the owner first.
func TestLeastPrivilegeRoles(t *testing.T) {
	pg := pgtest.Must(t)
	ctx := context.Background()
	as := func(role string) string { return strings.Replace(pg.URL(), "mnemo@", role+"@", 1) }
	admin, err := pgx.Connect(ctx, pg.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	exec := func(sql string) {
		t.Helper()
		if _, err := admin.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	exec(`CREATE ROLE mnemo_member NOLOGIN`)
	exec(`CREATE ROLE early LOGIN IN ROLE mnemo_member`)
	if _, err := team.Check(ctx, as("early")); !errors.Is(err, team.ErrNoSchema) && (err == nil || !strings.Contains(err.Error(), "schema's owner")) {
		t.Errorf("a member on an empty server: %v", err)
	}
	exec(`CREATE ROLE mnemo_owner LOGIN`)
	exec(`CREATE SCHEMA mnemo AUTHORIZATION mnemo_owner`)
	if _, err := team.Check(ctx, as("mnemo_owner")); err != nil {
		t.Fatalf("the owner's join: %v", err)
	}
	for _, sql := range []string{
		`GRANT USAGE ON SCHEMA mnemo TO mnemo_member`,
		`GRANT SELECT ON mnemo.meta TO mnemo_member`,
		`GRANT SELECT, INSERT ON mnemo.ops TO mnemo_member`,
		`GRANT UPDATE (body) ON mnemo.ops TO mnemo_member`,
		`GRANT USAGE ON SEQUENCE mnemo.ops_seq_seq TO mnemo_member`,
		`CREATE ROLE alice LOGIN IN ROLE mnemo_member`,
		`CREATE ROLE bob LOGIN IN ROLE mnemo_member`,
	} {
		exec(sql)
	}
	a := newPeer(t, as("alice"), "alice", "proj")
	b := newPeer(t, as("bob"), "bob", "proj")
	saved, err := a.mem.Save(ctx, memory.SaveParams{Project: "proj", Title: "zebra roles", Text: "made by a member"})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 3*time.Second, "the record at bob's", func() bool { return len(b.find(t, "zebra roles")) == 1 })
	if _, err := a.mem.Forget(ctx, memory.IDsParams{IDs: []uint64{saved.ID}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 3*time.Second, "the forget at bob's", func() bool { return len(b.find(t, "zebra roles")) == 0 })
	eventually(t, 3*time.Second, "alice's outbox empty", func() bool { return a.mem.OutboxLen() == 0 })
	var st memory.TeamStatus
	a.sync.Status(&st)
	if st.LastError != "" || !st.Connected {
		t.Errorf("alice's status: %+v, outbox %d", st, a.mem.OutboxLen())
	}
	member, err := pgx.Connect(ctx, as("alice"))
	if err != nil {
		t.Fatal(err)
	}
	defer member.Close(ctx)
	for _, sql := range []string{`DELETE FROM mnemo.ops`, `TRUNCATE mnemo.ops`, `DROP TABLE mnemo.ops`, `UPDATE mnemo.ops SET author = 'x'`, `UPDATE mnemo.meta SET value = '2'`} {
		if _, err := member.Exec(ctx, sql); err == nil || !strings.Contains(err.Error(), "denied") && !strings.Contains(err.Error(), "must be owner") {
			t.Errorf("a member may %s: %v", sql, err)
		}
	}
}

// lossyLocal loses the first answer of the server: the push committed,
// the outbox entries were not deleted (as after kill -9 between the two).
type lossyLocal struct {
	*store.Memory
	lost atomic.Bool
}

func (l *lossyLocal) Pushed(ctx context.Context, seqs []uint64) error {
	if l.lost.CompareAndSwap(false, true) {
		return errors.New("lost: the daemon died before it deleted the pushed entries")
	}
	return l.Memory.Pushed(ctx, seqs)
}

// A push retried after the server committed it stores nothing twice.
func TestRetriedPushIsOnce(t *testing.T) {
	pg := pgtest.Must(t)
	ctx := context.Background()
	mem, err := store.Open(ctx, store.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	mem.SetShared([]string{"proj"})
	for i := range 5 {
		if _, err := mem.Save(ctx, memory.SaveParams{Project: "proj", Title: fmt.Sprintf("zebra %d", i), Text: fmt.Sprintf("zebra number %d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	l := &lossyLocal{Memory: mem}
	s, err := team.Start(l, team.Options{URL: pg.URL(), Author: "alice", Poll: 100 * time.Millisecond, RetryMax: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	eventually(t, 10*time.Second, "the outbox drained", func() bool { return l.lost.Load() && mem.OutboxLen() == 0 })
	conn, err := pgx.Connect(ctx, pg.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var rows, gids int
	if err := conn.QueryRow(ctx, `SELECT count(*), count(DISTINCT gid) FROM mnemo.ops`).Scan(&rows, &gids); err != nil {
		t.Fatal(err)
	}
	if rows != 5 || gids != 5 {
		t.Errorf("the server holds %d operations of %d records, want 5 of 5", rows, gids)
	}
}

// TLS when the server asks for it: against a server that takes TLS
// connections only, a URL without sslmode (pgx's prefer) and one that
// verifies the certificate work; sslmode=disable is refused with the
// server's reason, a wrong CA with the verification's.
func TestTLS(t *testing.T) {
	pg := pgtest.MustConfig(t, pgtest.Config{TLSOnly: true})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	base := fmt.Sprintf("postgres://mnemo:pw-tls-77@127.0.0.1:%d/postgres", pg.Port)
	for _, url := range []string{base, base + "?sslmode=require", base + "?sslmode=verify-full&sslrootcert=" + pg.CAFile} {
		if _, err := team.Check(ctx, url); err != nil {
			t.Errorf("%s: %v", memory.RedactURL(url), err)
		}
	}
	_, err := team.Check(ctx, base+"?sslmode=disable")
	if err == nil || !strings.Contains(err.Error(), "pg_hba.conf") || strings.Contains(err.Error(), "pw-tls-77") {
		t.Errorf("sslmode=disable against a TLS-only server: %v", err)
	}
	other := pgtest.MustConfig(t, pgtest.Config{TLSOnly: true})
	_, err = team.Check(ctx, base+"?sslmode=verify-full&sslrootcert="+other.CAFile)
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("verify-full with another CA: %v", err)
	}
	// A peer over TLS pushes and pulls.
	a := newPeer(t, base+"?sslmode=verify-full&sslrootcert="+pg.CAFile, "alice", "proj")
	b := newPeer(t, base+"?sslmode=require", "bob", "proj")
	if _, err := a.mem.Save(ctx, memory.SaveParams{Project: "proj", Title: "zebra over tls", Text: "encrypted on the wire"}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 3*time.Second, "the record over TLS", func() bool { return len(b.find(t, "zebra over tls")) == 1 })
}

// An operation the server refuses (here by a CHECK an administrator
// added) is skipped and counted, and does not hold up the others.
func TestRefusedOperationIsSkipped(t *testing.T) {
	pg := pgtest.Must(t)
	ctx := context.Background()
	if _, err := team.Check(ctx, pg.URL()); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, pg.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `ALTER TABLE mnemo.ops ADD CONSTRAINT no_poison CHECK (body->>'title' IS DISTINCT FROM 'zebra poison')`); err != nil {
		t.Fatal(err)
	}
	// Queued before the push starts: one batch, the refused one in it.
	mem, err := store.Open(ctx, store.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	mem.SetShared([]string{"proj"})
	for _, title := range []string{"zebra one", "zebra poison", "zebra two"} {
		if _, err := mem.Save(ctx, memory.SaveParams{Project: "proj", Title: title, Text: title + " text"}); err != nil {
			t.Fatal(err)
		}
	}
	b := newPeer(t, pg.URL(), "bob", "proj")
	s, err := team.Start(mem, team.Options{URL: pg.URL(), Author: "alice", Poll: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	eventually(t, 5*time.Second, "the two others at bob's", func() bool { return len(b.find(t, "zebra")) == 2 })
	eventually(t, 5*time.Second, "alice's outbox empty", func() bool { return mem.OutboxLen() == 0 })
	var st memory.TeamStatus
	s.Status(&st)
	if st.Skipped != 1 {
		t.Errorf("skipped %d, want 1", st.Skipped)
	}
}

// recorder is a Local that only records what a pull applies.
type recorder struct {
	mu      sync.Mutex
	cursors map[string]string
	batches [][]memory.Arrival
	signal  chan struct{}
}

func (r *recorder) Machine() string                                           { return "recorder" }
func (r *recorder) TeamProjects() []string                                    { return []string{"proj"} }
func (r *recorder) Outbox(context.Context, int) ([]memory.OutboxEntry, error) { return nil, nil }
func (r *recorder) Pushed(context.Context, []uint64) error                    { return nil }
func (r *recorder) OutboxSignal() <-chan struct{}                             { return r.signal }
func (r *recorder) OutboxLen() int                                            { return 0 }
func (r *recorder) TeamCursor(server string) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cursors[server], nil
}
func (r *recorder) Arrive(_ context.Context, server, cursor string, ops []memory.Arrival) (int, int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cursors[server] = cursor
	r.batches = append(r.batches, slices.Clone(ops))
	return len(ops), 0, nil
}

// A catch-up of many large records is applied in batches of at most
// team.ApplyBytes (and one record): 500 rows of 3 KB in one Badger
// transaction failed with "Txn is too big to fit into one request".
func TestCatchUpInSmallTransactions(t *testing.T) {
	pg := pgtest.Must(t)
	ctx := context.Background()
	if _, err := team.Check(ctx, pg.URL()); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, pg.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	const n = 700
	if _, err := conn.Exec(ctx, `INSERT INTO mnemo.ops (op_id, op, gid, project, author, machine, revised, body)
SELECT 'm1/' || i, 'put', 'm1/' || i, 'proj', 'carol', 'm1', now(),
  jsonb_build_object('project', 'proj', 'type', 'note', 'title', 'zebra ' || i,
    'narrative', (SELECT string_agg(md5(i::text || '-' || j::text), ' ') FROM generate_series(1, 100) j))
FROM generate_series(1, $1) i`, n); err != nil {
		t.Fatal(err)
	}
	r := &recorder{cursors: map[string]string{}, signal: make(chan struct{})}
	s, err := team.Start(r, team.Options{URL: pg.URL(), Author: "bob", Poll: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	total := func() int {
		r.mu.Lock()
		defer r.mu.Unlock()
		k := 0
		for _, b := range r.batches {
			k += len(b)
		}
		return k
	}
	eventually(t, 20*time.Second, "every row applied", func() bool { return total() == n })
	r.mu.Lock()
	defer r.mu.Unlock()
	next := 1
	for i, b := range r.batches {
		bytes := 0
		for j, a := range b {
			if a.Observation == nil || a.Observation.Title != fmt.Sprintf("zebra %d", next) {
				t.Fatalf("batch %d row %d: %+v, want zebra %d (in order, once)", i, j, a.Observation, next)
			}
			next++
			if j < len(b)-1 {
				bytes += len(a.Observation.Narrative)
			}
		}
		if bytes >= team.ApplyBytes {
			t.Errorf("batch %d holds %d bytes before its last record, over %d", i, bytes, team.ApplyBytes)
		}
	}
	t.Logf("%d rows in %d batches", n, len(r.batches))
}
