//go:build unix

package main

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/mnemo-dev/mnemo/memory/store"
)

// diskResult is what a data set takes on disk.
type diskResult struct {
	home      int64            // du of MNEMO_HOME after the import, the daemon stopped
	byPlace   map[string]int64 // the same by folder of the home ("db", "logs", …) and, in db, by kind of file
	compacted int64            // du of MNEMO_HOME with its store compacted (a copy)
	families  []store.KeyFamily
}

// du is the disk space the files under dir take (allocated blocks, as du
// counts them), in all and by place: the first folder under dir, and for
// the store ("db") the kind of file (sst, vlog, mem, MANIFEST, …).
func du(dir string) (int64, map[string]int64, error) {
	var total int64
	by := map[string]int64{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		n := fi.Size()
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			n = st.Blocks * 512
		}
		total += n
		rel, _ := filepath.Rel(dir, path)
		place, rest, _ := strings.Cut(filepath.ToSlash(rel), "/")
		if place == "db" {
			kind := strings.TrimPrefix(filepath.Ext(rest), ".")
			if kind == "" {
				kind = rest
			}
			place += " " + kind
		}
		by[place] += n
		return nil
	})
	return total, by, err
}

// measureDisk measures e's home after an import of n observations, with
// its daemon stopped; then compacts a copy of its store, as forget does,
// and measures again.
func measureDisk(ctx context.Context, e *env, tmp string) (diskResult, error) {
	var res diskResult
	var err error
	if res.home, res.byPlace, err = du(e.home); err != nil {
		return res, err
	}
	db := filepath.Join(e.home, "db")
	if res.families, err = store.DirFootprint(ctx, db); err != nil {
		return res, fmt.Errorf("footprint: %w", err)
	}
	cp := filepath.Join(tmp, "db-compacted")
	defer os.RemoveAll(cp)
	if err := copyDir(db, cp); err != nil {
		return res, err
	}
	if err := store.CompactDir(cp); err != nil {
		return res, fmt.Errorf("compact a copy: %w", err)
	}
	dbNow, _, err := du(db)
	if err != nil {
		return res, err
	}
	cpNow, _, err := du(cp)
	if err != nil {
		return res, err
	}
	res.compacted = res.home - dbNow + cpNow
	return res, nil
}

// copyDir copies the files of src into dst, keeping them sparse: Badger's
// files are preallocated, and a dense copy would count bytes the store
// never wrote.
func copyDir(src, dst string) error {
	if err := os.MkdirAll(dst, 0o700); err != nil {
		return err
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, ent := range ents {
		if !ent.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, ent.Name()))
		if err != nil {
			return err
		}
		if err := writeSparse(filepath.Join(dst, ent.Name()), b); err != nil {
			return err
		}
	}
	return nil
}

// writeSparse writes b to path, leaving holes where b has whole blocks of
// zeros.
func writeSparse(path string, b []byte) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	const block = 4096
	var zero [block]byte
	for off := 0; off < len(b) && err == nil; off += block {
		chunk := b[off:min(off+block, len(b))]
		if !bytes.Equal(chunk, zero[:len(chunk)]) {
			_, err = f.WriteAt(chunk, int64(off))
		}
	}
	if err == nil {
		err = f.Truncate(int64(len(b)))
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// row is the disk row of a data set of n observations.
func (r diskResult) row(n int) row {
	per := func(b int64) string { return fmt.Sprintf("%.2f KB", float64(b)/float64(n)/1000) }
	fp := store.Parts(r.families)
	var places []string
	for _, p := range slices.Sorted(maps.Keys(r.byPlace)) {
		places = append(places, fmt.Sprintf("%s %.1f MB", p, float64(r.byPlace[p])/1e6))
	}
	budget, v := "(≤ 4 KB at 100k)", ""
	if n >= 100_000 {
		budget, v = "≤ 4 KB", verdict(float64(r.home)/float64(n) <= 4000)
	}
	return row{fmt.Sprintf("disk per observation, %s observations", sizeName(n)), per(r.home), budget, v,
		fmt.Sprintf("du of all of MNEMO_HOME after the import, the daemon stopped (Badger closed: memtables flushed, not compacted): %.1f MB (%s); "+
			"%s per observation (%.1f MB) once compacted as forget does (flatten, value-log GC; measured on a copy). "+
			"Live keys and values per observation: %s in all: observations %s, vectors %s, indexes %s, sessions, prompts and summaries %s, the rest %s; "+
			"Badger's own (tables' indexes and filters, versions, garbage) %s",
			float64(r.home)/1e6, strings.Join(places, ", "), per(r.compacted), float64(r.compacted)/1e6,
			per(fp.All), per(fp.Observations), per(fp.Vectors), per(fp.Indexes), per(fp.Records),
			per(fp.All-fp.Observations-fp.Vectors-fp.Indexes-fp.Records), per(r.byPlaceDB()-fp.All))}
}

// byPlaceDB is what the store's folder takes.
func (r diskResult) byPlaceDB() int64 {
	var n int64
	for p, b := range r.byPlace {
		if p == "db" || strings.HasPrefix(p, "db ") {
			n += b
		}
	}
	return n
}
