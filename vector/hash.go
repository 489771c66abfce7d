package vector

import (
	"context"
	"hash/fnv"
	"math"
	"unicode"
	"unicode/utf8"
)

// HashEmbedderID identifies the vectors of the hashing embedder. Change the
// version whenever a change to the features would change a vector.
const HashEmbedderID = "hash-512-v1"

const hashDim = 512

// HashEmbedder is a weight-free embedder: feature hashing of words, pairs of
// neighbouring words and character 3–5-grams into 512 signed buckets.
// Words are split at camelCase, snake_case, dots and digits, lowercased,
// stop words are dropped and the rest lightly stemmed; term counts are damped
// to 1+ln(tf). It captures lexical likeness only, not meaning, so it is the
// fallback when the model is not installed, and a fast embedder for tests.
// It is deterministic and safe for concurrent use.
type HashEmbedder struct{}

var _ Embedder = HashEmbedder{}

// NewHashEmbedder returns the hashing embedder.
func NewHashEmbedder() HashEmbedder { return HashEmbedder{} }

// ID implements Embedder.
func (HashEmbedder) ID() string { return HashEmbedderID }

// Dim implements Embedder.
func (HashEmbedder) Dim() int { return hashDim }

// lexical marks the embedder as one that sees shared words only.
func (HashEmbedder) lexical() {}

// Feature weights: a word counts 1, a word pair 0.5, and the character
// n-grams of a word share a weight of 1.
const (
	hashPairWeight  = 0.5
	hashGramsWeight = 1.0
)

// Embed implements Embedder. A text without letters or digits gives ErrNoText.
func (HashEmbedder) Embed(ctx context.Context, text string) ([]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	words := hashWords(text)
	if len(words) == 0 {
		return nil, ErrNoText
	}
	feats := make(map[string]float64, 8*len(words))
	for _, w := range words {
		feats["w:"+w]++
	}
	for i := 0; i+1 < len(words); i++ {
		feats["b:"+words[i]+"_"+words[i+1]] += hashPairWeight
	}
	var grams []string
	for _, w := range words {
		grams = charGrams(grams[:0], w)
		share := hashGramsWeight / float64(len(grams))
		for _, g := range grams {
			feats["c:"+g] += share
		}
	}
	v := make([]float64, hashDim)
	h := fnv.New64a()
	for f, tf := range feats {
		w := tf
		if tf > 1 {
			w = 1 + math.Log(tf)
		}
		h.Reset()
		h.Write([]byte(f))
		sum := h.Sum64()
		if sum>>63 == 1 {
			w = -w
		}
		v[sum%hashDim] += w
	}
	out := make([]float32, hashDim)
	for i, x := range v {
		out[i] = float32(x)
	}
	if !normalize(out) {
		return nil, ErrNoText // every feature cancelled out
	}
	return out, nil
}

// hashWords returns the content words of text: split, lowercased, without
// stop words, stemmed. A text of stop words only keeps them all.
func hashWords(text string) []string {
	all := splitWords(text)
	var content []string
	for _, w := range all {
		if !stopWords[w] {
			content = append(content, stem(w))
		}
	}
	if len(content) == 0 {
		return all
	}
	return content
}

// splitWords splits text into lowercase words at anything that is not a
// letter or digit, at camelCase humps (handleLogin, HTTPServer) and between
// letters and digits.
func splitWords(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, string(appendLower(nil, string(cur))))
			cur = cur[:0]
		}
	}
	for i, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush()
			continue
		}
		if len(cur) > 0 {
			prev := cur[len(cur)-1]
			next, _ := utf8.DecodeRuneInString(s[i+utf8.RuneLen(r):])
			switch {
			case unicode.IsUpper(r) && (unicode.IsLower(prev) || unicode.IsDigit(prev)),
				unicode.IsUpper(r) && unicode.IsUpper(prev) && unicode.IsLower(next),
				unicode.IsDigit(r) != unicode.IsDigit(prev):
				flush()
			}
		}
		cur = append(cur, r)
	}
	flush()
	return out
}

// charGrams appends the character 3-, 4- and 5-grams of "<w>" to grams.
func charGrams(grams []string, w string) []string {
	rs := []rune("<" + w + ">")
	for n := 3; n <= 5; n++ {
		for i := 0; i+n <= len(rs); i++ {
			grams = append(grams, string(rs[i:i+n]))
		}
	}
	return grams
}
