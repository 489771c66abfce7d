// Package team shares project memory through PostgreSQL (docs/team.md):
// a daemon's Sync pushes the local outbox to the server's append-only log
// (mnemo.ops) in order, and pulls what other machines pushed, woken by
// LISTEN/NOTIFY and polling, into the local store. The local store stays
// the one that answers: nothing here is on the path of a hook.
//
// It reaches the store only through Local, which *store.Memory
// implements; it never imports the store, rpc or an adapter.
package team

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mnemo-dev/mnemo/memory"
)

// SchemaVersion is the server schema this Mnemo writes and reads.
const SchemaVersion = 1

// Channel is the LISTEN/NOTIFY channel of pushes.
const Channel = "mnemo_ops"

// Batch sizes (docs/team.md §10).
const (
	PushBatch = 200
	PullBatch = 500
	// MaxBody is the largest record pushed (the server's CHECK).
	MaxBody = 256 << 10
	// ApplyBytes bounds the records applied in one local transaction
	// (a Badger transaction may hold 15 % of a memtable).
	ApplyBytes = 256 << 10
)

// Errors.
var (
	// ErrNewerSchema: the server was set up by a newer Mnemo.
	ErrNewerSchema = errors.New("the server's Mnemo schema is newer than this Mnemo knows")
	// ErrNoSchema: the server has no schema and this role may not make it.
	ErrNoSchema = errors.New("the server has no Mnemo schema and this role may not create it")
	// ErrBadURL: the connection string does not parse.
	ErrBadURL = errors.New("not a PostgreSQL connection string")
)

// Local is what Sync needs of the local store (*store.Memory).
type Local interface {
	// Machine is this data directory's machine id.
	Machine() string
	// TeamProjects are the projects shared now.
	TeamProjects() []string
	// Outbox returns up to n queued operations, oldest first.
	Outbox(ctx context.Context, n int) ([]memory.OutboxEntry, error)
	// Pushed deletes outbox entries the server committed.
	Pushed(ctx context.Context, seqs []uint64) error
	// OutboxSignal receives a value when an operation is queued.
	OutboxSignal() <-chan struct{}
	// OutboxLen is how many operations are queued.
	OutboxLen() int
	// TeamCursor is where pulls from a server stand.
	TeamCursor(server string) (string, error)
	// Arrive applies pulled operations and stores the cursor with them.
	Arrive(ctx context.Context, server, cursor string, ops []memory.Arrival) (stored, deleted int, err error)
}

// Options configure a Sync.
type Options struct {
	// URL is the PostgreSQL connection string.
	URL string
	// Author names this person on the records pushed.
	Author string
	// Poll is the longest wait for a notification before pulling
	// anyway; 2 s when 0.
	Poll time.Duration
	// RetryMax caps the backoff after a failure; 10 s when 0.
	RetryMax time.Duration
	// PushBatch is the most operations one push transaction carries;
	// the constant PushBatch when 0.
	PushBatch int
	Logger    *slog.Logger
}

// ParseURL checks a connection string and returns its pgx config. Its
// error never holds the password.
func ParseURL(url string) (*pgx.ConnConfig, error) {
	if strings.TrimSpace(url) == "" {
		return nil, fmt.Errorf("%w: it is empty", ErrBadURL)
	}
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", ErrBadURL, scrub(err.Error(), url, ""))
	}
	if cfg.ConnectTimeout == 0 || cfg.ConnectTimeout > 10*time.Second {
		cfg.ConnectTimeout = 5 * time.Second
	}
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	cfg.RuntimeParams["application_name"] = "mnemo"
	return cfg, nil
}

// scrub removes a password (and the URL it came in) from a message.
func scrub(msg, url, password string) string {
	if url != "" {
		msg = strings.ReplaceAll(msg, url, memory.RedactURL(url))
	}
	if password != "" {
		msg = strings.ReplaceAll(msg, password, "xxxxx")
	}
	return memory.RedactURL(msg)
}

