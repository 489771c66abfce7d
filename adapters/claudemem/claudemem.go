// Package claudemem reads the SQLite database of claude-mem
// (thedotmack/claude-mem, ~/.claude-mem/claude-mem.db) and yields Mnemo's
// own export records (memory.Record), so that `mnemo import claude-mem`
// stores them through the same import path as `mnemo import`: sessions
// (both ids), prompts, observations and summaries, with their times and
// projects, every text cleaned by memory/privacy.
//
// The database is opened read-only and nothing is ever written to it.
// claude-mem keeps it in WAL mode, and SQLite's mode=ro alone would still
// create the -wal and -shm files next to it when they are not there (and
// leave them). So: when no -wal file is there (no claude-mem process has
// the database open, and it was closed cleanly) it is opened
// immutable=1, which takes no locks and creates no file, and Read checks
// afterwards that the file's size and time did not change and no -wal
// appeared (a claude-mem worker started meanwhile), else it fails and
// nothing is imported. When a -wal is there (the worker runs, or died),
// it is opened mode=ro: SQLite then takes shared locks and reads the
// write-ahead log through the existing -shm, the only way to see the
// committed rows still in the log; the main file is not written. Its schema is recognised by its tables and columns and by its
// schema_versions table: a version newer than KnownVersion, or a table or
// column missing, is refused before a record is yielded.
//
// The driver is modernc.org/sqlite, pure Go, so the binary stays cgo-free.
package claudemem

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" driver

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/privacy"
)

// KnownVersion is the newest claude-mem schema version this package
// understands: the last migration of claude-mem v13.15.3 (49, the concept
// tag normalisation).
const KnownVersion = 49

// DefaultPath is where claude-mem keeps its database: CLAUDE_MEM_DATA_DIR
// when set (as claude-mem itself resolves it, ~ expanded), else
// ~/.claude-mem.
func DefaultPath() (string, error) {
	dir := os.Getenv("CLAUDE_MEM_DATA_DIR")
	home, err := os.UserHomeDir()
	switch {
	case dir == "" && err != nil:
		return "", err
	case dir == "":
		dir = filepath.Join(home, ".claude-mem")
	case dir == "~" && err == nil:
		dir = home
	case strings.HasPrefix(dir, "~/") && err == nil:
		dir = filepath.Join(home, dir[2:])
	}
	return filepath.Join(dir, "claude-mem.db"), nil
}

// A SchemaError says why a database is not a claude-mem database this
// package can read. Nothing has been read from it.
type SchemaError struct {
	Path   string
	Reason string
}

func (e *SchemaError) Error() string {
	return fmt.Sprintf("claude-mem database %s: %s; nothing was imported", e.Path, e.Reason)
}

// Counts are the rows of each table, and the version of the schema.
type Counts struct {
	Version      int `json:"version"`
	Sessions     int `json:"sessions"`
	Prompts      int `json:"prompts"`
	Observations int `json:"observations"`
	Summaries    int `json:"summaries"`
}

// Total is the number of rows.
func (c Counts) Total() int { return c.Sessions + c.Prompts + c.Observations + c.Summaries }

// A Refusal is one row that is not imported, and why.
type Refusal struct {
	Table  string `json:"table"`
	ID     int64  `json:"id"`
	Reason string `json:"reason"`
}

// DB is an open claude-mem database whose schema was recognised.
type DB struct {
	path string
	db   *sql.DB
	// immutable: opened immutable=1; stat is the file as it was then.
	immutable bool
	stat      os.FileInfo
	cols      map[string]map[string]bool // table → its columns
	counts    Counts
	// The names of the two session ids: content_session_id and
	// memory_session_id since version 17, claude_session_id and
	// sdk_session_id before.
	contentCol, memoryCol string
}

// Open opens the database at path read-only and checks its schema.
func Open(ctx context.Context, path string) (*DB, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(abs)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("no claude-mem database at %s (give its path with --db)", abs)
	}
	if err != nil {
		return nil, fmt.Errorf("claude-mem database: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("claude-mem database %s: not a file", abs)
	}
	immutable := true
	for _, side := range []string{"-wal", "-journal"} {
		if _, err := os.Lstat(abs + side); !errors.Is(err, os.ErrNotExist) {
			immutable = false
		}
	}
	u := url.URL{Scheme: "file", Path: abs}
	q := url.Values{}
	q.Set("mode", "ro")
	if immutable {
		q.Set("immutable", "1")
	}
	q.Add("_pragma", "busy_timeout(2000)")
	q.Add("_pragma", "query_only(1)")
	u.RawQuery = q.Encode()
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return nil, readError(abs, err)
	}
	db.SetMaxOpenConns(1)
	d := &DB{path: abs, db: db, cols: map[string]map[string]bool{}, immutable: immutable, stat: fi}
	if err := d.check(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return d, nil
}

