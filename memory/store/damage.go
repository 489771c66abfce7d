package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
	"github.com/dgraph-io/badger/v4/table"
	"github.com/dgraph-io/badger/v4/y"
	"github.com/dgraph-io/ristretto/v2/z"
)

// A damaged store: bytes of a table, the value log or the manifest that
// are not what Badger wrote (a disk error, a copy cut short, a stray
// write). Badger then refuses to open it, or panics while reading it.
// Verify says which file is damaged; Salvage copies what can still be
// read into a new store (mnemo recover).

// ErrDamaged marks a store whose files cannot all be read.
var ErrDamaged = errors.New("the store is damaged")

// Verify checks the store in dir: every table file, block by block (each
// block's checksum), then, opened read-only, every value (those of the
// value log included). It returns nil for a sound store, an error matching
// ErrDamaged that names the damaged file, or the error that kept it from
// looking (a store another process holds); nil for a folder that holds
// no store yet. Nothing is written.
//
// Badger's own check of a table as it opens
// (options.OnTableRead) is not used: on a damaged table it panics in a
// goroutine of its own, which no one can recover.
func Verify(dir string) (err error) {
	if len(storeFiles(dir)) == 0 {
		return nil // no store yet: a new home
	}
	tables, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
	for _, f := range tables {
		if err := readTable(f, func([]byte, y.ValueStruct) {}); err != nil {
			return fmt.Errorf("%w: %v", ErrDamaged, err)
		}
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %s: reading it panicked: %v", ErrDamaged, dir, r)
		}
	}()
	opts := badger.DefaultOptions(dir).WithReadOnly(true).WithLogger(nil).
		WithChecksumVerificationMode(options.OnBlockRead).WithMetricsEnabled(false)
	db, err := badger.Open(opts)
	if err != nil {
		if strings.Contains(err.Error(), "Cannot acquire directory lock") {
			return fmt.Errorf("verify %s: %w", dir, ErrLocked)
		}
		return damaged(dir, err)
	}
	defer db.Close()
	err = db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.DefaultIteratorOptions)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			if err := it.Item().Value(func([]byte) error { return nil }); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return damaged(dir, err)
	}
	return nil
}

// damaged names the damaged file of dir in Badger's error err: the file
// it names, or the one its words point at.
func damaged(dir string, err error) error {
	msg := err.Error()
	file := ""
	for _, f := range storeFiles(dir) {
		if strings.Contains(msg, f) {
			file = f
			break
		}
	}
	switch {
	case file != "":
	case strings.Contains(strings.ToLower(msg), "manifest"):
		file = "MANIFEST"
	case strings.Contains(msg, "KEY ID") || strings.Contains(msg, "Encryption key") || strings.Contains(msg, "KeyRegistry"):
		file = "KEYREGISTRY"
	case strings.Contains(msg, "vlog"):
		file = "the value log"
	default:
		return fmt.Errorf("%w: %s: %v", ErrDamaged, dir, err)
	}
	if !strings.HasPrefix(file, "the ") {
		file = filepath.Join(dir, file)
	}
	return fmt.Errorf("%w: %s: %v", ErrDamaged, file, err)
}

// storeFiles lists the names of the files of the store in dir.
func storeFiles(dir string) []string {
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		if !e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names
}

// SalvageReport says what Salvage copied and what it could not read.
type SalvageReport struct {
	// Keys were copied; Lost could not be read (a value in a damaged
	// place of the value log, or one only the value log held when its
	// tables had to be read without the manifest).
	Keys, Lost int
	// Unread names the files, or the places in them, that could not be
	// read; what they held past the damage is lost.
	Unread []string
	// Tables says the store could not be opened and its tables were read
	// one by one, without the manifest and the value log.
	Tables bool
	// Dropped counts the index keys dropped because the record they
	// point at was not rescued.
	Dropped int
}

