package vector

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// USELiteID identifies the vectors of the Universal Sentence Encoder Lite
// embedder; it names the weights package version the vectors come from.
const USELiteID = "use-lite-512@" + modelVersion

// useLiteDir is the folder, inside a models folder, that holds the weights.
const useLiteDir = "use-lite"

// ModelDirName is the folder, inside a models folder, that InstallModel
// fills.
const ModelDirName = useLiteDir

const (
	useMaxTokens = 128 // the graph clips its input to this many pieces
	useEmbedDim  = 256 // width of the piece embeddings
	useFFNDim    = 1536
	useOutDim    = 512
	useHeads     = 4
	weightPrefix = "module_apply_default/Encoder_en/KonaTransformer/"
)

// useLayer holds the weights of one transformer layer. Matrices are stored
// row-major as [in x out].
type useLayer struct {
	dIn, dModel      int
	qScale           float32
	lnAttnS, lnAttnB []float32 // dIn
	qkvW, qkvB       []float32 // dIn x 3*dIn
	outW, outB       []float32 // dIn x dModel
	resW, resB       []float32 // dIn x dModel; nil when the residual is the identity
	lnFFNS, lnFFNB   []float32 // dModel
	c1W, c1B         []float32 // dModel x ffn
	c2W, c2B         []float32 // ffn x dModel
}

// USELite is the Universal Sentence Encoder Lite run in Go: a SentencePiece
// tokenizer, a two-layer transformer, mean pooling and a tanh head, giving
// 512-dimensional unit vectors. The weights are read once; Embed only reads
// them, so a USELite is safe for concurrent use. They are float32, as
// published: stored as float16 they would take half the bytes but change
// the vectors (see writeWeightsFile's notes in weights.go); rounded to
// int8 with a scale per column, more so (cosine 0.9992 at worst on
// testdata/eval, 0.99974 on average). The products run on the machine's vector
// instructions (gemm.go) and sum in another order than gonum's BLAS did:
// the vectors moved by rounding only (cosine at least 0.99999997 on
// testdata/eval, TestUSELiteMatchesGonum).
type USELite struct {
	emb    []float32 // vocabulary x useEmbedDim
	timing []float32 // inverse timescales of the sinusoidal position signal
	signal []float32 // the position signal, useMaxTokens x useEmbedDim
	layers [2]useLayer
	tanhW  []float32 // useOutDim x useOutDim
	tanhB  []float32
	tok    *pieceTokenizer
	info   string // where the weights came from, for LoadInfo

	cache *embedCache  // the vectors of recent texts and lines (nil: none)
	bufs  *bufferStock // batch buffers between texts
	base  *USELite     // of a WithoutCache copy: the encoder whose mapping it reads
}

var _ Embedder = (*USELite)(nil)

// OpenUSELite loads the Universal Sentence Encoder Lite weights installed by
// InstallModel in the models folder dir (from dir/use-lite/, or from dir itself
// when it holds model.json). The Embedder it returns is a *USELite. It
// returns an error wrapping ErrNoModel when the files are not there, and
// another error when they are there but unreadable.
//
// The weights come from the converted file InstallModel writes beside the
// tfjs shards (memory-mapped read-only where the platform allows). When that
// file is missing (an install made before it existed), damaged, truncated or
// converted from another model.json, OpenUSELite writes it again from the
// shards and says why in LoadInfo; when the folder cannot be written, it
// reads the shards into the heap instead.
func OpenUSELite(dir string) (Embedder, error) {
	modelDir, err := findModelDir(dir)
	if err != nil {
		return nil, err
	}
	m, err := openUSELiteWeights(modelDir)
	if err != nil {
		return nil, fmt.Errorf("open use-lite: %w", err)
	}
	vocab, err := os.ReadFile(filepath.Join(modelDir, "vocab.json"))
	if err != nil {
		return nil, fmt.Errorf("open use-lite: %w", err)
	}
	if m.tok, err = newPieceTokenizer(vocab); err != nil {
		return nil, fmt.Errorf("open use-lite: %w", err)
	}
	if n := len(m.emb) / useEmbedDim; n < len(m.tok.pieces) {
		return nil, fmt.Errorf("open use-lite: vocabulary has %d pieces, embeddings %d", len(m.tok.pieces), n)
	}
	return m, nil
}

