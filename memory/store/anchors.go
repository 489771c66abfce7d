package store

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/mnemo-dev/mnemo/memory"
)

// Anchors: what an observation saw of its files, taken as its event comes
// (fileAnchors), and checked against the files when records are read or
// put in a context (anchorCheck), so that a memory about code that has
// since changed says so, and one about code that is gone is left out.

// maxAnchorFile is the largest file anchored: a bigger one is not read.
const maxAnchorFile = 8 << 20

// maxRegionLines bounds an anchor's region.
const maxRegionLines = 64

// liveSlack is how old an event may be and still be anchored: a file read
// now says nothing of what a back-filled event saw months ago.
const liveSlack = 10 * time.Minute

// fileAnchors reads the files a tool event names, as they are now: the
// tool's file (file_path, path or notebook_path), and for a write or an
// edit the lines it wrote. Files that cannot be read (gone already, too
// big, not a file) are not anchored.
func fileAnchors(ev *memory.Event) []memory.FileAnchor {
	if len(ev.ToolInput) == 0 {
		return nil
	}
	var in struct {
		FilePath     string `json:"file_path"`
		Path         string `json:"path"`
		NotebookPath string `json:"notebook_path"`
		OldString    string `json:"old_string"`
		NewString    string `json:"new_string"`
		Content      string `json:"content"`
		NewSource    string `json:"new_source"`
		Edits        []struct {
			OldString string `json:"old_string"`
			NewString string `json:"new_string"`
		} `json:"edits"`
	}
	if json.Unmarshal(ev.ToolInput, &in) != nil {
		return nil
	}
	p := memory.FirstNonEmpty(in.FilePath, in.NotebookPath, in.Path)
	if p == "" || strings.HasPrefix(p, "$") {
		return nil
	}
	abs := p
	if !filepath.IsAbs(abs) {
		if ev.Cwd == "" {
			return nil
		}
		abs = filepath.Join(ev.Cwd, abs)
	}
	facts, err := readFileFacts(abs)
	if err != nil || facts.missing {
		return nil
	}
	a := memory.FileAnchor{File: memory.RelPath(ev.Cwd, abs), Path: abs, Size: facts.size, Hash: facts.hash, Blob: facts.blob}
	var wrote, removed []string
	switch {
	case in.NewString != "" || in.OldString != "":
		wrote, removed = append(wrote, in.NewString), append(removed, in.OldString)
	case len(in.Edits) > 0:
		for _, e := range in.Edits {
			wrote, removed = append(wrote, e.NewString), append(removed, e.OldString)
		}
	case in.Content != "":
		wrote = append(wrote, in.Content)
	case in.NewSource != "":
		wrote = append(wrote, in.NewSource)
	}
	a.Region, a.Removed = regionOf(wrote), regionOf(removed)
	return []memory.FileAnchor{a}
}

// regionOf hashes the lines of texts, at most maxRegionLines.
func regionOf(texts []string) []uint32 {
	var out []uint32
	for _, t := range texts {
		for _, h := range lineHashes(t) {
			if len(out) >= maxRegionLines {
				return out
			}
			out = append(out, h)
		}
	}
	return out
}

// anchorsFor keeps the event's anchors of the files an observation names.
func anchorsFor(o *memory.Observation, anchors []memory.FileAnchor) []memory.FileAnchor {
	var out []memory.FileAnchor
	for _, a := range anchors {
		if slices.Contains(o.FilesRead, a.File) || slices.Contains(o.FilesModified, a.File) {
			out = append(out, a)
		}
	}
	return out
}

// lineHash is a line's hash as regions keep it: trimmed of spaces, so
// that re-indenting a block keeps it.
func lineHash(line []byte) (uint32, bool) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return 0, false
	}
	h := fnv.New32a()
	h.Write(line)
	return h.Sum32(), true
}

func lineHashes(text string) []uint32 {
	var out []uint32
	for line := range strings.SplitSeq(text, "\n") {
		if h, ok := lineHash([]byte(line)); ok {
			out = append(out, h)
		}
	}
	return out
}

