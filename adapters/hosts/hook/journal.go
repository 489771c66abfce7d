package hook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mnemo-dev/mnemo/memory/atomicfile"
)

// The journal is how a hook hands an event over to the daemon without
// waiting for it (docs/architecture.md §2): <home>/spool/journal, a file
// the hooks append to and the daemon reads from where it left off.
//
// A record is one SpoolEntry as a line of JSON with a newline before it
// and after it, written with one write(2) on a file opened for appending,
// so that concurrent hooks never interleave and a record cut short by a
// hook killed in the middle of its write is a line of its own, which the
// reader skips. A hook holds a shared lock on the file while it writes;
// the daemon rotates the journal by renaming it to journal.old-<id> and
// finishes reading that file once it can lock it exclusively (no hook
// writes it any more). The first line of a journal file names it
// ({"mnemoJournal":1,"id":…}): the daemon keeps how far it read each file
// by that id. A journal file is created whole under a temporary name
// (journal.new-…) and linked into place, so it always starts with its
// header.
//
// Nothing in it is private: the hook strips and redacts what it sends
// before it writes (Translate), as it does before a call.

// JournalPath returns the journal of the Mnemo home directory home:
// <home>/spool/journal.
func JournalPath(home string) string {
	return filepath.Join(home, "spool", "journal")
}

// Journal file names beside the live one.
const (
	journalOld = ".old-" // a rotated journal file the daemon is finishing
	journalNew = ".new-" // a journal file being created
)

// MaxJournalRecord bounds one record of the journal; the hook cuts the
// event's tool JSON to fit well within it (ShrinkPayload). A longer line is
// skipped by the reader as corrupt.
const MaxJournalRecord = 4 << 20

// journalHeader is the first line of every journal file.
type journalHeader struct {
	Version int    `json:"mnemoJournal"`
	ID      string `json:"id"`
}

// AppendJournal appends the call method(params) at time at to the journal
// at path as one record, and returns once the operating system holds it:
// it survives a kill of any process from then on. With sync it also
// fsyncs the file, so that it survives a power loss (the hook does when no
// daemon runs to sync it within its window). params must be one JSON value
// (as json.Marshal writes it).
func AppendJournal(path, method string, params []byte, at time.Time, sync bool) error {
	rec, err := journalRecord(method, params, at)
	if err != nil {
		return err
	}
	for range 100 {
		f, err := openJournalAppend(path)
		if errors.Is(err, os.ErrNotExist) {
			created, cerr := createJournal(path)
			if cerr != nil {
				return fmt.Errorf("journal: %w", cerr)
			}
			if created && sync {
				if err := atomicfile.SyncDir(filepath.Dir(path)); err != nil {
					return fmt.Errorf("journal: fsync folder: %w", err)
				}
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("journal: %w", err)
		}
		done, err := f.append(path, rec, sync)
		f.close()
		if done || err != nil {
			return err
		}
		// The daemon is rotating this file: the next open finds the new
		// one (or none, and creates it).
		time.Sleep(time.Millisecond)
	}
	return fmt.Errorf("journal: %s keeps being replaced", path)
}

// journalRecord encodes one record: a newline, the entry, a newline.
func journalRecord(method string, params []byte, at time.Time) ([]byte, error) {
	if method == "" {
		return nil, errors.New("journal: a record without a method")
	}
	if len(params) == 0 {
		return nil, errors.New("journal: a record without params")
	}
	if bytes.IndexByte(params, '\n') >= 0 || bytes.IndexByte(params, '\r') >= 0 {
		var b bytes.Buffer
		if err := json.Compact(&b, params); err != nil {
			return nil, fmt.Errorf("journal: params: %w", err)
		}
		params = b.Bytes()
	}
	rec := make([]byte, 0, len(params)+len(method)+64)
	rec = append(rec, "\n{\"method\":"...)
	rec = appendString(rec, method)
	rec = append(rec, ",\"params\":"...)
	rec = append(rec, params...)
	rec = append(rec, ",\"time\":\""...)
	rec = at.UTC().AppendFormat(rec, time.RFC3339Nano)
	rec = append(rec, "\"}\n"...)
	if len(rec) > MaxJournalRecord {
		return nil, fmt.Errorf("journal: a record of %d bytes, over %d", len(rec), MaxJournalRecord)
	}
	return rec, nil
}

// createJournal creates the journal file at path with its header, unless
// one is there, and reports whether it did: it writes the header to a new
// temporary file and links that into place.
func createJournal(path string) (bool, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return false, err
	}
	tmp := path + journalNew + NewEventKey()
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return false, err
	}
	defer os.Remove(tmp)
	head, _ := json.Marshal(journalHeader{Version: 1, ID: NewEventKey()})
	_, err = f.Write(append(head, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return false, err
	}
	if err := os.Link(tmp, path); err != nil {
		if errors.Is(err, os.ErrExist) {
			return false, nil // another hook made it first
		}
		return false, err
	}
	return true, nil
}

