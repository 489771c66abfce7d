package atomicfile

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The file is synced with the new data in it while the target still holds
// the old, and the folder after the target holds the new: each sync once,
// in that order, for both ways in.
func TestWriteSyncsTheFileThenTheFolder(t *testing.T) {
	for _, tt := range []struct {
		name  string
		write func(path string, data []byte) error
	}{
		{"WriteFile", func(path string, data []byte) error { return WriteFile(path, data, 0o644) }},
		{"Write", func(path string, data []byte) error {
			return Write(path, 0o644, func(f *os.File) error { _, err := f.Write(data); return err })
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "settings.json")
			old, new := []byte("old\n"), []byte("new\n")
			if err := os.WriteFile(path, old, 0o644); err != nil {
				t.Fatal(err)
			}
			var synced []string
			hook(t, func(f *os.File) error {
				synced = append(synced, "file")
				if filepath.Dir(f.Name()) != dir || !strings.HasPrefix(filepath.Base(f.Name()), ".settings.json.tmp-") {
					t.Errorf("synced %s, not a temporary file beside %s", f.Name(), path)
				}
				if got, _ := os.ReadFile(f.Name()); !bytes.Equal(got, new) {
					t.Errorf("the file synced holds %q, want %q", got, new)
				}
				if got, _ := os.ReadFile(path); !bytes.Equal(got, old) {
					t.Errorf("the target holds %q before the file is synced", got)
				}
				return f.Sync()
			}, func(d string) error {
				synced = append(synced, "folder")
				if d != dir {
					t.Errorf("synced folder %s, want %s", d, dir)
				}
				if got, _ := os.ReadFile(path); !bytes.Equal(got, new) {
					t.Errorf("the folder is synced while the target holds %q", got)
				}
				return SyncDir(d)
			})
			if err := tt.write(path, new); err != nil {
				t.Fatal(err)
			}
			if strings.Join(synced, ",") != "file,folder" {
				t.Errorf("synced %v, want [file folder]", synced)
			}
		})
	}
}

// A file that does not sync is not renamed: the target keeps its old text
// and the temporary file goes. A folder that does not sync is said to,
// with the new file in place.
func TestASyncThatFailsIsAnError(t *testing.T) {
	broken := errors.New("disk on fire")
	t.Run("file", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "state.json")
		os.WriteFile(path, []byte("old"), 0o600)
		hook(t, func(*os.File) error { return broken }, SyncDir)
		if err := WriteFile(path, []byte("new"), 0o600); !errors.Is(err, broken) {
			t.Fatalf("err = %v, want the sync's", err)
		}
		if got, _ := os.ReadFile(path); string(got) != "old" {
			t.Errorf("the target holds %q, want the old text", got)
		}
		onlyFile(t, dir, "state.json")
	})
	t.Run("folder", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "state.json")
		hook(t, (*os.File).Sync, func(string) error { return broken })
		err := WriteFile(path, []byte("new"), 0o600)
		if !errors.Is(err, broken) || !strings.Contains(err.Error(), "is replaced") {
			t.Fatalf("err = %v, want the folder's sync, saying the file is in place", err)
		}
		if got, _ := os.ReadFile(path); string(got) != "new" {
			t.Errorf("the target holds %q, want the new text", got)
		}
		onlyFile(t, dir, "state.json")
	})
}

// hook makes Write call file and folder for its syncs until t ends.
func hook(t *testing.T, file func(*os.File) error, folder func(string) error) {
	t.Helper()
	f, d := syncFile, syncDir
	syncFile, syncDir = file, folder
	t.Cleanup(func() { syncFile, syncDir = f, d })
}

func onlyFile(t *testing.T, dir, name string) {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	if len(names) != 1 || names[0] != name {
		t.Errorf("the folder holds %v, want only %s", names, name)
	}
}

// What the folder's sync costs a small file's replacement (settings.json,
// setup.json): `go test -run - -bench . ./memory/atomicfile`.
func BenchmarkWriteFile(b *testing.B) {
	data := bytes.Repeat([]byte("{\"k\": 1}\n"), 200) // 1.8 KB
	for _, bb := range []struct {
		name   string
		folder func(string) error
	}{
		{"file and folder synced", SyncDir},
		{"file synced only", func(string) error { return nil }},
	} {
		b.Run(bb.name, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "settings.json")
			d := syncDir
			syncDir = bb.folder
			defer func() { syncDir = d }()
			for b.Loop() {
				if err := WriteFile(path, data, 0o600); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
