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
)

// The search index is written whole to a snapshot file beside the Badger
// directory when the memory closes, so that the next start loads it in a
// fraction of the time it takes to analyse every observation again (at
// 100k observations, about 0.3 s against 3.5 s). The snapshot is a cache,
// never the truth: it records the Badger commit timestamp the index had
// caught up with (asOf), and at start an observation of the snapshot is
// kept only while its record and its vector in Badger are no newer than
// that; everything else is loaded from Badger. A snapshot that is damaged,
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

// loadSnapshot fills the empty index from the snapshot, keeping the
// observations Badger has not changed since. It returns whether it loaded
// one; any problem is logged and leaves the index empty.
func (m *Memory) loadSnapshot(txn *badger.Txn) bool {
	path := m.snapshotFile()
	if path == "" {
		return false
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false
	}
	if err != nil {
		m.log.Warn("index snapshot not read; loading the index from the store", "err", err)
		return false
	}
	defer f.Close()
	// The commit timestamps of the observations and their vectors, from
	// the keys alone.
	versions := func(prefix []byte) (map[uint64]uint64, error) {
		out := map[uint64]uint64{}
		err := scan(txn, prefix, false, func(item *badger.Item) error {
			k := item.Key()
			out[binary.BigEndian.Uint64(k[len(k)-8:])] = item.Version()
			return nil
		})
		return out, err
	}
	obs, err := versions(pObs)
	if err != nil {
		m.log.Warn("index snapshot not read; loading the index from the store", "err", err)
		return false
	}
	vecs, err := versions(pVector)
	if err != nil {
		m.log.Warn("index snapshot not read; loading the index from the store", "err", err)
		return false
	}
	stale := 0
	n, err := m.index.LoadSnapshot(bufio.NewReaderSize(f, 1<<20), func(asOf, id uint64) bool {
		v, ok := obs[id]
		if ok && v <= asOf && vecs[id] <= asOf {
			return true
		}
		stale++
		return false
	})
	if err != nil {
		m.log.Warn("index snapshot refused; loading the index from the store", "err", err)
		return false
	}
	m.log.Info("index snapshot loaded", "observations", n, "stale", stale)
	return true
}

// writeSnapshot writes the index to the snapshot file (a temporary file,
// fsynced, renamed over the old one). It writes nothing while observations
// are still to be embedded or the index did not load: a snapshot must hold
// everything Badger had at its asOf.
func (m *Memory) writeSnapshot() error {
	path := m.snapshotFile()
	if path == "" || !m.indexComplete() {
		return nil
	}
	start := time.Now()
	var asOf uint64
	_ = m.store.view(func(txn *badger.Txn) error {
		asOf = txn.ReadTs()
		return nil
	})
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("write index snapshot: %w", err)
	}
	defer os.Remove(tmp.Name())
	err = m.index.WriteSnapshot(tmp, asOf)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err == nil {
		err = syncDir(filepath.Dir(path))
	}
	if err != nil {
		return fmt.Errorf("write index snapshot: %w", err)
	}
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

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