// JournalReader takes the records of the journal in the order they were
// written: the daemon's side. One goroutine at a time.
type JournalReader struct {
	path  string
	files []*journalFile // oldest first: rotated ones being finished, then the live one
	buf   []byte
}

// journalFile is one journal file open for reading.
type journalFile struct {
	f    *os.File
	name string // its path now
	id   string
	off  int64 // read and taken up to here
	// released is where the bytes released (Release) end: before it, the
	// file holds zeros.
	released int64
	// rotated: renamed away (or replaced): read until no hook can write it,
	// then done, and removed once released.
	rotated, done bool
}

// OpenJournalReader opens the journal at path for reading: any rotated
// file a previous reader left (oldest first), then the live one, each
// from the offset that offsets holds for its id (0 when it holds none).
// The live file may not exist yet: Read looks for it every time. Leftover
// temporary files of hooks killed while creating the journal are removed.
func OpenJournalReader(path string, offsets map[string]int64) (*JournalReader, error) {
	r := &JournalReader{path: path}
	dir, base := filepath.Split(path)
	des, err := os.ReadDir(filepath.Clean(dir))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("journal: %w", err)
	}
	type old struct {
		name string
		mod  time.Time
	}
	var olds []old
	for _, de := range des {
		name := de.Name()
		switch {
		case strings.HasPrefix(name, base+journalOld):
			if fi, err := de.Info(); err == nil {
				olds = append(olds, old{filepath.Join(dir, name), fi.ModTime()})
			}
		case strings.HasPrefix(name, base+journalNew):
			if fi, err := de.Info(); err == nil && time.Since(fi.ModTime()) > time.Minute {
				os.Remove(filepath.Join(dir, name))
			}
		}
	}
	slices.SortFunc(olds, func(a, b old) int { return a.mod.Compare(b.mod) })
	for _, o := range olds {
		jf, err := openJournalFile(o.name, offsets)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			r.Close()
			return nil, err
		}
		jf.rotated = true
		r.files = append(r.files, jf)
	}
	if err := r.findLive(offsets); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// openJournalFile opens a journal file and reads its header.
func openJournalFile(name string, offsets map[string]int64) (*journalFile, error) {
	f, err := openFile(name, os.O_RDWR, 0) // Release writes
	if err != nil {
		return nil, err
	}
	jf := &journalFile{f: f, name: name}
	head := make([]byte, 256)
	n, _ := f.ReadAt(head, 0)
	if i := bytes.IndexByte(head[:n], '\n'); i > 0 {
		var h journalHeader
		if json.Unmarshal(head[:i], &h) == nil && h.Version > 0 && h.ID != "" {
			jf.id = h.ID
			jf.off = int64(i + 1)
		}
	}
	jf.released = jf.off
	if off, ok := offsets[jf.id]; ok && jf.id != "" && off > jf.off {
		// Taken before, and maybe not released: Release zeroes it again.
		jf.off = off
	}
	return jf, nil
}