// fileFacts is what a check needs of a file: its identity and its lines.
type fileFacts struct {
	size    int64
	mtime   time.Time
	missing bool
	hash    string
	blob    string
	lines   map[uint32]struct{}
}

// readFileFacts reads a file whole (up to maxAnchorFile).
func readFileFacts(path string) (fileFacts, error) {
	fi, err := os.Stat(path)
	if os.IsNotExist(err) {
		return fileFacts{missing: true}, nil
	}
	if err != nil {
		return fileFacts{}, err
	}
	return readFacts(path, fi)
}

// readFacts reads a file whole, as fi found it.
func readFacts(path string, fi os.FileInfo) (fileFacts, error) {
	if !fi.Mode().IsRegular() || fi.Size() > maxAnchorFile {
		return fileFacts{}, fmt.Errorf("%s: not a regular file of at most %d bytes", path, maxAnchorFile)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return fileFacts{}, err
	}
	f := fileFacts{size: int64(len(b)), mtime: fi.ModTime(), lines: map[uint32]struct{}{}}
	sum := sha256.Sum256(b)
	f.hash = hex.EncodeToString(sum[:16])
	if inGitRepo(path) {
		g := sha1.New()
		fmt.Fprintf(g, "blob %d\x00", len(b))
		g.Write(b)
		f.blob = hex.EncodeToString(g.Sum(nil))
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64<<10), maxAnchorFile)
	for sc.Scan() {
		if h, ok := lineHash(sc.Bytes()); ok {
			f.lines[h] = struct{}{}
		}
	}
	return f, nil
}

// inGitRepo reports whether path is in a git working tree.
func inGitRepo(path string) bool {
	_, err := os.Lstat(filepath.Join(memory.RootOf(filepath.Dir(path)), ".git"))
	return err == nil
}

// anchorCheck tells the state of observations' anchors, reading each file
// once while its size and modification time stay the same.
type anchorCheck struct {
	mu    sync.Mutex
	files map[string]fileFacts // by path

	// The review (review.go): the clock, how long a changed record may go
	// unconfirmed, and when a later record saw a file as it is now.
	now   func() time.Time
	after time.Duration
	seen  func(file, path, hash string) time.Time
	memo  seenMemo
}

// maxCheckedFiles bounds the check's cache; past it, it starts again.
const maxCheckedFiles = 4096

// state is how what o saw compares with its files now: the worst of its
// anchors, "" when it has none.
func (c *anchorCheck) state(o *memory.Observation) string {
	switch {
	case o.Wrong:
		return memory.StateWrong
	case o.Reverted != 0:
		return memory.StateReverted
	case o.SupersededBy != 0:
		return memory.StateSuperseded
	}
	if len(o.FileAnchors) == 0 {
		return ""
	}
	worst := memory.StateCurrent
	for i := range o.FileAnchors {
		switch s := c.anchorState(&o.FileAnchors[i]); s {
		case memory.StateGone:
			return s
		case memory.StateChanged:
			worst = s
		}
	}
	// A read or a search only looked (look): the next look says what is
	// there now, and none is given as a fact; it stays changed.
	if worst == memory.StateChanged && !look(o) {
		if files, _ := c.unconfirmed(o); len(files) > 0 {
			return memory.StateReview
		}
	}
	return worst
}

func (c *anchorCheck) anchorState(a *memory.FileAnchor) string {
	f, err := c.facts(a.Path)
	switch {
	case err != nil:
		return memory.StateChanged // unreadable now: it is not what it was
	case f.missing:
		return memory.StateGone
	case f.hash == a.Hash:
		return memory.StateCurrent
	}
	for _, h := range a.Region {
		if _, ok := f.lines[h]; !ok {
			return memory.StateGone
		}
	}
	return memory.StateChanged
}

