package vector

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"unsafe"

	"github.com/mnemo-dev/mnemo/memory/atomicfile"
)

// The sentence encoder's weights are kept, beside the tfjs files they come
// from, in one file of their own (weightsFileName): the float32 tensors the
// encoder uses, the shards' values bit for bit, the weight matrices laid
// out in panels of gemmCols columns as the encoder reads them (packMatrix,
// gemm.go; format version 2, the table says each matrix's panel width),
// each tensor at a page boundary, after a header that names the model.json
// they were converted from and a SHA-256 of everything after it. The file is
// memory-mapped read-only where the platform allows, so the weights are not
// in the Go heap (the collector neither scans them nor counts them towards
// its next target) and their pages are the kernel's: clean, file-backed,
// dropped under pressure, and of the embedding table only the rows the texts
// use are ever read.
//
// Layout, little-endian:
//
//	[0:8]    magic "mnemoUSE"
//	[8:12]   format version (weightsVersion)
//	[12:16]  length of the table (JSON) that follows the fixed header
//	[16:24]  length of the whole file
//	[24:56]  SHA-256 of the model.json the tensors come from
//	[56:88]  SHA-256 of bytes [88:end)
//	[88:...] the table: {"tensors":[{"name","offset","count","panel"}]},
//	         then the tensors at the offsets it gives (multiples of
//	         weightsAlign); panel is the width of a matrix's panels
//	         (absent for the other tensors)
//
// A file that is truncated, corrupt, of another version (a version 1 file
// holds the matrices as published), in panels of another width or
// converted from another model.json is refused with an error wrapping ErrWeightsFile, and
// OpenUSELite writes it again from the shards. The file is only ever
// replaced by a rename, never rewritten in place, so a mapping in use keeps
// its pages.
//
// Measured, one process per way, on 942 texts (vector/testdata/eval's
// titles, facts, whole observations and queries), 2 shared cores:
//
//	                          load    heap   RSS loaded  RSS after 200   embed p50
//	shards into the heap      135 ms  31 MB  121 MB      81 MB           16.0 ms
//	this file, mapped          38 ms   4 MB   15 MB      51 MB (35 file) 16.6 ms
//
// The vectors are the same bits (942 of 942). After 200 texts the whole
// file is resident (the kernel maps the neighbours of a faulted page too),
// but as clean page cache, not heap: the collector neither scans it nor
// counts it towards its next target, which is worth as much again at GOGC
// 50-100. The load's own garbage (the shards' bytes, then decoded) is gone
// as well. float16 was measured and rejected: each weight rounded to
// float16 gives max |diff| 6.1e-4 and min cosine 0.9999954 against today's
// vectors, and `mnemo-eval -splits dev` moves (vector R@10 0.632 → 0.639,
// prompt recall answered 0.674 → 0.667), so they are not the same vectors;
// it would save 14 MB of clean pages.
const (
	weightsFileName = "use-lite.weights"
	weightsMagic    = "mnemoUSE"
	weightsVersion  = 2
	weightsFixed    = 88
	weightsAlign    = 4096
)

// ErrWeightsFile means the converted weights file is damaged, truncated or
// stale; OpenUSELite rebuilds it from the tfjs shards.
var ErrWeightsFile = errors.New("bad weights file")

// weightsEntry is one tensor of the table.
type weightsEntry struct {
	Name   string `json:"name"`
	Offset int64  `json:"offset"`
	Count  int64  `json:"count"`
	Panel  int    `json:"panel,omitempty"`
}

type weightsTable struct {
	Tensors []weightsEntry `json:"tensors"`
}

// useLiteWeights gives the width of each tensor the encoder reads: the
// number of columns of a weight matrix, which the file holds in panels,
// and 0 for the other tensors.
func useLiteWeights() map[string]int {
	ws := map[string]int{}
	bindUSELite(func(name string, _, cols int) []float32 {
		ws[name] = cols
		return nil
	})
	return ws
}

// panelOf is the panel width the file gives a tensor of width cols.
func panelOf(cols int) int {
	if cols > 0 {
		return gemmCols
	}
	return 0
}

