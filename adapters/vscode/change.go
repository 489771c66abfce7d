package vscode

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// What a save changed: the lines of the text as last remembered against
// the text as saved, cut into hunks with a little context, as old and new
// text pairs (what a Claude Code Edit carries).

const (
	// contextLines is how many unchanged lines a hunk keeps before and
	// after its change. The context after a change stops at a blank line:
	// past it starts the next declaration, which the change did not touch.
	contextLines = 3
	// maxEditScript bounds the line diff's work (Myers' D): past it, the
	// lines between the first and the last change are one hunk.
	maxEditScript = 500
	// maxHunks is how many hunks one event carries; the rest are counted
	// in the first hunks' budget and dropped.
	maxHunks = 24
	// maxHunkBytes is what the pairs of one event may hold in all, well
	// under the store's limit on a tool input.
	maxHunkBytes = 96 << 10
)

// A hunk is a changed region: old[oldStart:oldEnd] became
// new[newStart:newEnd], context included (indexes of lines).
type hunk struct {
	oldStart, oldEnd, newStart, newEnd int
	// The changed lines alone, without context.
	changeOld, changeNew [2]int
}

// pair is a hunk's text: what was there and what is there now.
type pair struct {
	Old string `json:"old_string"`
	New string `json:"new_string"`
}

// splitLines cuts s into lines that keep their line breaks.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.SplitAfter(s, "\n")
}

// hunks returns the changed regions between the old and the new lines,
// each with up to contextLines of context, merged where their contexts
// meet.
func hunks(old, new []string) []hunk {
	regions := changedRegions(old, new)
	var out []hunk
	for _, r := range regions {
		h := hunk{changeOld: [2]int{r[0], r[1]}, changeNew: [2]int{r[2], r[3]}}
		// Context before: up to contextLines, without leading blank lines
		// (a pair that starts on a blank line has no indentation to place
		// it by).
		before := 0
		for before < contextLines && r[0]-before > 0 && r[2]-before > 0 {
			before++
		}
		for before > 0 && strings.TrimSpace(old[r[0]-before]) == "" {
			before--
		}
		// Context after: up to contextLines, stopping at a blank line.
		after := 0
		for after < contextLines && r[1]+after < len(old) && r[3]+after < len(new) && strings.TrimSpace(old[r[1]+after]) != "" {
			after++
		}
		h.oldStart, h.oldEnd = r[0]-before, r[1]+after
		h.newStart, h.newEnd = r[2]-before, r[3]+after
		if n := len(out); n > 0 && out[n-1].oldEnd >= h.oldStart {
			last := &out[n-1]
			last.oldEnd, last.newEnd = h.oldEnd, h.newEnd
			last.changeOld[1], last.changeNew[1] = h.changeOld[1], h.changeNew[1]
			continue
		}
		out = append(out, h)
	}
	return out
}

// changedRegions returns the regions of old and new lines that differ, as
// [oldStart, oldEnd, newStart, newEnd], in order: a line diff (Myers) of
// what lies between the common head and tail, or that whole middle as one
// region when the diff would take more than maxEditScript steps.
func changedRegions(old, new []string) [][4]int {
	head := 0
	for head < len(old) && head < len(new) && old[head] == new[head] {
		head++
	}
	tail := 0
	for tail < len(old)-head && tail < len(new)-head && old[len(old)-1-tail] == new[len(new)-1-tail] {
		tail++
	}
	a, b := old[head:len(old)-tail], new[head:len(new)-tail]
	if len(a) == 0 && len(b) == 0 {
		return nil
	}
	whole := [][4]int{{head, head + len(a), head, head + len(b)}}
	if len(a) == 0 || len(b) == 0 {
		return whole
	}
	script, ok := myers(intern(a, b))
	if !ok {
		return whole
	}
	var out [][4]int
	i, j := 0, 0
	open := false
	var cur [4]int
	for _, op := range script {
		switch op {
		case opEqual:
			if open {
				cur[1], cur[3] = head+i, head+j
				out = append(out, cur)
				open = false
			}
			i++
			j++
			continue
		}
		if !open {
			cur = [4]int{head + i, 0, head + j, 0}
			open = true
		}
		if op == opDelete {
			i++
		} else {
			j++
		}
	}
	if open {
		cur[1], cur[3] = head+i, head+j
		out = append(out, cur)
	}
	return out
}

// intern numbers the distinct lines of a and b.
func intern(a, b []string) ([]int32, []int32) {
	ids := make(map[string]int32, len(a)+len(b))
	num := func(lines []string) []int32 {
		out := make([]int32, len(lines))
		for i, l := range lines {
			id, ok := ids[l]
			if !ok {
				id = int32(len(ids))
				ids[l] = id
			}
			out[i] = id
		}
		return out
	}
	return num(a), num(b)
}