// openUSELiteWeights binds the encoder to the weights file of modelDir,
// writing it first when it is missing or refused.
func openUSELiteWeights(modelDir string) (*USELite, error) {
	raw, err := os.ReadFile(filepath.Join(modelDir, "model.json"))
	if err != nil {
		return nil, err
	}
	src := sha256.Sum256(raw)
	path := filepath.Join(modelDir, weightsFileName)
	wf, err := openWeightsFile(path, src)
	var why string
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			why = err.Error()
		} else {
			why = "no " + weightsFileName + " yet"
		}
		if werr := writeWeightsFile(modelDir, path); werr != nil {
			// A folder that cannot be written: the shards, into the heap.
			weights, rerr := readWeights(modelDir)
			if rerr != nil {
				return nil, rerr
			}
			m, err := newUSELite(weights, false)
			if err != nil {
				return nil, err
			}
			m.info = fmt.Sprintf("weights read from the tfjs shards into the heap (%s; rewriting %s failed: %v)", why, weightsFileName, werr)
			return m, nil
		}
		if wf, err = openWeightsFile(path, src); err != nil {
			return nil, err
		}
	}
	m, err := newUSELite(wf.tensors, true)
	if err != nil {
		if wf.mapped {
			unmapFile(wf.data)
		}
		return nil, err
	}
	how := "read into the heap"
	if wf.mapped {
		how = "memory-mapped"
		runtime.AddCleanup(m, func(b []byte) { unmapFile(b) }, wf.data)
	}
	m.info = fmt.Sprintf("weights %s from %s", how, path)
	if why != "" {
		m.info += " (rebuilt: " + why + ")"
	}
	return m, nil
}

// LoadInfo says where the weights came from: the memory-mapped weights
// file, or the heap, and why the file was rebuilt when it was.
func (m *USELite) LoadInfo() string { return m.info }

// findModelDir returns the folder holding model.json: dir/use-lite or dir.
func findModelDir(dir string) (string, error) {
	if dir == "" {
		return "", fmt.Errorf("%w: no models folder given", ErrNoModel)
	}
	for _, d := range []string{filepath.Join(dir, useLiteDir), dir} {
		if _, err := os.Stat(filepath.Join(d, "model.json")); err == nil {
			return d, nil
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("open use-lite: %w", err)
		}
	}
	return "", fmt.Errorf("%w: no model.json in %s", ErrNoModel, filepath.Join(dir, useLiteDir))
}

// ID implements Embedder.
func (m *USELite) ID() string { return USELiteID }

// Dim implements Embedder.
func (m *USELite) Dim() int { return useOutDim }

// Embed implements Embedder. A text of one line is encoded as the reference
// implementation does, up to its first 128 pieces. A text of several lines
// (a memory's title, facts and narrative) gets the mean of two unit vectors:
// the encoding of the whole text (its first 128 pieces), which sees the
// lines in context, and the mean of the encodings of its lines, each up to
// its first 128 pieces, which sees every line of a text however long. On
// the retrieval evaluation this beat encoding the whole text alone
// (testdata/eval: hybrid recall@5 0.86 against 0.82). The lines are read
// until they hold useMaxLinePieces pieces, so that what a text costs is
// bounded as the encoder's own input is. Empty text gives ErrNoText.
//
// The vectors of recent texts and lines are remembered (uselite_cache.go).
func (m *USELite) Embed(ctx context.Context, text string) ([]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if e, ok := m.cache.get(text, false); ok {
		return slices.Clone(e.vec), nil
	}
	var lines []string
	for line := range strings.Lines(text) {
		if line = strings.TrimSpace(line); line != "" {
			lines = append(lines, line)
		}
	}
	var v []float32
	if len(lines) <= 1 {
		ids := m.tok.encodeFirst(text, useMaxTokens)
		if len(ids) == 0 {
			return nil, ErrNoText
		}
		vs, err := m.encode(ctx, [][]int{ids})
		if err != nil {
			return nil, err
		}
		v = vs[0]
	} else {
		var err error
		if v, err = m.embedLines(ctx, text, lines); err != nil {
			return nil, err
		}
	}
	m.cache.put(text, false, embedEntry{vec: v})
	return slices.Clone(v), nil
}

// useMaxLinePieces bounds the pieces of the lines whose encodings a text's
// vector averages: the lines are taken in order while their pieces (up to
// 128 each) fit, the first always. The texts of testdata/eval hold at
// most 270; a memory's text (memory/store's DocOf) holds the excerpt of
// its prompt, not the prompt.
const useMaxLinePieces = 1024

