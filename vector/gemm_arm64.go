//go:build arm64 && !purego

package vector

import "unsafe"

// Every arm64 CPU has NEON (Advanced SIMD).
func init() { addKernel("neon", gemmKernelNEON) }

// gemmKernelNEON4x16 is a 4 × 16 kernel in NEON (gemm_arm64.s).
//
//go:noescape
func gemmKernelNEON4x16(kc int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int)

// gemmKernelNEON covers the 8 × 32 tile with four 4 × 16 ones.
func gemmKernelNEON(kc int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int) {
	for r := 0; r < gemmRows; r += 4 {
		ar := (*float32)(unsafe.Add(unsafe.Pointer(a), 4*r*lda))
		cr := (*float32)(unsafe.Add(unsafe.Pointer(c), 4*r*ldc))
		for j := 0; j < gemmCols; j += 16 {
			gemmKernelNEON4x16(kc, ar, lda, (*float32)(unsafe.Add(unsafe.Pointer(b), 4*j)), ldb, (*float32)(unsafe.Add(unsafe.Pointer(cr), 4*j)), ldc)
		}
	}
}