type diffOp uint8

const (
	opEqual diffOp = iota
	opDelete
	opInsert
)

// myers is Myers' O(ND) diff of a and b: the shortest edit script, or
// false when it takes more than maxEditScript deletions and insertions.
func myers(a, b []int32) ([]diffOp, bool) {
	n, m := len(a), len(b)
	offset := maxEditScript + 1
	v := make([]int32, 2*offset+1)
	var trace [][]int32
	for d := 0; d <= maxEditScript; d++ {
		// Keep the part of v that step d reads: diagonals -d..d.
		snap := make([]int32, 2*d+1)
		copy(snap, v[offset-d:offset+d+1])
		trace = append(trace, snap)
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || k != d && v[offset+k-1] < v[offset+k+1] {
				x = int(v[offset+k+1])
			} else {
				x = int(v[offset+k-1]) + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[offset+k] = int32(x)
			if x >= n && y >= m {
				return backtrack(trace, n, m, d), true
			}
		}
	}
	return nil, false
}

// backtrack walks the saved steps of myers back from (n, m) to the start.
func backtrack(trace [][]int32, n, m, dEnd int) []diffOp {
	var ops []diffOp
	x, y := n, m
	for d := dEnd; d > 0; d-- {
		v := trace[d] // the state before step d: diagonals -d..d, index k+d
		at := func(k int) int { return int(v[k+d]) }
		k := x - y
		var prevK int
		if k == -d || k != d && at(k-1) < at(k+1) {
			prevK = k + 1
		} else {
			prevK = k - 1
		}
		prevX := at(prevK)
		prevY := prevX - prevK
		for x > prevX && y > prevY {
			ops = append(ops, opEqual)
			x--
			y--
		}
		if x == prevX {
			ops = append(ops, opInsert)
		} else {
			ops = append(ops, opDelete)
		}
		x, y = prevX, prevY
	}
	for x > 0 && y > 0 {
		ops = append(ops, opEqual)
		x--
		y--
	}
	for i, j := 0, len(ops)-1; i < j; i, j = i+1, j-1 {
		ops[i], ops[j] = ops[j], ops[i]
	}
	return ops
}

// pairsOf turns hunks into old and new text pairs, leaving out the hunks
// that change only whitespace, within maxHunks and maxHunkBytes.
func pairsOf(old, new []string, hs []hunk) []pair {
	var out []pair
	size := 0
	for _, h := range hs {
		changedOld := strings.Join(old[h.changeOld[0]:h.changeOld[1]], "")
		changedNew := strings.Join(new[h.changeNew[0]:h.changeNew[1]], "")
		if sameButSpace(changedOld, changedNew) {
			continue
		}
		p := pair{
			Old: strings.TrimSuffix(strings.Join(old[h.oldStart:h.oldEnd], ""), "\n"),
			New: strings.TrimSuffix(strings.Join(new[h.newStart:h.newEnd], ""), "\n"),
		}
		if len(out) == maxHunks || size+len(p.Old)+len(p.New) > maxHunkBytes && len(out) > 0 {
			break
		}
		size += len(p.Old) + len(p.New)
		out = append(out, p)
	}
	return out
}

// sameButSpace reports whether a and b differ only in whitespace: a change
// a formatter makes.
func sameButSpace(a, b string) bool {
	i, j := 0, 0
	for {
		for i < len(a) && isSpace(a[i]) {
			i++
		}
		for j < len(b) && isSpace(b[j]) {
			j++
		}
		if i == len(a) || j == len(b) {
			return i == len(a) && j == len(b)
		}
		if a[i] != b[j] {
			// Multi-byte spaces (a no-break space) are rare enough in code
			// to compare the slow way.
			ra, na := utf8.DecodeRuneInString(a[i:])
			rb, nb := utf8.DecodeRuneInString(b[j:])
			switch {
			case unicode.IsSpace(ra):
				i += na
			case unicode.IsSpace(rb):
				j += nb
			default:
				return false
			}
			continue
		}
		i++
		j++
	}
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// isBinary reports whether text is not text: it holds a NUL byte, is not
// valid UTF-8, or holds U+FFFD, which is what bytes that are not UTF-8
// become on their way through JSON.
func isBinary(text string) bool {
	return strings.IndexByte(text, 0) >= 0 || !utf8.ValidString(text) || strings.ContainsRune(text, utf8.RuneError)
}