// embedLines returns the vector of a text of several lines: the mean of
// its lines' unit vectors (the remembered ones and the others, encoded
// with the whole text in one go), made a unit vector, plus the whole
// text's, made a unit vector.
func (m *USELite) embedLines(ctx context.Context, text string, lines []string) ([]float32, error) {
	vecs := make([][]float32, 0, len(lines))
	var (
		segs    [][]int
		fresh   []int // the lines of segs, by their index in vecs
		pieces  []int
		counted int
	)
	for _, line := range lines {
		e, ok := m.cache.get(line, true)
		var ids []int
		if !ok {
			ids = m.tok.encodeFirst(line, useMaxTokens)
			e.pieces = len(ids)
		}
		if counted+e.pieces > useMaxLinePieces && len(vecs) > 0 {
			break
		}
		counted += e.pieces
		if !ok {
			fresh = append(fresh, len(vecs))
			pieces = append(pieces, e.pieces)
			segs = append(segs, ids)
		}
		vecs = append(vecs, e.vec)
	}
	segs = append(segs, m.tok.encodeFirst(text, useMaxTokens))
	out, err := m.encode(ctx, segs)
	if err != nil {
		return nil, err
	}
	for i, j := range fresh {
		vecs[j] = out[i]
		m.cache.put(lines[j], true, embedEntry{vec: out[i], pieces: pieces[i]})
	}
	mean := make([]float32, useOutDim)
	for _, v := range vecs {
		for i, x := range v {
			mean[i] += x
		}
	}
	normalize(mean)
	for i, x := range out[len(out)-1] {
		mean[i] += x
	}
	normalize(mean)
	return mean, nil
}

// WithoutCache returns the encoder with the same weights but no memory of
// recent texts: every text is encoded, as the benchmarks of the encoder
// itself need.
func (m *USELite) WithoutCache() *USELite {
	c := *m
	c.cache, c.base = nil, m
	return &c
}

// weightsManifest is the part of a tfjs model.json that locates the weights.
type weightsManifest struct {
	WeightsManifest []struct {
		Paths   []string `json:"paths"`
		Weights []struct {
			Name  string `json:"name"`
			Shape []int  `json:"shape"`
			Dtype string `json:"dtype"`
		} `json:"weights"`
	} `json:"weightsManifest"`
}

// readWeights decodes the float32 tensors of a tfjs graph model by name.
func readWeights(dir string) (map[string][]float32, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "model.json"))
	if err != nil {
		return nil, err
	}
	var man weightsManifest
	if err := json.Unmarshal(raw, &man); err != nil {
		return nil, fmt.Errorf("parse model.json: %w", err)
	}
	out := make(map[string][]float32)
	for _, group := range man.WeightsManifest {
		var buf []byte
		for _, p := range group.Paths {
			if !filepath.IsLocal(p) {
				return nil, fmt.Errorf("weight shard path %q leaves the model folder", p)
			}
			b, err := os.ReadFile(filepath.Join(dir, p))
			if err != nil {
				return nil, err
			}
			buf = append(buf, b...)
		}
		off := 0
		for _, w := range group.Weights {
			n := 1
			for _, d := range w.Shape {
				n *= d
			}
			size := 4 * n // float32 and int32 both take 4 bytes
			if w.Dtype != "float32" && w.Dtype != "int32" {
				return nil, fmt.Errorf("weight %s: unsupported dtype %s", w.Name, w.Dtype)
			}
			if off+size > len(buf) {
				return nil, fmt.Errorf("weight shards are shorter than model.json says (%d bytes)", len(buf))
			}
			if w.Dtype == "float32" {
				a := make([]float32, n)
				for i := range a {
					a[i] = math.Float32frombits(binary.LittleEndian.Uint32(buf[off+4*i:]))
				}
				out[w.Name] = a
			}
			off += size
		}
	}
	return out, nil
}