// Check connects to url, makes the schema when it is missing and the role
// may, and checks its version. It returns the server's id.
func Check(ctx context.Context, url string) (string, error) {
	cfg, err := ParseURL(url)
	if err != nil {
		return "", err
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return "", fmt.Errorf("connect to %s: %s", memory.RedactURL(url), scrub(err.Error(), url, cfg.Password))
	}
	defer conn.Close(context.WithoutCancel(ctx))
	id, err := ensureSchema(ctx, conn)
	if err != nil {
		return "", errors.New(scrub(err.Error(), url, cfg.Password))
	}
	return id, nil
}

// schema is version 1 of the server's tables (docs/team.md §3).
// The schema itself is made only when it is missing: CREATE SCHEMA IF NOT
// EXISTS needs the database's CREATE privilege even when the schema exists,
// and an owner given the schema by an administrator has no such privilege.
const schema = `
CREATE TABLE IF NOT EXISTS mnemo.meta (key text PRIMARY KEY, value text NOT NULL);
CREATE TABLE IF NOT EXISTS mnemo.ops (
  seq     bigserial PRIMARY KEY,
  tx      xid8 NOT NULL DEFAULT pg_current_xact_id(),
  op_id   text NOT NULL UNIQUE,
  op      text NOT NULL CHECK (op IN ('put', 'forget')),
  gid     text NOT NULL,
  project text NOT NULL,
  author  text NOT NULL,
  machine text NOT NULL,
  revised timestamptz NOT NULL,
  body    jsonb,
  at      timestamptz NOT NULL DEFAULT now(),
  CHECK (octet_length(body::text) <= 262144)
);
CREATE INDEX IF NOT EXISTS ops_tx ON mnemo.ops (tx, seq);
CREATE INDEX IF NOT EXISTS ops_forgotten ON mnemo.ops (gid) WHERE op = 'forget';
INSERT INTO mnemo.meta VALUES ('version', '1') ON CONFLICT DO NOTHING;
INSERT INTO mnemo.meta VALUES ('server', gen_random_uuid()::text) ON CONFLICT DO NOTHING;
`

// ensureSchema makes the schema when it is missing and checks its
// version; it returns the server's id.
func ensureSchema(ctx context.Context, conn *pgx.Conn) (string, error) {
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT to_regclass('mnemo.meta') IS NOT NULL AND to_regclass('mnemo.ops') IS NOT NULL`).Scan(&exists); err != nil {
		return "", fmt.Errorf("read the schema: %w", err)
	}
	if !exists {
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			// Two machines joining at once make it once.
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(8245190317)`); err != nil {
				return err
			}
			var hasSchema bool
			if err := tx.QueryRow(ctx, `SELECT to_regnamespace('mnemo') IS NOT NULL`).Scan(&hasSchema); err != nil {
				return err
			}
			if !hasSchema {
				if _, err := tx.Exec(ctx, `CREATE SCHEMA mnemo`); err != nil {
					return err
				}
			}
			_, err := tx.Exec(ctx, schema)
			return err
		})
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "42501" { // insufficient_privilege
			return "", fmt.Errorf("%w (%s); run `mnemo team join` once as the schema's owner, see docs/team.md", ErrNoSchema, pe.Message)
		}
		if err != nil {
			return "", fmt.Errorf("create the schema: %w", err)
		}
	}
	var version, id string
	err := conn.QueryRow(ctx, `SELECT coalesce((SELECT value FROM mnemo.meta WHERE key = 'version'), ''), coalesce((SELECT value FROM mnemo.meta WHERE key = 'server'), '')`).Scan(&version, &id)
	if err != nil {
		return "", fmt.Errorf("read the schema version: %w", err)
	}
	v, err := strconv.Atoi(version)
	if err != nil || id == "" {
		return "", fmt.Errorf("the server's mnemo.meta is not Mnemo's (version %q, server %q)", version, id)
	}
	if v > SchemaVersion {
		return "", fmt.Errorf("%w (server %d, this Mnemo %d): upgrade mnemo on this machine; nothing local is lost, pushes wait", ErrNewerSchema, v, SchemaVersion)
	}
	return id, nil
}

