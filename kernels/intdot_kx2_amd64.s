//go:build amd64 && !purego

#include "textflag.h"
#include "intdot_amd64.h"
#include "q6k_amd64.h"
#include "lowk_amd64.h"

// Two-activation-row forms of the Q2_K, Q3_K, Q4_K and Q6_K kernels
// (intdot_k_amd64.s):
// each super-block of a weight row is loaded, its scales unpacked and its
// quants built once for the two activation rows at SI and DX. The eight
// float accumulators (four weight rows times two activation rows) live on
// the stack, touched once per super-block, which frees the registers for
// the second row's sums; each row's float operations are the one-row
// kernel's in the same order, so its sums are bit-identical to it.
//
// Frame: 0(SP) 16 scale bytes, 16(SP) eight widened scale dwords,
// 64(SP)+32r the accumulator of weight row r against SI, 192(SP)+32r
// against DX.

#define LOADARGS2K \
	MOVQ w0+0(FP), R8; \
	MOVQ w1+8(FP), R9; \
	MOVQ w2+16(FP), R10; \
	MOVQ w3+24(FP), R11; \
	MOVQ xa0+32(FP), SI; \
	MOVQ xa1+40(FP), DX; \
	MOVQ n+48(FP), CX; \
	MOVQ out+56(FP), DI

#define ZEROACC8 \
	VXORPS  Y0, Y0, Y0; \
	VMOVUPS Y0, 64(SP); \
	VMOVUPS Y0, 96(SP); \
	VMOVUPS Y0, 128(SP); \
	VMOVUPS Y0, 160(SP); \
	VMOVUPS Y0, 192(SP); \
	VMOVUPS Y0, 224(SP); \
	VMOVUPS Y0, 256(SP); \
	VMOVUPS Y0, 288(SP)

// HSUM8 stores the four rows' sums against SI at 0(DI), against DX at 16(DI).
#define HSUM8 \
	VMOVUPS 64(SP), Y0; \
	VMOVUPS 96(SP), Y1; \
	VMOVUPS 128(SP), Y2; \
	VMOVUPS 160(SP), Y3; \
	HSUMI4((DI)); \
	VMOVUPS 192(SP), Y0; \
	VMOVUPS 224(SP), Y1; \
	VMOVUPS 256(SP), Y2; \
	VMOVUPS 288(SP), Y3; \
	HSUMI4(16(DI))

// KSCALES2 is KSCALES (intdot_k_amd64.s) with R13 for DX, and the mins
// against both rows' 16-value sums: Y2 (SI) and Y3 (DX). Uses AX, BX,
// R12, R13, Y9-Y12; zeroes the sums Y0 and Y1.
#define KSCALES2(P) \
	MOVL         4(P), AX; \
	MOVL         8(P), BX; \
	MOVL         12(P), R13; \
	MOVL         AX, R12; \
	ANDL         $0x3f3f3f3f, R12; \
	VMOVD        R12, X9; \
	MOVL         R13, R12; \
	ANDL         $0x0f0f0f0f, R12; \
	SHRL         $6, AX; \
	ANDL         $0x03030303, AX; \
	SHLL         $4, AX; \
	ORL          AX, R12; \
	VPINSRD      $1, R12, X9, X9; \
	MOVL         BX, R12; \
	ANDL         $0x3f3f3f3f, R12; \
	VMOVD        R12, X10; \
	SHRL         $4, R13; \
	ANDL         $0x0f0f0f0f, R13; \
	SHRL         $6, BX; \
	ANDL         $0x03030303, BX; \
	SHLL         $4, BX; \
	ORL          BX, R13; \
	VPINSRD      $1, R13, X10, X10; \
	VPMOVZXBW    X10, X10; \
	VPUNPCKHWD   X10, X10, X12; \
	VPUNPCKLWD   X10, X10, X11; \
	VINSERTI128  $1, X12, Y11, Y11; \
	VPMADDWD     256(DX), Y11, Y3; \
	VPMADDWD     256(SI), Y11, Y2; \
	VPMOVZXBD    X9, Y9; \
	VPSLLD       $16, Y9, Y10; \
	VPOR         Y10, Y9, Y9; \
	VMOVDQU      Y9, 16(SP); \
	VPXOR        Y0, Y0, Y0; \
	VPXOR        Y1, Y1, Y1

