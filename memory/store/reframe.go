package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// The migration from schema 1 to 2 rewrites nothing at open: readers take
// both forms. The values schema 1 wrote (plain JSON, float32 vectors) are
// rewritten in the background after the start, so that an upgraded store
// gets the same bytes on disk as a new one, without holding its first
// start for the seconds that 100k records take.

// keyReframe marks a store whose schema 1 values are still to be
// rewritten; it is set by the migration and deleted when reframe is done.
var keyReframe = []byte("meta/reframe")

// reframed are the key families whose values reframe rewrites.
var reframed = [][]byte{pSession, pPrompt, pObs, pSummary, pQueue, pAudit, pVector}

// reframeBatch bounds one transaction of reframe (Badger's limit is 15%
// of a memtable).
const reframeBatch = 256 << 10

// reframe rewrites every value a schema 1 store holds in its schema 2
// form, in transactions of a few hundred records: a transaction that read
// a record a writer changed meanwhile conflicts and is done again, so no
// change is lost. Then it compacts, so that the old bytes leave the
// files. When ctx ends first the marker stays, and the next start goes on.
func (m *Memory) reframe(ctx context.Context) error {
	start := time.Now()
	dim := m.index.Embedder().Dim()
	rewritten := 0
	for _, prefix := range reframed {
		from := prefix
		for from != nil {
			var next []byte
			n := 0
			err := m.store.update(ctx, func(txn *badger.Txn) error {
				next, n = nil, 0
				type kv struct{ k, v []byte }
				var sets []kv
				size := 0
				it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
				for it.Seek(from); it.Valid(); it.Next() {
					if size >= reframeBatch {
						next = it.Item().KeyCopy(nil)
						break
					}
					item := it.Item()
					var v []byte
					err := item.Value(func(b []byte) error {
						var err error
						v, err = newForm(prefix, b, dim)
						return err
					})
					if err != nil {
						it.Close()
						return fmt.Errorf("%x: %w", item.Key(), err)
					}
					if v != nil {
						sets = append(sets, kv{item.KeyCopy(nil), v})
						size += len(v) + len(item.Key())
					}
				}
				it.Close()
				for _, s := range sets {
					if err := txn.Set(s.k, s.v); err != nil {
						return err
					}
				}
				n = len(sets)
				return nil
			})
			if err != nil {
				return fmt.Errorf("reframe: %w", err)
			}
			rewritten += n
			from = next
		}
	}
	if err := m.store.update(ctx, func(txn *badger.Txn) error { return txn.Delete(keyReframe) }); err != nil {
		return fmt.Errorf("reframe: %w", err)
	}
	if rewritten > 0 {
		if err := m.store.Compact(); err != nil {
			return fmt.Errorf("reframe: %w", err)
		}
	}
	m.log.Info("values of schema 1 rewritten", "values", rewritten, "took", time.Since(start).Round(time.Millisecond))
	return nil
}

// newForm is what schema 2 stores for the value b under a key of prefix,
// or nil when b is already in that form.
func newForm(prefix, b []byte, dim int) ([]byte, error) {
	if bytes.Equal(prefix, pVector) {
		if len(b) != 4*dim {
			return nil, nil
		}
		v, err := decodeVector(b, dim)
		if err != nil {
			return nil, err
		}
		return encodeVector(v), nil
	}
	if isFrame(b) {
		return nil, nil
	}
	f := encodeValue(b)
	if len(f) == len(b) {
		return nil, nil // not smaller: stays plain
	}
	return f, nil
}

// startReframe runs reframe in the background when the store holds
// values of schema 1.
func (m *Memory) startReframe() {
	err := m.store.view(func(txn *badger.Txn) error {
		_, err := txn.Get(keyReframe)
		return err
	})
	if errors.Is(err, badger.ErrKeyNotFound) {
		return
	}
	if err != nil {
		m.log.Error("reframe", "err", err)
		return
	}
	m.bg.Go(func() {
		<-m.loaded // after the index: the first searches come first
		if err := m.reframe(m.bgCtx); err != nil && m.bgCtx.Err() == nil {
			m.log.Error("rewrite the values of schema 1", "err", err)
		}
	})
}
