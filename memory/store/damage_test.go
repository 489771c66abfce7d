package store_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/store"
)

// soundStore writes n saved notes into a store in a new folder, closes it
// (its tables written) and returns the store's folder.
func soundStore(t *testing.T, n int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "db")
	m, err := store.Open(context.Background(), store.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		text := fmt.Sprintf("note %d: the invoice rounding rule number %d holds for every customer", i, i)
		if _, err := m.Save(context.Background(), memory.SaveParams{Project: "shop", Text: text}); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// scribble writes 200 random bytes into the middle of a file, or into
// its end (8 bytes before it: a table's index).
func scribble(t *testing.T, path string, end bool) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	off := max(0, len(b)/2-100)
	if end {
		off = max(0, len(b)-208)
	}
	for i := off; i < min(len(b), off+200); i++ {
		b[i] = byte(r.IntN(256))
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// A damaged file of each kind is named by Verify, and Salvage copies what
// can be read into a new store that opens and serves; how much each kind
// loses is logged (the notes are 400 in a store of a few tables).
func TestVerifyAndSalvageADamagedStore(t *testing.T) {
	const notes = 400
	sound := soundStore(t, notes)
	if err := store.Verify(sound); err != nil {
		t.Fatalf("a sound store: %v", err)
	}
	tables, _ := filepath.Glob(filepath.Join(sound, "*.sst"))
	vlogs, _ := filepath.Glob(filepath.Join(sound, "*.vlog"))
	if len(tables) == 0 || len(vlogs) == 0 {
		t.Fatalf("tables %v, value logs %v", tables, vlogs)
	}
	for _, tc := range []struct {
		kind, file string
		end        bool
	}{
		{"a table", filepath.Base(tables[0]), false},
		{"a table's index", filepath.Base(tables[0]), true},
		{"the value log", filepath.Base(vlogs[0]), false},
		{"the manifest", "MANIFEST", false},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "db")
			if err := os.CopyFS(dir, os.DirFS(sound)); err != nil {
				t.Fatal(err)
			}
			scribble(t, filepath.Join(dir, tc.file), tc.end)
			err := store.Verify(dir)
			if !errors.Is(err, store.ErrDamaged) || !strings.Contains(err.Error(), tc.file) && !strings.Contains(err.Error(), "value log") {
				t.Fatalf("Verify: %v; want the damage named, in %s", err, tc.file)
			}
			to := filepath.Join(t.TempDir(), "db")
			rep, err := store.Salvage(dir, to)
			if err != nil {
				t.Fatalf("Salvage: %v", err)
			}
			m, err := store.Open(context.Background(), store.Options{Dir: to})
			if err != nil {
				t.Fatalf("open the salvaged store: %v", err)
			}
			// The notes that can be read whole, each by its id.
			rescued := 0
			for id := range uint64(notes) {
				got, err := m.Get(context.Background(), memory.IDsParams{IDs: []uint64{id + 1}})
				if err == nil && len(got.Observations) == 1 && strings.HasPrefix(got.Observations[0].Narrative, "note ") {
					rescued++
				}
			}
			t.Logf("%s damaged: %d keys copied, %d lost, %d index keys dropped, tables read alone %t; %d of %d notes rescued; unread: %q",
				tc.kind, rep.Keys, rep.Lost, rep.Dropped, rep.Tables, rescued, notes, rep.Unread)
			if (rescued == 0 || rep.Keys == 0) && !tc.end || tc.kind == "a table" && len(rep.Unread) == 0 {
				t.Fatalf("nothing rescued, or the damage not said: %+v", rep)
			}
			// Consistent: no index key points at a record not rescued.
			doc, err := m.Doctor(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range doc.Problems {
				if p.Check == "dangling-index" {
					t.Errorf("after the rescue: %+v", p)
				}
			}
			if _, err := m.Save(context.Background(), memory.SaveParams{Project: "shop", Text: "a note after the rescue"}); err != nil {
				t.Fatalf("the salvaged store does not take a note: %v", err)
			}
			if err := m.Close(); err != nil {
				t.Fatal(err)
			}
			if err := store.Verify(to); err != nil {
				t.Fatalf("the salvaged store, used and closed, does not verify: %v", err)
			}
		})
	}
}

// Verify and Salvage leave the store they read as it was, byte for byte.
func TestVerifyAndSalvageChangeNothing(t *testing.T) {
	dir := soundStore(t, 50)
	before := map[string][]byte{}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		before[e.Name()] = b
	}
	if err := store.Verify(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Salvage(dir, filepath.Join(t.TempDir(), "db")); err != nil {
		t.Fatal(err)
	}
	entries, _ = os.ReadDir(dir)
	if len(entries) != len(before) {
		t.Errorf("%d files after, %d before", len(entries), len(before))
	}
	for name, b := range before {
		after, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(after) != string(b) {
			t.Errorf("%s changed: %v", name, err)
		}
	}
}
