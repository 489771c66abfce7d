package vector_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mnemo-dev/mnemo/vector"
)

// naiveGemm adds A·B to C in float64, one value at a time.
func naiveGemm(n, m, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	for i := range n {
		for j := range m {
			s := float64(c[i*ldc+j])
			for p := range k {
				s += float64(a[i*lda+p]) * float64(b[p*ldb+j])
			}
			c[i*ldc+j] = float32(s)
		}
	}
}

func randSlice(rng *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(rng.NormFloat64())
	}
	return s
}

// TestSGEMM checks every kernel this machine runs against the naive
// product, on shapes of the encoder (inner dimensions past a block, of
// one, and odd) and with strides wider than the matrices, leaving the
// values outside C's tiles alone.
func TestSGEMM(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	shapes := []struct{ n, m, k, padA, padB, padC int }{
		{8, 32, 1, 0, 0, 0},
		{8, 32, 7, 3, 5, 1},
		{16, 64, 256, 0, 0, 0},
		{24, 96, 257, 0, 0, 0},
		{40, 512, 256, 0, 0, 0},
		{16, 128, 600, 2, 32, 64},
		{8, 1536, 512, 0, 0, 0},
	}
	for _, kern := range vector.GemmKernels() {
		for _, s := range shapes {
			t.Run(fmt.Sprintf("%s/%dx%dx%d", kern, s.n, s.k, s.m), func(t *testing.T) {
				lda, ldb, ldc := s.k+s.padA, s.m+s.padB, s.m+s.padC
				a := randSlice(rng, s.n*lda)
				b := randSlice(rng, s.k*ldb)
				c := randSlice(rng, s.n*ldc)
				want := append([]float32(nil), c...)
				naiveGemm(s.n, s.m, s.k, a, lda, b, ldb, want, ldc)
				vector.SGEMM(kern, s.n, s.m, s.k, a, lda, b, ldb, c, ldc)
				for i := range s.n {
					for j := range ldc {
						g, w := c[i*ldc+j], want[i*ldc+j]
						if tol := 1e-4 * math.Sqrt(float64(s.k)) * (1 + math.Abs(float64(w))); math.Abs(float64(g-w)) > tol {
							t.Fatalf("C[%d][%d] = %v, want %v", i, j, g, w)
						}
					}
				}
			})
		}
	}
}

// BenchmarkSGEMM measures each kernel on the encoder's largest product
// (a batch of 256 rows through the first feed-forward layer).
func BenchmarkSGEMM(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, sh := range []struct{ n, k, m int }{{256, 512, 1536}, {256, 1536, 512}, {16, 512, 1536}} {
		a := randSlice(rng, sh.n*sh.k)
		w := randSlice(rng, sh.k*sh.m)
		c := make([]float32, sh.n*sh.m)
		for _, kern := range vector.GemmKernels() {
			b.Run(fmt.Sprintf("%s/%dx%dx%d", kern, sh.n, sh.k, sh.m), func(b *testing.B) {
				cpu := processCPU()
				for b.Loop() {
					vector.SGEMM(kern, sh.n, sh.m, sh.k, a, sh.k, w, sh.m, c, sh.m)
				}
				cpu = processCPU() - cpu
				b.ReportMetric(float64(sh.n*sh.k*sh.m)*float64(b.N)/cpu.Seconds()/1e9, "GMAC/cpu-s")
			})
		}
	}
}

// TestExp32 checks the attention's exponential against math.Exp over the
// range softmax gives it (x ≤ 0).
func TestExp32(t *testing.T) {
	worst := 0.0
	for x := float32(0); x > -100; x -= 0.0037 {
		got, want := float64(vector.Exp32(x)), math.Exp(float64(x))
		if want < 0x1p-126 {
			if got != 0 {
				t.Fatalf("exp32(%v) = %v, want 0 below the smallest normal", x, got)
			}
			continue
		}
		worst = max(worst, math.Abs(got-want)/want)
	}
	if worst > 3e-7 {
		t.Errorf("exp32: worst relative error %.3g", worst)
	}
	t.Logf("worst relative error %.3g", worst)
}

// TestSoftmaxRow checks the attention's softmax (the vector one where the
// CPU has it) against softmax in float64, on rows of the lengths a
// segment has, with room past them as the attention gives it.
func TestSoftmaxRow(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 2, 7, 8, 9, 31, 32, 33, 100, 128} {
		row := make([]float32, (n+31)/32*32)
		for i := range n {
			row[i] = float32(rng.NormFloat64() * 30)
		}
		row[n-1] = -200 // a weight of zero
		want := make([]float64, n)
		best, sum := math.Inf(-1), 0.0
		for i := range n {
			best = max(best, float64(row[i])*0.125)
		}
		for i := range n {
			want[i] = math.Exp(float64(row[i])*0.125 - best)
			sum += want[i]
		}
		vector.SoftmaxRow(row, n, 0.125)
		for i := range n {
			if d := math.Abs(float64(row[i]) - want[i]/sum); d > 1e-6*(want[i]/sum)+1e-12 {
				t.Fatalf("n=%d: weight %d = %v, want %v", n, i, row[i], want[i]/sum)
			}
		}
	}
}

// TestReLU checks the rectifier on values of both signs, zeros and a
// length that is not a multiple of the vector width.
func TestReLU(t *testing.T) {
	for _, n := range []int{1, 8, 13, 1536} {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(i%7) - 3
		}
		vector.ReLU(x)
		for i, v := range x {
			if want := max(float32(i%7)-3, 0); v != want {
				t.Fatalf("n=%d: relu[%d] = %v, want %v", n, i, v, want)
			}
		}
	}
}

// TestLayerNorm checks the layer normalization (the vector one where the
// CPU has it) against the Go loop, on the encoder's widths.
func TestLayerNorm(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, d := range []int{256, 512} {
		n := 5
		x, scale, bias := randSlice(rng, n*d), randSlice(rng, d), randSlice(rng, d)
		for i := range x {
			x[i] = x[i]*3 + 1
		}
		got, want := make([]float32, n*d), make([]float32, n*d)
		vector.LayerNorm(got, x, n, d, scale, bias)
		vector.LayerNormGo(want, x, n, d, scale, bias)
		for i := range got {
			if math.Abs(float64(got[i]-want[i])) > 1e-5*(1+math.Abs(float64(want[i]))) {
				t.Fatalf("d=%d: out[%d] = %v, want %v", d, i, got[i], want[i])
			}
		}
	}
}
