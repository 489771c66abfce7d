//go:build !amd64 || purego

package vector

// softmaxRow turns the first n scores of row, scaled, into weights that
// sum to 1.
func softmaxRow(row []float32, n int, scale float32) { softmax(row[:n], scale) }

// relu sets the negative values of x to zero.
func relu(x []float32) { reluGo(x) }

// layerNorm writes into out each of n rows of width d of x normalized
// (epsilon 1e-6), then scaled and shifted.
func layerNorm(out, x []float32, n, d int, scale, bias []float32) {
	layerNormGo(out, x, n, d, scale, bias)
}