// findLive opens the file now at the reader's path when it is not the
// live one held: the first, or a new one after a rotation. A live file
// held that is no longer at the path (removed or replaced by someone
// else) is finished as a rotated one.
func (r *JournalReader) findLive(offsets map[string]int64) error {
	now, err := os.Stat(r.path)
	if errors.Is(err, os.ErrNotExist) {
		if live := r.live(); live != nil {
			// Removed by someone else: finished as a rotated file, never
			// removed by name (a hook may make a new one there).
			live.rotated, live.name = true, ""
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if live := r.live(); live != nil {
		held, err := live.f.Stat()
		if err != nil {
			return fmt.Errorf("journal: %w", err)
		}
		if os.SameFile(held, now) {
			return nil
		}
		live.rotated = true
		live.name = "" // not ours to remove: the path holds another file
	}
	jf, err := openJournalFile(r.path, offsets)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	r.files = append(r.files, jf)
	return nil
}

// live is the live file held, if any.
func (r *JournalReader) live() *journalFile {
	if n := len(r.files); n > 0 && !r.files[n-1].rotated {
		return r.files[n-1]
	}
	return nil
}

// Read calls take for every complete record written since the last Read,
// in order, and moves past each one take returns nil for. An error from
// take stops the read at that record: the next Read starts with it again.
// Records that do not decode (a write cut short by a killed hook) are
// skipped; then err is a *CorruptSpoolError (errors.Is ErrCorruptSpool),
// and n and the positions are valid too. Read also finishes rotated files:
// once no hook can write one any more and all of it is taken, it is
// removed.
func (r *JournalReader) Read(take func(SpoolEntry) error) (n int, err error) {
	if err := r.findLive(nil); err != nil {
		return 0, err
	}
	var corrupt CorruptSpoolError
	for _, jf := range r.files {
		if jf.done {
			continue
		}
		// A rotated file is finished once it is locked: no hook holds its
		// shared lock, and any hook that takes one later sees that the
		// file is no longer the journal and writes the new one.
		locked := jf.rotated && tryLockExclusive(jf.f)
		k, err := r.readFile(jf, take, &corrupt, locked)
		n += k
		if err != nil {
			return n, err
		}
		// A hook still writing a rotated file holds it up, not the newer
		// files: the hooks of one session run one after the other, so a
		// later event of its session is not in them yet.
		jf.done = locked
	}
	if len(corrupt.Lines) > 0 {
		return n, &corrupt
	}
	return n, nil
}

// readFile takes the complete records of jf past its offset. With final
// (no hook writes the file any more), a last line without its newline is
// a record cut short: it is reported and skipped.
func (r *JournalReader) readFile(jf *journalFile, take func(SpoolEntry) error, corrupt *CorruptSpoolError, final bool) (int, error) {
	n := 0
	for {
		if cap(r.buf) < 1<<20 {
			r.buf = make([]byte, 1<<20)
		}
		buf := r.buf[:cap(r.buf)]
		got, err := jf.f.ReadAt(buf, jf.off)
		if err != nil && !errors.Is(err, io.EOF) {
			return n, fmt.Errorf("journal: %w", err)
		}
		data := buf[:got]
		if len(data) > 0 && data[0] == 0 {
			// Released records (zeroed) read again by a reader that did
			// not know how far they went.
			z := 0
			for z < len(data) && data[z] == 0 {
				z++
			}
			jf.off += int64(z)
			continue
		}
		end := bytes.LastIndexByte(data, '\n')
		if end < 0 {
			switch {
			case got == len(buf) && len(buf) < MaxJournalRecord+2:
				// One record longer than the buffer: grow it.
				r.buf = make([]byte, min(2*len(buf), MaxJournalRecord+2))
				continue
			case got == len(buf):
				// A line over the bound: skip to its end.
				skip, err := r.skipLine(jf)
				corrupt.Lines = append(corrupt.Lines, fmt.Sprintf("%s:@%d: a line over %d bytes", filepath.Base(jf.f.Name()), jf.off, MaxJournalRecord))
				jf.off += skip
				if err != nil {
					return n, err
				}
				continue
			case final && got > 0:
				corrupt.Lines = append(corrupt.Lines, fmt.Sprintf("%s:@%d: cut short (%d bytes, no newline)", filepath.Base(jf.f.Name()), jf.off, got))
				jf.off += int64(got)
			}
			return n, nil
		}
		lines := data[:end+1]
		for len(lines) > 0 {
			i := bytes.IndexByte(lines, '\n')
			line := lines[:i]
			if len(bytes.TrimSpace(line)) > 0 {
				e, ok := decodeRecord(line)
				if !ok {
					corrupt.Lines = append(corrupt.Lines, fmt.Sprintf("%s:@%d: not a record (%d bytes)", filepath.Base(jf.f.Name()), jf.off, len(line)))
				} else if err := take(e); err != nil {
					return n, err
				} else {
					n++
				}
			}
			jf.off += int64(i + 1)
			lines = lines[i+1:]
		}
	}
}

// skipLine returns how far the next newline past jf's offset is, the
// newline included (to the end of the file when there is none).
func (r *JournalReader) skipLine(jf *journalFile) (int64, error) {
	var skipped int64
	for {
		got, err := jf.f.ReadAt(r.buf, jf.off+skipped)
		if i := bytes.IndexByte(r.buf[:got], '\n'); i >= 0 {
			return skipped + int64(i+1), nil
		}
		skipped += int64(got)
		if errors.Is(err, io.EOF) {
			return skipped, nil
		}
		if err != nil {
			return skipped, fmt.Errorf("journal: %w", err)
		}
	}
}

// decodeRecord decodes one record's line; a header line is not a record.
func decodeRecord(line []byte) (SpoolEntry, bool) {
	var e SpoolEntry
	if err := json.Unmarshal(line, &e); err != nil || e.Method == "" || len(e.Params) == 0 {
		return SpoolEntry{}, false
	}
	return e, true
}

// Positions returns how far each open journal file has been taken, by
// its id: what the daemon keeps, with the records taken, to start from
// after a restart.
func (r *JournalReader) Positions() map[string]int64 {
	pos := make(map[string]int64, len(r.files))
	for _, jf := range r.files {
		if jf.id != "" {
			pos[jf.id] = jf.off
		}
	}
	return pos
}

// A JournalMark is what was taken from the journal at one moment (Mark),
// to Release once it is stored for good.
type JournalMark struct {
	taken []journalTaken
}

type journalTaken struct {
	jf   *journalFile
	off  int64
	done bool
}

// Mark returns what was taken so far.
func (r *JournalReader) Mark() JournalMark {
	var m JournalMark
	for _, jf := range r.files {
		m.taken = append(m.taken, journalTaken{jf, jf.off, jf.done})
	}
	return m
}

// Pending reports whether records were taken and not released yet.
func (r *JournalReader) Pending() bool {
	for _, jf := range r.files {
		if jf.done || jf.off > jf.released {
			return true
		}
	}
	return false
}

// Release lets go of what m says was taken, once the records are stored
// and synced to disk: their bytes in the journal are zeroed (a hole
// punched where the file system can, else written over with zeros), and
// rotated files finished are removed, so that the journal keeps an event
// no longer than it takes the daemon to store it. Until then it is the
// event's copy that survives a power loss.
func (r *JournalReader) Release(m JournalMark) error {
	var errs []error
	for _, t := range m.taken {
		i := slices.Index(r.files, t.jf)
		if i < 0 {
			continue // released before
		}
		jf := t.jf
		if t.done {
			jf.f.Close()
			if jf.name != "" {
				if err := os.Remove(jf.name); err != nil && !errors.Is(err, os.ErrNotExist) {
					errs = append(errs, fmt.Errorf("journal: %w", err))
				}
			}
			r.files = slices.Delete(r.files, i, i+1)
			continue
		}
		if t.off > jf.released {
			if err := zeroRange(jf.f, jf.released, t.off-jf.released); err != nil {
				errs = append(errs, fmt.Errorf("journal: release: %w", err))
				continue
			}
			jf.released = t.off
		}
	}
	return errors.Join(errs...)
}

// Unread returns how many bytes the journal files hold past what was
// taken: records written and not yet read, and one being written.
func (r *JournalReader) Unread() int64 {
	var n int64
	for _, jf := range r.files {
		if jf.done {
			continue
		}
		if fi, err := jf.f.Stat(); err == nil && fi.Size() > jf.off {
			n += fi.Size() - jf.off
		}
	}
	if r.live() == nil {
		if fi, err := os.Stat(r.path); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// Rotate renames the live journal file away once at least limit bytes of
// it are taken and nothing past them is written, and no rotated file is
// still being finished: hooks then start a new file, and Read finishes
// the old one. It reports whether it rotated.
func (r *JournalReader) Rotate(limit int64) (bool, error) {
	live := r.live()
	if live == nil || len(r.files) > 1 || live.off < limit || live.id == "" {
		return false, nil
	}
	fi, err := live.f.Stat()
	if err != nil {
		return false, fmt.Errorf("journal: %w", err)
	}
	if fi.Size() > live.off {
		return false, nil
	}
	if now, err := os.Stat(r.path); err != nil || !os.SameFile(fi, now) {
		return false, nil // not the file at the path: the next Read sees why
	}
	to := r.path + journalOld + live.id
	if err := os.Rename(r.path, to); err != nil {
		return false, fmt.Errorf("journal: rotate: %w", err)
	}
	live.name, live.rotated = to, true
	return true, nil
}

// Close closes the files; what was not taken is read again by the next
// reader.
func (r *JournalReader) Close() error {
	for _, jf := range r.files {
		jf.f.Close()
	}
	r.files = nil
	return nil
}

// writeZeros writes n zero bytes to f at off.
func writeZeros(f *os.File, off, n int64) error {
	zeros := make([]byte, min(n, 64<<10))
	for n > 0 {
		k := min(n, int64(len(zeros)))
		if _, err := f.WriteAt(zeros[:k], off); err != nil {
			return err
		}
		off, n = off+k, n-k
	}
	return nil
}
