package hook

import (
	"bufio"
	"bytes"
	"context"
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

// ErrCorruptSpool matches the *CorruptSpoolError of TakeSpool and
// IngestSpool.
var ErrCorruptSpool = errors.New("corrupt spool lines")

// SpoolPath returns the spool of the Mnemo home directory home:
// <home>/spool/hooks.jsonl.
func SpoolPath(home string) string {
	return filepath.Join(home, "spool", "hooks.jsonl")
}

// SpoolEntry is one call a hook could not deliver: one JSON line of the
// spool. Params are as the hook would have sent them (already cleaned, with
// their eventKey).
type SpoolEntry struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Time   time.Time       `json:"time"`
}

// ingesting is the infix of the names TakeSpool renames the spool to.
const ingesting = ".ingesting-"

// AppendSpool appends e to the spool at path as one line, durably: it
// opens the file for appending (creating it and its folder, 0600 in 0700),
// takes an exclusive lock (lockFile), and checks that the file it holds is still the
// one at path (TakeSpool renames the spool away under the same lock; if it
// did, AppendSpool opens the new one). It then writes the line, fsyncs
// (and fsyncs the folder when it created the file) and unlocks.
func AppendSpool(path string, e SpoolEntry) error {
	if e.Method == "" {
		return errors.New("spool: entry without a method")
	}
	line, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	line = append(line, '\n')
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	for range 100 {
		done, err := appendOnce(path, line)
		if done || err != nil {
			return err
		}
	}
	return fmt.Errorf("spool: %s keeps being replaced", path)
}

// appendOnce appends line to the file at path and reports true, or reports
// false when the file it opened was renamed away before it got the lock.
func appendOnce(path string, line []byte) (bool, error) {
	f, created, err := openAppend(path)
	if err != nil {
		return false, fmt.Errorf("spool: %w", err)
	}
	defer f.Close()
	if err := lockFile(f); err != nil {
		return false, fmt.Errorf("spool: lock: %w", err)
	}
	defer unlockFile(f)
	if same, err := isFileAt(f, path); err != nil || !same {
		return false, err
	}
	if _, err := f.Write(line); err != nil {
		return false, fmt.Errorf("spool: write: %w", err)
	}
	if err := f.Sync(); err != nil {
		return false, fmt.Errorf("spool: fsync: %w", err)
	}
	if created {
		if err := atomicfile.SyncDir(filepath.Dir(path)); err != nil {
			return false, fmt.Errorf("spool: fsync folder: %w", err)
		}
	}
	return true, nil
}

// openAppend opens path for appending, creating it if needed, and reports
// whether it created it.
func openAppend(path string) (*os.File, bool, error) {
	for {
		f, err := openFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err == nil {
			return f, false, nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return nil, false, err
		}
		f, err = openFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			return f, true, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, false, err
		}
	}
}

// isFileAt reports whether f is the file now at path.
func isFileAt(f *os.File, path string) (bool, error) {
	held, err := f.Stat()
	if err != nil {
		return false, fmt.Errorf("spool: %w", err)
	}
	now, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("spool: %w", err)
	}
	return os.SameFile(held, now), nil
}

// CorruptSpoolError lists the spool lines TakeSpool skipped: lines that
// are not a SpoolEntry, and a last line cut short by a crash.
type CorruptSpoolError struct {
	// Lines are "<file>:<line>: <what is wrong>".
	Lines []string
}

func (e *CorruptSpoolError) Error() string {
	if len(e.Lines) == 1 {
		return "spool: skipped a corrupt line: " + e.Lines[0]
	}
	return fmt.Sprintf("spool: skipped %d corrupt lines: %s", len(e.Lines), strings.Join(e.Lines, "; "))
}

// Is matches ErrCorruptSpool.
func (e *CorruptSpoolError) Is(target error) bool { return target == ErrCorruptSpool }

// TakeSpool takes every entry of the spool at path, for the daemon to
// store. Under the spool's lock it renames the spool to a unique
// <path>.ingesting-<time>-<pid>, so that hooks append to a new one
// meanwhile; then it reads that file, and any <path>.ingesting-* left by a
// run that crashed before done, oldest first. Call done once the entries
// are stored: it deletes the taken files. If done is never called, the
// next TakeSpool returns the same entries again (their eventKeys make a
// replay harmless).
//
// Lines that do not decode are skipped and reported: then err is a
// *CorruptSpoolError (errors.Is ErrCorruptSpool) and entries and done are
// valid too. Any other error returns no entries. A missing spool is no
// error. One caller at a time: the daemon.
func TakeSpool(path string) (entries []SpoolEntry, done func() error, err error) {
	if err := takeLive(path); err != nil {
		return nil, nil, err
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	des, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, func() error { return nil }, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("spool: %w", err)
	}
	var files []string
	for _, de := range des {
		if strings.HasPrefix(de.Name(), base+ingesting) && de.Type().IsRegular() {
			files = append(files, filepath.Join(dir, de.Name()))
		}
	}
	slices.Sort(files) // the names hold a zero-padded time: oldest first

	var corrupt CorruptSpoolError
	for _, file := range files {
		es, err := readSpoolFile(file, &corrupt)
		if err != nil {
			return nil, nil, err
		}
		entries = append(entries, es...)
	}
	done = func() error {
		var errs []error
		for _, file := range files {
			if err := os.Remove(file); err != nil && !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, fmt.Errorf("spool: %w", err))
			}
		}
		if len(files) > 0 {
			if err := atomicfile.SyncDir(dir); err != nil {
				errs = append(errs, fmt.Errorf("spool: fsync folder: %w", err))
			}
		}
		return errors.Join(errs...)
	}
	if len(corrupt.Lines) > 0 {
		return entries, done, &corrupt
	}
	return entries, done, nil
}

