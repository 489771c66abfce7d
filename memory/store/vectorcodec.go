package store

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Vectors are stored as int8s with one scale (schema 2):
//
//	scale   float32, little-endian: the largest |x| over 127
//	values  dim int8s, x ≈ value × scale
//
// 4+dim bytes where float32s took 4×dim (516 bytes against 2,048 for 512
// dimensions). Schema 1 stored the 4×dim bytes of the float32s; the two
// are told apart by length (4+dim = 4×dim has no whole solution).
//
// Quantizing is idempotent: quantize(dequantize(q)) == q, byte for byte,
// so the vector the index holds (the dequantized one, see embedDocs) and
// the one a restart loads from the store are the same, and storing it again
// changes nothing.

// quantizeVector returns the stored form of v.
func quantizeVector(v []float32) []byte {
	var maxAbs float32
	for _, x := range v {
		maxAbs = max(maxAbs, float32(math.Abs(float64(x))))
	}
	scale := scaleFor(maxAbs)
	b := make([]byte, 4+len(v))
	binary.LittleEndian.PutUint32(b, math.Float32bits(scale))
	if scale == 0 {
		return b
	}
	for i, x := range v {
		q := math.Round(float64(x / scale))
		b[4+i] = byte(int8(max(-127, min(127, q))))
	}
	return b
}

// scaleFor is the scale of a vector whose largest |x| is maxAbs: maxAbs/127,
// nudged by an ulp or two until 127×scale/127 is scale again in float32, so
// that quantizing the dequantized vector finds the same scale.
func scaleFor(maxAbs float32) float32 {
	if maxAbs == 0 || math.IsNaN(float64(maxAbs)) || math.IsInf(float64(maxAbs), 0) {
		return 0
	}
	s := maxAbs / 127
	for _, step := range []float32{0, 1, -1, 2, -2} {
		c := s
		switch {
		case step > 0:
			for range int(step) {
				c = math.Nextafter32(c, float32(math.Inf(1)))
			}
		case step < 0:
			for range int(-step) {
				c = math.Nextafter32(c, 0)
			}
		}
		if (127*c)/127 == c {
			return c
		}
	}
	return s
}

// dequantizeVector is the float32 vector of a stored int8 one.
func dequantizeVector(b []byte) []float32 {
	scale := math.Float32frombits(binary.LittleEndian.Uint32(b))
	v := make([]float32, len(b)-4)
	for i := range v {
		v[i] = float32(int8(b[4+i])) * scale
	}
	return v
}

// encodeVector is what the store keeps for v.
func encodeVector(v []float32) []byte { return quantizeVector(v) }

// decodeVector reads a stored vector of dim dimensions: int8s with a scale
// (4+dim bytes) or, as schema 1 wrote them, float32s (4×dim bytes).
func decodeVector(b []byte, dim int) ([]float32, error) {
	switch len(b) {
	case 4 + dim:
		return dequantizeVector(b), nil
	case 4 * dim:
		v := make([]float32, dim)
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
		return v, nil
	}
	return nil, fmt.Errorf("a stored vector of %d bytes is not one of %d dimensions", len(b), dim)
}

// roundVector is v as the store gives it back: through int8 and back.
func roundVector(v []float32) []float32 {
	if v == nil {
		return nil
	}
	return dequantizeVector(quantizeVector(v))
}
