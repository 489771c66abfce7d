package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/store"
)

// Duplicates is how much of what a replay stored says a fact seen before
// (memory.Observation.FactKey): Seen observations were made (a record
// folded n times counts n), Records are stored, Facts are distinct.
type Duplicates struct {
	Seen, Records, Facts int
	// Superseded records are those a later one of the same subject
	// superseded (memory/supersede.go).
	Superseded int
}

// Repeats is the number of observations that said a fact already seen.
func (d Duplicates) Repeats() int { return d.Seen - d.Facts }

// Share is Repeats of Seen.
func (d Duplicates) Share() float64 { return float64(d.Repeats()) / float64(max(d.Seen, 1)) }

// countDuplicates reads every stored observation of mem.
func countDuplicates(ctx context.Context, mem *store.Memory) (Duplicates, error) {
	var buf bytes.Buffer
	if _, err := mem.Export(ctx, &buf, false); err != nil {
		return Duplicates{}, err
	}
	var d Duplicates
	facts := map[string]bool{}
	sc := bufio.NewScanner(&buf)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var rec memory.Record
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return Duplicates{}, err
		}
		o := rec.Observation
		if rec.Kind != "observation" || o == nil {
			continue
		}
		d.Records++
		d.Seen += o.Seen()
		if o.SupersededBy != 0 {
			d.Superseded++
		}
		if k := o.FactKey(); k == "" || !facts[k] {
			d.Facts++
			facts[k] = k != ""
		}
	}
	return d, sc.Err()
}

// printDuplicates prints the duplicate rate of a replayed memory.
func printDuplicates(ctx context.Context, w io.Writer, mem *store.Memory) error {
	d, err := countDuplicates(ctx, mem)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "   duplicates: %d observations made, %d stored records, %d distinct facts: %d exact repeats of an earlier fact (%.1f%%), %d folded; %d records superseded\n",
		d.Seen, d.Records, d.Facts, d.Repeats(), 100*d.Share(), d.Seen-d.Records, d.Superseded)
	return nil
}