// writeWeightsFile converts the float32 tensors the encoder needs from the
// tfjs model in modelDir into the weights file at path: written to a
// temporary file beside it, synced, then renamed into place. It streams the
// shards, holding no tensor in memory.
func writeWeightsFile(modelDir, path string) error {
	raw, err := os.ReadFile(filepath.Join(modelDir, "model.json"))
	if err != nil {
		return err
	}
	var man weightsManifest
	if err := json.Unmarshal(raw, &man); err != nil {
		return fmt.Errorf("parse model.json: %w", err)
	}
	// Where each needed tensor sits in its group's concatenated shards.
	type source struct {
		group      int
		off, count int64
	}
	widths := useLiteWeights()
	need := map[string]*source{}
	for name := range widths {
		need[name] = nil
	}
	for g, group := range man.WeightsManifest {
		var off int64
		for _, w := range group.Weights {
			n := int64(1)
			for _, d := range w.Shape {
				n *= int64(d)
			}
			if w.Dtype != "float32" && w.Dtype != "int32" {
				return fmt.Errorf("weight %s: unsupported dtype %s", w.Name, w.Dtype)
			}
			if _, ok := need[w.Name]; ok && w.Dtype == "float32" {
				need[w.Name] = &source{g, off, n}
			}
			off += 4 * n
		}
	}
	var missing error
	for name, s := range need {
		if s == nil {
			missing = errors.Join(missing, fmt.Errorf("missing weight %s", name))
		}
	}
	if missing != nil {
		return missing
	}
	// The tensors in shard order, so that one pass over the shards writes them.
	names := make([]string, 0, len(need))
	for name := range need {
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int {
		sa, sb := need[a], need[b]
		if sa.group != sb.group {
			return sa.group - sb.group
		}
		return int(sa.off - sb.off)
	})
	var table weightsTable
	for _, name := range names {
		table.Tensors = append(table.Tensors, weightsEntry{Name: name, Count: need[name].count, Panel: panelOf(widths[name])})
	}
	// The table's length does not depend on the offsets' digits once they
	// are padded, so lay it out twice: once to learn its length, once final.
	tableJSON, size := layoutWeights(&table)

	err = atomicfile.Write(path, 0o644, func(tmp *os.File) error {
		h := sha256.New()
		bw := &countWriter{w: io.MultiWriter(tmp, h)}
		if _, err := tmp.Write(make([]byte, weightsFixed)); err != nil {
			return err
		}
		bw.n = weightsFixed
		if _, err := bw.Write(tableJSON); err != nil {
			return err
		}
		group, pos := -1, int64(0)
		var shards io.Reader
		var files []*os.File
		defer func() {
			for _, f := range files {
				f.Close()
			}
		}()
		for _, e := range table.Tensors {
			s := need[e.Name]
			if s.group != group {
				group, pos = s.group, 0
				var rs []io.Reader
				for _, p := range man.WeightsManifest[group].Paths {
					if !filepath.IsLocal(p) {
						return fmt.Errorf("weight shard path %q leaves the model folder", p)
					}
					f, err := os.Open(filepath.Join(modelDir, p))
					if err != nil {
						return err
					}
					files = append(files, f)
					rs = append(rs, f)
				}
				shards = io.MultiReader(rs...)
			}
			if _, err := io.CopyN(io.Discard, shards, s.off-pos); err != nil {
				return fmt.Errorf("weight shards are shorter than model.json says: %w", err)
			}
			if _, err := bw.Write(make([]byte, e.Offset-bw.n)); err != nil {
				return err
			}
			if err := copyTensor(bw, shards, s.count, widths[e.Name]); err != nil {
				return fmt.Errorf("weight %s: %w", e.Name, err)
			}
			pos = s.off + 4*s.count
		}
		if bw.n != size {
			return fmt.Errorf("wrote %d bytes of weights, planned %d", bw.n, size)
		}
		hdr := make([]byte, weightsFixed)
		copy(hdr, weightsMagic)
		binary.LittleEndian.PutUint32(hdr[8:], weightsVersion)
		binary.LittleEndian.PutUint32(hdr[12:], uint32(len(tableJSON)))
		binary.LittleEndian.PutUint64(hdr[16:], uint64(size))
		src := sha256.Sum256(raw)
		copy(hdr[24:56], src[:])
		copy(hdr[56:88], h.Sum(nil))
		_, err := tmp.WriteAt(hdr, 0)
		return err
	})
	if err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	return nil
}

