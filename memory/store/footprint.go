package store

import (
	"bytes"
	"context"
	"strings"

	"github.com/dgraph-io/badger/v4"
)

// A KeyFamily is what one kind of record holds in the store: its live keys
// and the bytes of their keys and values, before Badger's own overhead
// (table indexes, the value log's garbage, its sequences' leases).
type KeyFamily struct {
	Prefix     string
	Name       string
	Keys       int
	KeyBytes   int64
	ValueBytes int64
}

// keyFamilies names the prefixes of store.go's key layout; a longer
// prefix is listed before a shorter one it starts with.
var keyFamilies = []struct {
	prefix []byte
	name   string
}{
	{pContentIdx, "index: content session ids"},
	{pMemoryIdx, "index: memory session ids"},
	{pObsProject, "index: observations by project and time"},
	{pObsFile, "index: observations by file"},
	{pObsHash, "index: observations by content hash"},
	{pObsSession, "index: observations by session"},
	{pObsPinned, "index: pinned observations by project"},
	{pObsLearned, "index: what was learned and decided, by project and time"},
	{pObsFact, "index: the record of each fact"},
	{pObsFold, "index: facts folded into a record"},
	{pObsSubject, "index: the newest observation of a subject"},
	{pSumProject, "index: summaries by project and time"},
	{pEventKey, "idempotency keys"},
	{pSession, "sessions"},
	{pPrompt, "prompts"},
	{pObs, "observations"},
	{pSummary, "summaries"},
	{pQueue, "queued events"},
	{pVector, "vectors"},
	{pAudit, "injection audit"},
	{[]byte("meta/"), "meta"},
	{[]byte("seq/"), "sequences"},
}

// FootprintParts groups the bytes (keys and values) of key families as
// reports show them.
type FootprintParts struct {
	All          int64
	Observations int64
	Vectors      int64
	Indexes      int64 // every "index: …" family
	Records      int64 // sessions, prompts and summaries
}

// Parts groups fams.
func Parts(fams []KeyFamily) FootprintParts {
	var p FootprintParts
	for _, f := range fams {
		b := f.KeyBytes + f.ValueBytes
		p.All += b
		switch {
		case f.Name == "observations":
			p.Observations += b
		case f.Name == "vectors":
			p.Vectors += b
		case strings.HasPrefix(f.Name, "index:"):
			p.Indexes += b
		case f.Name == "sessions", f.Name == "prompts", f.Name == "summaries":
			p.Records += b
		}
	}
	return p
}

// Footprint sums the live keys and values of every key family, and of the
// keys no family claims ("other"). Values are counted as stored (frames,
// int8 vectors).
func (m *Memory) Footprint(ctx context.Context) ([]KeyFamily, error) {
	return m.store.footprint(ctx)
}

// DirFootprint is Footprint of the store in dir, which no process may
// hold open; it opens it read-only and writes nothing.
func DirFootprint(ctx context.Context, dir string) ([]KeyFamily, error) {
	s, err := openDatabase(dir, databaseOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.footprint(ctx)
}

// CompactDir compacts the store in dir, which no process may hold open, as
// forget does (database.Compact): what is left is the live records.
func CompactDir(dir string) error {
	s, err := openDatabase(dir, databaseOptions{})
	if err != nil {
		return err
	}
	if err := s.Compact(); err != nil {
		s.Close()
		return err
	}
	return s.Close()
}

func (s *database) footprint(ctx context.Context) ([]KeyFamily, error) {
	fams := make([]KeyFamily, len(keyFamilies)+1)
	for i, f := range keyFamilies {
		fams[i] = KeyFamily{Prefix: string(f.prefix), Name: f.name}
	}
	fams[len(keyFamilies)] = KeyFamily{Name: "other"}
	err := s.view(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{PrefetchValues: false})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			if err := ctx.Err(); err != nil {
				return err
			}
			item := it.Item()
			k := item.Key()
			i := len(keyFamilies)
			for j, f := range keyFamilies {
				if bytes.HasPrefix(k, f.prefix) {
					i = j
					break
				}
			}
			fams[i].Keys++
			fams[i].KeyBytes += int64(len(k))
			fams[i].ValueBytes += item.ValueSize()
		}
		return nil
	})
	return fams, err
}
