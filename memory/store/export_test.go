package store

// Backdoors for the external tests.

// NewGroupSync exposes the group commit.
func NewGroupSync(flush func() error) interface{ Wait() error } { return newGroupSync(flush) }

// OpenDatabase opens the Badger database in dir on its own, without a
// Memory around it.
func OpenDatabase(dir string) (*database, error) { return openDatabase(dir, databaseOptions{}) }

// SetSchemaVersion overwrites the stored schema version.
func (s *database) SetSchemaVersion(v int) error { return s.setSchemaVersion(v) }

// Sync flushes m's database to disk.
func Sync(m *Memory) error { return m.store.Sync() }