// Q4KPAIR2 is Q4KPAIR for both rows: sums in Y0 (SI) and Y1 (DX).
#define Q4KPAIR2(P, Q, X, S0, S1) \
	VMOVDQU      16+Q(P), Y13; \
	VPAND        Y15, Y13, Y14; \
	VPBROADCASTD S0(SP), Y10; \
	VPMADDUBSW   X(SI), Y14, Y9; \
	VPMADDWD     Y10, Y9, Y9; \
	VPADDD       Y9, Y0, Y0; \
	VPMADDUBSW   X(DX), Y14, Y9; \
	VPMADDWD     Y10, Y9, Y9; \
	VPADDD       Y9, Y1, Y1; \
	VPSRLW       $4, Y13, Y13; \
	VPAND        Y15, Y13, Y13; \
	VPBROADCASTD S1(SP), Y10; \
	VPMADDUBSW   X+32(SI), Y13, Y9; \
	VPMADDWD     Y10, Y9, Y9; \
	VPADDD       Y9, Y0, Y0; \
	VPMADDUBSW   X+32(DX), Y13, Y9; \
	VPMADDWD     Y10, Y9, Y9; \
	VPADDD       Y9, Y1, Y1

// KFIN1 is KFINISH for the row at XP: int sums S, min sums M, the
// accumulator at ACC(SP).
#define KFIN1(P, XP, S, M, ACC) \
	VCVTDQ2PS    S, S; \
	VCVTDQ2PS    M, M; \
	VCVTPH2PS    (P), X13; \
	VBROADCASTSS 288(XP), X14; \
	VMULPS       X14, X13, X13; \
	VMOVSHDUP    X13, X14; \
	VBROADCASTSS X13, Y13; \
	VBROADCASTSS X14, Y14; \
	VMOVUPS      ACC(SP), Y9; \
	VFMADD231PS  Y13, S, Y9; \
	VFNMADD231PS Y14, M, Y9; \
	VMOVUPS      Y9, ACC(SP)

#define Q4KROW2(P, A0, A1) \
	KSCALES2(P); \
	Q4KPAIR2(P, 0, 0, 16, 20); \
	Q4KPAIR2(P, 32, 64, 24, 28); \
	Q4KPAIR2(P, 64, 128, 32, 36); \
	Q4KPAIR2(P, 96, 192, 40, 44); \
	KFIN1(P, SI, Y0, Y2, A0); \
	KFIN1(P, DX, Y1, Y3, A1)

// Q6_K: Q6GROUP2 is Q6GROUP (intdot_k_amd64.s) for both rows, sums in
// Y12 (SI) and Y13 (DX); Y11 and Y8 are temporaries.

#define Q6GROUP2(X, R) \
	VPMADDUBSW X(DX), Y7, Y11; \
	VPMADDUBSW X(SI), Y7, Y7; \
	VPSHUFB    q6shuf<>+R(SB), X4, X8; \
	VPMOVSXBW  X8, Y8; \
	VPMADDWD   Y8, Y7, Y7; \
	VPADDD     Y7, Y12, Y12; \
	VPMADDWD   Y8, Y11, Y11; \
	VPADDD     Y11, Y13, Y13


