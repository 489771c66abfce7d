//go:build unix

package install

import "os"

// syncDir fsyncs the folder dir, so that a file created, renamed or
// removed in it stays so after a crash.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