// newUSELite picks the tensors of the encoder out of the decoded weights and
// checks their sizes. The weight matrices are in panels (packMatrix) when
// packed is set, as the weights file holds them, else as the shards hold
// them, and newUSELite puts them into panels on the heap.
func newUSELite(w map[string][]float32, packed bool) (*USELite, error) {
	var missing error
	m := bindUSELite(func(name string, size, cols int) []float32 {
		a, ok := w[name]
		switch {
		case !ok:
			missing = errors.Join(missing, fmt.Errorf("missing weight %s", name))
		case size > 0 && len(a) != size:
			missing = errors.Join(missing, fmt.Errorf("weight %s has %d values, want %d", name, len(a), size))
		case cols > 0 && !packed:
			a = packMatrix(a, cols)
		}
		return a
	})
	if missing != nil {
		return nil, missing
	}
	if len(m.emb) == 0 || len(m.emb)%useEmbedDim != 0 {
		return nil, fmt.Errorf("embedding table has %d values, not a multiple of %d", len(m.emb), useEmbedDim)
	}
	m.cache, m.bufs = newEmbedCache(), new(bufferStock)
	// The position signal of every position the encoder reads, computed
	// once (it is the same for every text).
	half := len(m.timing)
	m.signal = make([]float32, useMaxTokens*useEmbedDim)
	for i := range useMaxTokens {
		row := m.signal[i*useEmbedDim : (i+1)*useEmbedDim]
		for j := range half {
			a := float64(float32(i) * m.timing[j])
			row[j] = float32(math.Sin(a))
			row[j+half] = float32(math.Cos(a))
		}
	}
	return m, nil
}

// bindUSELite asks get for every tensor of the encoder, by name and size
// (0 when any size will do); cols is the width of a weight matrix, which
// the encoder reads in panels (packMatrix), and 0 for the other tensors.
func bindUSELite(get func(name string, size, cols int) []float32) *USELite {
	m := &USELite{}
	m.emb = get("module/Embeddings_en", 0, 0)
	m.timing = get(weightPrefix+"Encode/TransformerStack/Layer_0/AddTimingSignal/TimingSignal/ExpandDims_1", useEmbedDim/2, 0)
	for i := range m.layers {
		e := fmt.Sprintf(weightPrefix+"Encode/Layer_%d/TransformerLayer/", i)
		s := fmt.Sprintf(weightPrefix+"Encode/TransformerStack/Layer_%d/TransformerLayer/", i)
		k := fmt.Sprintf("module/Encoder_en/KonaTransformer/Encode/Layer_%d/TransformerLayer/", i)
		L := &m.layers[i]
		L.dIn, L.dModel = useOutDim, useOutDim
		if i == 0 {
			L.dIn = useEmbedDim
		}
		L.qScale = float32(1 / math.Sqrt(float64(L.dIn/useHeads)))
		L.lnAttnS = get(e+"layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat", L.dIn, 0)
		L.lnAttnB = get(e+"layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat", L.dIn, 0)
		L.qkvW = get(k+"MultiheadAttention/qkv_transform_single/kernel/part_0", L.dIn*3*L.dIn, 3*L.dIn)
		L.qkvB = get(e+"MultiheadAttention/qkv_transform_single/bias/ConcatPartitions/concat", 3*L.dIn, 0)
		L.outW = get(k+"MultiheadAttention/output_transform_single/kernel/part_0", L.dIn*L.dModel, L.dModel)
		L.outB = get(e+"MultiheadAttention/output_transform_single/bias/ConcatPartitions/concat", L.dModel, 0)
		L.lnFFNS = get(e+"FFN/layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat", L.dModel, 0)
		L.lnFFNB = get(e+"FFN/layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat", L.dModel, 0)
		L.c1W = get(s+"FFN/conv1/Tensordot/Reshape_1", L.dModel*useFFNDim, useFFNDim)
		L.c1B = get(e+"FFN/conv1/bias/ConcatPartitions/concat", useFFNDim, 0)
		L.c2W = get(s+"FFN/conv2/Tensordot/Reshape_1", useFFNDim*L.dModel, L.dModel)
		L.c2B = get(e+"FFN/conv2/bias/ConcatPartitions/concat", L.dModel, 0)
		if L.dIn != L.dModel {
			L.resW = get(e+"dense/kernel/ConcatPartitions/concat", L.dIn*L.dModel, L.dModel)
			L.resB = get(e+"dense/bias/ConcatPartitions/concat", L.dModel, 0)
		}
	}
	m.tanhW = get("module/Encoder_en/hidden_layers/tanh_layer_0/weights", useOutDim*useOutDim, useOutDim)
	m.tanhB = get("module/Encoder_en/hidden_layers/tanh_layer_0/bias", useOutDim, 0)
	return m
}

