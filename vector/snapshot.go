package vector

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"math"
	"runtime"
	"sync"
	"unsafe"

	chromem "github.com/philippgille/chromem-go"
)

// A snapshot is the index written out whole, so that a daemon starting on
// a large memory is ready to search in a fraction of the time it takes to
// analyse every document again. It holds no text: per document its id, the
// caller's stamp, time, project, type, lowercased file paths and quantized
// vector; per term its hash and postings. Only live documents are written,
// so a forgotten document's paths and terms leave the file with the next
// snapshot. The last four bytes are a CRC-32C (Castagnoli) of the rest: a
// snapshot that does not check out is refused whole.
//
// Layout, little-endian: the magic, the format version, the caller's
// version of what the snapshot holds, the embedder's id and dimensions,
// the project, type and host names, then column by column the documents
// (ids, times, projects, types, hosts, lengths, inverse norms,
// path lengths and bytes, vectors), the terms (hashes, refs) and the
// posting lists (counts, last slots, byte lengths, bytes).

const (
	snapshotMagic = "mnemo index snapshot\n"
	// snapshotVersion 2 added the hosts; 3 checks with CRC-32C, which the
	// processor computes, where 2 took IEEE's.
	snapshotVersion = 3
	// maxSnapshotCount bounds any count read from a snapshot, so that a
	// damaged one fails with an error instead of a huge allocation.
	maxSnapshotCount = 1 << 30
)

// ErrSnapshot means a snapshot cannot be used: damaged, of another format
// version, or of another embedder.
var ErrSnapshot = errors.New("unusable index snapshot")

// WriteSnapshot writes the index's live documents to w. asOf is the
// caller's version of them (e.g. the store's commit timestamp that the
// index has caught up with); LoadSnapshot gives it back.
func (ix *Index) WriteSnapshot(w io.Writer, asOf uint64) error {
	ix.mu.RLock()
	defer ix.mu.RUnlock()

	// Live slots, renumbered in order: a posting list stays in slot order
	// wherever it was.
	renum := make([]uint32, len(ix.slots))
	var live []uint32
	for slot := range ix.slots {
		if ix.slots[slot].live {
			renum[slot] = uint32(len(live))
			live = append(live, uint32(slot))
		}
	}
	var (
		hashes []uint64
		refs   []uint64
		lists  []postingList
	)
	for id, h := range ix.kw.dict.hashes {
		var l postingList
		first, firstTF := uint32(0), uint16(0)
		ix.kw.each(uint32(id), func(slot uint32, tf2 uint16) {
			if !ix.slots[slot].live {
				return
			}
			s := renum[slot]
			if l.n == 0 {
				first, firstTF = s, tf2
			}
			l.data = appendPosting(l.data, l.last, s, tf2)
			l.last = s
			l.n++
		})
		switch l.n {
		case 0:
			continue
		case 1:
			refs = append(refs, singleRef(first, firstTF))
		default:
			refs = append(refs, listBit|uint64(len(lists)))
			lists = append(lists, l)
		}
		hashes = append(hashes, h)
	}

	sw := newSnapshotWriter(w)
	sw.bytes([]byte(snapshotMagic))
	sw.u32(snapshotVersion)
	sw.put(asOf)
	sw.str(ix.emb.ID())
	sw.u32(uint32(ix.dim))
	sw.strs(ix.projects.list)
	sw.strs(ix.types.list)
	sw.strs(ix.hosts.list)

	n := len(live)
	ids, times := make([]uint64, n), make([]int64, n)
	projs, typs, hosts, fileLens := make([]uint32, n), make([]uint32, n), make([]uint32, n), make([]uint32, n)
	docLen, inv := make([]float32, n), make([]float32, n)
	quant := make([]int8, 0, n*ix.dim)
	for i, slot := range live {
		e := &ix.slots[slot]
		ids[i], times[i] = e.id, e.time
		projs[i], typs[i], hosts[i], fileLens[i] = e.project, e.typ, e.host, uint32(len(e.files))
		docLen[i], inv[i] = ix.kw.docLen[slot], ix.inv[slot]
		quant = append(quant, ix.quant[int(slot)*ix.dim:int(slot+1)*ix.dim]...)
	}
	sw.u32(uint32(n))
	for _, col := range []any{ids, times, projs, typs, hosts, docLen, inv, fileLens} {
		sw.put(col)
	}
	for _, slot := range live {
		sw.bytes([]byte(ix.slots[slot].files))
	}
	sw.put(quant)

	sw.u32(uint32(len(hashes)))
	sw.put(hashes)
	sw.put(refs)
	sw.u32(uint32(len(lists)))
	counts, lasts, lens := make([]int32, len(lists)), make([]uint32, len(lists)), make([]uint32, len(lists))
	for i, l := range lists {
		counts[i], lasts[i], lens[i] = l.n, l.last, uint32(len(l.data))
	}
	sw.put(counts)
	sw.put(lasts)
	sw.put(lens)
	for _, l := range lists {
		sw.bytes(l.data)
	}
	return sw.finish()
}

