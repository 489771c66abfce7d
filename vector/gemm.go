package vector

import (
	"fmt"
	"unsafe"
)

// The sentence encoder's matrix products go through sgemm: C += A·B on
// row-major float32 matrices with strides, in tiles of gemmRows rows by
// gemmCols columns that a kernel keeps in registers over the whole inner
// dimension (a block of it at a time), reading A's values one by one
// (broadcast) and B's rows a tile wide. The kernel is the machine's: on
// amd64 AVX-512 (8 rows × 32 columns in 16 registers) or AVX2 with FMA (4
// rows × 16 columns, four times), checked at start with
// golang.org/x/sys/cpu; on arm64 NEON (4 × 16, four times); elsewhere, or
// with the build tag purego, the Go loop of gemmKernelGo.
// The callers lay their matrices out for it: rows padded to a multiple of
// gemmRows, columns a multiple of gemmCols.

const (
	gemmRows = 8  // a tile's rows; n must be a multiple of it
	gemmCols = 32 // a tile's columns; m must be a multiple of it
	// gemmDepth bounds the part of the inner dimension a tile is summed
	// over before the next column tile: a tile of B (gemmDepth rows of
	// gemmCols values, 32 KB) then stays in the core's first caches while
	// every row tile of A goes past it.
	gemmDepth = 512
)

// gemmKernel adds to the gemmRows × gemmCols tile of C at c (row stride
// ldc) the product of the gemmRows × kc block of A at a (row stride lda)
// and the kc × gemmCols block of B at b (row stride ldb). Strides are in
// values. kc is at least 1.
type gemmKernel func(kc int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int)

// gemmKernels are the kernels this machine runs, slowest first; the
// platform's file adds its own (gemm_amd64.go). kernel is the last, the
// one sgemm uses.
var (
	gemmKernels = []namedKernel{{"go", gemmKernelGo}}
	kernel      = gemmKernelGo
)

type namedKernel struct {
	name string
	fn   gemmKernel
}

// addKernel makes k the kernel sgemm uses.
func addKernel(name string, k gemmKernel) {
	gemmKernels = append(gemmKernels, namedKernel{name, k})
	kernel = k
}

// KernelName names the kernel the sentence encoder's matrix products run
// on this machine: "avx512", "avx2" or "go".
func KernelName() string { return gemmKernels[len(gemmKernels)-1].name }

// sgemm adds A·B to C: A is n × k with row stride lda, B k × m with row
// stride ldb, C n × m with row stride ldc. n must be a multiple of
// gemmRows and m of gemmCols; the slices must hold the rows they are
// said to have (it panics otherwise, before touching memory).
func sgemm(n, m, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	sgemmWith(kernel, n, m, k, a, lda, b, ldb, c, ldc)
}

func sgemmWith(kernel gemmKernel, n, m, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	if n == 0 || m == 0 || k == 0 {
		return
	}
	if n%gemmRows != 0 || m%gemmCols != 0 || lda < k || ldb < m || ldc < m ||
		len(a) < (n-1)*lda+k || len(b) < (k-1)*ldb+m || len(c) < (n-1)*ldc+m {
		panic(fmt.Sprintf("sgemm: %d×%d·%d×%d with strides %d, %d, %d on %d, %d, %d values", n, k, k, m, lda, ldb, ldc, len(a), len(b), len(c)))
	}
	for p := 0; p < k; p += gemmDepth {
		kc := min(gemmDepth, k-p)
		for j := 0; j < m; j += gemmCols {
			bp := &b[p*ldb+j]
			for i := 0; i < n; i += gemmRows {
				kernel(kc, &a[i*lda+p], lda, bp, ldb, &c[i*ldc+j], ldc)
			}
		}
	}
}

// A weight matrix (k × m, row-major as published) is read in panels: the
// gemmCols columns from j on, row after row, at j·k, so that a tile's
// walk down the inner dimension reads one run of memory rather than a
// short piece of every row. For the few rows of a query that walk is
// what the product costs (the weights stream from memory once), and on
// the development machine panels took it from 10 to 17 GB/s.

// packMatrix returns the k × cols matrix w in panels.
func packMatrix(w []float32, cols int) []float32 {
	k := len(w) / cols
	p := make([]float32, len(w))
	for j := 0; j < cols; j += gemmCols {
		panel := p[j*k : (j+gemmCols)*k]
		for r := range k {
			copy(panel[r*gemmCols:(r+1)*gemmCols], w[r*cols+j:])
		}
	}
	return p
}