// The forward pass. Every text the encoder reads (a segment: a line, or a
// whole text, up to its first 128 pieces) is a run of rows, one a piece, in
// a batch of up to encodeBatchRows rows that the layers' matrix products
// (sgemm, gemm.go) take at once, so that each weight read from memory
// serves every piece of the batch; attention, pooling and the head work
// segment by segment. The last layer's second feed-forward product is
// taken after the mean pooling, which is linear: on one row per segment,
// not one per piece. The batches' buffers are reused (bufferStock).

// encodeBatchRows bounds the rows of a batch (at least useMaxTokens). At
// 256 a batch's buffers take 5.5 MB.
const encodeBatchRows = 512

// segment is a text's rows in a batch.
type segment struct{ off, n int }

// encodeBuffers are the activations of one batch, and the attention's
// and the head's buffers; each holds rows of its layer's width.
type encodeBuffers struct {
	x, ln, h, y, att, qkv, f1 []float32
	kt, scores, heads         []float32 // attention, one head of one segment
	pool, mean, pooled, out   []float32 // the head, one row per segment
}

// resize returns s with n values, reusing its array when it is large
// enough. The values are whatever they were.
func resize(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}

// roundUp rounds n up to a multiple of k.
func roundUp(n, k int) int { return (n + k - 1) / k * k }

// encode returns the unit vector of each segment's pieces (at most the
// first useMaxTokens of each are read); a segment without pieces gets nil.
func (m *USELite) encode(ctx context.Context, segs [][]int) ([][]float32, error) {
	out := make([][]float32, len(segs))
	buf := m.bufs.get()
	defer m.bufs.put(buf)
	for start := 0; start < len(segs); {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var batch []segment
		rows, end := 0, start
		for ; end < len(segs); end++ {
			n := min(len(segs[end]), useMaxTokens)
			if rows+n > encodeBatchRows {
				break
			}
			batch = append(batch, segment{rows, n})
			rows += n
		}
		m.encodeBatch(buf, segs[start:end], batch, out[start:end])
		start = end
	}
	// The weights may be a mapping that m's cleanup unmaps: m stays
	// reachable until they are no longer read.
	runtime.KeepAlive(m)
	return out, nil
}

// encodeBatch runs the encoder on a batch of segments and writes their
// unit vectors into out.
func (m *USELite) encodeBatch(buf *encodeBuffers, ids [][]int, segs []segment, out [][]float32) {
	last := segs[len(segs)-1]
	rows := roundUp(last.off+last.n, gemmRows)
	// The graph feeds 2·embedding + timing signal to the first layer. Rows
	// past the last segment are zeros: they go through the products but
	// are never read.
	buf.x = resize(buf.x, rows*useEmbedDim)
	clear(buf.x[(last.off+last.n)*useEmbedDim:])
	for s, seg := range segs {
		for i, id := range ids[s][:seg.n] {
			e := m.emb[id*useEmbedDim : (id+1)*useEmbedDim]
			t := m.signal[i*useEmbedDim : (i+1)*useEmbedDim]
			row := buf.x[(seg.off+i)*useEmbedDim : (seg.off+i+1)*useEmbedDim]
			for j := range row {
				row[j] = 2*e[j] + t[j]
			}
		}
	}
	// Layer 0 widens the rows from useEmbedDim to useOutDim, with a
	// projection of its input for the residual; layer 1 keeps the width.
	L := &m.layers[0]
	buf.h = resize(buf.h, rows*useOutDim)
	broadcastRows(buf.h, rows, L.outB, L.resB)
	sgemmPacked(rows, L.dModel, L.dIn, buf.x, L.dIn, L.resW, buf.h, L.dModel)
	L.attend(buf, buf.x, segs, rows)
	L.feedForward(buf, rows)
	buf.y = resize(buf.y, rows*useOutDim)
	broadcastRows(buf.y, rows, L.c2B, nil)
	addTo(buf.y, buf.h)
	sgemmPacked(rows, L.dModel, useFFNDim, buf.f1, useFFNDim, L.c2W, buf.y, L.dModel)

	L = &m.layers[1]
	broadcastRows(buf.h, rows, L.outB, nil)
	addTo(buf.h, buf.y)
	L.attend(buf, buf.y, segs, rows)
	L.feedForward(buf, rows)

	// Mean pooling of layer 1's output, f1·c2W + c2B + h, is the mean of
	// f1 times c2W, plus c2B and the mean of h.
	nseg := roundUp(len(segs), gemmRows)
	buf.pool = resize(buf.pool, nseg*useFFNDim)
	buf.mean = resize(buf.mean, nseg*useOutDim)
	clear(buf.pool)
	clear(buf.mean)
	for s, seg := range segs {
		meanRows(buf.pool[s*useFFNDim:(s+1)*useFFNDim], buf.f1, seg, useFFNDim)
		meanRows(buf.mean[s*useOutDim:(s+1)*useOutDim], buf.h, seg, useOutDim)
	}
	buf.pooled = resize(buf.pooled, nseg*useOutDim)
	broadcastRows(buf.pooled, nseg, L.c2B, nil)
	addTo(buf.pooled, buf.mean)
	sgemmPacked(nseg, useOutDim, useFFNDim, buf.pool, useFFNDim, L.c2W, buf.pooled, useOutDim)

	buf.out = resize(buf.out, nseg*useOutDim)
	broadcastRows(buf.out, nseg, m.tanhB, nil)
	sgemmPacked(nseg, useOutDim, useOutDim, buf.pooled, useOutDim, m.tanhW, buf.out, useOutDim)
	for s, seg := range segs {
		if seg.n == 0 {
			continue
		}
		v := make([]float32, useOutDim)
		for i, x := range buf.out[s*useOutDim : (s+1)*useOutDim] {
			v[i] = float32(math.Tanh(float64(x)))
		}
		normalize(v)
		out[s] = v
	}
}

