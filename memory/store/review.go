package store

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/mnemo-dev/mnemo/memory"
)

// The review (memory/review.go): a record whose file changed since it was
// made, and that nothing confirmed for anchorCheck.after, is
// memory.StateReview. The state is computed on read like the others;
// only a person's keep (Observation.Kept) is stored.

// seenLookback is how many of a file's newest records are read to find
// one that saw the file as it is now.
const seenLookback = 16

// seenTTL is how long an answer of seenAs is reused: a listing or a
// context asks about the same file many times over. A record stored with
// anchors empties the memo (forgetSeen): it may be the one that saw a
// file as it is now.
const seenTTL = time.Second

// seenMemo remembers seenAs's answers for seenTTL.
type seenMemo struct {
	mu      sync.Mutex
	answers map[string]seenAnswer
}

type seenAnswer struct {
	at, asked time.Time
}

// maxSeenMemo bounds the memo; past it, it starts again.
const maxSeenMemo = 4096

// unconfirmed returns the files of o, a record whose state is
// memory.StateChanged, that changed since it was made and that nothing
// confirmed: o was last confirmed (memory.Observation.Confirmed) more than
// c.after ago, and neither a person's keep nor a later record saw the
// file as it is now (each confirms o while the file stays so). It
// returns the last confirmation too; no files when o stands.
func (c *anchorCheck) unconfirmed(o *memory.Observation) (files []string, last time.Time) {
	if c.now == nil {
		return nil, time.Time{}
	}
	now := c.now()
	last = o.Confirmed()
	if c.after > 0 && now.Sub(last) <= c.after {
		return nil, last
	}
	for i := range o.FileAnchors {
		a := &o.FileAnchors[i]
		f, err := c.facts(a.Path)
		hash := f.hash
		switch {
		case err == nil && (f.missing || f.hash == a.Hash):
			continue // gone is another state; the same is no change
		case err != nil:
			hash = "" // unreadable: nothing can have seen it as it is
		}
		if o.Kept != nil && i < len(o.Kept.Hashes) && hash != "" && o.Kept.Hashes[i] == hash {
			continue // a person kept it as the file is now
		}
		if hash != "" && c.seen != nil {
			if t := c.seenCached(a.File, a.Path, hash); t.After(o.Time) {
				continue // a later record saw the file as it is now
			}
		}
		files = append(files, a.File)
	}
	return files, last
}

// forgetSeen empties the memo of seenAs's answers.
func (c *anchorCheck) forgetSeen() {
	c.memo.mu.Lock()
	c.memo.answers = nil
	c.memo.mu.Unlock()
}

// seenCached is c.seen through the memo.
func (c *anchorCheck) seenCached(file, path, hash string) time.Time {
	k := file + "\x00" + path + "\x00" + hash
	wall := time.Now()
	c.memo.mu.Lock()
	ans, ok := c.memo.answers[k]
	c.memo.mu.Unlock()
	if ok && wall.Sub(ans.asked) < seenTTL {
		return ans.at
	}
	at := c.seen(file, path, hash)
	c.memo.mu.Lock()
	if c.memo.answers == nil || len(c.memo.answers) >= maxSeenMemo {
		c.memo.answers = map[string]seenAnswer{}
	}
	c.memo.answers[k] = seenAnswer{at: at, asked: wall}
	c.memo.mu.Unlock()
	return at
}

// seenAs is when a record of file last saw it (at path) holding hash: the
// last time of the newest such record among the file's seenLookback
// newest; zero when none did.
func (m *Memory) seenAs(file, path, hash string) time.Time {
	var at time.Time
	n := 0
	err := m.store.view(func(txn *badger.Txn) error {
		return scan(txn, key(pObsFile, []byte(file), []byte{0}), true, func(item *badger.Item) error {
			if n++; n > seenLookback {
				return errStop
			}
			k := item.Key()
			p, err := m.store.observation(txn, binary.BigEndian.Uint64(k[len(k)-8:]))
			if errors.Is(err, memory.ErrNotFound) {
				return nil
			}
			if err != nil {
				return err
			}
			for _, a := range p.FileAnchors {
				if a.Path == path && a.Hash == hash && p.LastTime().After(at) {
					at = p.LastTime()
				}
			}
			return nil
		})
	})
	if err != nil {
		m.log.Warn("review: read a file's records", "err", err)
	}
	return at
}

// Review lists the records that need review (memory.StateReview), newest
// first: of one project, or of all. It reads every record that has file
// anchors (a person's occasional look, not a hook's path).
func (m *Memory) Review(ctx context.Context, p memory.ReviewParams) (memory.ReviewResult, error) {
	if err := p.Validate(); err != nil {
		return memory.ReviewResult{}, err
	}
	limit := p.Limit
	if limit == 0 {
		limit = memory.DefaultLimit
	}
	res := memory.ReviewResult{Items: []memory.ReviewItem{}, AfterDays: m.anchors.after.Hours() / 24}
	prefix := pObs
	if p.Project != "" {
		prefix = key(pObsProject, []byte(p.Project), []byte{0})
	}
	err := m.store.view(func(txn *badger.Txn) error {
		return scan(txn, prefix, true, func(item *badger.Item) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			k := item.Key()
			o, err := m.store.observation(txn, binary.BigEndian.Uint64(k[len(k)-8:]))
			if errors.Is(err, memory.ErrNotFound) {
				return nil
			}
			if err != nil {
				return err
			}
			if len(o.FileAnchors) == 0 || o.Wrong || o.Reverted != 0 || o.SupersededBy != 0 {
				return nil
			}
			if o.State = m.anchors.state(o); o.State != memory.StateReview {
				return nil
			}
			if res.Total++; len(res.Items) >= limit {
				res.More = true
				return nil
			}
			files, last := m.anchors.unconfirmed(o)
			res.Items = append(res.Items, memory.ReviewItem{Observation: *o, Confirmed: last, Changed: files})
			return nil
		})
	})
	if err != nil {
		return memory.ReviewResult{}, fmt.Errorf("review: %w", err)
	}
	return res, nil
}

// Keep records a person's word that observations still hold though their
// files changed: each is kept as its files are now (memory.Keep), which
// clears its review until a file changes again. Unknown ids are
// ErrNotFound, naming them, and nothing changes; an observation already
// kept as its files are now is Unchanged.
func (m *Memory) Keep(ctx context.Context, p memory.IDsParams) (memory.PinResult, error) {
	return m.setFlag(ctx, p, "keep", true, func(o *memory.Observation) bool {
		return o.Kept != nil && slices.Equal(o.Kept.Hashes, m.anchors.hashesNow(o))
	}, func(txn *badger.Txn, o *memory.Observation) error {
		o.Kept = m.keepNow(o)
		return setJSON(txn, idKey(pObs, o.ID), o)
	})
}

// keepNow is a person's keep of o as its files are now.
func (m *Memory) keepNow(o *memory.Observation) *memory.Keep {
	return &memory.Keep{Time: m.now(), Hashes: m.anchors.hashesNow(o)}
}

// hashesNow are the hashes of o's anchors' files as they are now, in
// their order ("" for a file that cannot be read).
func (c *anchorCheck) hashesNow(o *memory.Observation) []string {
	out := make([]string, len(o.FileAnchors))
	for i, a := range o.FileAnchors {
		if f, err := c.facts(a.Path); err == nil && !f.missing {
			out[i] = f.hash
		}
	}
	return out
}
