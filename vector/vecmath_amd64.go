//go:build amd64 && !purego

package vector

import (
	"math"

	"golang.org/x/sys/cpu"
)

// The attention's softmax and the feed-forward's rectifier in AVX2 with
// FMA (vecmath_amd64.s), where the CPU has them.
var vecMath = cpu.X86.HasAVX2 && cpu.X86.HasFMA

//go:noescape
func softmaxAVX2(s *float32, n int, scale float32)

//go:noescape
func reluAVX2(x *float32, n int)

//go:noescape
func layerNormAVX2(out, x *float32, d int, scale, bias *float32, eps float32)

// softmaxRow turns the first n scores of row, scaled, into weights that
// sum to 1. row has room past them up to a multiple of gemmCols, which
// it may overwrite.
func softmaxRow(row []float32, n int, scale float32) {
	if !vecMath || len(row)%8 != 0 {
		softmax(row[:n], scale)
		return
	}
	inf := float32(math.Inf(-1))
	for i := n; i < len(row); i++ {
		row[i] = inf // weight 0
	}
	softmaxAVX2(&row[0], len(row), scale)
}

// relu sets the negative values of x to zero.
func relu(x []float32) {
	if !vecMath || len(x)%8 != 0 || len(x) == 0 {
		reluGo(x)
		return
	}
	reluAVX2(&x[0], len(x))
}

// layerNorm writes into out each of n rows of width d of x normalized
// (epsilon 1e-6), then scaled and shifted.
func layerNorm(out, x []float32, n, d int, scale, bias []float32) {
	if !vecMath || d%8 != 0 || n == 0 {
		layerNormGo(out, x, n, d, scale, bias)
		return
	}
	_, _, _, _ = out[n*d-1], x[n*d-1], scale[d-1], bias[d-1]
	for i := range n {
		layerNormAVX2(&out[i*d], &x[i*d], d, &scale[0], &bias[0], 1e-6)
	}
}
