//go:build unix

package atomicfile

import "os"

// SyncDir syncs the folder dir to the disk, so that a file created, renamed
// or removed in it stays so after a crash.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