// attend adds the layer's attention over the rows of in (each segment's
// rows attending to one another) to buf.h, which holds the residual.
func (L *useLayer) attend(buf *encodeBuffers, in []float32, segs []segment, rows int) {
	d := L.dIn
	buf.ln = resize(buf.ln, rows*d)
	layerNorm(buf.ln, in, rows, d, L.lnAttnS, L.lnAttnB)
	// The attention's products read up to gemmRows-1 rows past a
	// segment's last: the fused q|k|v rows have room for them.
	buf.qkv = resize(buf.qkv, (rows+gemmRows)*3*d)
	clear(buf.qkv[rows*3*d:])
	broadcastRows(buf.qkv, rows, L.qkvB, nil)
	sgemmPacked(rows, 3*d, d, buf.ln, d, L.qkvW, buf.qkv, 3*d)
	buf.att = resize(buf.att, rows*d)
	clear(buf.att)
	for _, seg := range segs {
		attention(buf, seg, d, L.qScale)
	}
	sgemmPacked(rows, L.dModel, d, buf.att, d, L.outW, buf.h, L.dModel)
}

// feedForward puts the layer's first feed-forward product, rectified,
// of its normalized buf.h into buf.f1.
func (L *useLayer) feedForward(buf *encodeBuffers, rows int) {
	buf.ln = resize(buf.ln, rows*L.dModel)
	layerNorm(buf.ln, buf.h, rows, L.dModel, L.lnFFNS, L.lnFFNB)
	buf.f1 = resize(buf.f1, rows*useFFNDim)
	broadcastRows(buf.f1, rows, L.c1B, nil)
	sgemmPacked(rows, useFFNDim, L.dModel, buf.ln, L.dModel, L.c1W, buf.f1, useFFNDim)
	relu(buf.f1)
}

// attention writes into buf.att the multi-head softmax attention of one
// segment's rows, from the fused q|k|v rows of width 3·d in buf.qkv, with
// no masking (every row is a real piece). Per head, the scores are the
// product of the queries with the keys transposed (padded with zero
// columns to a multiple of gemmCols), and the output the product of the
// softmax of the scores with the values.
func attention(buf *encodeBuffers, seg segment, d int, scale float32) {
	n := seg.n
	if n == 0 {
		return
	}
	hd := d / useHeads
	rows, cols := roundUp(n, gemmRows), roundUp(n, gemmCols)
	buf.kt = resize(buf.kt, hd*cols)
	buf.scores = resize(buf.scores, rows*cols)
	buf.heads = resize(buf.heads, rows*hd)
	qkv := buf.qkv[seg.off*3*d:]
	for h := range useHeads {
		clear(buf.kt)
		for j := range n {
			k := qkv[j*3*d+d+h*hd : j*3*d+d+h*hd+hd]
			for t, v := range k {
				buf.kt[t*cols+j] = v
			}
		}
		clear(buf.scores)
		sgemm(rows, cols, hd, qkv[h*hd:], 3*d, buf.kt, cols, buf.scores, cols)
		for i := range n {
			softmaxRow(buf.scores[i*cols:(i+1)*cols], n, scale)
		}
		clear(buf.heads)
		sgemm(rows, hd, n, buf.scores, cols, qkv[2*d+h*hd:], 3*d, buf.heads, hd)
		for i := range n {
			copy(buf.att[(seg.off+i)*d+h*hd:(seg.off+i)*d+h*hd+hd], buf.heads[i*hd:(i+1)*hd])
		}
	}
}