// Q6FIN1 subtracts 32 times the scales against the 16-value sums of the
// row at XP from its int sums S and adds them times d*dx to ACC(SP).
// Y11 holds the sign-extended scales; uses X10, Y2, Y3.
#define Q6FIN1(XP, S, ACC) \
	VPMADDWD     256(XP), Y11, Y2; \
	VPSLLD       $5, Y2, Y2; \
	VPSUBD       Y2, S, S; \
	VCVTDQ2PS    S, S; \
	VMULSS       288(XP), X10, X3; \
	VBROADCASTSS X3, Y3; \
	VMOVUPS      ACC(SP), Y2; \
	VFMADD231PS  Y3, S, Y2; \
	VMOVUPS      Y2, ACC(SP)

#define Q6KROW2(P, A0, A1) \
	VMOVDQU   192(P), X4; \
	VPXOR     Y12, Y12, Y12; \
	VPXOR     Y13, Y13, Y13; \
	Q6HALF(P, 0, Q6GROUP2); \
	Q6HALF(P, 1, Q6GROUP2); \
	VPMOVSXBW X4, Y11; \
	MOVWLZX   208(P), AX; \
	VMOVD     AX, X10; \
	VCVTPH2PS X10, X10; \
	Q6FIN1(SI, Y12, A0); \
	Q6FIN1(DX, Y13, A1)

// Q3_K: Q3KROW (intdot_k_amd64.s) for both rows, the groups met by
// Q6GROUP2 (sums in Y12 and Y13); Q3FIN1 is Q6FIN1 with the -4 offset.
#define Q3FIN1(XP, S, ACC) \
	VPMADDWD     256(XP), Y11, Y2; \
	VPSLLD       $2, Y2, Y2; \
	VPSUBD       Y2, S, S; \
	VCVTDQ2PS    S, S; \
	VMULSS       288(XP), X10, X3; \
	VBROADCASTSS X3, Y3; \
	VMOVUPS      ACC(SP), Y2; \
	VFMADD231PS  Y3, S, Y2; \
	VMOVUPS      Y2, ACC(SP)

#define Q3KROW2(P, A0, A1) \
	Q3SCALES(P); \
	VPXOR     Y12, Y12, Y12; \
	VPXOR     Y13, Y13, Y13; \
	Q3QUANTS(P, Q6GROUP2); \
	VPMOVSXBW X4, Y11; \
	MOVWLZX   108(P), AX; \
	VMOVD     AX, X10; \
	VCVTPH2PS X10, X10; \
	Q3FIN1(SI, Y12, A0); \
	Q3FIN1(DX, Y13, A1)

// Q2_K: Q2KROW (intdot_k_amd64.s) for both rows, the groups met by
// Q6GROUP2 (sums in Y12 and Y13), the mins against both rows' 16-value
// sums in Y2 (SI) and Y3 (DX). Q2FIN1 is KFIN1 with d and dmin (as floats
// in X6) converted once for both rows; uses Y0, Y1, Y9.
#define Q2FIN1(XP, S, M, ACC) \
	VCVTDQ2PS    S, S; \
	VCVTDQ2PS    M, M; \
	VBROADCASTSS 288(XP), X0; \
	VMULPS       X0, X6, X0; \
	VMOVSHDUP    X0, X1; \
	VBROADCASTSS X0, Y0; \
	VBROADCASTSS X1, Y1; \
	VMOVUPS      ACC(SP), Y9; \
	VFMADD231PS  Y0, S, Y9; \
	VFNMADD231PS Y1, M, Y9; \
	VMOVUPS      Y9, ACC(SP)

#define Q2KROW2(P, A0, A1) \
	Q2SCALES(P); \
	VPMADDWD  256(DX), Y11, Y3; \
	VPMADDWD  256(SI), Y11, Y2; \
	VPXOR     Y12, Y12, Y12; \
	VPXOR     Y13, Y13, Y13; \
	Q2QUANTS(P, Q6GROUP2); \
	MOVL      80(P), AX; \
	VMOVD     AX, X6; \
	VCVTPH2PS X6, X6; \
	Q2FIN1(SI, Y12, Y2, A0); \
	Q2FIN1(DX, Y13, Y3, A1)