// Sync runs the push and pull loop of one server for one daemon.
type Sync struct {
	local Local
	opts  Options
	cfg   *pgx.ConnConfig
	log   *slog.Logger

	cancel context.CancelFunc
	done   chan struct{}

	connected atomic.Bool
	serverID  atomic.Pointer[string]
	pushed    atomic.Int64
	arrived   atomic.Int64
	skipped   atomic.Int64
	lastPush  atomic.Int64 // unix nanos
	lastPull  atomic.Int64
	mu        sync.Mutex
	lastErr   string
}

// Start checks the options and starts the loop; it connects in the
// background, and retries while the server is away.
func Start(local Local, o Options) (*Sync, error) {
	cfg, err := ParseURL(o.URL)
	if err != nil {
		return nil, err
	}
	o.Poll = cmp.Or(o.Poll, 2*time.Second)
	o.RetryMax = cmp.Or(o.RetryMax, 10*time.Second)
	o.PushBatch = cmp.Or(o.PushBatch, PushBatch)
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Sync{local: local, opts: o, cfg: cfg, log: o.Logger.With("server", memory.RedactURL(o.URL)), cancel: cancel, done: make(chan struct{})}
	go s.run(ctx)
	return s, nil
}

// Close stops the loop and closes the connection.
func (s *Sync) Close() error {
	s.cancel()
	<-s.done
	return nil
}

// Status fills in what the loop knows.
func (s *Sync) Status(st *memory.TeamStatus) {
	st.Server = memory.RedactURL(s.opts.URL)
	if id := s.serverID.Load(); id != nil {
		st.ServerID = *id
	}
	st.Author = s.opts.Author
	st.Connected = s.connected.Load()
	s.mu.Lock()
	st.LastError = s.lastErr
	s.mu.Unlock()
	st.Pushed, st.Arrived, st.Skipped = s.pushed.Load(), s.arrived.Load(), s.skipped.Load()
	if t := s.lastPush.Load(); t > 0 {
		st.LastPush = time.Unix(0, t)
	}
	if t := s.lastPull.Load(); t > 0 {
		st.LastPull = time.Unix(0, t)
	}
}

func (s *Sync) setErr(err error) {
	msg := ""
	if err != nil {
		msg = scrub(err.Error(), s.opts.URL, s.cfg.Password)
	}
	s.mu.Lock()
	changed := s.lastErr != msg
	s.lastErr = msg
	s.mu.Unlock()
	if err != nil && changed {
		s.log.Warn("team server", "err", msg)
	}
}

// run connects, and serves the connection until it fails, with backoff
// between attempts.
func (s *Sync) run(ctx context.Context) {
	defer close(s.done)
	backoff := 500 * time.Millisecond
	for ctx.Err() == nil {
		err := s.session(ctx)
		s.connected.Store(false)
		if ctx.Err() != nil {
			return
		}
		s.setErr(err)
		wait := backoff/2 + rand.N(backoff/2+1)
		backoff = min(backoff*2, s.opts.RetryMax)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		if err == nil {
			backoff = 500 * time.Millisecond
		}
	}
}

// session serves one connection: push what is queued, pull what is new,
// wait for a notification, a queued operation or the poll interval.
func (s *Sync) session(ctx context.Context) error {
	conn, err := pgx.ConnectConfig(ctx, s.cfg)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		conn.Close(cctx)
	}()
	id, err := ensureSchema(ctx, conn)
	if err != nil {
		return err
	}
	s.serverID.Store(&id)
	if _, err := conn.Exec(ctx, "LISTEN "+Channel); err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	s.connected.Store(true)
	s.setErr(nil)
	s.log.Info("team server connected", "serverId", id)
	for {
		if err := s.push(ctx, conn); err != nil {
			return fmt.Errorf("push: %w", err)
		}
		if err := s.pull(ctx, conn, id); err != nil {
			return fmt.Errorf("pull: %w", err)
		}
		if s.local.OutboxLen() > 0 {
			continue
		}
		if err := s.wait(ctx, conn); err != nil {
			return err
		}
	}
}