// copyTensor copies a tensor of count values from the shards to w: as it
// is, or, for a matrix of cols columns, in panels.
func copyTensor(w io.Writer, shards io.Reader, count int64, cols int) error {
	if cols == 0 {
		if _, err := io.CopyN(w, shards, 4*count); err != nil {
			return fmt.Errorf("weight shards are shorter than model.json says: %w", err)
		}
		return nil
	}
	if count%int64(cols) != 0 || cols%gemmCols != 0 {
		return fmt.Errorf("%d values are not rows of %d in panels of %d", count, cols, gemmCols)
	}
	b := make([]byte, 4*count)
	if _, err := io.ReadFull(shards, b); err != nil {
		return fmt.Errorf("weight shards are shorter than model.json says: %w", err)
	}
	v := make([]float32, count)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	for i, x := range packMatrix(v, cols) {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	_, err := w.Write(b)
	return err
}

// layoutWeights gives each tensor of t its offset and returns the table's
// JSON and the file's length.
func layoutWeights(t *weightsTable) ([]byte, int64) {
	align := func(n int64) int64 { return (n + weightsAlign - 1) / weightsAlign * weightsAlign }
	// Offsets are first set to a width that the final ones cannot exceed,
	// so the table's length is final after the first pass.
	for i := range t.Tensors {
		t.Tensors[i].Offset = math.MaxInt32
	}
	for {
		b, _ := json.Marshal(t)
		off := align(weightsFixed + int64(len(b)))
		for i := range t.Tensors {
			t.Tensors[i].Offset = off
			off = align(off + 4*t.Tensors[i].Count)
		}
		last := t.Tensors[len(t.Tensors)-1]
		end := last.Offset + 4*last.Count
		nb, _ := json.Marshal(t)
		if len(nb) <= len(b) {
			// Pad the table with spaces to the length the offsets assumed.
			nb = append(nb, bytes.Repeat([]byte(" "), len(b)-len(nb))...)
			return nb, end
		}
	}
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// weightsFile is an opened, checked weights file: its tensors by name,
// backed by a read-only mapping or, where there is none, by the heap.
type weightsFile struct {
	tensors map[string][]float32
	data    []byte // the mapping, or nil when the tensors are on the heap
	mapped  bool
}

// openWeightsFile checks the weights file at path against the model.json
// hash src and opens it. Every error but a missing file wraps
// ErrWeightsFile.
func openWeightsFile(path string, src [32]byte) (*weightsFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	t, size, err := checkWeightsFile(f, src)
	if err != nil {
		return nil, err
	}
	w := &weightsFile{tensors: make(map[string][]float32, len(t.Tensors))}
	littleEndian := binary.NativeEndian.Uint16([]byte{1, 0}) == 1
	if littleEndian {
		if data, err := mapFile(f, size); err == nil {
			w.data, w.mapped = data, true
			for _, e := range t.Tensors {
				if e.Count > 0 {
					w.tensors[e.Name] = unsafe.Slice((*float32)(unsafe.Pointer(&data[e.Offset])), e.Count)
				}
			}
			return w, nil
		}
	}
	// No mapping: the tensors go to the heap.
	for _, e := range t.Tensors {
		b := make([]byte, 4*e.Count)
		if _, err := f.ReadAt(b, e.Offset); err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		a := make([]float32, e.Count)
		for i := range a {
			a[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
		w.tensors[e.Name] = a
	}
	return w, nil
}

// checkWeightsFile reads the header and table of the weights file f and
// checks its length, version, source (the model.json hash src) and
// checksum, reading it (not mapping it: the pages go to the page cache, not
// to this process's resident set). Its errors wrap ErrWeightsFile.
func checkWeightsFile(f *os.File, src [32]byte) (weightsTable, int64, error) {
	path := f.Name()
	var t weightsTable
	fi, err := f.Stat()
	if err != nil {
		return t, 0, err
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w %s: %s", ErrWeightsFile, path, fmt.Sprintf(format, args...))
	}
	hdr := make([]byte, weightsFixed)
	if _, err := io.ReadFull(f, hdr); err != nil {
		return t, 0, bad("truncated header (%d bytes)", fi.Size())
	}
	if string(hdr[:8]) != weightsMagic {
		return t, 0, bad("not a weights file")
	}
	if v := binary.LittleEndian.Uint32(hdr[8:]); v != weightsVersion {
		return t, 0, bad("format version %d, want %d", v, weightsVersion)
	}
	tableLen := int64(binary.LittleEndian.Uint32(hdr[12:]))
	size := int64(binary.LittleEndian.Uint64(hdr[16:]))
	if size != fi.Size() {
		return t, 0, bad("%d bytes, the header says %d (truncated or appended to)", fi.Size(), size)
	}
	if !bytes.Equal(hdr[24:56], src[:]) {
		return t, 0, bad("converted from another model.json")
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return t, 0, fmt.Errorf("read %s: %w", path, err)
	}
	if !bytes.Equal(h.Sum(nil), hdr[56:88]) {
		return t, 0, bad("checksum mismatch")
	}
	if weightsFixed+tableLen > size {
		return t, 0, bad("table of %d bytes past the end", tableLen)
	}
	table := make([]byte, tableLen)
	if _, err := f.ReadAt(table, weightsFixed); err != nil {
		return t, 0, fmt.Errorf("read %s: %w", path, err)
	}
	if err := json.Unmarshal(table, &t); err != nil {
		return t, 0, bad("table: %v", err)
	}
	widths := useLiteWeights()
	for _, e := range t.Tensors {
		if e.Offset < weightsFixed+tableLen || e.Offset%4 != 0 || e.Count < 0 || e.Offset+4*e.Count > size {
			return t, 0, bad("tensor %s at %d (%d values) is outside the file", e.Name, e.Offset, e.Count)
		}
		if cols, ok := widths[e.Name]; ok && e.Panel != panelOf(cols) {
			return t, 0, bad("tensor %s in panels of %d, want %d", e.Name, e.Panel, panelOf(cols))
		}
	}
	return t, size, nil
}
