package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
	"github.com/mnemo-dev/mnemo/memory"
)

// SchemaVersion is the layout of keys and values this Mnemo writes. Open
// migrates older layouts and refuses newer ones.
//
//	1  plain JSON values, vectors as float32s
//	2  values in frames (codec.go), vectors as int8s with a scale (vectorcodec.go)
const SchemaVersion = 2

// Key layout. Every key starts with a short prefix; numbers are big-endian
// so that byte order is numeric order.
//
//	meta/schema                         schema version (decimal)
//	seq/<name>                          Badger sequences
//	s/<sid>                             Session
//	i/cs/<contentSessionId>             -> sid
//	i/ms/<memorySessionId>              -> sid
//	p/<sid><num:4>                      Prompt
//	o/<oid>                             Observation
//	i/op/<project>\x00<time><oid>       project+time index
//	i/of/<path>\x00<oid>                file index
//	i/oh/<hash>                         -> oid (de-duplication; also the
//	                                    hashes of a corrected one's earlier versions)
//	i/pn/<project>\x00<oid>             a project's pinned observations
//	i/ol/<project>\x00<time><oid>       what was learned and decided (learned)
//	i/os/<sid><oid>                     a session's observations (-> the
//	                                    prompt, for a fact it saw again: fold.go)
//	i/fa/<factKey:16>                   -> oid (the record of a fact: fold.go)
//	i/oz/<oid><hash>                    -> sid, prompt (a copy folded into oid)
//	i/sj/<subject hash:16>              -> oid (the newest of a subject: supersede.go)
//	m/<mid>                             Summary
//	i/mp/<project>\x00<time><mid>       project+time index of summaries
//	q/<eid>                             Event (the durable queue)
//	v/<oid>                             embedding vector (vectorcodec.go)
//	x/<xid>                             context injection audit
//	i/xs/<contentSessionId>\x00<xid>    a content session's injections
//	i/ek/<eventKey>                     result of an idempotent call (TTL)
//	meta/journal                        how far the hooks' journal was read (journal.go)
var (
	keySchema = []byte("meta/schema")
	keyEmbed  = []byte("meta/embedder")

	pSession    = []byte("s/")
	pContentIdx = []byte("i/cs/")
	pMemoryIdx  = []byte("i/ms/")
	pPrompt     = []byte("p/")
	pObs        = []byte("o/")
	pObsProject = []byte("i/op/")
	pObsFile    = []byte("i/of/")
	pObsHash    = []byte("i/oh/")
	pObsSession = []byte("i/os/")
	pObsPinned  = []byte("i/pn/")
	pObsLearned = []byte("i/ol/")
	pObsFact    = []byte("i/fa/")
	pObsFold    = []byte("i/oz/")
	pObsSubject = []byte("i/sj/")
	pSummary    = []byte("m/")
	pSumProject = []byte("i/mp/")
	pQueue      = []byte("q/")
	pVector     = []byte("v/")
	pAudit      = []byte("x/")
	pAuditSess  = []byte("i/xs/")
	pEventKey   = []byte("i/ek/")
)

// eventKeyTTL is how long an idempotency key is remembered; a back-fill's
// (memory.BackfillKeyPrefix) are remembered for good.
const eventKeyTTL = 30 * 24 * time.Hour

