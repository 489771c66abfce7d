package claudemem

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/memory"
)

// A small claude-mem database (the version-49 columns this package reads;
// the full schema is in cmd/mnemo/testdata/script/import_claude_mem.txtar).
const schema = `
CREATE TABLE schema_versions (id INTEGER PRIMARY KEY, version INTEGER UNIQUE NOT NULL, applied_at TEXT NOT NULL);
INSERT INTO schema_versions (version, applied_at) VALUES (17, '2026-01-01T00:00:00Z'), (49, '2026-01-01T00:00:00Z');
CREATE TABLE sdk_sessions (id INTEGER PRIMARY KEY AUTOINCREMENT, content_session_id TEXT NOT NULL, memory_session_id TEXT UNIQUE, project TEXT NOT NULL,
  platform_source TEXT NOT NULL DEFAULT 'claude', user_prompt TEXT, started_at TEXT NOT NULL, started_at_epoch INTEGER NOT NULL, completed_at TEXT,
  completed_at_epoch INTEGER, status TEXT NOT NULL DEFAULT 'active', worker_port INTEGER, prompt_counter INTEGER DEFAULT 0, custom_title TEXT);
CREATE TABLE observations (id INTEGER PRIMARY KEY AUTOINCREMENT, memory_session_id TEXT NOT NULL, project TEXT NOT NULL, text TEXT, type TEXT NOT NULL,
  title TEXT, subtitle TEXT, facts TEXT, narrative TEXT, concepts TEXT, files_read TEXT, files_modified TEXT, prompt_number INTEGER,
  discovery_tokens INTEGER DEFAULT 0, created_at TEXT NOT NULL, created_at_epoch INTEGER NOT NULL, content_hash TEXT);
CREATE TABLE session_summaries (id INTEGER PRIMARY KEY AUTOINCREMENT, memory_session_id TEXT NOT NULL, project TEXT NOT NULL, request TEXT,
  investigated TEXT, learned TEXT, completed TEXT, next_steps TEXT, files_read TEXT, files_edited TEXT, notes TEXT, prompt_number INTEGER,
  discovery_tokens INTEGER DEFAULT 0, created_at TEXT NOT NULL, created_at_epoch INTEGER NOT NULL);
CREATE TABLE user_prompts (id INTEGER PRIMARY KEY AUTOINCREMENT, session_db_id INTEGER, content_session_id TEXT NOT NULL, prompt_number INTEGER NOT NULL,
  prompt_text TEXT NOT NULL, created_at TEXT NOT NULL, created_at_epoch INTEGER NOT NULL);
INSERT INTO sdk_sessions (content_session_id, memory_session_id, project, started_at, started_at_epoch, status, prompt_counter)
  VALUES ('cc-1', 'sdk-1', 'calc', '2026-02-01T08:00:00Z', 1769932800000, 'completed', 1);
INSERT INTO observations (memory_session_id, project, type, title, facts, created_at, created_at_epoch)
  VALUES ('sdk-1', 'calc', 'discovery', 'Read calc/add.go', 'calc/add.go declares Add', '2026-02-01T08:01:00Z', 1769932860000);
`

func makeDB(t *testing.T, journal string) (string, *sql.DB) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "claude-mem.db")
	w, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	w.SetMaxOpenConns(1)
	t.Cleanup(func() { w.Close() })
	if _, err := w.Exec("PRAGMA journal_mode=" + journal + ";" + schema); err != nil {
		t.Fatal(err)
	}
	return path, w
}

func readAll(t *testing.T, path string) ([]memory.Record, []Refusal, error) {
	t.Helper()
	ctx := context.Background()
	d, err := Open(ctx, path)
	if err != nil {
		return nil, nil, err
	}
	defer d.Close()
	var recs []memory.Record
	var refused []Refusal
	err = d.Read(ctx, func(r memory.Record) error { recs = append(recs, r); return nil }, func(r Refusal) { refused = append(refused, r) }, nil)
	return recs, refused, err
}

// While claude-mem's worker holds the database open in WAL mode, its
// committed rows still in the log are read (mode=ro), and the main file
// is not written.
func TestReadWhileWorkerWrites(t *testing.T) {
	path, w := makeDB(t, "WAL")
	if _, err := w.Exec(`PRAGMA wal_autocheckpoint=0; INSERT INTO observations (memory_session_id, project, type, title, created_at, created_at_epoch)
		VALUES ('sdk-1', 'calc', 'bugfix', 'Fixed Add overflow', '2026-02-01T08:02:00Z', 1769932920000)`); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + "-wal"); err != nil {
		t.Fatalf("the writer should have a -wal: %v", err)
	}
	before, _ := os.ReadFile(path)
	fi, _ := os.Stat(path)
	recs, refused, err := readAll(t, path)
	if err != nil {
		t.Fatal(err)
	}
	var titles []string
	for _, r := range recs {
		if r.Observation != nil {
			titles = append(titles, r.Observation.Title)
			if r.Observation.SessionID != 1 || r.Observation.Project != "calc" || r.Observation.Host != "claude-code" {
				t.Errorf("observation %+v", r.Observation)
			}
		}
	}
	if strings.Join(titles, "|") != "Read calc/add.go|Fixed Add overflow" || len(refused) != 0 {
		t.Errorf("titles %q, refused %v", titles, refused)
	}
	// The non-JSON facts of an old row are one fact.
	if f := recs[1].Observation.Facts; len(f) != 1 || f[0] != "calc/add.go declares Add" {
		t.Errorf("facts %q", f)
	}
	after, _ := os.ReadFile(path)
	fi2, _ := os.Stat(path)
	if !bytes.Equal(before, after) || !fi.ModTime().Equal(fi2.ModTime()) {
		t.Error("the main file changed")
	}
}