// The kernels: the macros above are all defined before any TEXT so that
// go vet checks each stack offset against its own function's frame.

// func q4_Kx4x2(w0, w1, w2, w3, xa0, xa1 unsafe.Pointer, n int, out *[8]float32)
TEXT ·q4_Kx4x2(SB), NOSPLIT, $320-64
	LOADARGS2K
	ZEROACC8
	MOVL         $0x0f0f0f0f, AX
	MOVL         AX, 0(SP)
	VPBROADCASTD 0(SP), Y15

q4kx2loop:
	Q4KROW2(R8, 64, 192)
	Q4KROW2(R9, 96, 224)
	Q4KROW2(R10, 128, 256)
	Q4KROW2(R11, 160, 288)
	ADDQ $144, R8
	ADDQ $144, R9
	ADDQ $144, R10
	ADDQ $144, R11
	ADDQ $304, SI
	ADDQ $304, DX
	DECQ CX
	JNZ  q4kx2loop

	HSUM8
	VZEROUPPER
	RET

// func q6_Kx4x2(w0, w1, w2, w3, xa0, xa1 unsafe.Pointer, n int, out *[8]float32)
TEXT ·q6_Kx4x2(SB), NOSPLIT, $320-64
	LOADARGS2K
	ZEROACC8
	MOVL         $0x0f0f0f0f, AX
	MOVL         AX, 0(SP)
	VPBROADCASTD 0(SP), Y15
	MOVL         $0x30303030, AX
	MOVL         AX, 0(SP)
	VPBROADCASTD 0(SP), Y14

q6kx2loop:
	Q6KROW2(R8, 64, 192)
	Q6KROW2(R9, 96, 224)
	Q6KROW2(R10, 128, 256)
	Q6KROW2(R11, 160, 288)
	ADDQ $210, R8
	ADDQ $210, R9
	ADDQ $210, R10
	ADDQ $210, R11
	ADDQ $304, SI
	ADDQ $304, DX
	DECQ CX
	JNZ  q6kx2loop

	HSUM8
	VZEROUPPER
	RET

// func q3_Kx4x2(w0, w1, w2, w3, xa0, xa1 unsafe.Pointer, n int, out *[8]float32)
TEXT ·q3_Kx4x2(SB), NOSPLIT, $320-64
	LOADARGS2K
	ZEROACC8
	VPBROADCASTD lowk<>+64(SB), Y15
	VPBROADCASTD lowk<>+68(SB), Y14

q3kx2loop:
	Q3KROW2(R8, 64, 192)
	Q3KROW2(R9, 96, 224)
	Q3KROW2(R10, 128, 256)
	Q3KROW2(R11, 160, 288)
	ADDQ $110, R8
	ADDQ $110, R9
	ADDQ $110, R10
	ADDQ $110, R11
	ADDQ $304, SI
	ADDQ $304, DX
	DECQ CX
	JNZ  q3kx2loop

	HSUM8
	VZEROUPPER
	RET

// func q2_Kx4x2(w0, w1, w2, w3, xa0, xa1 unsafe.Pointer, n int, out *[8]float32)
TEXT ·q2_Kx4x2(SB), NOSPLIT, $320-64
	LOADARGS2K
	ZEROACC8
	VPBROADCASTD lowk<>+64(SB), Y15

q2kx2loop:
	Q2KROW2(R8, 64, 192)
	Q2KROW2(R9, 96, 224)
	Q2KROW2(R10, 128, 256)
	Q2KROW2(R11, 160, 288)
	ADDQ $84, R8
	ADDQ $84, R9
	ADDQ $84, R10
	ADDQ $84, R11
	ADDQ $304, SI
	ADDQ $304, DX
	DECQ CX
	JNZ  q2kx2loop

	HSUM8
	VZEROUPPER
	RET
