package vscode_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/mnemo-dev/mnemo/adapters/vscode"
)

func TestTheLineDiffOfASaveRebuildsTheNewTextFromTheOldAndLeavesEqualLinesAlone(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	words := []string{"a\n", "b\n", "c\n", "d\n", "\n", "}\n"}
	gen := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = words[r.IntN(len(words))]
		}
		return out
	}
	for i := range 2000 {
		old := gen(r.IntN(40))
		// The new text is the old with a few edits, or something else.
		new := slices.Clone(old)
		for range r.IntN(6) {
			at := r.IntN(len(new) + 1)
			switch r.IntN(3) {
			case 0:
				new = slices.Insert(new, at, gen(1+r.IntN(3))...)
			case 1:
				if at < len(new) {
					new = slices.Delete(new, at, min(len(new), at+1+r.IntN(3)))
				}
			default:
				if at < len(new) {
					new[at] = words[r.IntN(len(words))]
				}
			}
		}
		if i%10 == 0 {
			new = gen(r.IntN(40))
		}
		regions := vscode.ChangedRegions(old, new)
		var rebuilt []string
		oi := 0
		for _, g := range regions {
			if g[0] < oi || g[0] > g[1] || g[2] > g[3] {
				t.Fatalf("case %d: regions %v are out of order", i, regions)
			}
			rebuilt = append(rebuilt, old[oi:g[0]]...)
			rebuilt = append(rebuilt, new[g[2]:g[3]]...)
			oi = g[1]
		}
		rebuilt = append(rebuilt, old[oi:]...)
		if !slices.Equal(rebuilt, new) {
			t.Fatalf("case %d: old %q with regions %v gives %q, want %q", i, old, regions, rebuilt, new)
		}
		if slices.Equal(old, new) && len(regions) != 0 {
			t.Fatalf("case %d: equal texts have regions %v", i, regions)
		}
	}
}
