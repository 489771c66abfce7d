package hook

import (
	"encoding/hex"
	"errors"
	"hash/fnv"
	"os"
	"path/filepath"
)

// A turn whose prompt is entirely private stores nothing: not the prompt,
// not its tool events, not its summary (docs/architecture.md §8). The
// daemon knows it from the prompt; the hooks that journal the turn's
// events without asking the daemon know it from a mark the prompt's hook
// leaves, <home>/run/private/<hash of the session id>, there while the
// session's current turn is private. They then write nothing, not even to
// the journal.

// privateTurnPath is the mark of session's private turn, named by a
// 128-bit FNV hash of the session id (a name safe on every file system).
func privateTurnPath(home, session string) string {
	h := fnv.New128a()
	h.Write([]byte(session))
	return filepath.Join(home, "run", "private", hex.EncodeToString(h.Sum(nil)))
}

// markPrivateTurn records whether session's current turn is private.
func markPrivateTurn(home, session string, private bool) error {
	path := privateTurnPath(home, session)
	if !private {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	return f.Close()
}

// inPrivateTurn reports whether session's current turn is private.
func inPrivateTurn(home, session string) bool {
	_, err := os.Lstat(privateTurnPath(home, session))
	return err == nil
}
