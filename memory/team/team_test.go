//go:build unix

package team_test

import (
	"context"
	"strings"
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
	// No echo: b pushed nothing.
	if n := b.mem.OutboxLen(); n != 0 {
		t.Errorf("b's outbox holds %d after an arrival", n)
	}

	if _, err := a.mem.Forget(ctx, memory.IDsParams{IDs: []uint64{saved.ID}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*time.Second, "the forget arrives", func() bool { return len(b.find(t, "zebra migration")) == 0 })

	conn, err := pgx.Connect(ctx, pg.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	dump := dumpAll(t, conn)
	for _, secret := range []string{"PRIVATE-XYZZY", "OTHER-PLUGH", "move the zebras", "zebra migration"} {
		if strings.Contains(dump, secret) {
			t.Errorf("the server holds %q", secret)
		}
	}
}

// dumpAll is every row of every table of the server's database as text.
func dumpAll(t *testing.T, conn *pgx.Conn) string {
	t.Helper()
	ctx := context.Background()
	rows, err := conn.Query(ctx, `SELECT quote_ident(table_schema) || '.' || quote_ident(table_name) FROM information_schema.tables WHERE table_schema NOT IN ('pg_catalog', 'information_schema')`)
	if err != nil {
		t.Fatal(err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, tb := range tables {
		rows, err := conn.Query(ctx, `SELECT t::text FROM `+tb+` t`)
		if err != nil {
			t.Fatal(err)
		}
		texts, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range texts {
			b.WriteString(s)
			b.WriteByte('\n')
		}
	}
	if !strings.Contains(b.String(), "forget") {
		t.Fatalf("the dump holds no record at all: %d tables", len(tables))
	}
	return b.String()
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
