package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/dgraph-io/badger/v4"
)

// keyJournal holds how far the daemon has read each file of the hooks'
// journal (adapters/hosts/hook's journal): {"<file id>": offset, …}.
var keyJournal = []byte("meta/journal")

// JournalPositions returns how far each file of the hooks' journal was
// read and its records stored, by the file's id; empty when none was.
func (m *Memory) JournalPositions() (map[string]int64, error) {
	pos := map[string]int64{}
	err := m.store.view(func(txn *badger.Txn) error {
		item, err := txn.Get(keyJournal)
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		return item.Value(func(b []byte) error { return json.Unmarshal(b, &pos) })
	})
	if err != nil {
		return nil, fmt.Errorf("journal positions: %w", err)
	}
	return pos, nil
}

// SetJournalPositions replaces the journal's positions with pos, once the
// records read up to them are stored: a record read again after a crash
// between the two finds its event key stored with it, and changes
// nothing. It is synced with the writes of the moment (SyncWindow).
func (m *Memory) SetJournalPositions(ctx context.Context, pos map[string]int64) error {
	b, err := json.Marshal(pos)
	if err != nil {
		return fmt.Errorf("journal positions: %w", err)
	}
	if err := m.store.updateDurable(ctx, func(txn *badger.Txn) error { return txn.Set(keyJournal, b) }); err != nil {
		return fmt.Errorf("journal positions: %w", err)
	}
	return nil
}
