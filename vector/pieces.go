package vector

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf16"

	"golang.org/x/text/unicode/norm"
)

// pieceTokenizer splits text into the SentencePiece pieces of the Universal
// Sentence Encoder vocabulary, the way the TensorFlow.js tokenizer does:
// NFKC, "▁" for spaces, a trie of pieces and a Viterbi pass over piece
// scores. Its quirks are kept on purpose, because the weights were trained
// with them: a null score counts as 0, the first candidate of a position wins
// when the best score there is still 0, the backward pass steps by the UTF-16
// length of a piece, and consecutive unknown characters become one id 0.
type pieceTokenizer struct {
	root   *trieNode
	pieces []string
	u16len []int
}

type trieNode struct {
	children map[rune]*trieNode
	end      bool
	nsym     int // symbols from the root to here
	score    float64
	index    int
}

// piecesReserved is the number of control pieces at the start of the
// vocabulary (unknown, <s>, </s>, extra ids) that never match text.
const piecesReserved = 6

// newPieceTokenizer builds the trie from vocab.json: an array of
// [piece, score] pairs.
func newPieceTokenizer(vocabJSON []byte) (*pieceTokenizer, error) {
	var vocab [][]any
	if err := json.Unmarshal(vocabJSON, &vocab); err != nil {
		return nil, fmt.Errorf("parse vocab.json: %w", err)
	}
	if len(vocab) <= piecesReserved {
		return nil, fmt.Errorf("vocab.json has only %d pieces", len(vocab))
	}
	t := &pieceTokenizer{root: &trieNode{children: map[rune]*trieNode{}}}
	for i, entry := range vocab {
		if len(entry) == 0 {
			return nil, fmt.Errorf("vocab.json: entry %d is empty", i)
		}
		s, ok := entry[0].(string)
		if !ok {
			return nil, fmt.Errorf("vocab.json: entry %d is not a string", i)
		}
		t.pieces = append(t.pieces, s)
		t.u16len = append(t.u16len, len(utf16.Encode([]rune(s))))
		if i < piecesReserved {
			continue
		}
		var score float64
		if len(entry) > 1 {
			score, _ = entry[1].(float64) // null scores behave as 0 in the reference
		}
		node := t.root
		rs := []rune(s)
		for j, r := range rs {
			c, ok := node.children[r]
			if !ok {
				c = &trieNode{children: map[rune]*trieNode{}, nsym: j + 1}
				node.children[r] = c
			}
			node = c
		}
		node.end, node.score, node.index = true, score, i
	}
	return t, nil
}

type pieceMatch struct {
	start, nsym int
	score       float64
	index       int
}

// encodeFirst returns the first max piece ids of text, as encode would,
// reading no more of a long text than they come from: no piece holds a
// space but at its start, so where the text has a space every piece ends
// before it or starts with it, and the pieces before the max-th space are
// those of the text up to it, of which there are at least max. (The
// reference walks back over a piece by its length in UTF-16; a piece past
// the cut with a character outside the BMP could make that walk land
// elsewhere, so a text with one there is read whole.)
func (t *pieceTokenizer) encodeFirst(text string, max int) []int {
	spaces := 0
	for i := 0; i < len(text); i++ {
		if text[i] != ' ' {
			continue
		}
		// The text before the cut has the leading ▁ and spaces-1 more.
		if spaces++; spaces == max {
			rest := text[i:]
			if !hasAstral(rest) {
				text = text[:i]
			}
			break
		}
	}
	ids := t.encode(text)
	return ids[:min(len(ids), max)]
}

// hasAstral reports whether s holds a character outside the BMP (four
// bytes in UTF-8).
func hasAstral(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0xF0 {
			return true
		}
	}
	return false
}

// encode returns the piece ids of text; empty text gives no ids.
func (t *pieceTokenizer) encode(text string) []int {
	text = norm.NFKC.String(text)
	if text == "" {
		return nil
	}
	sym := []rune("\u2581" + strings.ReplaceAll(text, " ", "\u2581"))
	n := len(sym)

	// ends[e] lists the pieces that end at symbol e, by ascending start, which
	// is the order the reference visits them in.
	ends := make([][]pieceMatch, n+1)
	for i := range n {
		found := false
		node := t.root.children[sym[i]]
		for j := i; node != nil; {
			if node.end {
				ends[i+node.nsym] = append(ends[i+node.nsym], pieceMatch{i, node.nsym, node.score, node.index})
				found = true
			}
			if j++; j >= n {
				break
			}
			node = node.children[sym[j]]
		}
		if !found {
			ends[i+1] = append(ends[i+1], pieceMatch{i, 1, 0, 0})
		}
	}
	best := make([]float64, n+1)
	words := make([]int, n+1)
	for end := 1; end <= n; end++ {
		for _, m := range ends[end] {
			score := m.score + best[end-m.nsym]
			if best[end] == 0 || score >= best[end] {
				best[end] = score
				words[end] = m.index
			}
		}
	}
	var ids []int
	for at := n; at > 0; at -= t.u16len[words[at]] {
		ids = append(ids, words[at])
	}
	// Merge runs of unknowns (walking backwards, as the reference does), then
	// restore the reading order.
	merged := ids[:0]
	prevUnknown := false
	for _, id := range ids {
		if !(prevUnknown && id == 0) {
			merged = append(merged, id)
		}
		prevUnknown = id == 0
	}
	for i, j := 0, len(merged)-1; i < j; i, j = i+1, j-1 {
		merged[i], merged[j] = merged[j], merged[i]
	}
	return merged
}
