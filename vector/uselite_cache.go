package vector

import (
	"hash/maphash"
	"slices"
	"sync"
	"time"
)

// The encoder remembers the vectors of the texts and lines it encoded
// last, so that what recurs is encoded once: a turn's observations all
// carry its prompt's excerpt (memory/store's DocOf) and often the same
// files, and the same fact seen again is embedded before it is folded into
// its record. A vector depends on its text alone (a text's rows go through
// the layers independently of the batch they are in), so a remembered one
// is the bits encoding would give. Entries are keyed by a 128-bit hash of
// the text, never the text, and kept in two generations of
// embedCacheEntries: a full generation pushes the older one out, an entry
// found in the older one moves to the newer. At most 2·256 vectors of 2
// KB: 1 MB.

const embedCacheEntries = 256

// embedKey is a text's hash, and whether it was a line of a longer text
// (whose entry also counts its pieces) or a whole text.
type embedKey struct {
	h1, h2 uint64
	line   bool
}

type embedEntry struct {
	vec    []float32
	pieces int // a line's pieces, as the line budget counts them
}

type embedCache struct {
	seed1, seed2 maphash.Seed
	mu           sync.Mutex
	cur, old     map[embedKey]embedEntry
}

func newEmbedCache() *embedCache {
	return &embedCache{seed1: maphash.MakeSeed(), seed2: maphash.MakeSeed(), cur: map[embedKey]embedEntry{}}
}

func (c *embedCache) key(text string, line bool) embedKey {
	return embedKey{maphash.String(c.seed1, text), maphash.String(c.seed2, text), line}
}

// get returns the entry of text, if it is remembered. Its vector is shared:
// the caller copies it before handing it out.
func (c *embedCache) get(text string, line bool) (embedEntry, bool) {
	if c == nil {
		return embedEntry{}, false
	}
	k := c.key(text, line)
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.cur[k]; ok {
		return e, true
	}
	e, ok := c.old[k]
	if ok {
		c.putLocked(k, e)
	}
	return e, ok
}

// put remembers the entry of text; the cache keeps e.vec, which the caller
// no longer changes.
func (c *embedCache) put(text string, line bool, e embedEntry) {
	if c == nil || e.vec == nil {
		return
	}
	k := c.key(text, line)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.putLocked(k, e)
}

func (c *embedCache) putLocked(k embedKey, e embedEntry) {
	if len(c.cur) >= embedCacheEntries {
		c.old, c.cur = c.cur, make(map[embedKey]embedEntry, embedCacheEntries)
	}
	c.cur[k] = e
}

// bufferStock keeps the encoder's batch buffers (a few MB each) for the
// next text while texts keep coming, and lets them go after
// bufferKeep without one. A sync.Pool gives them up at every garbage
// collection, which in a busy daemon (GOGC=50) is every few texts: the
// buffers were allocated again, their pages faulted in and zeroed, a
// fifth of the daemon's CPU on a back-fill.
type bufferStock struct {
	mu    sync.Mutex
	free  []*encodeBuffers
	timer *time.Timer
}

const bufferKeep = 5 * time.Second

func (s *bufferStock) get() *encodeBuffers {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.free); n > 0 {
		b := s.free[n-1]
		s.free = slices.Delete(s.free, n-1, n)
		return b
	}
	return new(encodeBuffers)
}

func (s *bufferStock) put(b *encodeBuffers) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.free = append(s.free, b)
	if s.timer == nil {
		s.timer = time.AfterFunc(bufferKeep, s.drop)
	} else {
		s.timer.Reset(bufferKeep)
	}
}

func (s *bufferStock) drop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.free = nil
}
