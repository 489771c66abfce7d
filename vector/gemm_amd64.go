//go:build amd64 && !purego

package vector

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

func init() {
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		addKernel("avx2", gemmKernelAVX2)
	}
	if cpu.X86.HasAVX512F {
		addKernel("avx512", gemmKernelAVX512)
	}
}

// gemmKernelAVX512 is the 8 × 32 kernel in AVX-512 (gemm_amd64.s).
//
//go:noescape
func gemmKernelAVX512(kc int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int)

// gemmKernelAVX2x4 is a 4 × 16 kernel in AVX2 with FMA (gemm_amd64.s).
//
//go:noescape
func gemmKernelAVX2x4(kc int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int)

// gemmKernelAVX2 covers the 8 × 32 tile with four 4 × 16 ones.
func gemmKernelAVX2(kc int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int) {
	for r := 0; r < gemmRows; r += 4 {
		ar := (*float32)(unsafe.Add(unsafe.Pointer(a), 4*r*lda))
		cr := (*float32)(unsafe.Add(unsafe.Pointer(c), 4*r*ldc))
		for j := 0; j < gemmCols; j += 16 {
			gemmKernelAVX2x4(kc, ar, lda, (*float32)(unsafe.Add(unsafe.Pointer(b), 4*j)), ldb, (*float32)(unsafe.Add(unsafe.Pointer(cr), 4*j)), ldc)
		}
	}
}
