package hook_test

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/adapters/hosts/hook"
	"github.com/mnemo-dev/mnemo/memory"
)

// appendEntry appends entry(i) to the journal at path.
func appendEntry(t testing.TB, path string, i int) {
	t.Helper()
	e := entry(i)
	if err := hook.AppendJournal(path, e.Method, e.Params, e.Time, false); err != nil {
		t.Fatal(err)
	}
}

// readAll reads the journal until it has nothing new, returning the
// event keys taken.
func readAll(t *testing.T, r *hook.JournalReader) []string {
	t.Helper()
	var keys []string
	if _, err := r.Read(func(e hook.SpoolEntry) error {
		keys = append(keys, key(t, e))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return keys
}

func keysOf(from, to int) []string {
	var keys []string
	for i := from; i < to; i++ {
		keys = append(keys, fmt.Sprintf("k%06d", i))
	}
	return keys
}

func TestJournalRoundTrip(t *testing.T) {
	home := t.TempDir()
	path := hook.JournalPath(home)
	if path != filepath.Join(home, "spool", "journal") {
		t.Errorf("JournalPath = %s", path)
	}
	r, err := hook.OpenJournalReader(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got := readAll(t, r); len(got) != 0 {
		t.Fatalf("read %v from no journal", got)
	}
	for i := range 3 {
		appendEntry(t, path, i)
	}
	for _, p := range []string{path, filepath.Dir(path)} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]os.FileMode{true: 0o700, false: 0o600}[fi.IsDir()]; fi.Mode().Perm() != want {
			t.Errorf("%s mode %v, want %v", p, fi.Mode().Perm(), want)
		}
	}
	var got []hook.SpoolEntry
	if _, err := r.Read(func(e hook.SpoolEntry) error { got = append(got, e); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("read %d records, want 3", len(got))
	}
	for i, e := range got {
		want := entry(i)
		if e.Method != want.Method || string(e.Params) != string(want.Params) || !e.Time.Equal(want.Time) {
			t.Errorf("record %d = %+v, want %+v", i, e, want)
		}
	}
	if got := readAll(t, r); len(got) != 0 {
		t.Fatalf("read %v again", got)
	}
	if r.Unread() != 0 {
		t.Errorf("Unread = %d after reading everything", r.Unread())
	}

	// A new reader from the positions takes only what came after.
	pos := r.Positions()
	if len(pos) != 1 {
		t.Fatalf("positions %v, want one file", pos)
	}
	appendEntry(t, path, 3)
	if r.Unread() == 0 {
		t.Error("Unread = 0 with a record written")
	}
	r2, err := hook.OpenJournalReader(path, pos)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	if got := readAll(t, r2); strings.Join(got, ",") != "k000003" {
		t.Fatalf("a reader from the positions read %v, want k000003", got)
	}
	// Without the positions, everything again (the daemon's event keys make
	// that harmless).
	r3, err := hook.OpenJournalReader(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r3.Close()
	if got := readAll(t, r3); len(got) != 4 {
		t.Fatalf("a reader without positions read %v, want 4", got)
	}
}

// A take that fails stops the read at its record, which the next Read
// gives again.
func TestJournalTakeErrorStopsAtTheRecord(t *testing.T) {
	path := hook.JournalPath(t.TempDir())
	for i := range 4 {
		appendEntry(t, path, i)
	}
	r, err := hook.OpenJournalReader(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	boom := errors.New("store unavailable")
	var got []string
	n, err := r.Read(func(e hook.SpoolEntry) error {
		if key(t, e) == "k000002" {
			return boom
		}
		got = append(got, key(t, e))
		return nil
	})
	if !errors.Is(err, boom) || n != 2 {
		t.Fatalf("Read = %d, %v; want 2 and the take's error", n, err)
	}
	if got := readAll(t, r); strings.Join(got, ",") != "k000002,k000003" {
		t.Fatalf("after the error, read %v", got)
	}
}

// A hook killed in the middle of its write leaves part of a record; the
// records written after it are read, the part is skipped and reported. A
// record still being written (no newline yet) waits for its end.
func TestJournalSkipsARecordCutShort(t *testing.T) {
	path := hook.JournalPath(t.TempDir())
	appendEntry(t, path, 0)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.WriteString("\n{\"method\":\"mnemo/postToolUse\",\"params\":{\"contentSessionId\":\"s\",\"too")
	appendEntry(t, path, 1)
	r, err := hook.OpenJournalReader(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var got []string
	_, err = r.Read(func(e hook.SpoolEntry) error { got = append(got, key(t, e)); return nil })
	if !errors.Is(err, hook.ErrCorruptSpool) {
		t.Errorf("Read's error = %v, want ErrCorruptSpool", err)
	}
	if strings.Join(got, ",") != "k000000,k000001" {
		t.Fatalf("read %v, want k000000,k000001", got)
	}

	// Half a record at the end: a hook writing it now.
	f.WriteString("\n{\"method\":\"mnemo/postToolUse\",\"params\":{\"contentSessionId\":\"s\",")
	if got := readAll(t, r); len(got) != 0 {
		t.Fatalf("read %v from a record still being written", got)
	}
	f.WriteString("\"toolName\":\"Bash\",\"eventKey\":\"k000002\"},\"time\":\"2026-01-02T03:04:05Z\"}\n")
	if got := readAll(t, r); strings.Join(got, ",") != "k000002" {
		t.Fatalf("read %v once the record was whole, want k000002", got)
	}
}

// Hooks in many processes at once (here goroutines, each its own open
// and write as a hook process does) never interleave, and each writer's
// records come out in its order.
func TestJournalConcurrentAppenders(t *testing.T) {
	path := hook.JournalPath(t.TempDir())
	r, err := hook.OpenJournalReader(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	const writers, each = 12, 40
	var wg sync.WaitGroup
	stop := make(chan struct{})
	readerDone := make(chan map[string][]int)
	go func() {
		// The daemon reads and rotates (after a few KB) while they write.
		seen := map[string][]int{}
		take := func(e hook.SpoolEntry) error {
			var w string
			var i int
			fmt.Sscanf(strings.ReplaceAll(key(t, e), "-", " "), "%s %d", &w, &i)
			seen[w] = append(seen[w], i)
			return nil
		}
		for {
			if _, err := r.Read(take); err != nil {
				t.Error(err)
			}
			if err := r.Release(r.Mark()); err != nil {
				t.Error(err)
			}
			if _, err := r.Rotate(8 << 10); err != nil {
				t.Error(err)
			}
			select {
			case <-stop:
				for {
					if _, err := r.Read(take); err != nil {
						t.Error(err)
					}
					if err := r.Release(r.Mark()); err != nil {
						t.Error(err)
					}
					if old, _ := filepath.Glob(path + ".old-*"); len(old) == 0 && r.Unread() == 0 {
						break
					}
				}
				readerDone <- seen
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				params := fmt.Sprintf(`{"contentSessionId":"s%d","toolName":"Bash","toolResponse":%q,"eventKey":"w%02d-%d"}`, w, strings.Repeat("x", 100*i), w, i)
				if err := hook.AppendJournal(path, memory.MethodPostToolUse, []byte(params), time.Now(), false); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	seen := <-readerDone
	if len(seen) != writers {
		t.Fatalf("records of %d writers, want %d", len(seen), writers)
	}
	for w, is := range seen {
		if len(is) != each {
			t.Errorf("writer %s: %d records, want %d", w, len(is), each)
		}
		for k, i := range is {
			if i != k {
				t.Errorf("writer %s: record %d is its %d", w, k, i)
				break
			}
		}
	}
	// Rotated files are gone once finished.
	left, _ := filepath.Glob(path + ".*")
	if len(left) != 0 {
		t.Errorf("files left beside the journal: %v", left)
	}
}

// A rotated file a hook still writes (it holds its shared lock) is read
// but not finished; the new journal file is read meanwhile; once the hook
// is done, the rotated file is finished and removed.
func TestJournalRotationWaitsForTheLastWriter(t *testing.T) {
	path := hook.JournalPath(t.TempDir())
	appendEntry(t, path, 0)
	r, err := hook.OpenJournalReader(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	readAll(t, r)
	held := holdShared(t, path) // a hook between its lock and its write
	if ok, err := r.Rotate(1); !ok || err != nil {
		t.Fatalf("Rotate = %v, %v", ok, err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the journal is still at its path after the rotation: %v", err)
	}
	appendEntry(t, path, 1) // a new file
	if _, err := held.WriteString(recordLine(t, 2)); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, r); strings.Join(got, ",") != "k000002,k000001" {
		t.Fatalf("read %v, want the late record of the old file, then the new file's", got)
	}
	if len(r.Positions()) != 2 {
		t.Fatalf("positions %v: the rotated file is finished while a hook holds it", r.Positions())
	}
	if ok, _ := r.Rotate(1); ok {
		t.Fatal("rotated again while a rotated file is not finished")
	}
	held.Close()
	if got := readAll(t, r); len(got) != 0 {
		t.Fatalf("read %v again", got)
	}
	if old, _ := filepath.Glob(path + ".old-*"); len(old) != 1 {
		t.Fatalf("the finished rotated file was removed before its records were released: %v", old)
	}
	if err := r.Release(r.Mark()); err != nil {
		t.Fatal(err)
	}
	if len(r.Positions()) != 1 {
		t.Fatalf("positions %v: the rotated file is not finished", r.Positions())
	}
	if old, _ := filepath.Glob(path + ".old-*"); len(old) != 0 {
		t.Fatalf("rotated file left: %v", old)
	}

	// A reader that stopped in the middle of a rotation (the daemon killed)
	// finishes it first at its next start, from where it was.
	appendEntry(t, path, 3)
	readAll(t, r)
	if ok, err := r.Rotate(1); !ok || err != nil {
		t.Fatalf("Rotate = %v, %v", ok, err)
	}
	held = holdShared(t, path+".old-"+onlyID(t, path, r))
	held.WriteString(recordLine(t, 4))
	appendEntry(t, path, 5)
	pos := r.Positions()
	r.Close()
	held.Close()
	r2, err := hook.OpenJournalReader(path, pos)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	if got := readAll(t, r2); strings.Join(got, ",") != "k000004,k000005" {
		t.Fatalf("the next reader read %v, want k000004,k000005", got)
	}
	if err := r2.Release(r2.Mark()); err != nil {
		t.Fatal(err)
	}
	if old, _ := filepath.Glob(path + ".old-*"); len(old) != 0 {
		t.Fatalf("rotated file left: %v", old)
	}
}

// onlyID is the id of the one rotated file of r, the journal at path.
func onlyID(t *testing.T, path string, r *hook.JournalReader) string {
	t.Helper()
	for id := range r.Positions() {
		if _, err := os.Stat(path + ".old-" + id); err == nil {
			return id
		}
	}
	t.Fatal("no rotated file")
	return ""
}

// recordLine is entry(i) as the journal's record.
func recordLine(t *testing.T, i int) string {
	t.Helper()
	e := entry(i)
	return fmt.Sprintf("\n{\"method\":%q,\"params\":%s,\"time\":%q}\n", e.Method, e.Params, e.Time.Format(time.RFC3339Nano))
}

// The journal is created whole: whichever of many racing hooks makes it,
// it starts with its header, and the leftovers of a hook killed while
// creating it are cleaned up by the reader.
func TestJournalCreatedWithItsHeader(t *testing.T) {
	dir := t.TempDir()
	path := hook.JournalPath(dir)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() { appendEntry(t, path, i) })
	}
	wg.Wait()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	first, _ := bufio.NewReader(f).ReadString('\n')
	f.Close()
	if !strings.HasPrefix(first, `{"mnemoJournal":1,"id":"`) {
		t.Fatalf("first line %q, want the header", first)
	}
	stale := path + ".new-0123"
	os.WriteFile(stale, []byte("{}\n"), 0o600)
	old := time.Now().Add(-time.Hour)
	os.Chtimes(stale, old, old)
	r, err := hook.OpenJournalReader(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got := readAll(t, r); len(got) != 8 {
		t.Fatalf("read %d records, want 8", len(got))
	}
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a stale temporary journal is left: %v", err)
	}
}

// Released records leave the journal: their bytes are zeros, and a reader
// that starts over from the file's beginning skips them without a word.
func TestJournalReleaseZeroesWhatWasTaken(t *testing.T) {
	path := hook.JournalPath(t.TempDir())
	for i := range 5 {
		appendEntry(t, path, i)
	}
	r, err := hook.OpenJournalReader(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	readAll(t, r)
	if !r.Pending() {
		t.Fatal("nothing pending after a read")
	}
	m := r.Mark()
	appendEntry(t, path, 5) // after the mark: kept
	if err := r.Release(m); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if strings.Contains(string(data), fmt.Sprintf("k%06d", i)) {
			t.Errorf("released record k%06d is still in the journal", i)
		}
	}
	if !strings.Contains(string(data), "k000005") || !strings.HasPrefix(string(data), `{"mnemoJournal":1`) {
		t.Errorf("the header or the record after the mark is gone: %q", data)
	}
	r2, err := hook.OpenJournalReader(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	var got []string
	if _, err := r2.Read(func(e hook.SpoolEntry) error { got = append(got, key(t, e)); return nil }); err != nil {
		t.Fatalf("a reader over released records: %v", err)
	}
	if strings.Join(got, ",") != "k000005" {
		t.Fatalf("read %v, want k000005", got)
	}
}

// A journal removed by someone else while the reader holds it is finished
// from what it holds, and the new journal a hook makes at the path is
// never removed with it.
func TestJournalRemovedUnderTheReader(t *testing.T) {
	path := hook.JournalPath(t.TempDir())
	appendEntry(t, path, 0)
	r, err := hook.OpenJournalReader(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	readAll(t, r)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, r); len(got) != 0 {
		t.Fatalf("read %v", got)
	}
	appendEntry(t, path, 1) // a new journal
	if got := readAll(t, r); strings.Join(got, ",") != "k000001" {
		t.Fatalf("read %v, want k000001", got)
	}
	if err := r.Release(r.Mark()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the new journal was removed: %v", err)
	}
	appendEntry(t, path, 2)
	if got := readAll(t, r); strings.Join(got, ",") != "k000002" {
		t.Fatalf("read %v, want k000002", got)
	}
}
