package viewer_test

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/mnemo-dev/mnemo/adapters/viewer"
)

// What a folder takes on disk is what its files take, not their apparent
// sizes: Badger preallocates its value log as a sparse file of 64 MB that
// holds a few kilobytes.
func TestDirBytesCountsWhatFilesTake(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("os.Stat says no allocated size on Windows")
	}
	dir := t.TempDir()
	sparse, err := os.Create(filepath.Join(dir, "000001.vlog"))
	if err != nil {
		t.Fatal(err)
	}
	if err := sparse.Truncate(64 << 20); err != nil {
		t.Fatal(err)
	}
	sparse.Close()
	if err := os.WriteFile(filepath.Join(dir, "MANIFEST"), make([]byte, 40<<10), 0o600); err != nil {
		t.Fatal(err)
	}
	got := viewer.DirBytes(dir)
	if got < 40<<10 || got > 1<<20 {
		t.Errorf("dirBytes = %d, want what the files take (40 KB and a few blocks), not 64 MB", got)
	}
	if got := viewer.DirBytes(filepath.Join(dir, "missing")); got != -1 {
		t.Errorf("a missing folder: %d, want -1", got)
	}
}