// LoadSnapshot fills an empty index from a snapshot that WriteSnapshot
// wrote with the same embedder. current tells, given the snapshot's asOf,
// which of its documents (by id) are still what the caller has; the
// others are left out.
// It returns the number of documents loaded and the snapshot's asOf. On an
// error the index is left empty; a snapshot that is damaged, of another format or of another
// embedder gives an error wrapping ErrSnapshot.
func (ix *Index) LoadSnapshot(r io.Reader, current func(asOf, id uint64) bool) (loaded int, asOf uint64, err error) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if len(ix.slots) != 0 {
		return 0, 0, errors.New("load snapshot: the index is not empty")
	}
	n, asOf, err := ix.readSnapshot(r)
	if err != nil {
		return 0, 0, fmt.Errorf("load snapshot: %w", err)
	}
	for slot := range n {
		e := &ix.slots[slot]
		if !current(asOf, e.id) {
			ix.removeSlot(uint32(slot))
		}
	}
	ix.compact()
	// The small projects' collections.
	for slot := range ix.slots {
		e := &ix.slots[slot]
		if !e.live || ix.inv[slot] == 0 || ix.vecCount[e.project] > smallProject {
			continue
		}
		col, err := ix.collection(e.project)
		if err == nil {
			q := ix.quant[slot*ix.dim : (slot+1)*ix.dim]
			err = col.AddDocument(context.Background(), chromem.Document{ID: docKey(e.id), Embedding: dequantizeUnit(q, ix.inv[slot])})
		}
		if err != nil {
			ix.clear()
			return 0, 0, fmt.Errorf("load snapshot: %w", err)
		}
	}
	return len(ix.byID), asOf, nil
}

// clear empties the index. Callers hold the write lock.
func (ix *Index) clear() {
	for p := range ix.cols {
		_ = ix.db.DeleteCollection(collectionName(ix.projects.list[p]))
	}
	clear(ix.cols)
	clear(ix.byID)
	ix.slots, ix.dead, ix.gone, ix.free = nil, nil, nil, nil
	ix.kw = keywordIndex{}
	ix.quant, ix.inv, ix.codes = nil, nil, nil
	ix.nvec = 0
	ix.projects, ix.vecCount, ix.types, ix.hosts = names{}, nil, names{}, names{}
	ix.gen++
}

