package atomicfile_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/mnemo-dev/mnemo/memory/atomicfile"
)

// A new file, and a replaced one, get the mode asked for, whatever the old
// one had.
func TestWriteFileGivesTheMode(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows keeps no Unix modes")
	}
	dir := t.TempDir()
	for _, tt := range []struct {
		name     string
		old, new fs.FileMode // old 0: no file before
	}{
		{"new, private", 0, 0o600},
		{"new, readable", 0, 0o644},
		{"replaced, narrower", 0o644, 0o600},
		{"replaced, wider", 0o600, 0o640},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, tt.name)
			if tt.old != 0 {
				if err := os.WriteFile(path, []byte("old"), tt.old); err != nil {
					t.Fatal(err)
				}
			}
			if err := atomicfile.WriteFile(path, []byte("new"), tt.new); err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != tt.new {
				t.Errorf("mode %v, want %v", fi.Mode().Perm(), tt.new)
			}
			if got, _ := os.ReadFile(path); string(got) != "new" {
				t.Errorf("the file holds %q", got)
			}
		})
	}
}

// A folder that is not there is an error that says so; nothing is made.
func TestWriteFileInAMissingFolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nope")
	err := atomicfile.WriteFile(filepath.Join(dir, "setup.json"), []byte("{}"), 0o600)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("err = %v, want fs.ErrNotExist", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the folder was made: %v", err)
	}
}

// What fill fails with comes back as it is; a fill that panics leaves no
// file either; a rename that fails (a folder in the way) removes the
// temporary file. The target never changes.
func TestAFailedWriteLeavesTheTargetAndNoTemporaryFile(t *testing.T) {
	broken := errors.New("the export failed half way")
	for _, tt := range []struct {
		name string
		fill func(f *os.File) error
	}{
		{"fill fails", func(f *os.File) error {
			f.WriteString("half")
			return broken
		}},
		{"fill panics", func(f *os.File) error {
			f.WriteString("half")
			panic(broken)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "export.jsonl")
			os.WriteFile(path, []byte("old"), 0o644)
			err := func() (err error) {
				defer func() {
					if r := recover(); r != nil {
						err = r.(error)
					}
				}()
				return atomicfile.Write(path, 0o644, tt.fill)
			}()
			if !errors.Is(err, broken) {
				t.Fatalf("err = %v, want fill's", err)
			}
			if got, _ := os.ReadFile(path); string(got) != "old" {
				t.Errorf("the target holds %q, want the old text", got)
			}
			entries(t, dir, "export.jsonl")
		})
	}
	t.Run("rename fails", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "in the way")
		if err := os.MkdirAll(filepath.Join(path, "child"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := atomicfile.WriteFile(path, []byte("new"), 0o644); err == nil {
			t.Fatal("replaced a folder that is not empty")
		}
		entries(t, dir, "in the way")
	})
}

// fill may write out of order: a header written last, at the start.
func TestWriteMaySeek(t *testing.T) {
	path := filepath.Join(t.TempDir(), "weights.bin")
	err := atomicfile.Write(path, 0o644, func(f *os.File) error {
		if _, err := f.Write([]byte("....body")); err != nil {
			return err
		}
		_, err := f.WriteAt([]byte("HEAD"), 0)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != "HEADbody" {
		t.Errorf("the file holds %q", got)
	}
}

// SyncDir syncs a folder that is there and says when it is not (on
// Windows, where it does nothing, never).
func TestSyncDir(t *testing.T) {
	dir := t.TempDir()
	if err := atomicfile.SyncDir(dir); err != nil {
		t.Fatal(err)
	}
	err := atomicfile.SyncDir(filepath.Join(dir, "nope"))
	if runtime.GOOS == "windows" {
		if err != nil {
			t.Errorf("SyncDir on Windows: %v, want nil", err)
		}
		return
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("SyncDir of a missing folder: %v, want fs.ErrNotExist", err)
	}
}

// entries fails t unless dir holds exactly names.
func entries(t *testing.T, dir string, names ...string) {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range es {
		got = append(got, e.Name())
	}
	if len(got) != len(names) {
		t.Fatalf("the folder holds %q, want %q", got, names)
	}
	for i := range got {
		if got[i] != names[i] {
			t.Fatalf("the folder holds %q, want %q", got, names)
		}
	}
}