// Close closes the database.
func (d *DB) Close() error { return d.db.Close() }

// Counts returns the rows of each table.
func (d *DB) Counts() Counts { return d.counts }

// readError words a driver error for a person: a file that is not a
// database, a damaged one, one locked by a writer.
func readError(path string, err error) error {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "file is not a database"), strings.Contains(msg, "malformed"), strings.Contains(msg, "SQLITE_CORRUPT"), strings.Contains(msg, "SQLITE_NOTADB"):
		return fmt.Errorf("claude-mem database %s is damaged or not a SQLite database (%v); nothing was imported", path, err)
	case strings.Contains(msg, "locked"), strings.Contains(msg, "SQLITE_BUSY"):
		return fmt.Errorf("claude-mem database %s is locked by another process (stop claude-mem's worker and try again): %v; nothing was imported", path, err)
	}
	return fmt.Errorf("claude-mem database %s: %w", path, err)
}

// The columns each table must have (either name of a renamed column, "a|b").
var required = map[string][]string{
	"sdk_sessions":      {"id", "content_session_id|claude_session_id", "memory_session_id|sdk_session_id", "project", "started_at_epoch", "status"},
	"observations":      {"id", "memory_session_id|sdk_session_id", "project", "type", "created_at_epoch"},
	"session_summaries": {"id", "memory_session_id|sdk_session_id", "project", "created_at_epoch"},
	"user_prompts":      {"id", "content_session_id|claude_session_id", "prompt_number", "prompt_text", "created_at_epoch"},
}

