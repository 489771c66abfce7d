package store

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/mnemo-dev/mnemo/memory/atomicfile"
)

// The search index is written whole to a snapshot file beside the Badger
// directory when the memory closes, so that the next start loads it in a
// fraction of the time it takes to analyse every observation again, and
// without reading every observation's record (whose pages would then stay
// resident). The snapshot is a cache, never the truth: it records the
// Badger commit timestamp the index had caught up with (asOf; snapMu makes
// the index and Badger change together), and at start the observations
// whose record or vector Badger wrote or deleted since are left out of it
// and loaded from Badger. A snapshot that is damaged,
// of another format or of another embedder is refused whole and the index
// is loaded from Badger as if there were none. Forget deletes the file
// before it returns, since it holds the forgotten observations' paths and
// term hashes; the next close writes a new one.

// snapshotFile is where the memory keeps its index snapshot: beside the
// Badger directory.
func (m *Memory) snapshotFile() string {
	if m.opts.InMemory {
		return ""
	}
	return filepath.Clean(m.opts.Dir) + ".snapshot"
}

// loadSnapshot fills the empty index from the snapshot, leaving out the
// observations that Badger changed or deleted since (they are in since,
// which the caller loads from Badger). It returns whether it loaded one;
// any problem is logged and leaves the index empty.
func (m *Memory) loadSnapshot(txn *badger.Txn) (loaded bool, since map[uint64]bool) {
	path := m.snapshotFile()
	if path == "" {
		return false, nil
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		m.log.Warn("index snapshot not read; loading the index from the store", "err", err)
		return false, nil
	}
	defer f.Close()
	var (
		scanned bool
		scanErr error
	)
	scan := func(asOf uint64) {
		if !scanned {
			scanned = true
			since, scanErr = changedSince(txn, asOf)
		}
	}
	n, asOf, err := m.index.LoadSnapshot(bufio.NewReaderSize(f, 1<<20), func(asOf, id uint64) bool {
		scan(asOf)
		return scanErr == nil && !since[id]
	})
	if err == nil {
		scan(asOf) // an empty snapshot asks nothing
		// After a failed scan every document was left out: the index is
		// empty again.
		err = scanErr
	}
	if err != nil {
		m.log.Warn("index snapshot refused; loading the index from the store", "err", err)
		return false, nil
	}
	if len(since) == 0 {
		// The file holds what the index has.
		m.snapGen.Store(m.index.Generation())
	}
	m.log.Info("index snapshot loaded", "observations", n, "stale", len(since))
	return true, since
}

// changedSince returns the observations whose record or vector Badger
// wrote or deleted after commit timestamp asOf. Badger skips the tables
// that hold nothing newer, so after a clean stop this reads only what the
// write-ahead log replayed.
func changedSince(txn *badger.Txn, asOf uint64) (map[uint64]bool, error) {
	out := map[uint64]bool{}
	for _, prefix := range [][]byte{pObs, pVector} {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix, AllVersions: true, SinceTs: asOf})
		for it.Seek(prefix); it.ValidForPrefix(prefix); it.Next() {
			k := it.Item().Key()
			if len(k) != len(prefix)+8 {
				it.Close()
				return nil, fmt.Errorf("index snapshot: a key of %q is %d bytes long", prefix, len(k))
			}
			out[binary.BigEndian.Uint64(k[len(prefix):])] = true
		}
		it.Close()
	}
	return out, nil
}

// writeSnapshot writes the index to the snapshot file (replaced whole:
// atomicfile.Write). It writes nothing while observations
// are still to be embedded or the index did not load: a snapshot must hold
// everything Badger had at its asOf.
func (m *Memory) writeSnapshot() error {
	path := m.snapshotFile()
	if path == "" || !m.indexComplete() {
		return nil
	}
	m.snapMu.Lock()
	defer m.snapMu.Unlock()
	if m.indexGap.Load() {
		return nil
	}
	// The file holds what the index has: a daemon stopped after reading
	// only is not held up writing the same 100 MB again. (Forget deletes
	// the file, and changes the index anyway.)
	gen := m.index.Generation()
	if gen != 0 && gen == m.snapGen.Load() {
		if _, err := os.Stat(path); err == nil {
			m.log.Info("index snapshot unchanged", "observations", m.index.Len())
			return nil
		}
	}
	start := time.Now()
	var asOf uint64
	_ = m.store.view(func(txn *badger.Txn) error {
		asOf = txn.ReadTs()
		return nil
	})
	err := atomicfile.Write(path, 0o600, func(f *os.File) error { return m.index.WriteSnapshot(f, asOf) })
	if err != nil {
		return fmt.Errorf("write index snapshot: %w", err)
	}
	m.snapGen.Store(gen)
	m.log.Info("index snapshot written", "observations", m.index.Len(), "took", time.Since(start).Round(time.Millisecond))
	return nil
}

// dropSnapshot deletes the snapshot file.
func (m *Memory) dropSnapshot() error {
	path := m.snapshotFile()
	if path == "" {
		return nil
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("delete index snapshot: %w", err)
	}
	return nil
}

// indexComplete reports whether the index holds every observation with its
// vector: it loaded, and nothing is waiting to be embedded.
func (m *Memory) indexComplete() bool {
	select {
	case <-m.loaded:
	default:
		return false
	}
	return !m.loadFail.Load() && m.indexing.pending.Load() == 0
}
