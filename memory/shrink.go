package memory

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// ShrinkJSON returns the JSON value raw cut to at most limit bytes, its
// shape kept: the longest string values are cut to their start and their
// end, each around a note of how much was cut ("\n[… 29123456 bytes cut
// …]\n"), all to one length, the longest that fits (shorter strings, keys,
// numbers and the structure are kept whole). A tool's output is then
// remembered with its beginning and its end, what a person would look at.
// raw must be valid JSON; it is returned as it is when it fits. When even
// the structure with every string cut does not fit, the value is replaced
// by a JSON string of its start, cut to fit.
func ShrinkJSON(raw []byte, limit int) []byte {
	if len(raw) <= limit {
		return raw
	}
	spans := stringSpans(raw)
	var lengths []int
	for _, sp := range spans {
		if !sp.key {
			lengths = append(lengths, sp.end-sp.start)
		}
	}
	slices.Sort(lengths)
	fixed := len(raw)
	for _, n := range lengths {
		fixed -= n
	}
	// The longest length every string value may keep (its content, in
	// encoded bytes, the note included) so that the whole fits.
	fits := func(each int) bool {
		total := fixed
		for _, n := range lengths {
			total += min(n, each)
			if total > limit {
				return false
			}
		}
		return true
	}
	if len(lengths) == 0 || !fits(minCut) {
		return clipString(raw, limit)
	}
	lo, hi := minCut, lengths[len(lengths)-1]
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		if fits(mid) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	each := lo
	out := make([]byte, 0, limit)
	last := 0
	for _, sp := range spans {
		if sp.key || sp.end-sp.start <= each {
			continue
		}
		out = append(out, raw[last:sp.start]...)
		out = cutString(out, raw[sp.start:sp.end], each)
		last = sp.end
	}
	return append(out, raw[last:]...)
}

// minCut is the shortest a cut string gets: its note and a little of
// each end.
const minCut = 64

// span is a string in a JSON text: its content (the bytes between the
// quotes, still encoded) and whether it is an object's key.
type span struct {
	start, end int
	key        bool
}

// stringSpans finds the strings of the valid JSON text raw.
func stringSpans(raw []byte) []span {
	var spans []span
	for i := 0; i < len(raw); i++ {
		q := bytes.IndexByte(raw[i:], '"')
		if q < 0 {
			break
		}
		start := i + q + 1
		j := start
		for {
			k := bytes.IndexByte(raw[j:], '"')
			if k < 0 {
				return spans // not valid JSON
			}
			j += k
			if backslashesBefore(raw, j)%2 == 0 {
				break
			}
			j++
		}
		k := j + 1
		for k < len(raw) && (raw[k] == ' ' || raw[k] == '\t' || raw[k] == '\n' || raw[k] == '\r') {
			k++
		}
		spans = append(spans, span{start: start, end: j, key: k < len(raw) && raw[k] == ':'})
		i = j
	}
	return spans
}

// backslashesBefore counts the backslashes right before s[i].
func backslashesBefore(s []byte, i int) int {
	n := 0
	for i-n-1 >= 0 && s[i-n-1] == '\\' {
		n++
	}
	return n
}

// cutString appends the encoded string content s cut to at most limit
// bytes: its start, a note of what was cut, its end. Cuts fall between
// characters, never inside an escape or a UTF-8 sequence. Notes of
// earlier cuts in what it cuts out are added into its own.
func cutString(out, s []byte, limit int) []byte {
	// The note's length depends on the number it holds (which may be more
	// than len(s), when s holds notes of earlier cuts): budget for the
	// longest there is.
	keep := limit - (len(noteStart) + len(strconv.Itoa(math.MaxInt)) + len(noteEnd))
	head := safeCut(s, keep/2, false)
	tail := safeCut(s, len(s)-(keep-keep/2), true)
	out = append(out, s[:head]...)
	out = append(out, cutNote(cutBytes(s[head:tail]))...)
	return append(out, s[tail:]...)
}

// cutNote is the note in place of n cut bytes, encoded as JSON string
// content.
func cutNote(n int) string {
	return noteStart + strconv.Itoa(n) + noteEnd
}

const (
	noteStart = `\n[… `
	noteEnd   = ` bytes cut …]\n`
)

// cutBytes is how many bytes of the original text cut stands for: its
// length, less the notes of earlier cuts in it, plus what they say.
func cutBytes(cut []byte) int {
	n := len(cut)
	for rest := cut; ; {
		i := bytes.Index(rest, []byte(noteStart))
		if i < 0 {
			return n
		}
		rest = rest[i+len(noteStart):]
		j := 0
		for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
			j++
		}
		if j == 0 || !bytes.HasPrefix(rest[j:], []byte(noteEnd)) {
			continue
		}
		said, err := strconv.Atoi(string(rest[:j]))
		if err != nil {
			continue
		}
		n += said - (len(noteStart) + j + len(noteEnd))
		rest = rest[j+len(noteEnd):]
	}
}

// safeCut returns the position in the encoded string content s nearest to
// at where it may be cut: not inside an escape (\n, \uXXXX) nor a UTF-8
// sequence; before at, or with up, after it.
func safeCut(s []byte, at int, up bool) int {
	at = max(0, min(at, len(s)))
	for at > 0 && at < len(s) && !safeAt(s, at) {
		if up {
			at++
		} else {
			at--
		}
	}
	return at
}

// safeAt reports whether s may be cut before s[i].
func safeAt(s []byte, i int) bool {
	if !utf8.RuneStart(s[i]) {
		return false
	}
	// An escape is at most six bytes: \uXXXX.
	for d := 1; d <= 5 && i-d >= 0; d++ {
		if s[i-d] != '\\' {
			continue
		}
		if backslashesBefore(s, i-d)%2 == 1 {
			return true // an escaped backslash ends here: no escape starts at i-d
		}
		size := 2
		if i-d+1 < len(s) && s[i-d+1] == 'u' {
			size = 6
		}
		return d >= size
	}
	return true
}

// clipString is raw's start as a JSON string, cut to fit in limit bytes.
func clipString(raw []byte, limit int) []byte {
	text := string(raw)
	for n := limit; n > 0; n -= max(1, n/8) {
		out, _ := json.Marshal(clip(text, n))
		if len(out) <= limit {
			return out
		}
	}
	return []byte(`""`)
}

// clip is s cut to at most n bytes, at a character boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
