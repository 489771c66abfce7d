package daemon

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// residentKB is the resident size of this process's mappings of path, from
// /proc/self/smaps.
func residentKB(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	kb, in := 0, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 5 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":") {
			in = len(fields) >= 6 && fields[len(fields)-1] == path
			continue
		}
		if in && len(fields) >= 2 && fields[0] == "Rss:" {
			n, _ := strconv.Atoi(fields[1])
			kb += n
		}
	}
	return kb
}

// pageSink keeps the reads that make pages resident.
var pageSink int

func TestDropTablePages(t *testing.T) {
	dir := t.TempDir()
	content := bytes.Repeat([]byte("badger table page "), 1<<16) // ~1.1 MB
	mapFile := func(name string, flags int) []byte {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, content, 0o600); err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		b, err := syscall.Mmap(int(f.Fd()), 0, len(content), syscall.PROT_READ|syscall.PROT_WRITE, flags)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { syscall.Munmap(b) })
		for i := 0; i < len(b); i += 4096 {
			pageSink += int(b[i]) // touch every page
		}
		return b
	}
	table := mapFile("000001.sst", syscall.MAP_SHARED)
	private := mapFile("000002.sst", syscall.MAP_PRIVATE)
	other := mapFile("000003.vlog", syscall.MAP_SHARED)
	table[0], private[0] = 'B', 'P' // a change each: the shared one is the file's
	before := residentKB(t, filepath.Join(dir, "000001.sst"))
	if before < 1000 {
		t.Fatalf("the table is not resident before: %d kB", before)
	}
	n, err := dropTablePages(dir)
	if err != nil {
		t.Fatal(err)
	}
	if n < int64(len(content)) {
		t.Errorf("advised %d bytes, want at least the table's %d", n, len(content))
	}
	if after := residentKB(t, filepath.Join(dir, "000001.sst")); after > before/10 {
		t.Errorf("the table's pages are still resident: %d kB of %d", after, before)
	}
	if kb := residentKB(t, filepath.Join(dir, "000002.sst")); kb < 1000 {
		t.Errorf("a private mapping was dropped (%d kB left): its change would be lost", kb)
	}
	if kb := residentKB(t, filepath.Join(dir, "000003.vlog")); kb < 1000 {
		t.Errorf("a mapping that is not a table was dropped (%d kB left)", kb)
	}
	// Nothing is lost: the pages come back from the page cache.
	if table[0] != 'B' || !bytes.Equal(table[1:], content[1:]) || private[0] != 'P' || other[5] != content[5] {
		t.Error("the mappings' contents changed")
	}
}