// wait blocks until a notification, a queued operation, the poll
// interval or the end of ctx. The connection stays usable after a
// timeout (pgx sets a deadline and clears it).
func (s *Sync) wait(ctx context.Context, conn *pgx.Conn) error {
	wctx, cancel := context.WithTimeout(ctx, s.opts.Poll)
	defer cancel()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		select {
		case <-s.local.OutboxSignal():
			cancel()
		case <-stop:
		case <-wctx.Done():
		}
	}()
	err := conn.PgConn().WaitForNotification(wctx)
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case wctx.Err() != nil && !conn.IsClosed():
		return nil
	}
	return fmt.Errorf("wait for notifications: %w", err)
}

// push sends queued operations in order, PushBatch per transaction,
// until the outbox is empty.
func (s *Sync) push(ctx context.Context, conn *pgx.Conn) error {
	machine := s.local.Machine()
	for {
		entries, err := s.local.Outbox(ctx, s.opts.PushBatch)
		if err != nil || len(entries) == 0 {
			return err
		}
		seqs := make([]uint64, 0, len(entries))
		var batch []pushRow
		for _, e := range entries {
			seqs = append(seqs, e.Seq)
			r := pushRow{opID: machine + "/" + strconv.FormatUint(e.Seq, 10), op: e.Op, gid: noNUL(e.GID), project: noNUL(e.Project), author: noNUL(s.opts.Author), revised: e.Revised}
			if e.Op == memory.OpPut {
				if e.Observation == nil {
					continue // forgotten before it was pushed: its tombstone follows
				}
				if e.Observation.Origin != nil {
					r.author = noNUL(cmp.Or(e.Observation.Origin.Author, r.author))
					e.Observation.Origin = nil
				}
				b, err := json.Marshal(e.Observation)
				if err != nil {
					return err
				}
				if len(b) > MaxBody-1024 {
					s.skipped.Add(1)
					s.log.Warn("a record is too big to share; kept here only", "gid", e.GID, "bytes", len(b))
					continue
				}
				str := string(b)
				r.body = &str
			}
			batch = append(batch, r)
		}
		n, err := s.insert(ctx, conn, machine, batch)
		var pe *pgconn.PgError
		if errors.As(err, &pe) && dataError(pe) && len(batch) > 1 {
			// One operation the server refuses must not hold up the
			// others: each alone, the refused ones skipped.
			n, err = 0, nil
			for _, r := range batch {
				k, err1 := s.insert(ctx, conn, machine, []pushRow{r})
				if errors.As(err1, &pe) && dataError(pe) {
					s.skipped.Add(1)
					s.log.Warn("the server refuses an operation; kept here only", "gid", r.gid, "op", r.op, "err", pe.Message)
					continue
				}
				if err1 != nil {
					return err1
				}
				n += k
			}
		} else if errors.As(err, &pe) && dataError(pe) {
			s.skipped.Add(1)
			s.log.Warn("the server refuses an operation; kept here only", "gid", batch[0].gid, "op", batch[0].op, "err", pe.Message)
			err = nil
		}
		if err != nil {
			return err
		}
		if err := s.local.Pushed(ctx, seqs); err != nil {
			return err
		}
		s.pushed.Add(n)
		s.lastPush.Store(time.Now().UnixNano())
	}
}

// pushRow is one operation as inserted.
type pushRow struct {
	opID, op, gid, project, author string
	revised                        time.Time
	body                           *string
}

