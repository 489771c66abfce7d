package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"

	"github.com/dgraph-io/badger/v4"
	"github.com/mnemo-dev/mnemo/memory"
)

// Backdoors for the external tests.

// GroupSync is the group commit, for its tests.
type GroupSync interface {
	Soon()
	Wait() error
	Stats() SyncStats
	Close() error
}

// NewGroupSync exposes the group commit.
func NewGroupSync(flush func() error) GroupSync { return newGroupSync(flush) }

// OpenDatabase opens the Badger database in dir on its own, without a
// Memory around it.
func OpenDatabase(dir string) (*database, error) { return openDatabase(dir, databaseOptions{}) }

// SetSchemaVersion overwrites the stored schema version.
func (s *database) SetSchemaVersion(v int) error { return s.setSchemaVersion(v) }

// Sync flushes m's database to disk.
func Sync(m *Memory) error { return m.store.Sync() }

// The value and vector codecs.
var (
	EncodeValue      = encodeValue
	DecodeValue      = decodeValue
	UnmarshalValue   = unmarshalValue
	FrameDict1       = frameDict1
	QuantizeVector   = quantizeVector
	DequantizeVector = dequantizeVector
	DecodeVector     = decodeVector
)

// Schema is the schema version stored in m.
func Schema(m *Memory) (string, error) {
	var v []byte
	err := m.store.view(func(txn *badger.Txn) error {
		item, err := txn.Get(keySchema)
		if err != nil {
			return err
		}
		v, err = item.ValueCopy(nil)
		return err
	})
	return string(v), err
}

// Downgrade rewrites every value of m as schema 1 stored it (plain JSON,
// float32 vectors) and sets schema 1: a store an older Mnemo wrote.
func Downgrade(m *Memory) error {
	return m.store.db.Update(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.DefaultIteratorOptions)
		defer it.Close()
		type kv struct{ k, v []byte }
		var sets []kv
		for it.Rewind(); it.Valid(); it.Next() {
			item := it.Item()
			b, err := item.ValueCopy(nil)
			if err != nil {
				return err
			}
			k := item.KeyCopy(nil)
			switch {
			case bytes.HasPrefix(k, pVector):
				v := dequantizeVector(b)
				b = make([]byte, 0, 4*len(v))
				for _, f := range v {
					b = binary.LittleEndian.AppendUint32(b, math.Float32bits(f))
				}
			case isFrame(b):
				if b, err = decodeValue(b); err != nil {
					return err
				}
			default:
				continue
			}
			sets = append(sets, kv{k, b})
		}
		for _, s := range sets {
			if err := txn.Set(s.k, s.v); err != nil {
				return err
			}
		}
		return txn.Set(keySchema, []byte("1"))
	})
}

// Reframing reports whether m still has schema 1 values to rewrite.
func Reframing(m *Memory) bool {
	err := m.store.view(func(txn *badger.Txn) error {
		_, err := txn.Get(keyReframe)
		return err
	})
	return err == nil
}

// EventKeyExpires is when m forgets the idempotency key k (zero: never),
// and whether m has it.
func EventKeyExpires(m *Memory, k string) (expires uint64, ok bool, err error) {
	err = m.store.view(func(txn *badger.Txn) error {
		item, err := txn.Get(key(pEventKey, []byte(k)))
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		expires, ok = item.ExpiresAt(), true
		return nil
	})
	return expires, ok, err
}

// CutItem is the summary's item cut (context.go).
var CutItem = cutItem

// Queued returns up to n events waiting in m's queue, oldest first.
func Queued(m *Memory, n int) ([]memory.Event, error) { return m.store.queued(n) }
