//go:build amd64 && !purego

#include "textflag.h"

// Constants of exp32 (uselite.go), each as a float32.
DATA expConst<>+0(SB)/4, $0x3fb8aa3b  // log2(e)
DATA expConst<>+4(SB)/4, $0x3f000000  // 0.5
DATA expConst<>+8(SB)/4, $0x3f318000  // ln 2, high part: 0.693359375
DATA expConst<>+12(SB)/4, $0xb95e8083 // ln 2, low part: -2.12194440e-4
DATA expConst<>+16(SB)/4, $0x39506967 // 1.9875691500e-4
DATA expConst<>+20(SB)/4, $0x3ab743ce // 1.3981999507e-3
DATA expConst<>+24(SB)/4, $0x3c088908 // 8.3334519073e-3
DATA expConst<>+28(SB)/4, $0x3d2aa9c1 // 4.1665795894e-2
DATA expConst<>+32(SB)/4, $0x3e2aaaaa // 1.6666665459e-1
DATA expConst<>+36(SB)/4, $0x3f000000 // 5.0000001201e-1
DATA expConst<>+40(SB)/4, $0x3f800000 // 1
DATA expConst<>+44(SB)/4, $0xc2aeac4f // -87.33654: below it, 0
GLOBL expConst<>(SB), RODATA|NOPTR, $48

// func softmaxAVX2(s *float32, n int, scale float32)
//
// s[i] = exp(scale·s[i] - m) / Σ, over n values (a multiple of 8), m the
// largest scaled value: three passes of 8 values, the exponential as
// exp32 computes it (FMA where it multiplies and adds).
TEXT ·softmaxAVX2(SB), NOSPLIT, $0-20
	MOVQ s+0(FP), DI
	MOVQ n+8(FP), CX
	SHRQ $3, CX
	VBROADCASTSS scale+16(FP), Y15

	// Scale, and the largest value.
	MOVQ DI, SI
	MOVQ CX, DX
	VMOVUPS (SI), Y0
	VMULPS Y15, Y0, Y0
	VMOVAPS Y0, Y14
scale:
	VMOVUPS (SI), Y0
	VMULPS Y15, Y0, Y0
	VMOVUPS Y0, (SI)
	VMAXPS Y0, Y14, Y14
	ADDQ $32, SI
	DECQ DX
	JNZ scale
	VEXTRACTF128 $1, Y14, X0
	VMAXPS X0, X14, X14
	VPERMILPS $0x4E, X14, X0
	VMAXPS X0, X14, X14
	VPERMILPS $0xB1, X14, X0
	VMAXPS X0, X14, X14
	VBROADCASTSS X14, Y14

	// The exponentials and their sum.
	VBROADCASTSS expConst<>+0(SB), Y1  // log2(e)
	VBROADCASTSS expConst<>+4(SB), Y2  // 0.5
	VBROADCASTSS expConst<>+8(SB), Y3  // ln 2 high
	VBROADCASTSS expConst<>+12(SB), Y4 // ln 2 low, negated
	VBROADCASTSS expConst<>+40(SB), Y5 // 1
	VBROADCASTSS expConst<>+44(SB), Y6 // the floor
	VXORPS Y13, Y13, Y13                 // the sum
	MOVQ DI, SI
	MOVQ CX, DX