// readSnapshot reads a snapshot into the empty index, checking it whole.
// Callers hold the write lock.
func (ix *Index) readSnapshot(r io.Reader) (n int, asOf uint64, err error) {
	sr := newSnapshotReader(r)
	magic := make([]byte, len(snapshotMagic))
	sr.fill(magic)
	if sr.err == nil && string(magic) != snapshotMagic {
		return 0, 0, fmt.Errorf("%w: not a snapshot", ErrSnapshot)
	}
	if v := sr.u32(); sr.err == nil && v != snapshotVersion {
		return 0, 0, fmt.Errorf("%w: format version %d, want %d", ErrSnapshot, v, snapshotVersion)
	}
	sr.get(&asOf)
	if id := sr.str(); sr.err == nil && id != ix.emb.ID() {
		return 0, 0, fmt.Errorf("%w: embedder %s, want %s", ErrSnapshot, id, ix.emb.ID())
	}
	if dim := sr.u32(); sr.err == nil && int(dim) != ix.dim {
		return 0, 0, fmt.Errorf("%w: %d dimensions, want %d", ErrSnapshot, dim, ix.dim)
	}
	projects := sr.strs()
	types := sr.strs()
	hostNames := sr.strs()
	n = sr.count()
	ids := make([]uint64, n)
	times := make([]int64, n)
	projs := make([]uint32, n)
	typs := make([]uint32, n)
	hosts := make([]uint32, n)
	docLen := make([]float32, n)
	inv := make([]float32, n)
	fileLens := make([]uint32, n)
	for _, col := range []any{ids, times, projs, typs, hosts, docLen, inv, fileLens} {
		sr.get(col)
	}
	files := make([]string, n)
	for i, l := range fileLens {
		if sr.err != nil || l > maxSnapshotCount {
			sr.fail("a path list's length")
			break
		}
		b := make([]byte, l)
		sr.fill(b)
		files[i] = string(b)
	}
	quant := make([]int8, n*ix.dim)
	sr.get(quant)

	m := sr.count()
	hashes := make([]uint64, m)
	refs := make([]uint64, m)
	sr.get(hashes)
	sr.get(refs)
	nl := sr.count()
	lists := make([]postingList, nl)
	counts := make([]int32, nl)
	lasts := make([]uint32, nl)
	lens := make([]uint32, nl)
	sr.get(counts)
	sr.get(lasts)
	sr.get(lens)
	total := 0
	for _, l := range lens {
		total += int(l)
	}
	if total > maxSnapshotCount {
		sr.fail("the posting lists' length")
	}
	var arena []byte
	if sr.err == nil {
		arena = make([]byte, total)
		adviseHuge(arena)
		sr.fill(arena)
	}
	sr.check()
	if sr.err != nil {
		return 0, 0, sr.err
	}

	// Everything read and checked: validate the references, then install.
	for i := range n {
		if int(projs[i]) >= len(projects) || int(typs[i]) >= len(types) || int(hosts[i]) >= len(hostNames) {
			return 0, 0, fmt.Errorf("%w: document %d names project %d, type %d or host %d of %d, %d and %d",
				ErrSnapshot, ids[i], projs[i], typs[i], hosts[i], len(projects), len(types), len(hostNames))
		}
	}
	off := 0
	for i := range lists {
		// Each list's own capacity, so that appending to one never writes
		// over the next.
		lists[i] = postingList{data: arena[off : off+int(lens[i]) : off+int(lens[i])], last: lasts[i], n: counts[i]}
		off += int(lens[i])
	}
	for _, ref := range refs {
		switch {
		case ref&listBit != 0:
			if uint32(ref) >= uint32(nl) {
				return 0, 0, fmt.Errorf("%w: a term names posting list %d of %d", ErrSnapshot, uint32(ref), nl)
			}
		case uint32(ref>>16) >= uint32(n) || uint16(ref) == 0:
			return 0, 0, fmt.Errorf("%w: a term's posting names slot %d of %d", ErrSnapshot, uint32(ref>>16), n)
		}
	}
	for i := range lists {
		bad := false
		lists[i].each(func(slot uint32, _ uint16) { bad = bad || slot >= uint32(n) })
		if bad {
			return 0, 0, fmt.Errorf("%w: posting list %d names a slot past %d", ErrSnapshot, i, n)
		}
	}

	ix.projects.set(projects)
	ix.types.set(types)
	ix.hosts.set(hostNames)
	ix.vecCount = make([]int, len(projects))
	ix.slots = make([]entry, n)
	ix.gone = make([]bool, n)
	ix.quant = quant
	ix.inv = inv
	ix.codes = make([]uint64, n*ix.words)
	adviseHuge(sliceBytes(ix.codes))
	ix.signCodes(n)
	for i := range n {
		ix.slots[i] = entry{id: ids[i], time: times[i], files: files[i], project: projs[i], typ: typs[i], host: hosts[i], live: true}
		ix.byID[ids[i]] = uint32(i)
		if inv[i] != 0 {
			ix.nvec++
			ix.vecCount[projs[i]]++
		}
		ix.kw.sumLen += float64(docLen[i])
	}
	ix.kw.docLen = docLen
	ix.kw.live = n
	ix.kw.refs = refs
	ix.kw.lists = lists
	ix.kw.dict.hashes = hashes
	ix.kw.dict.grow(tableSize(len(hashes)))
	ix.gen++
	return n, asOf, nil
}