// seenEvent looks up the result stored under an idempotency key.
func seenEvent(txn *badger.Txn, k string, result any) (bool, error) {
	if k == "" {
		return false, nil
	}
	err := getJSON(txn, key(pEventKey, []byte(k)), result)
	if errors.Is(err, memory.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// rememberEvent stores the result of the call with an idempotency key.
func rememberEvent(txn *badger.Txn, k string, result any) error {
	if k == "" {
		return nil
	}
	b, err := marshalValue(result)
	if err != nil {
		return err
	}
	e := badger.NewEntry(key(pEventKey, []byte(k)), b)
	if !strings.HasPrefix(k, memory.BackfillKeyPrefix) {
		e = e.WithTTL(eventKeyTTL)
	}
	return txn.SetEntry(e)
}

func be64(n uint64) []byte { return binary.BigEndian.AppendUint64(nil, n) }

func key(prefix []byte, parts ...[]byte) []byte {
	n := len(prefix)
	for _, p := range parts {
		n += len(p)
	}
	k := make([]byte, 0, n)
	k = append(k, prefix...)
	for _, p := range parts {
		k = append(k, p...)
	}
	return k
}

func idKey(prefix []byte, id uint64) []byte { return key(prefix, be64(id)) }

func timeID(t time.Time, id uint64) []byte {
	b := binary.BigEndian.AppendUint64(nil, uint64(t.UnixNano()))
	return binary.BigEndian.AppendUint64(b, id)
}

// projectKey is the project+time index key of one record.
func projectKey(prefix []byte, project string, t time.Time, id uint64) []byte {
	return key(prefix, []byte(project), []byte{0}, timeID(t, id))
}

// pinKey is the key of a pinned observation in its project's pin index.
func pinKey(project string, id uint64) []byte {
	return key(pObsPinned, []byte(project), []byte{0}, be64(id))
}

func fileKey(path string, id uint64) []byte {
	return key(pObsFile, []byte(path), []byte{0}, be64(id))
}

// databaseOptions tune the Badger store.
type databaseOptions struct {
	// InMemory keeps everything in memory (tests).
	InMemory bool
	// ReadOnly opens the store to read it only: no schema check or
	// migration, no sequences.
	ReadOnly bool
	// Durable syncs every acknowledged write to disk within SyncWindow,
	// in groups (groupsync.go), so that it survives a power loss once its
	// window has passed. Without it a write survives a crash of the process
	// (Badger writes through mmap) but not of the machine.
	Durable bool
	Logger  *slog.Logger
}

// database is the Badger database that holds the truth. Exactly one process
// may open a directory.
type database struct {
	db      *badger.DB
	seqs    map[string]*badger.Sequence
	log     *slog.Logger
	durable *groupSync // nil: no syncs but Badger's own
}

// ErrLocked is returned by Open when another process owns the data
// directory.
var ErrLocked = errors.New("data directory is in use by another process")

// openDatabase opens (creating if needed) the store in dir.
func openDatabase(dir string, o databaseOptions) (*database, error) {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	opts := badger.DefaultOptions(dir).
		WithInMemory(o.InMemory).
		WithReadOnly(o.ReadOnly).
		WithLogger(badgerLogger{log}).
		WithSyncWrites(false). // see groupSync
		// Small memtables and caches for an always-on sidecar. A smaller
		// memtable also lowers the biggest transaction (15%), so the value
		// threshold must come down with it.
		WithMemTableSize(8 << 20).
		WithValueThreshold(256 << 10).
		WithNumMemtables(2).
		WithNumLevelZeroTables(2).
		WithNumLevelZeroTablesStall(4).
		// No block cache: the tables are not compressed (below), so
		// Badger reads their blocks straight from the mmap, and a cache
		// would only copy them (Badger's own advice).
		WithBlockCacheSize(0).
		WithIndexCacheSize(4 << 20).
		WithValueLogFileSize(32 << 20).
		WithBaseTableSize(2 << 20).
		WithNumCompactors(2).
		WithNumGoroutines(2).
		WithMetricsEnabled(false).
		// No block compression: the store compresses each value itself
		// (codec.go), so the files hold its frames byte for byte and "this
		// text is gone from disk" can be checked by finding and inflating
		// every frame (Frames); a compressed block would hide what it holds.
		WithCompression(options.None)
	if o.InMemory {
		opts.Dir, opts.ValueDir = "", ""
	}
	db, err := badger.Open(opts)
	if err != nil {
		if strings.Contains(err.Error(), "Cannot acquire directory lock") {
			return nil, fmt.Errorf("open store %s: %w", dir, ErrLocked)
		}
		return nil, fmt.Errorf("open store: %w", err)
	}
	s := &database{db: db, seqs: map[string]*badger.Sequence{}, log: log}
	if o.ReadOnly {
		return s, nil
	}
	if err := s.checkSchema(); err != nil {
		db.Close()
		return nil, err
	}
	for _, name := range []string{"session", "obs", "summary", "event", "audit", "outbox"} {
		seq, err := db.GetSequence([]byte("seq/"+name), 64)
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("open sequence %s: %w", name, err)
		}
		s.seqs[name] = seq
	}
	if o.Durable && !o.InMemory {
		s.durable = newGroupSync(db.Sync)
	}
	return s, nil
}

func (s *database) checkSchema() error {
	return s.db.Update(func(txn *badger.Txn) error {
		item, err := txn.Get(keySchema)
		if errors.Is(err, badger.ErrKeyNotFound) {
			return txn.Set(keySchema, []byte(strconv.Itoa(SchemaVersion)))
		}
		if err != nil {
			return err
		}
		v, err := item.ValueCopy(nil)
		if err != nil {
			return err
		}
		n, err := strconv.Atoi(string(v))
		if err != nil {
			return fmt.Errorf("%w: %q", memory.ErrSchema, v)
		}
		if n > SchemaVersion {
			return fmt.Errorf("%w: the data directory has schema %d, this Mnemo knows up to %d; upgrade Mnemo", memory.ErrSchema, n, SchemaVersion)
		}
		// Migrations from older versions go here, one step at a time.
		//
		// 1 → 2 rewrites nothing at open: readers take plain JSON and
		// float32 vectors as well as frames and int8 vectors; the old
		// values are rewritten in the background (reframe.go). The version
		// goes up at once so that an older Mnemo refuses the directory
		// instead of misreading its values.
		if n == 1 {
			if err := txn.Set(keyReframe, nil); err != nil {
				return err
			}
		}
		if n < SchemaVersion {
			return txn.Set(keySchema, []byte(strconv.Itoa(SchemaVersion)))
		}
		return nil
	})
}

// Close releases the sequences, stops the group sync and closes Badger.
func (s *database) Close() error {
	for _, seq := range s.seqs {
		_ = seq.Release()
	}
	if s.durable != nil {
		if err := s.durable.Close(); err != nil {
			s.log.Warn("the last group sync failed; closing Badger syncs again", "err", err)
		}
	}
	return s.db.Close()
}

// Sync flushes everything written so far to disk.
func (s *database) Sync() error { return s.db.Sync() }

// keyCompact is written and dropped by Compact: dropping a prefix that
// exists is Badger's one way to flush every memtable.
var keyCompact = []byte("meta/compact")

// Compact rewrites the store so that deleted records leave the files on
// disk: it flushes the memtables (their write-ahead logs are deleted), merges
// every level into one (dropping deleted and overwritten values), and
// garbage-collects the value log. Writes wait while it flushes.
func (s *database) Compact() error {
	if err := s.db.Update(func(txn *badger.Txn) error { return txn.Set(keyCompact, nil) }); err != nil {
		return fmt.Errorf("compact: %w", err)
	}
	if err := s.db.DropPrefix(keyCompact); err != nil {
		return fmt.Errorf("compact: flush: %w", err)
	}
	if err := s.db.Flatten(2); err != nil {
		return fmt.Errorf("compact: flatten: %w", err)
	}
	for {
		if err := s.db.RunValueLogGC(0.01); err != nil {
			if errors.Is(err, badger.ErrNoRewrite) || errors.Is(err, badger.ErrRejected) {
				return nil
			}
			return fmt.Errorf("compact: value log gc: %w", err)
		}
	}
}

func (s *database) next(name string) (uint64, error) {
	// Sequences start at 0; ids start at 1 so that 0 means "none".
	n, err := s.seqs[name].Next()
	if err != nil {
		return 0, fmt.Errorf("next %s id: %w", name, err)
	}
	return n + 1, nil
}

// update runs fn in a read-write transaction, retrying on conflicts with
// concurrent transactions.
func (s *database) update(ctx context.Context, fn func(txn *badger.Txn) error) error {
	for attempt := 0; ; attempt++ {
		err := s.db.Update(fn)
		if !errors.Is(err, badger.ErrConflict) || attempt >= 100 {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// updateDurable is update for writes a client is answered for: it returns
// once Badger holds the write (it survives a kill of the process) and a
// group sync that carries it to disk is on its way (it survives a power
// loss once SyncWindow has passed).
func (s *database) updateDurable(ctx context.Context, fn func(txn *badger.Txn) error) error {
	if err := s.update(ctx, fn); err != nil {
		return err
	}
	if s.durable != nil {
		s.durable.Soon()
	}
	return nil
}

// syncStats returns how the group sync kept its window; zero without one.
func (s *database) syncStats() SyncStats {
	if s.durable == nil {
		return SyncStats{}
	}
	return s.durable.Stats()
}

func (s *database) view(fn func(txn *badger.Txn) error) error { return s.db.View(fn) }

func getJSON(txn *badger.Txn, k []byte, v any) error {
	item, err := txn.Get(k)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return memory.ErrNotFound
	}
	if err != nil {
		return err
	}
	return item.Value(func(b []byte) error { return unmarshalValue(b, v) })
}

func setJSON(txn *badger.Txn, k []byte, v any) error {
	b, err := marshalValue(v)
	if err != nil {
		return err
	}
	return txn.Set(k, b)
}

func getID(txn *badger.Txn, k []byte) (uint64, error) {
	item, err := txn.Get(k)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return 0, memory.ErrNotFound
	}
	if err != nil {
		return 0, err
	}
	var id uint64
	err = item.Value(func(b []byte) error {
		if len(b) != 8 {
			return fmt.Errorf("bad id value under %q", k)
		}
		id = binary.BigEndian.Uint64(b)
		return nil
	})
	return id, err
}

// scan calls fn for each key under prefix, in order (or reverse order),
// until fn returns errStop or an error. Values are not prefetched; fn may
// read item.Value.
func scan(txn *badger.Txn, prefix []byte, reverse bool, fn func(item *badger.Item) error) error {
	opts := badger.IteratorOptions{Prefix: prefix, Reverse: reverse}
	it := txn.NewIterator(opts)
	defer it.Close()
	start := prefix
	if reverse {
		start = append(bytes.Clone(prefix), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff)
	}
	for it.Seek(start); it.ValidForPrefix(prefix); it.Next() {
		if err := fn(it.Item()); err != nil {
			if errors.Is(err, errStop) {
				return nil
			}
			return err
		}
	}
	return nil
}

// countPrefix counts keys under prefix without reading values.
func countPrefix(txn *badger.Txn, prefix []byte) int {
	it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix, PrefetchValues: false})
	defer it.Close()
	n := 0
	for it.Rewind(); it.Valid(); it.Next() {
		n++
	}
	return n
}

var errStop = errors.New("stop")

// badgerLogger sends Badger's logs to slog; its chatty INFO lines go to
// debug.
type badgerLogger struct{ log *slog.Logger }

func (l badgerLogger) Errorf(f string, a ...any) {
	l.log.Error("badger", "msg", strings.TrimSpace(fmt.Sprintf(f, a...)))
}
func (l badgerLogger) Warningf(f string, a ...any) {
	l.log.Warn("badger", "msg", strings.TrimSpace(fmt.Sprintf(f, a...)))
}
func (l badgerLogger) Infof(f string, a ...any) {
	l.log.Debug("badger", "msg", strings.TrimSpace(fmt.Sprintf(f, a...)))
}
func (l badgerLogger) Debugf(f string, a ...any) {}

// setSchemaVersion overwrites the stored schema version (migrations and
// their tests).
func (s *database) setSchemaVersion(v int) error {
	return s.db.Update(func(txn *badger.Txn) error {
		return txn.Set(keySchema, []byte(strconv.Itoa(v)))
	})
}