exp:
	VMOVUPS (SI), Y0
	VSUBPS Y14, Y0, Y0                   // x
	VMOVAPS Y2, Y7
	VFMADD231PS Y1, Y0, Y7               // x·log2(e) + 0.5
	VROUNDPS $9, Y7, Y7                  // k = floor(·)
	VMOVAPS Y0, Y8
	VFNMADD231PS Y3, Y7, Y8              // r = x - k·ln2hi
	VFNMADD231PS Y4, Y7, Y8              // r -= k·(-ln2lo)
	VMULPS Y8, Y8, Y9                    // z = r²
	VBROADCASTSS expConst<>+16(SB), Y10
	VBROADCASTSS expConst<>+20(SB), Y11
	VFMADD213PS Y11, Y8, Y10             // p = p·r + c
	VBROADCASTSS expConst<>+24(SB), Y11
	VFMADD213PS Y11, Y8, Y10
	VBROADCASTSS expConst<>+28(SB), Y11
	VFMADD213PS Y11, Y8, Y10
	VBROADCASTSS expConst<>+32(SB), Y11
	VFMADD213PS Y11, Y8, Y10
	VBROADCASTSS expConst<>+36(SB), Y11
	VFMADD213PS Y11, Y8, Y10
	VFMADD213PS Y8, Y9, Y10              // y = p·z + r
	VADDPS Y5, Y10, Y10                  // y += 1
	VCVTTPS2DQ Y7, Y7
	VPSLLD $23, Y7, Y7
	VPADDD Y5, Y7, Y7                    // 2^k: k<<23 + the bits of 1
	VMULPS Y7, Y10, Y10
	VCMPPS $0x1D, Y6, Y0, Y11            // x ≥ the floor
	VANDPS Y11, Y10, Y10
	VMOVUPS Y10, (SI)
	VADDPS Y10, Y13, Y13
	ADDQ $32, SI
	DECQ DX
	JNZ exp
	VEXTRACTF128 $1, Y13, X0
	VADDPS X0, X13, X13
	VPERMILPS $0x4E, X13, X0
	VADDPS X0, X13, X13
	VPERMILPS $0xB1, X13, X0
	VADDPS X0, X13, X13
	VDIVSS X13, X5, X13                  // 1/Σ
	VBROADCASTSS X13, Y13

	// The weights.
	MOVQ DI, SI
	MOVQ CX, DX
norm:
	VMULPS (SI), Y13, Y0
	VMOVUPS Y0, (SI)
	ADDQ $32, SI
	DECQ DX
	JNZ norm
	VZEROUPPER
	RET

// func reluAVX2(x *float32, n int)
//
// x[i] = max(x[i], 0) over n values, a multiple of 8.
TEXT ·reluAVX2(SB), NOSPLIT, $0-16
	MOVQ x+0(FP), DI
	MOVQ n+8(FP), CX
	SHRQ $3, CX
	VXORPS Y1, Y1, Y1
relu:
	VMAXPS (DI), Y1, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, DI
	DECQ CX
	JNZ relu
	VZEROUPPER
	RET

// func layerNormAVX2(out, x *float32, d int, scale, bias *float32, eps float32)
//
// One row of d values (a multiple of 8): its mean, the mean of its
// squared deviations, then out[j] = scale[j]·(x[j]-mean)/√(var+eps) +
// bias[j].
TEXT ·layerNormAVX2(SB), NOSPLIT, $0-44
	MOVQ out+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ d+16(FP), CX
	MOVQ scale+24(FP), R8
	MOVQ bias+32(FP), R9
	MOVQ CX, R10
	SHRQ $3, R10

	// The mean.
	VXORPS Y0, Y0, Y0
	MOVQ SI, AX
	MOVQ R10, DX
sum:
	VADDPS (AX), Y0, Y0
	ADDQ $32, AX
	DECQ DX
	JNZ sum
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VPERMILPS $0x4E, X0, X1
	VADDPS X1, X0, X0
	VPERMILPS $0xB1, X0, X1
	VADDPS X1, X0, X0
	VCVTSI2SSQ CX, X2, X2
	VDIVSS X2, X0, X0
	VBROADCASTSS X0, Y3 // mean

	// The variance.
	VXORPS Y0, Y0, Y0
	MOVQ SI, AX
	MOVQ R10, DX
variance:
	VMOVUPS (AX), Y1
	VSUBPS Y3, Y1, Y1
	VFMADD231PS Y1, Y1, Y0
	ADDQ $32, AX
	DECQ DX
	JNZ variance
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VPERMILPS $0x4E, X0, X1
	VADDPS X1, X0, X0
	VPERMILPS $0xB1, X0, X1
	VADDPS X1, X0, X0
	VDIVSS X2, X0, X0
	VADDSS eps+40(FP), X0, X0
	VSQRTSS X0, X0, X0
	VBROADCASTSS expConst<>+40(SB), X1
	VDIVSS X0, X1, X0
	VBROADCASTSS X0, Y4 // 1/√(var+eps)

	// Normalize, scale, shift.
	MOVQ R10, DX
norm:
	VMOVUPS (SI), Y1
	VSUBPS Y3, Y1, Y1
	VMULPS Y4, Y1, Y1
	VMOVUPS (R9), Y2
	VFMADD231PS (R8), Y1, Y2
	VMOVUPS Y2, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	ADDQ $32, R8
	ADDQ $32, R9
	DECQ DX
	JNZ norm
	VZEROUPPER
	RET