// Salvage copies every key and value of the damaged store in from that
// can be read into a new store at to, which must not exist. It opens a
// copy of the store (to.work, removed after; Badger may have to cut a
// memtable a failed start left) with compactions off, and reads it in key
// order, checking each block: a damaged block ends its table's part of a
// pass, and a panic ends a pass, the next starting past the key it was at.
// A store Badger cannot open at all (a damaged manifest or key registry)
// is read table by table instead. Index keys whose record was not
// rescued are dropped, so that the fresh store is consistent. from is not
// changed.
func Salvage(from, to string) (SalvageReport, error) {
	var rep SalvageReport
	if _, err := os.Stat(to); err == nil {
		return rep, fmt.Errorf("salvage: %s exists", to)
	}
	// Uncompressed tables, as the store writes them (openDatabase).
	out, err := badger.Open(badger.DefaultOptions(to).WithLogger(nil).WithMetricsEnabled(false).WithCompression(options.None))
	if err != nil {
		return rep, fmt.Errorf("salvage: open %s: %w", to, err)
	}
	wb := out.NewWriteBatch()
	put := func(key, value []byte, userMeta byte, expiresAt uint64) error {
		e := badger.NewEntry(bytes.Clone(key), bytes.Clone(value)).WithMeta(userMeta)
		e.ExpiresAt = expiresAt
		rep.Keys++
		return wb.SetEntry(e)
	}
	tables, _ := filepath.Glob(filepath.Join(from, "*.sst"))
	work := to + ".work"
	err = errCannotOpen
	if tablesOpen(tables) {
		err = os.CopyFS(work, os.DirFS(from))
	}
	if err == nil {
		unread := len(rep.Unread)
		err = salvageOpen(work, &rep, put)
		for i := unread; i < len(rep.Unread); i++ {
			rep.Unread[i] = strings.ReplaceAll(rep.Unread[i], work, from) // the copy is gone
		}
	}
	os.RemoveAll(work)
	if err != nil {
		// Badger cannot open it: every table, read on its own.
		rep.Tables = true
		err = putNewest(tableEntries(tables, &rep), &rep, put)
		if err == nil {
			err = wb.Flush()
		}
	} else if err = wb.Flush(); err == nil {
		// A damaged block ended its table's part of the passes, without
		// a word from Badger: the tables, read on their own block by
		// block, name it and give what the passes did not reach.
		var damagedRest map[string]tableEntry
		for _, f := range tables {
			unread := len(rep.Unread)
			one := tableEntries([]string{f}, &rep)
			if len(rep.Unread) > unread {
				for k, e := range one {
					if damagedRest == nil {
						damagedRest = map[string]tableEntry{}
					}
					damagedRest[k] = e
				}
			}
		}
		err = out.View(func(txn *badger.Txn) error {
			for k := range damagedRest {
				if _, gerr := txn.Get([]byte(k)); gerr == nil {
					delete(damagedRest, k)
				}
			}
			return nil
		})
		if err == nil && len(damagedRest) > 0 {
			wb = out.NewWriteBatch()
			if err = putNewest(damagedRest, &rep, put); err == nil {
				err = wb.Flush()
			}
		}
	}
	if err != nil {
		wb.Cancel()
	}
	if err == nil {
		rep.Dropped, err = dropDangling(out)
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return rep, err
}

var errCannotOpen = errors.New("cannot open")

// salvageOpen copies the readable keys of a store Badger can open.
func salvageOpen(dir string, rep *SalvageReport, put func(key, value []byte, userMeta byte, expiresAt uint64) error) error {
	opts := badger.DefaultOptions(dir).WithLogger(nil).WithNumCompactors(0).
		WithChecksumVerificationMode(options.OnBlockRead).WithMetricsEnabled(false)
	db, err := openRecovering(opts)
	if err != nil {
		rep.Unread = append(rep.Unread, err.Error())
		return errCannotOpen
	}
	defer db.Close()
	var seek []byte
	for pass := 0; ; pass++ {
		done, err := salvagePass(db, &seek, rep, put)
		if err != nil && !done {
			rep.Unread = append(rep.Unread, err.Error())
		}
		if err != nil && done {
			return err
		}
		if done || pass == 1000 {
			return nil
		}
	}
}

func openRecovering(opts badger.Options) (db *badger.DB, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("open panicked: %v", r)
		}
	}()
	return badger.Open(opts)
}

// salvagePass copies the keys from *seek on, in key order, to the end
// (done), or until reading panics: then *seek is past the key it was at
// (lost), and the next pass goes on from there.
func salvagePass(db *badger.DB, seek *[]byte, rep *SalvageReport, put func(key, value []byte, userMeta byte, expiresAt uint64) error) (done bool, err error) {
	var at []byte // the key being read
	defer func() {
		if r := recover(); r != nil {
			if at != nil {
				rep.Lost++
				*seek = append(at, 0)
			} else {
				*seek = append(bytes.Clone(*seek), 0)
			}
			done, err = false, fmt.Errorf("reading near key %q panicked: %v", at, r)
		}
	}()
	err = db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.DefaultIteratorOptions)
		defer it.Close()
		for it.Seek(*seek); it.Valid(); it.Next() {
			item := it.Item()
			at = item.KeyCopy(nil)
			v, verr := item.ValueCopy(nil)
			if verr != nil {
				rep.Lost++
			} else if err := put(at, v, item.UserMeta(), item.ExpiresAt()); err != nil {
				return err
			}
			*seek, at = append(at, 0), nil
		}
		return nil
	})
	return true, err
}

// A tableEntry is the newest version of a key in the tables read.
type tableEntry struct {
	version  uint64
	meta     byte
	userMeta byte
	expires  uint64
	value    []byte
}

// tableEntries reads the table files on their own (no manifest, no key
// registry), block by block, and returns the newest version of every key
// they hold; a file that cannot be read whole is named in rep.Unread.
func tableEntries(files []string, rep *SalvageReport) map[string]tableEntry {
	newest := map[string]tableEntry{}
	for _, f := range files {
		if err := readTable(f, func(key []byte, vs y.ValueStruct) {
			k, ts := string(y.ParseKey(key)), y.ParseTs(key)
			if old, ok := newest[k]; ok && old.version >= ts {
				return
			}
			newest[k] = tableEntry{ts, vs.Meta, vs.UserMeta, vs.ExpiresAt, bytes.Clone(vs.Value)}
		}); err != nil {
			rep.Unread = append(rep.Unread, err.Error())
		}
	}
	return newest
}