// signCodes computes the sign codes of the first n slots from their
// quantized vectors, on every processor (a tenth of a 100k load on one).
// Slots without a vector keep a zero code. Callers hold the write lock.
func (ix *Index) signCodes(n int) {
	workers := min(runtime.GOMAXPROCS(0), max(1, n/4096))
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := n*w/workers, n*(w+1)/workers
		wg.Go(func() {
			for i := lo; i < hi; i++ {
				if ix.inv[i] != 0 {
					signCodeQ(ix.quant[i*ix.dim:(i+1)*ix.dim], ix.codes[i*ix.words:(i+1)*ix.words])
				}
			}
		})
	}
	wg.Wait()
}

// snapshotWriter writes little-endian values, summing them into a CRC; the
// first error sticks.
type snapshotWriter struct {
	w   *bufio.Writer
	crc hash.Hash32
	err error
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func newSnapshotWriter(w io.Writer) *snapshotWriter {
	crc := crc32.New(castagnoli)
	return &snapshotWriter{w: bufio.NewWriterSize(io.MultiWriter(w, crc), 1<<20), crc: crc}
}

func (s *snapshotWriter) put(v any) {
	if s.err != nil {
		return
	}
	if b, ok := rawBytes(v); ok {
		_, s.err = s.w.Write(b)
		return
	}
	s.err = binary.Write(s.w, binary.LittleEndian, v)
}

func (s *snapshotWriter) bytes(b []byte) {
	if s.err == nil {
		_, s.err = s.w.Write(b)
	}
}

func (s *snapshotWriter) u32(v uint32) { s.put(v) }

func (s *snapshotWriter) str(v string) {
	s.u32(uint32(len(v)))
	s.bytes([]byte(v))
}

func (s *snapshotWriter) strs(vs []string) {
	s.u32(uint32(len(vs)))
	for _, v := range vs {
		s.str(v)
	}
}

// finish writes the CRC of everything before it.
func (s *snapshotWriter) finish() error {
	if s.err == nil {
		s.err = s.w.Flush()
	}
	if s.err != nil {
		return fmt.Errorf("write snapshot: %w", s.err)
	}
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], s.crc.Sum32())
	if _, err := s.w.Write(b[:]); err != nil {
		return fmt.Errorf("write snapshot: %w", err)
	}
	if err := s.w.Flush(); err != nil {
		return fmt.Errorf("write snapshot: %w", err)
	}
	return nil
}

// snapshotReader reads what snapshotWriter wrote; the first error sticks.
type snapshotReader struct {
	r   *bufio.Reader
	crc hash.Hash32
	err error
}

func newSnapshotReader(r io.Reader) *snapshotReader {
	return &snapshotReader{r: bufio.NewReaderSize(r, snapshotPiece), crc: crc32.New(castagnoli)}
}