// insert writes operations in one transaction, clears the bodies of the
// records forgotten, and notifies the listeners. It returns how many
// operations were new to the server.
func (s *Sync) insert(ctx context.Context, conn *pgx.Conn, machine string, rows []pushRow) (int64, error) {
	if len(rows) == 0 {
		return 0, nil
	}
	var (
		opIDs, ops, gids, projects, authors, forgotten []string
		revised                                        []time.Time
		bodies                                         []*string
	)
	for _, r := range rows {
		opIDs, ops, gids, projects, authors = append(opIDs, r.opID), append(ops, r.op), append(gids, r.gid), append(projects, r.project), append(authors, r.author)
		revised, bodies = append(revised, r.revised), append(bodies, r.body)
		if r.op == memory.OpForget {
			forgotten = append(forgotten, r.gid)
		}
	}
	var n int64
	err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO mnemo.ops (op_id, op, gid, project, author, machine, revised, body)
SELECT o, p, g, pr, a, $6, r, b::jsonb FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $7::timestamptz[], $8::text[]) AS t(o, p, g, pr, a, r, b)
ON CONFLICT (op_id) DO NOTHING`, opIDs, ops, gids, projects, authors, noNUL(machine), revised, bodies)
		if err != nil {
			return err
		}
		n = tag.RowsAffected()
		if len(forgotten) > 0 {
			// Forgotten text leaves the server too.
			if _, err := tx.Exec(ctx, `UPDATE mnemo.ops SET body = NULL WHERE op = 'put' AND body IS NOT NULL AND gid = ANY($1)`, forgotten); err != nil {
				return err
			}
		}
		if n > 0 {
			_, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, Channel, machine)
			return err
		}
		return nil
	})
	return n, err
}

// dataError reports whether the server refused an operation for what it
// holds (a data exception or a check), not for a failure of its own.
func dataError(pe *pgconn.PgError) bool {
	return strings.HasPrefix(pe.Code, "22") || pe.Code == "23514" // check_violation
}

func noNUL(s string) string { return strings.ReplaceAll(s, "\x00", "") }

// pull reads, per shared project, the operations other machines pushed
// after the project's cursor, from transactions that have all ended, and
// applies them.
func (s *Sync) pull(ctx context.Context, conn *pgx.Conn, server string) error {
	machine := s.local.Machine()
	for _, project := range s.local.TeamProjects() {
		key := server + "\x00" + project
		for {
			cur, err := s.local.TeamCursor(key)
			if err != nil {
				return err
			}
			tx, seq := parseCursor(cur)
			rows, err := conn.Query(ctx, `SELECT tx::text, seq, op, gid, author, machine, revised, body::text FROM mnemo.ops o
WHERE (tx, seq) > ($1::text::xid8, $2) AND tx < pg_snapshot_xmin(pg_current_snapshot())
  AND machine <> $3 AND project = $4
  AND NOT (op = 'put' AND EXISTS (SELECT 1 FROM mnemo.ops f WHERE f.op = 'forget' AND f.gid = o.gid))
ORDER BY tx, seq LIMIT $5`, tx, seq, machine, project, PullBatch)
			if err != nil {
				return err
			}
			var (
				ops   []memory.Arrival
				last  string
				read  int
				bytes int
			)
			// apply stores what was read so far with its cursor: batches of
			// at most ApplyBytes, so that a Badger transaction stays small.
			apply := func() error {
				if last == "" {
					return nil
				}
				stored, _, err := s.local.Arrive(ctx, key, last, ops)
				if err != nil {
					return err
				}
				s.arrived.Add(int64(stored))
				ops, bytes = ops[:0], 0
				return nil
			}
			for rows.Next() {
				read++
				var (
					a    = memory.Arrival{Project: project}
					rtx  string
					rseq int64
					body *string
				)
				if err := rows.Scan(&rtx, &rseq, &a.Op, &a.GID, &a.Author, &a.Machine, &a.Revised, &body); err != nil {
					rows.Close()
					return err
				}
				last = rtx + ":" + strconv.FormatInt(rseq, 10)
				if body != nil {
					var o memory.Observation
					if err := json.Unmarshal([]byte(*body), &o); err != nil {
						s.log.Warn("a pulled record does not parse; skipped", "gid", a.GID, "err", err)
						continue
					}
					a.Observation = &o
					bytes += len(*body)
				}
				ops = append(ops, a)
				if bytes >= ApplyBytes {
					if err := apply(); err != nil {
						rows.Close()
						return err
					}
				}
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			if last == "" {
				break
			}
			if err := apply(); err != nil {
				return err
			}
			if read < PullBatch {
				break // caught up
			}
		}
	}
	s.lastPull.Store(time.Now().UnixNano())
	return nil
}

// parseCursor splits "<tx>:<seq>"; "" is the start.
func parseCursor(c string) (string, int64) {
	tx, seq, ok := strings.Cut(c, ":")
	n, err := strconv.ParseInt(seq, 10, 64)
	if !ok || err != nil {
		return "0", 0
	}
	return tx, n
}
