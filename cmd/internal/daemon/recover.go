package daemon

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/mnemo-dev/mnemo/memory/store"
	"github.com/mnemo-dev/mnemo/rpc"
)

// A damaged store (store.ErrDamaged) stops the daemon at its start, with
// the damaged file named (Open); doctor says it (VerifyStore); mnemo
// recover rescues what can be read (Recover).

// ErrDamaged matches the error of a store whose files cannot all be read.
var ErrDamaged = store.ErrDamaged

// StoreDir is the folder of a home's store.
func StoreDir(home string) string { return filepath.Join(home, "db") }

// VerifyStore checks every table and value of the store of home
// (store.Verify): nil for a sound one, an error matching ErrDamaged that
// names the damaged file, or why it could not look. No daemon may hold
// the store (the error then matches store.ErrLocked).
func VerifyStore(home string) error { return store.Verify(StoreDir(home)) }

// RecoverReport says what Recover did.
type RecoverReport struct {
	// Aside is where the damaged store now is, whole.
	Aside string
	store.SalvageReport
}

// Recover moves the store of home aside (to db.damaged-<time>, its index
// snapshot beside it), copies every key and value that can be read from
// it into a fresh store in its place (store.Salvage), and forgets a
// failed start. The next daemon opens the fresh store, rebuilds the search
// index from it and ingests the hooks' spool, as any daemon does when it
// starts. No daemon may run.
func Recover(home string, now time.Time) (RecoverReport, error) {
	dir := StoreDir(home)
	rep := RecoverReport{Aside: fmt.Sprintf("%s.damaged-%s", dir, now.UTC().Format("20060102T150405Z"))}
	if _, err := os.Stat(dir); err != nil {
		return rep, fmt.Errorf("recover: %w", err)
	}
	if err := os.Rename(dir, rep.Aside); err != nil {
		return rep, fmt.Errorf("recover: keep the damaged store aside: %w", err)
	}
	snapshot := dir + ".snapshot"
	if _, err := os.Stat(snapshot); err == nil {
		if err := os.Rename(snapshot, rep.Aside+".snapshot"); err != nil {
			return rep, fmt.Errorf("recover: keep the index snapshot aside: %w", err)
		}
	}
	var err error
	rep.SalvageReport, err = store.Salvage(rep.Aside, dir)
	if err != nil {
		return rep, fmt.Errorf("recover: %w (the damaged store is kept in %s)", err, rep.Aside)
	}
	os.Remove(rpc.StartFailPath(home))
	return rep, nil
}