// A database that was closed cleanly is read immutable: no -wal or -shm
// is created.
func TestReadClosedCreatesNothing(t *testing.T) {
	path, w := makeDB(t, "WAL")
	w.Close()
	recs, _, err := readAll(t, path)
	if err != nil || len(recs) != 2 {
		t.Fatalf("%d records, %v", len(recs), err)
	}
	for _, side := range []string{"-wal", "-shm", "-journal"} {
		if _, err := os.Stat(path + side); err == nil {
			t.Errorf("%s was created", side)
		}
	}
}

// A writer holding the database (rollback journal, exclusive lock): a
// clear error after the busy timeout, nothing read.
func TestLocked(t *testing.T) {
	path, w := makeDB(t, "DELETE")
	ctx := context.Background()
	conn, err := w.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `BEGIN EXCLUSIVE; UPDATE sdk_sessions SET project = 'calc2'`); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, _, err = readAll(t, path)
	if err == nil || !strings.Contains(err.Error(), "is locked by another process") || !strings.Contains(err.Error(), "nothing was imported") {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d < time.Second || d > 10*time.Second {
		t.Errorf("gave up after %v, want the 2 s busy timeout", d)
	}
	conn.ExecContext(ctx, `ROLLBACK`)
}

func TestSchemaRefused(t *testing.T) {
	for name, sql := range map[string]string{
		"newer":      `INSERT INTO schema_versions (version, applied_at) VALUES (50, 'x')`,
		"no prompts": `DROP TABLE user_prompts`,
		"no type":    `ALTER TABLE observations DROP COLUMN type`,
	} {
		t.Run(name, func(t *testing.T) {
			path, w := makeDB(t, "DELETE")
			if _, err := w.Exec(sql); err != nil {
				t.Fatal(err)
			}
			w.Close()
			_, _, err := readAll(t, path)
			if !IsSchemaError(err) {
				t.Fatalf("err = %v, want a schema error", err)
			}
		})
	}
}

// The columns of before version 17 (claude_session_id, sdk_session_id).
func TestOldColumnNames(t *testing.T) {
	path, w := makeDB(t, "DELETE")
	for _, q := range []string{
		`ALTER TABLE sdk_sessions RENAME COLUMN content_session_id TO claude_session_id`,
		`ALTER TABLE sdk_sessions RENAME COLUMN memory_session_id TO sdk_session_id`,
		`ALTER TABLE observations RENAME COLUMN memory_session_id TO sdk_session_id`,
		`ALTER TABLE session_summaries RENAME COLUMN memory_session_id TO sdk_session_id`,
		`ALTER TABLE user_prompts RENAME COLUMN content_session_id TO claude_session_id`,
	} {
		if _, err := w.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	recs, _, err := readAll(t, path)
	if err != nil || len(recs) != 2 || recs[0].Session.ContentSessionID != "cc-1" || recs[0].Session.MemorySessionID != "sdk-1" || recs[1].Observation.SessionID != 1 {
		t.Fatalf("%+v, %v", recs, err)
	}
	if got := recs[1].Observation.Time; !got.Equal(time.Date(2026, 2, 1, 8, 1, 0, 0, time.UTC)) {
		t.Errorf("time %v", got)
	}
}

// A database cut short (a copy that stopped half way): a clear error
// before any record is yielded, or while reading, never records from
// torn pages without an error.
func TestTruncated(t *testing.T) {
	path, w := makeDB(t, "DELETE")
	var filler strings.Builder
	for i := range 400 {
		filler.WriteString("INSERT INTO observations (memory_session_id, project, type, title, narrative, created_at, created_at_epoch) VALUES ('sdk-1', 'calc', 'discovery', 'Observation ")
		filler.WriteString(strings.Repeat("x", i%50))
		filler.WriteString("', '" + strings.Repeat("narrative ", 40) + "', '2026-02-01T08:01:00Z', 1769932860000);\n")
	}
	if _, err := w.Exec(filler.String()); err != nil {
		t.Fatal(err)
	}
	w.Close()
	fi, _ := os.Stat(path)
	if err := os.Truncate(path, fi.Size()/2); err != nil {
		t.Fatal(err)
	}
	_, _, err := readAll(t, path)
	if err == nil || !strings.Contains(err.Error(), "is damaged or not a SQLite database") {
		t.Fatalf("err = %v", err)
	}
}
