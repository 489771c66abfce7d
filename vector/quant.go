package vector

import "math"

// The index keeps each vector as 8-bit integers, a quarter of its float32
// size (512 bytes for the sentence encoder's 512 dimensions): component i
// is q[i]·s with s = max|v|/127, and the index stores 1/|q| beside q, so
// that the cosine similarity of a unit query u is dot(u, q)/|q|. Rounding
// moves a similarity by about 10⁻³ (TestQuantizedSimilarity); the eval's
// rankings do not see it. Quantizing a dequantized vector gives the same
// integers back (TestQuantizeIsIdempotent), so a store that keeps vectors
// as int8 with their scale, as memory/store does, gives the index the same
// integers after a restart.

// quantize writes v as integers into q and returns 1/|q|, or 0 when v is
// zero.
func quantize(v []float32, q []int8) float32 {
	var m float64
	for _, x := range v {
		m = max(m, math.Abs(float64(x)))
	}
	if m == 0 {
		clear(q)
		return 0
	}
	s := m / 127
	var ss float64
	for i, x := range v {
		n := int8(math.Round(float64(x) / s))
		q[i] = n
		ss += float64(n) * float64(n)
	}
	return float32(1 / math.Sqrt(ss))
}

// dequantizeUnit returns the unit vector of q, whose inverse length is inv.
func dequantizeUnit(q []int8, inv float32) []float32 {
	v := make([]float32, len(q))
	for i, n := range q {
		v[i] = float32(n) * inv
	}
	return v
}

// dotQ returns the dot product of a float vector with an integer one.
func dotQ(a []float32, q []int8) float32 {
	q = q[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * float32(q[i])
		s1 += a[i+1] * float32(q[i+1])
		s2 += a[i+2] * float32(q[i+2])
		s3 += a[i+3] * float32(q[i+3])
	}
	for ; i < len(a); i++ {
		s0 += a[i] * float32(q[i])
	}
	return (s0 + s1) + (s2 + s3)
}

// signCodeQ writes the sign code (codes.go) of an integer vector.
func signCodeQ(q []int8, code []uint64) {
	for w := range code {
		var c uint64
		part := q[w*32 : min(len(q), w*32+32)]
		for i, x := range part {
			// Without branches: one bit when x > 0, the next when x < 0.
			pos := uint64(uint32(-int32(x)) >> 31)
			neg := uint64(uint32(int32(x)) >> 31)
			c |= (pos | neg<<1) << (2 * i)
		}
		code[w] = c
	}
}