// softmax turns scores, scaled, into weights that sum to 1.
func softmax(s []float32, scale float32) {
	best := float32(math.Inf(-1))
	for i, v := range s {
		s[i] = v * scale
		best = max(best, s[i])
	}
	var sum float32
	for i, v := range s {
		e := exp32(v - best)
		s[i] = e
		sum += e
	}
	inv := 1 / sum
	for i := range s {
		s[i] *= inv
	}
}

// broadcastRows sets each of the n rows of dst to a (plus b when it is
// not nil).
func broadcastRows(dst []float32, n int, a, b []float32) {
	w := len(a)
	for i := range n {
		row := dst[i*w : (i+1)*w]
		copy(row, a)
		if b != nil {
			for j, v := range b {
				row[j] += v
			}
		}
	}
}

// addTo adds src to dst, value by value, over src's length.
func addTo(dst, src []float32) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] += v
	}
}

// meanRows writes into dst the mean of the segment's rows of width w in x.
func meanRows(dst, x []float32, seg segment, w int) {
	if seg.n == 0 {
		return
	}
	for i := range seg.n {
		addTo(dst, x[(seg.off+i)*w:(seg.off+i+1)*w])
	}
	inv := 1 / float32(seg.n)
	for j := range dst {
		dst[j] *= inv
	}
}

// layerNormGo writes into out each of n rows of width d of x normalized
// (epsilon 1e-6), then scaled and shifted. d is a multiple of 4.
func layerNormGo(out, x []float32, n, d int, scale, bias []float32) {
	scale, bias = scale[:d], bias[:d]
	for i := range n {
		row := x[i*d : (i+1)*d]
		var s0, s1, s2, s3 float32
		for j := 0; j < len(row); j += 4 {
			r := row[j : j+4 : j+4]
			s0 += r[0]
			s1 += r[1]
			s2 += r[2]
			s3 += r[3]
		}
		mean := ((s0 + s1) + (s2 + s3)) / float32(d)
		s0, s1, s2, s3 = 0, 0, 0, 0
		for j := 0; j < len(row); j += 4 {
			r := row[j : j+4 : j+4]
			d0, d1, d2, d3 := r[0]-mean, r[1]-mean, r[2]-mean, r[3]-mean
			s0 += d0 * d0
			s1 += d1 * d1
			s2 += d2 * d2
			s3 += d3 * d3
		}
		variance := ((s0 + s1) + (s2 + s3)) / float32(d)
		r := float32(1 / math.Sqrt(float64(variance+1e-6)))
		o := out[i*d : (i+1)*d]
		for j, v := range row {
			o[j] = scale[j]*r*(v-mean) + bias[j]
		}
	}
}

// reluGo sets the negative values of x to zero, without branches (whose
// outcome would be a coin toss).
func reluGo(x []float32) {
	for i, v := range x {
		b := math.Float32bits(v)
		x[i] = math.Float32frombits(b &^ uint32(int32(b)>>31))
	}
}

// exp32 is e^x for x ≤ 0 in float32, to within 2 ulp (Cephes' expf: x =
// k·ln 2 + r with |r| ≤ ln 2 / 2, a polynomial in r, and k put into the
// exponent). Below the smallest normal float32 it gives 0.
func exp32(x float32) float32 {
	if x < -87.33654 {
		return 0
	}
	k := float32(math.Floor(float64(x*1.44269504088896341 + 0.5)))
	r := x - k*0.693359375 + k*2.12194440e-4
	z := r * r
	p := ((((1.9875691500e-4*r+1.3981999507e-3)*r+8.3334519073e-3)*r+4.1665795894e-2)*r+1.6666665459e-1)*r + 5.0000001201e-1
	y := p*z + r + 1
	return y * math.Float32frombits(uint32(int32(k)+127)<<23)
}