// facts returns a file's facts, from the cache while its size and
// modification time are the same.
func (c *anchorCheck) facts(path string) (fileFacts, error) {
	fi, err := os.Stat(path)
	missing := os.IsNotExist(err)
	if err != nil && !missing {
		return fileFacts{}, err
	}
	c.mu.Lock()
	f, ok := c.files[path]
	c.mu.Unlock()
	switch {
	case missing:
		return fileFacts{missing: true}, nil
	case ok && !f.missing && f.size == fi.Size() && f.mtime.Equal(fi.ModTime()):
		return f, nil
	}
	if f, err = readFacts(path, fi); err != nil {
		return f, err
	}
	c.mu.Lock()
	if c.files == nil || len(c.files) >= maxCheckedFiles {
		c.files = map[string]fileFacts{}
	}
	c.files[path] = f
	c.mu.Unlock()
	return f, nil
}

// withStates sets the State of observations read from the store.
func (m *Memory) withStates(obs []memory.Observation) {
	for i := range obs {
		obs[i].State = m.anchors.state(&obs[i])
	}
}

// maxLeft bounds the observations an injection's audit lists as left out.
const maxLeft = 20

// leaveOut records in an injection's audit that o, gone, reverted,
// superseded or wrong (its State), was left out, and why; the first maxLeft of them.
func leaveOut(inj *memory.Injection, o *memory.Observation) {
	if len(inj.Left) < maxLeft {
		inj.Left = append(inj.Left, memory.InjectionItem{ID: o.ID, Reason: "left out: " + o.State + " (" + anchorNote(o) + ")"})
	}
}

// anchorNote names the files an observation's state comes from.
func anchorNote(o *memory.Observation) string {
	var files []string
	for _, a := range o.FileAnchors {
		files = append(files, a.File)
	}
	switch o.State {
	case memory.StateWrong:
		return "marked wrong by a person"
	case memory.StateReverted:
		return "undone in its session: #" + strconv.FormatUint(o.Reverted, 10)
	case memory.StateSuperseded:
		return "superseded by #" + strconv.FormatUint(o.SupersededBy, 10)
	case memory.StateGone:
		return "what it saw of " + strings.Join(files, ", ") + " is no longer there"
	case memory.StateChanged:
		return strings.Join(files, ", ") + " changed since; what it wrote is still there"
	case memory.StateReview:
		return strings.Join(files, ", ") + " changed since; nothing confirmed it since " + o.Confirmed().UTC().Format(time.DateOnly)
	}
	return strings.Join(files, ", ")
}

// revertLookback is how many of a session's newest observations an edit
// is compared with to find the one it undid.
const revertLookback = 50

// markReverted finds, among the session's newest observations, the edit
// that o undoes (its file's region is what o removed, and what it removed
// is o's region) and links the two (Observation.Reverted), rewriting the
// earlier one in txn. It returns the earlier one, or nil.
func (s *database) markReverted(txn *badger.Txn, sid uint64, o *memory.Observation) (*memory.Observation, error) {
	var undo []memory.FileAnchor
	for _, a := range o.FileAnchors {
		if len(a.Region) > 0 || len(a.Removed) > 0 {
			undo = append(undo, a)
		}
	}
	if len(undo) == 0 || o.Reverted != 0 {
		return nil, nil
	}
	var found *memory.Observation
	n := 0
	err := scan(txn, key(pObsSession, be64(sid)), true, func(item *badger.Item) error {
		if n++; n > revertLookback {
			return errStop
		}
		k := item.Key()
		p, err := s.observation(txn, binary.BigEndian.Uint64(k[len(k)-8:]))
		if err != nil {
			return err
		}
		if p.Reverted != 0 || p.ID == o.ID {
			return nil
		}
		for _, b := range p.FileAnchors {
			for _, a := range undo {
				if a.File == b.File && sameLines(a.Region, b.Removed) && sameLines(a.Removed, b.Region) {
					found = p
					return errStop
				}
			}
		}
		return nil
	})
	if err != nil || found == nil {
		return nil, err
	}
	found.Reverted, o.Reverted = o.ID, found.ID
	return found, setJSON(txn, idKey(pObs, found.ID), found)
}

// sameLines reports whether two regions hold the same lines.
func sameLines(a, b []uint32) bool {
	if len(a) != len(b) {
		return false
	}
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}