func (d *DB) check(ctx context.Context) error {
	tables := map[string]bool{}
	rows, err := d.db.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table'`)
	if err != nil {
		return readError(d.path, err)
	}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return readError(d.path, err)
		}
		tables[name] = true
	}
	if err := rows.Close(); err != nil {
		return readError(d.path, err)
	}
	if err := rows.Err(); err != nil {
		return readError(d.path, err)
	}
	if !tables["schema_versions"] || !tables["sdk_sessions"] {
		return &SchemaError{d.path, "no schema_versions or sdk_sessions table: not a claude-mem database"}
	}
	if err := d.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_versions`).Scan(&d.counts.Version); err != nil {
		return readError(d.path, err)
	}
	if d.counts.Version > KnownVersion {
		return &SchemaError{d.path, fmt.Sprintf("schema version %d is newer than the versions this Mnemo knows (up to %d); update Mnemo", d.counts.Version, KnownVersion)}
	}
	for table, cols := range required {
		if !tables[table] {
			return &SchemaError{d.path, fmt.Sprintf("schema version %d has no %s table, which this Mnemo needs", d.counts.Version, table)}
		}
		have, err := d.columns(ctx, table)
		if err != nil {
			return err
		}
		d.cols[table] = have
		for _, c := range cols {
			if pick(have, c) == "" {
				return &SchemaError{d.path, fmt.Sprintf("schema version %d: table %s has no column %s", d.counts.Version, table, strings.ReplaceAll(c, "|", " or "))}
			}
		}
	}
	obs := d.cols["observations"]
	if !obs["title"] && !obs["text"] {
		return &SchemaError{d.path, fmt.Sprintf("schema version %d: table observations has neither title nor text", d.counts.Version)}
	}
	d.contentCol = pick(d.cols["sdk_sessions"], "content_session_id|claude_session_id")
	d.memoryCol = pick(d.cols["sdk_sessions"], "memory_session_id|sdk_session_id")
	for table, n := range map[string]*int{"sdk_sessions": &d.counts.Sessions, "user_prompts": &d.counts.Prompts, "observations": &d.counts.Observations, "session_summaries": &d.counts.Summaries} {
		if err := d.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+table).Scan(n); err != nil {
			return readError(d.path, err)
		}
	}
	return nil
}

func (d *DB) columns(ctx context.Context, table string) (map[string]bool, error) {
	rows, err := d.db.QueryContext(ctx, `SELECT name FROM pragma_table_info(?)`, table)
	if err != nil {
		return nil, readError(d.path, err)
	}
	defer rows.Close()
	have := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, readError(d.path, err)
		}
		have[name] = true
	}
	return have, rows.Err()
}

// pick returns the first of the names "a|b" the table has, or "".
func pick(have map[string]bool, names string) string {
	for _, n := range strings.Split(names, "|") {
		if have[n] {
			return n
		}
	}
	return ""
}

// col is a column of table for a SELECT: its name, or NULL when the
// schema version has no such column.
func (d *DB) col(table, names string) string {
	if c := pick(d.cols[table], names); c != "" {
		return c
	}
	return "NULL"
}

// Read yields every session, then every prompt, observation and summary,
// in the order an import needs (sessions before what refers to them).
// Rows that cannot become a record are passed to refuse. progress, when
// not nil, is called every so many rows with the rows read so far.
func (d *DB) Read(ctx context.Context, yield func(memory.Record) error, refuse func(Refusal), progress func(read int)) error {
	r := reader{DB: d, yield: yield, refuse: refuse, progress: progress, byMemory: map[string]int64{}, byContent: map[string]int64{}, platform: map[int64]string{}}
	for _, step := range []func(context.Context) error{r.sessions, r.prompts, r.observations, r.summaries} {
		if err := step(ctx); err != nil {
			return err
		}
	}
	if r.progress != nil {
		r.progress(r.read)
	}
	return d.unchanged()
}

// unchanged fails when a database opened immutable changed while it was
// read: what was read may be torn.
func (d *DB) unchanged() error {
	if !d.immutable {
		return nil
	}
	fi, err := os.Stat(d.path)
	if err != nil {
		return fmt.Errorf("claude-mem database %s: %w", d.path, err)
	}
	_, werr := os.Lstat(d.path + "-wal")
	if !errors.Is(werr, os.ErrNotExist) || fi.Size() != d.stat.Size() || !fi.ModTime().Equal(d.stat.ModTime()) {
		return fmt.Errorf("claude-mem database %s changed while it was read (did claude-mem's worker start?); nothing was imported: stop claude-mem and run again", d.path)
	}
	return nil
}

type reader struct {
	*DB
	yield     func(memory.Record) error
	refuse    func(Refusal)
	progress  func(int)
	read      int
	byMemory  map[string]int64 // memory session id → sdk_sessions.id
	byContent map[string]int64 // content session id → sdk_sessions.id
	platform  map[int64]string // sdk_sessions.id → Mnemo's platform name
}

func (r *reader) row() {
	r.read++
	if r.progress != nil && r.read%1000 == 0 {
		r.progress(r.read)
	}
}

func (r *reader) query(ctx context.Context, q string, scan func(*sql.Rows) error) error {
	rows, err := r.db.QueryContext(ctx, q)
	if err != nil {
		return readError(r.path, err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := scan(rows); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return readError(r.path, err)
	}
	return nil
}

func (r *reader) sessions(ctx context.Context) error {
	t := "sdk_sessions"
	q := fmt.Sprintf(`SELECT id, %s, %s, project, %s, %s, started_at_epoch, %s, status, %s FROM sdk_sessions ORDER BY id`,
		r.contentCol, r.memoryCol, r.col(t, "platform_source"), r.col(t, "started_at"), r.col(t, "completed_at_epoch"), r.col(t, "prompt_counter"))
	return r.query(ctx, q, func(rows *sql.Rows) error {
		var (
			id                                 int64
			content, msid, project, platform   sql.NullString
			startedAt, status                  sql.NullString
			startedEpoch, completedEpoch, nPro sql.NullInt64
		)
		if err := rows.Scan(&id, &content, &msid, &project, &platform, &startedAt, &startedEpoch, &completedEpoch, &status, &nPro); err != nil {
			return readError(r.path, err)
		}
		r.row()
		if strings.TrimSpace(content.String) == "" {
			r.refuse(Refusal{"sdk_sessions", id, "no content session id"})
			return nil
		}
		s := memory.Session{
			ID:               uint64(id),
			ContentSessionID: content.String,
			Project:          privacy.Clean(project.String),
			Platform:         platformName(platform.String),
			PromptCounter:    int(nPro.Int64),
			MemorySessionID:  msid.String,
			CreatedAt:        when(startedEpoch, startedAt),
		}
		if msid.String != "" {
			s.MemorySessions = []string{msid.String}
			if _, dup := r.byMemory[msid.String]; !dup {
				r.byMemory[msid.String] = id
			}
		}
		if _, dup := r.byContent[content.String]; !dup {
			r.byContent[content.String] = id
		}
		r.platform[id] = s.Platform
		s.UpdatedAt = s.CreatedAt
		// A session of claude-mem's past is over for Mnemo: none of its
		// hooks will reach Mnemo's memory agent.
		s.Status = memory.StatusCompleted
		if status.String == "active" && s.PromptCounter > 0 {
			s.Status = memory.StatusActive
		}
		if completedEpoch.Valid && completedEpoch.Int64 > 0 {
			s.CompletedAt = epoch(completedEpoch.Int64)
			s.UpdatedAt = s.CompletedAt
		}
		return r.yield(memory.Record{Kind: "session", Session: &s})
	})
}

func (r *reader) prompts(ctx context.Context) error {
	t := "user_prompts"
	q := fmt.Sprintf(`SELECT id, %s, %s, prompt_number, prompt_text, %s, created_at_epoch FROM user_prompts ORDER BY id`,
		r.col(t, "session_db_id"), pick(r.cols[t], "content_session_id|claude_session_id"), r.col(t, "created_at"))
	return r.query(ctx, q, func(rows *sql.Rows) error {
		var (
			id                 int64
			sdb, number, ep    sql.NullInt64
			content, text, cat sql.NullString
		)
		if err := rows.Scan(&id, &sdb, &content, &number, &text, &cat, &ep); err != nil {
			return readError(r.path, err)
		}
		r.row()
		sid, ok := int64(0), false
		if sdb.Valid {
			_, ok = r.platform[sdb.Int64]
			sid = sdb.Int64
		}
		if !ok {
			sid, ok = r.byContent[content.String]
		}
		if !ok {
			r.refuse(Refusal{t, id, "its session is not in sdk_sessions"})
			return nil
		}
		clean := strings.TrimSpace(privacy.Clean(text.String))
		if clean == "" {
			r.refuse(Refusal{t, id, "empty or entirely private"})
			return nil
		}
		return r.yield(memory.Record{Kind: "prompt", Prompt: &memory.Prompt{SessionID: uint64(sid), Number: int(number.Int64), Text: clean, Time: when(ep, cat)}})
	})
}

func (r *reader) observations(ctx context.Context) error {
	t := "observations"
	q := fmt.Sprintf(`SELECT id, %s, project, type, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, created_at_epoch FROM observations ORDER BY id`,
		pick(r.cols[t], "memory_session_id|sdk_session_id"), r.col(t, "title"), r.col(t, "subtitle"), r.col(t, "narrative"), r.col(t, "text"),
		r.col(t, "facts"), r.col(t, "concepts"), r.col(t, "files_read"), r.col(t, "files_modified"), r.col(t, "prompt_number"), r.col(t, "created_at"))
	return r.query(ctx, q, func(rows *sql.Rows) error {
		var (
			id                                              int64
			msid, project, typ, title, subtitle, narr, text sql.NullString
			facts, concepts, read, modified, cat            sql.NullString
			number, ep                                      sql.NullInt64
		)
		if err := rows.Scan(&id, &msid, &project, &typ, &title, &subtitle, &narr, &text, &facts, &concepts, &read, &modified, &number, &cat, &ep); err != nil {
			return readError(r.path, err)
		}
		r.row()
		sid, ok := r.byMemory[msid.String]
		if !ok {
			r.refuse(Refusal{t, id, "its memory session is not in sdk_sessions"})
			return nil
		}
		o := memory.Observation{
			SessionID:       uint64(sid),
			MemorySessionID: msid.String,
			PromptNumber:    int(number.Int64),
			Project:         privacy.Clean(project.String),
			Type:            privacy.Clean(typ.String),
			Title:           oneLine(privacy.Clean(title.String)),
			Subtitle:        privacy.Clean(subtitle.String),
			Narrative:       privacy.Clean(narr.String),
			Facts:           cleanList(list(facts.String, false)),
			Concepts:        cleanList(list(concepts.String, true)),
			FilesRead:       cleanList(list(read.String, true)),
			FilesModified:   cleanList(list(modified.String, true)),
			Source:          memory.SourceAgent,
			Host:            r.platform[sid],
			Time:            when(ep, cat),
		}
		// Before version 8 an observation was one text: it is the
		// narrative, and its first line the title.
		legacy := privacy.Clean(text.String)
		if o.Narrative == "" {
			o.Narrative = legacy
		}
		if o.Title == "" {
			o.Title = oneLine(legacy)
		}
		if o.Title == "" {
			r.refuse(Refusal{t, id, "no title and no text (or only private text)"})
			return nil
		}
		return r.yield(memory.Record{Kind: "observation", Observation: &o})
	})
}

func (r *reader) summaries(ctx context.Context) error {
	t := "session_summaries"
	q := fmt.Sprintf(`SELECT id, %s, project, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, created_at_epoch FROM session_summaries ORDER BY id`,
		pick(r.cols[t], "memory_session_id|sdk_session_id"), r.col(t, "request"), r.col(t, "investigated"), r.col(t, "learned"), r.col(t, "completed"),
		r.col(t, "next_steps"), r.col(t, "notes"), r.col(t, "files_read"), r.col(t, "files_edited"), r.col(t, "prompt_number"), r.col(t, "created_at"))
	return r.query(ctx, q, func(rows *sql.Rows) error {
		var (
			id                                                int64
			msid, project, req, inv, learned, done, next, nts sql.NullString
			read, edited, cat                                 sql.NullString
			number, ep                                        sql.NullInt64
		)
		if err := rows.Scan(&id, &msid, &project, &req, &inv, &learned, &done, &next, &nts, &read, &edited, &number, &cat, &ep); err != nil {
			return readError(r.path, err)
		}
		r.row()
		sid, ok := r.byMemory[msid.String]
		if !ok {
			r.refuse(Refusal{t, id, "its memory session is not in sdk_sessions"})
			return nil
		}
		s := memory.Summary{
			SessionID:       uint64(sid),
			MemorySessionID: msid.String,
			PromptNumber:    int(number.Int64),
			Project:         privacy.Clean(project.String),
			Request:         privacy.Clean(req.String),
			Investigated:    privacy.Clean(inv.String),
			Learned:         privacy.Clean(learned.String),
			Completed:       privacy.Clean(done.String),
			NextSteps:       privacy.Clean(next.String),
			Notes:           privacy.Clean(nts.String),
			FilesRead:       cleanList(list(read.String, true)),
			FilesModified:   cleanList(list(edited.String, true)),
			Time:            when(ep, cat),
		}
		if strings.TrimSpace(s.Request+s.Investigated+s.Learned+s.Completed+s.NextSteps+s.Notes) == "" {
			r.refuse(Refusal{t, id, "empty or entirely private"})
			return nil
		}
		return r.yield(memory.Record{Kind: "summary", Summary: &s})
	})
}

// platformName maps claude-mem's platform_source onto Mnemo's platform
// names: its default "claude" is Claude Code.
func platformName(p string) string {
	switch p {
	case "", "claude", "claude-code":
		return "claude-code"
	}
	return p
}

// epoch reads claude-mem's epochs: milliseconds (some very old rows hold
// seconds).
func epoch(n int64) time.Time {
	if n < 1e11 {
		return time.Unix(n, 0).UTC()
	}
	return time.UnixMilli(n).UTC()
}

func when(ep sql.NullInt64, text sql.NullString) time.Time {
	if ep.Valid && ep.Int64 > 0 {
		return epoch(ep.Int64)
	}
	if t, err := time.Parse(time.RFC3339Nano, text.String); err == nil {
		return t.UTC()
	}
	return time.Time{}
}

// list reads a JSON array of strings; older rows hold a plain string
// (files: comma-separated).
func list(s string, commas bool) []string {
	s = strings.TrimSpace(s)
	if s == "" || s == "null" || s == "[]" {
		return nil
	}
	var out []string
	if err := json.Unmarshal([]byte(s), &out); err == nil {
		return out
	}
	var mixed []any
	if err := json.Unmarshal([]byte(s), &mixed); err == nil {
		for _, v := range mixed {
			if v != nil {
				out = append(out, fmt.Sprint(v))
			}
		}
		return out
	}
	if !commas {
		return []string{s}
	}
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

func cleanList(in []string) []string {
	out := in[:0]
	for _, s := range in {
		if s = strings.TrimSpace(privacy.Clean(s)); s != "" {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// oneLine is the first non-blank line of s, at most 200 bytes.
func oneLine(s string) string {
	for _, line := range strings.Split(s, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			if len(line) > 200 {
				cut := 200
				for cut > 0 && !utf8Start(line[cut]) {
					cut--
				}
				line = line[:cut] + "…"
			}
			return line
		}
	}
	return ""
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// IsSchemaError reports whether err is a refused schema.
func IsSchemaError(err error) bool {
	var se *SchemaError
	return errors.As(err, &se)
}
