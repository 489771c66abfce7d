package vscode

import "container/list"

// DefaultTextBytes is how many bytes of document text one editor
// connection keeps at most.
const DefaultTextBytes = 32 << 20

// maxDocs bounds the documents known to one connection, whatever their
// size.
const maxDocs = 4096

// docOverhead is what a document costs beyond its texts (its path, its
// state, the maps that hold it), counted against the budget.
const docOverhead = 256

// A doc is what the editor knows of one file: its text as last remembered
// (base), and while the saves of a window wait, the text last saved (cur).
type doc struct {
	path  string
	base  string
	known bool // base is the file's text (else it is unknown)
	// The window: saves gathered into one observation at its end.
	pending  bool
	cur      string
	curKnown bool  // the last save's text could be had
	created  bool  // base unknown, and git says the file is new
	gen      int   // which window the timer belongs to
	timer    timer // ends the window
	// What git says of the file, asked once.
	checked bool
	ignored bool
	elem    *list.Element
}

func (d *doc) size() int { return docOverhead + len(d.path) + len(d.base) + len(d.cur) }

// texts keeps the documents of one connection within a byte budget: when
// it is over, the least recently used documents without a waiting window
// lose their text first, then those with one (their window then ends with
// what it has).
type texts struct {
	max   int
	bytes int
	docs  map[string]*doc
	lru   list.List // of *doc, most recently used first
}

func newTexts(max int) *texts {
	return &texts{max: max, docs: map[string]*doc{}}
}

// get returns the document of path, marking it used, or nil.
func (t *texts) get(path string) *doc {
	d := t.docs[path]
	if d != nil {
		t.lru.MoveToFront(d.elem)
	}
	return d
}

// add returns the document of path, made if it is new.
func (t *texts) add(path string) *doc {
	if d := t.get(path); d != nil {
		return d
	}
	d := &doc{path: path}
	d.elem = t.lru.PushFront(d)
	t.docs[path] = d
	t.bytes += d.size()
	return d
}

// update sets d's texts through set and keeps the budget.
func (t *texts) update(d *doc, set func(d *doc)) {
	t.bytes -= d.size()
	set(d)
	t.bytes += d.size()
	t.trim(d)
}

// remove forgets the document of path.
func (t *texts) remove(path string) *doc {
	d := t.docs[path]
	if d == nil {
		return nil
	}
	t.bytes -= d.size()
	t.lru.Remove(d.elem)
	delete(t.docs, path)
	return d
}

// trim keeps the budget, sparing keep: documents without a waiting window
// go first, least recently used first; then the texts of the others.
func (t *texts) trim(keep *doc) {
	for _, pendingToo := range []bool{false, true} {
		for e := t.lru.Back(); e != nil && (t.bytes > t.max || len(t.docs) > maxDocs); {
			d := e.Value.(*doc)
			e = e.Prev()
			if d == keep || d.pending && !pendingToo {
				continue
			}
			if !d.pending {
				t.remove(d.path)
				continue
			}
			// A waiting window loses its texts: its end tells only that the
			// file was saved.
			t.bytes -= d.size()
			d.base, d.known, d.cur, d.curKnown = "", false, "", false
			t.bytes += d.size()
		}
	}
}

// Bytes is how much the kept texts cost.
func (t *texts) Bytes() int { return t.bytes }

// TextBytes is how many bytes the texts this editor keeps cost, with
// their bookkeeping (at most Options.TextBytes, and the texts of windows
// that wait).
func (e *Editor) TextBytes() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.docs.Bytes()
}