// sgemmPacked adds A·B to C as sgemm does, B being in panels (packMatrix).
func sgemmPacked(n, m, k int, a []float32, lda int, b []float32, c []float32, ldc int) {
	if n == 0 {
		return
	}
	if n%gemmRows != 0 || m%gemmCols != 0 || lda < k || ldc < m ||
		len(a) < (n-1)*lda+k || len(b) != k*m || len(c) < (n-1)*ldc+m {
		panic(fmt.Sprintf("sgemmPacked: %d×%d·%d×%d with strides %d, %d on %d, %d, %d values", n, k, k, m, lda, ldc, len(a), len(b), len(c)))
	}
	for p := 0; p < k; p += gemmDepth {
		kc := min(gemmDepth, k-p)
		for j := 0; j < m; j += gemmCols {
			bp := &b[j*k+p*gemmCols]
			for i := 0; i < n; i += gemmRows {
				kernel(kc, &a[i*lda+p], lda, bp, gemmCols, &c[i*ldc+j], ldc)
			}
		}
	}
}

// gemmKernelGo is the kernel in Go: the tile in blocks of 4 rows by 4
// columns, each kept in 16 locals (registers) down the inner dimension,
// every value of A and of B read once per block serving four products.
func gemmKernelGo(kc int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int) {
	as := unsafeSlice(a, (gemmRows-1)*lda+kc)
	bs := unsafeSlice(b, (kc-1)*ldb+gemmCols)
	cs := unsafeSlice(c, (gemmRows-1)*ldc+gemmCols)
	for i := 0; i < gemmRows; i += 4 {
		a0 := as[i*lda : i*lda+kc]
		a1 := as[(i+1)*lda : (i+1)*lda+kc]
		a2 := as[(i+2)*lda : (i+2)*lda+kc]
		a3 := as[(i+3)*lda : (i+3)*lda+kc]
		a1, a2, a3 = a1[:len(a0)], a2[:len(a0)], a3[:len(a0)]
		for j := 0; j < gemmCols; j += 4 {
			c0 := cs[i*ldc+j : i*ldc+j+4 : i*ldc+j+4]
			c1 := cs[(i+1)*ldc+j : (i+1)*ldc+j+4 : (i+1)*ldc+j+4]
			c2 := cs[(i+2)*ldc+j : (i+2)*ldc+j+4 : (i+2)*ldc+j+4]
			c3 := cs[(i+3)*ldc+j : (i+3)*ldc+j+4 : (i+3)*ldc+j+4]
			s00, s01, s02, s03 := c0[0], c0[1], c0[2], c0[3]
			s10, s11, s12, s13 := c1[0], c1[1], c1[2], c1[3]
			s20, s21, s22, s23 := c2[0], c2[1], c2[2], c2[3]
			s30, s31, s32, s33 := c3[0], c3[1], c3[2], c3[3]
			off := j
			for p := range a0 {
				br := bs[off : off+4 : off+4]
				off += ldb
				b0, b1, b2, b3 := br[0], br[1], br[2], br[3]
				x0, x1, x2, x3 := a0[p], a1[p], a2[p], a3[p]
				s00 += x0 * b0
				s01 += x0 * b1
				s02 += x0 * b2
				s03 += x0 * b3
				s10 += x1 * b0
				s11 += x1 * b1
				s12 += x1 * b2
				s13 += x1 * b3
				s20 += x2 * b0
				s21 += x2 * b1
				s22 += x2 * b2
				s23 += x2 * b3
				s30 += x3 * b0
				s31 += x3 * b1
				s32 += x3 * b2
				s33 += x3 * b3
			}
			c0[0], c0[1], c0[2], c0[3] = s00, s01, s02, s03
			c1[0], c1[1], c1[2], c1[3] = s10, s11, s12, s13
			c2[0], c2[1], c2[2], c2[3] = s20, s21, s22, s23
			c3[0], c3[1], c3[2], c3[3] = s30, s31, s32, s33
		}
	}
}

// unsafeSlice is the n values from p on.
func unsafeSlice(p *float32, n int) []float32 { return unsafe.Slice(p, n) }