// takeLive renames a non-empty spool at path to a unique ingesting name,
// under its lock.
func takeLive(path string) error {
	for range 100 {
		f, err := openFile(path, os.O_RDWR, 0)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("spool: %w", err)
		}
		taken, err := func() (bool, error) {
			defer f.Close()
			if err := lockFile(f); err != nil {
				return false, fmt.Errorf("spool: lock: %w", err)
			}
			defer unlockFile(f)
			same, err := isFileAt(f, path)
			if err != nil || !same {
				return false, err
			}
			fi, err := f.Stat()
			if err != nil {
				return false, fmt.Errorf("spool: %w", err)
			}
			if fi.Size() == 0 {
				return true, nil
			}
			to := fmt.Sprintf("%s%s%020d-%d", path, ingesting, time.Now().UnixNano(), os.Getpid())
			if err := os.Rename(path, to); err != nil {
				return false, fmt.Errorf("spool: %w", err)
			}
			if err := atomicfile.SyncDir(filepath.Dir(path)); err != nil {
				return false, fmt.Errorf("spool: fsync folder: %w", err)
			}
			return true, nil
		}()
		if taken || err != nil {
			return err
		}
	}
	return fmt.Errorf("spool: %s keeps being replaced", path)
}

// readSpoolFile reads the complete lines of a taken spool file, noting the
// ones that do not decode in corrupt.
func readSpoolFile(file string, corrupt *CorruptSpoolError) ([]SpoolEntry, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	defer f.Close()
	var entries []SpoolEntry
	r := bufio.NewReaderSize(f, 64<<10)
	for n := 1; ; n++ {
		line, err := r.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			if len(bytes.TrimSpace(line)) > 0 {
				corrupt.Lines = append(corrupt.Lines, fmt.Sprintf("%s:%d: cut short (%d bytes, no newline)", filepath.Base(file), n, len(line)))
			}
			return entries, nil
		}
		if err != nil {
			return nil, fmt.Errorf("spool: %w", err)
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var e SpoolEntry
		if err := json.Unmarshal(line, &e); err != nil {
			corrupt.Lines = append(corrupt.Lines, fmt.Sprintf("%s:%d: %v", filepath.Base(file), n, err))
			continue
		}
		if e.Method == "" || len(e.Params) == 0 {
			corrupt.Lines = append(corrupt.Lines, fmt.Sprintf("%s:%d: no method or params", filepath.Base(file), n))
			continue
		}
		entries = append(entries, e)
	}
}

// IngestSpool replays the spool at path through call, oldest entry first,
// and returns how many calls succeeded. It is what the daemon runs at
// start: call decodes the params of method and runs the stage (the
// entries' eventKeys make a replay of a call that had been stored a
// no-op).
//
// An entry whose call fails is dropped and its error joined into the
// returned error (with a *CorruptSpoolError for skipped lines). If ctx ends
// first, the entries not yet stored are appended back to the spool for
// the next start, and the error wraps ctx.Err().
func IngestSpool(ctx context.Context, path string, call func(ctx context.Context, method string, params json.RawMessage) error) (int, error) {
	entries, done, err := TakeSpool(path)
	var errs []error
	if err != nil {
		if !errors.Is(err, ErrCorruptSpool) {
			return 0, err
		}
		errs = append(errs, err)
	}
	n := 0
	for i, e := range entries {
		if ctx.Err() == nil {
			err = call(ctx, e.Method, e.Params)
			if err == nil {
				n++
				continue
			}
			if ctx.Err() == nil {
				errs = append(errs, fmt.Errorf("spool: replay %s of %s: %w", e.Method, e.Time.Format(time.RFC3339), err))
				continue
			}
		}
		// Stopped: keep what is left for the next start.
		for _, rest := range entries[i:] {
			if err := AppendSpool(path, rest); err != nil {
				// Keep the taken files: the next start replays them all.
				return n, errors.Join(append(errs, ctx.Err(), err)...)
			}
		}
		errs = append(errs, ctx.Err())
		break
	}
	if err := done(); err != nil {
		errs = append(errs, err)
	}
	return n, errors.Join(errs...)
}
