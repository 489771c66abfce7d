//go:build arm64 && !purego

#include "textflag.h"

// func gemmKernelNEON4x16(kc int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int)
//
// A 4 × 16 tile of C in V0–V15 (row r in V(4r)–V(4r+3)). Per step of the
// inner dimension: B's row in V16–V19, each row's value of A broadcast
// into one of V20–V23 (R3–R6 walk A's rows), 16 FMAs.
TEXT ·gemmKernelNEON4x16(SB), NOSPLIT, $0-56
	MOVD kc+0(FP), R0
	MOVD a+8(FP), R3
	MOVD lda+16(FP), R1
	MOVD b+24(FP), R2
	MOVD ldb+32(FP), R11
	MOVD c+40(FP), R7
	MOVD ldc+48(FP), R12
	LSL $2, R1, R1
	LSL $2, R11, R11
	LSL $2, R12, R12
	ADD R1, R3, R4
	ADD R1, R4, R5
	ADD R1, R5, R6
	ADD R12, R7, R8
	ADD R12, R8, R9
	ADD R12, R9, R10
	VLD1 (R7), [V0.S4, V1.S4, V2.S4, V3.S4]
	VLD1 (R8), [V4.S4, V5.S4, V6.S4, V7.S4]
	VLD1 (R9), [V8.S4, V9.S4, V10.S4, V11.S4]
	VLD1 (R10), [V12.S4, V13.S4, V14.S4, V15.S4]

loop:
	VLD1 (R2), [V16.S4, V17.S4, V18.S4, V19.S4]
	ADD R11, R2, R2
	VLD1R.P 4(R3), [V20.S4]
	VLD1R.P 4(R4), [V21.S4]
	VLD1R.P 4(R5), [V22.S4]
	VLD1R.P 4(R6), [V23.S4]
	VFMLA V16.S4, V20.S4, V0.S4
	VFMLA V17.S4, V20.S4, V1.S4
	VFMLA V18.S4, V20.S4, V2.S4
	VFMLA V19.S4, V20.S4, V3.S4
	VFMLA V16.S4, V21.S4, V4.S4
	VFMLA V17.S4, V21.S4, V5.S4
	VFMLA V18.S4, V21.S4, V6.S4
	VFMLA V19.S4, V21.S4, V7.S4
	VFMLA V16.S4, V22.S4, V8.S4
	VFMLA V17.S4, V22.S4, V9.S4
	VFMLA V18.S4, V22.S4, V10.S4
	VFMLA V19.S4, V22.S4, V11.S4
	VFMLA V16.S4, V23.S4, V12.S4
	VFMLA V17.S4, V23.S4, V13.S4
	VFMLA V18.S4, V23.S4, V14.S4
	VFMLA V19.S4, V23.S4, V15.S4
	SUBS $1, R0, R0
	BNE loop

	VST1 [V0.S4, V1.S4, V2.S4, V3.S4], (R7)
	VST1 [V4.S4, V5.S4, V6.S4, V7.S4], (R8)
	VST1 [V8.S4, V9.S4, V10.S4, V11.S4], (R9)
	VST1 [V12.S4, V13.S4, V14.S4, V15.S4], (R10)
	RET