// fill reads len(b) bytes into b, summing them into the CRC a piece at a
// time while the piece is still in the processor's cache (a column read
// whole, then summed, would be read from memory twice: at 100k the vectors
// alone are 51 MB). A piece is as big as the reader's buffer, which then
// reads straight into b.
func (s *snapshotReader) fill(b []byte) {
	for len(b) > 0 && s.err == nil {
		n := min(len(b), snapshotPiece)
		if _, err := io.ReadFull(s.r, b[:n]); err != nil {
			s.err = fmt.Errorf("%w: %v", ErrSnapshot, err)
			return
		}
		s.crc.Write(b[:n])
		b = b[n:]
	}
}

// snapshotPiece is the snapshot reader's buffer, and the most it reads
// before summing.
const snapshotPiece = 1 << 20

func (s *snapshotReader) get(v any) {
	if s.err != nil {
		return
	}
	if b, ok := rawBytes(v); ok {
		adviseHuge(b)
		s.fill(b)
		return
	}
	b := make([]byte, binary.Size(v))
	s.fill(b)
	if s.err == nil {
		_, s.err = binary.Decode(b, binary.LittleEndian, v)
	}
}

func (s *snapshotReader) u32() uint32 {
	var v uint32
	s.get(&v)
	return v
}

// count reads a count, refusing one past maxSnapshotCount.
func (s *snapshotReader) count() int {
	v := s.u32()
	if v > maxSnapshotCount {
		s.fail("a count")
		return 0
	}
	return int(v)
}

func (s *snapshotReader) str() string {
	n := s.count()
	if n > math.MaxUint16 {
		s.fail("a name's length")
	}
	if s.err != nil {
		return ""
	}
	b := make([]byte, n)
	s.fill(b)
	return string(b)
}

func (s *snapshotReader) strs() []string {
	n := s.count()
	if n > math.MaxUint16 {
		s.fail("the number of names")
	}
	var out []string
	for range n {
		if s.err != nil {
			break
		}
		out = append(out, s.str())
	}
	return out
}

// rawBytes gives the memory of v, a slice of fixed-size numbers, as bytes,
// when this machine lays numbers out little-endian as the snapshot does:
// the columns (a 100k memory's vectors alone are 51 MB) are then read and
// written in place, where encoding/binary would convert them one element
// at a time through a copy. ok is false for anything else, and on a
// big-endian machine.
func rawBytes(v any) (b []byte, ok bool) {
	if !littleEndian {
		return nil, false
	}
	switch s := v.(type) {
	case []uint64:
		return sliceBytes(s), true
	case []int64:
		return sliceBytes(s), true
	case []uint32:
		return sliceBytes(s), true
	case []int32:
		return sliceBytes(s), true
	case []float32:
		return sliceBytes(s), true
	case []int8:
		return sliceBytes(s), true
	}
	return nil, false
}

var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

func sliceBytes[T uint64 | int64 | uint32 | int32 | float32 | int8](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(s[0])))
}

func (s *snapshotReader) fail(what string) {
	if s.err == nil {
		s.err = fmt.Errorf("%w: %s is out of range", ErrSnapshot, what)
	}
}

// check reads the CRC at the end and compares it, and that nothing follows.
func (s *snapshotReader) check() {
	if s.err != nil {
		return
	}
	want := s.crc.Sum32()
	var b [4]byte
	if _, err := io.ReadFull(s.r, b[:]); err != nil {
		s.err = fmt.Errorf("%w: no checksum: %v", ErrSnapshot, err)
		return
	}
	if got := binary.LittleEndian.Uint32(b[:]); got != want {
		s.err = fmt.Errorf("%w: checksum %08x, want %08x", ErrSnapshot, got, want)
		return
	}
	if _, err := s.r.ReadByte(); err != io.EOF {
		s.err = fmt.Errorf("%w: bytes after the checksum", ErrSnapshot)
	}
}