// putNewest puts entries in key order, but deleted keys; a value kept in
// the value log is lost.
func putNewest(entries map[string]tableEntry, rep *SalvageReport, put func(key, value []byte, userMeta byte, expiresAt uint64) error) error {
	keys := make([]string, 0, len(entries))
	for k := range entries {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		e := entries[k]
		switch {
		case e.meta&bitDelete != 0:
		case e.meta&bitValuePointer != 0:
			rep.Lost++
		default:
			if err := put([]byte(k), e.value, e.userMeta, e.expires); err != nil {
				return err
			}
		}
	}
	return nil
}

// dropDangling deletes the index keys of db whose record is not there:
// those that end with an observation's id (project, session, pin,
// learned, file) and a summary's project index. It returns how many.
func dropDangling(db *badger.DB) (int, error) {
	families := []struct{ index, record []byte }{
		{pObsProject, pObs}, {pObsSession, pObs}, {pObsPinned, pObs}, {pObsLearned, pObs}, {pObsFile, pObs},
		{pSumProject, pSummary},
	}
	var dead [][]byte
	err := db.View(func(txn *badger.Txn) error {
		for _, f := range families {
			err := scan(txn, f.index, false, func(item *badger.Item) error {
				k := item.Key()
				if len(k) < len(f.index)+8 {
					return nil
				}
				if _, err := txn.Get(idKey(f.record, binary.BigEndian.Uint64(k[len(k)-8:]))); errors.Is(err, badger.ErrKeyNotFound) {
					dead = append(dead, item.KeyCopy(nil))
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	wb := db.NewWriteBatch()
	for _, k := range dead {
		if err := wb.Delete(k); err != nil {
			wb.Cancel()
			return 0, err
		}
	}
	return len(dead), wb.Flush()
}

// Badger's entry flags (its value.go): a deleted key, and a value that
// lives in the value log.
const (
	bitDelete       byte = 1 << 0
	bitValuePointer byte = 1 << 1
)

// tablesOpen reports whether every table file opens (its index reads).
// Badger opens a store's tables in goroutines of its own, where a damaged
// index is a panic no one can recover: such a store is read table by
// table.
func tablesOpen(files []string) bool {
	for _, f := range files {
		if !tableOpens(f) {
			return false
		}
	}
	return true
}

func tableOpens(f string) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	mf, err := z.OpenMmapFile(f, os.O_RDONLY, 0)
	if err != nil && !errors.Is(err, z.NewFile) {
		return false
	}
	t, err := table.OpenTable(mf, table.Options{ReadOnly: true, ChkMode: options.OnBlockRead})
	if err != nil {
		return false
	}
	t.Close(-1)
	return true
}

// readTable calls fn for every entry of the table file f it can read; a
// damaged block ends the table there.
func readTable(f string, fn func(key []byte, vs y.ValueStruct)) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s: reading it panicked: %v", f, r)
		}
	}()
	mf, err := z.OpenMmapFile(f, os.O_RDONLY, 0)
	if err != nil && !errors.Is(err, z.NewFile) {
		return fmt.Errorf("%s: %w", f, err)
	}
	t, err := table.OpenTable(mf, table.Options{ReadOnly: true, ChkMode: options.OnBlockRead})
	if err != nil {
		return fmt.Errorf("%s: %w", f, err)
	}
	if c := t.CompressionType(); c != options.None {
		// A table Badger compressed (the store's are not): opened again
		// knowing how.
		t.Close(-1)
		if mf, err = z.OpenMmapFile(f, os.O_RDONLY, 0); err != nil && !errors.Is(err, z.NewFile) {
			return fmt.Errorf("%s: %w", f, err)
		}
		if t, err = table.OpenTable(mf, table.Options{ReadOnly: true, ChkMode: options.OnBlockRead, Compression: c, BlockSize: 4 << 10}); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
	}
	// Closed, not released: the last release of a table deletes its file.
	defer t.Close(-1)
	if verr := verifyTable(t); verr != nil {
		// The entries before the damaged block are still read.
		defer func() {
			if err == nil {
				err = fmt.Errorf("%s: %w", f, verr)
			}
		}()
	}
	// Block by block, each from its first key: a damaged block is
	// skipped, not the rest of the table with it.
	blocks := t.KeySplits(1<<30, nil)
	it := t.NewIterator(0)
	defer it.Close()
	for i, first := range blocks {
		var next []byte
		if i+1 < len(blocks) {
			next = []byte(blocks[i+1])
		}
		for it.Seek([]byte(first)); it.Valid(); it.Next() {
			if next != nil && y.CompareKeys(it.Key(), next) >= 0 {
				break
			}
			fn(it.Key(), it.ValueCopy())
		}
	}
	return nil
}

// verifyTable checks the checksum of every block of t. Badger's
// VerifyChecksum dereferences the block it could not read when it says
// which: its panic is the answer then.
func verifyTable(t *table.Table) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = errors.New("a block's checksum does not match its bytes")
		}
	}()
	return t.VerifyChecksum()
}
