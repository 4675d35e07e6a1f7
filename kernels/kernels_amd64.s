//go:build amd64 && !purego

#include "textflag.h"

// AVX2/FMA/F16C kernels. Each product kernel computes the dot products of
// four weight rows with one or two activation vectors, so that a weight row
// is streamed from memory once while it meets every activation vector of the
// batch (the Go side walks the batch two vectors at a time over the same four
// rows, which stay in L1/L2). Accumulators: Y0-Y3 rows 0-3 against x (or x0),
// Y4-Y7 rows 0-3 against x1 (or a second chain in the 4x1 forms).

// HSUM4 reduces the eight lanes of each of A,B,C,D (whose low halves are
// XA..XD) and stores the four sums at DST; T is a scratch X register.
#define HSUM4(A, B, C, D, XA, XB, XC, XD, T, DST) \
	VEXTRACTF128 $1, A, T; \
	VADDPS T, XA, XA; \
	VEXTRACTF128 $1, B, T; \
	VADDPS T, XB, XB; \
	VEXTRACTF128 $1, C, T; \
	VADDPS T, XC, XC; \
	VEXTRACTF128 $1, D, T; \
	VADDPS T, XD, XD; \
	VHADDPS XB, XA, XA; \
	VHADDPS XD, XC, XC; \
	VHADDPS XC, XA, XA; \
	VMOVUPS XA, DST

#define ZERO8 \
	VXORPS Y0, Y0, Y0; \
	VXORPS Y1, Y1, Y1; \
	VXORPS Y2, Y2, Y2; \
	VXORPS Y3, Y3, Y3; \
	VXORPS Y4, Y4, Y4; \
	VXORPS Y5, Y5, Y5; \
	VXORPS Y6, Y6, Y6; \
	VXORPS Y7, Y7, Y7

#define LOADARGS1 \
	MOVQ w0+0(FP), R8; \
	MOVQ w1+8(FP), R9; \
	MOVQ w2+16(FP), R10; \
	MOVQ w3+24(FP), R11; \
	MOVQ x+32(FP), SI; \
	MOVQ n+40(FP), CX; \
	MOVQ out+48(FP), DI

#define LOADARGS2 \
	MOVQ w0+0(FP), R8; \
	MOVQ w1+8(FP), R9; \
	MOVQ w2+16(FP), R10; \
	MOVQ w3+24(FP), R11; \
	MOVQ x0+32(FP), SI; \
	MOVQ x1+40(FP), DX; \
	MOVQ n+48(FP), CX; \
	MOVQ out+56(FP), DI

// func f32x4x1(w0, w1, w2, w3 unsafe.Pointer, x *float32, n int, out *[8]float32)
TEXT ·f32x4x1(SB), NOSPLIT, $0-56
	LOADARGS1
	ZERO8
	XORQ AX, AX
	MOVQ CX, BX
	ANDQ $-16, BX
	JZ   f32x1tail

f32x1loop:
	VMOVUPS     (SI)(AX*4), Y8
	VMOVUPS     32(SI)(AX*4), Y9
	VFMADD231PS (R8)(AX*4), Y8, Y0
	VFMADD231PS 32(R8)(AX*4), Y9, Y4
	VFMADD231PS (R9)(AX*4), Y8, Y1
	VFMADD231PS 32(R9)(AX*4), Y9, Y5
	VFMADD231PS (R10)(AX*4), Y8, Y2
	VFMADD231PS 32(R10)(AX*4), Y9, Y6
	VFMADD231PS (R11)(AX*4), Y8, Y3
	VFMADD231PS 32(R11)(AX*4), Y9, Y7
	ADDQ        $16, AX
	CMPQ        AX, BX
	JLT         f32x1loop

f32x1tail:
	CMPQ        AX, CX
	JGE         f32x1done
	VMOVUPS     (SI)(AX*4), Y8
	VFMADD231PS (R8)(AX*4), Y8, Y0
	VFMADD231PS (R9)(AX*4), Y8, Y1
	VFMADD231PS (R10)(AX*4), Y8, Y2
	VFMADD231PS (R11)(AX*4), Y8, Y3

f32x1done:
	VADDPS Y4, Y0, Y0
	VADDPS Y5, Y1, Y1
	VADDPS Y6, Y2, Y2
	VADDPS Y7, Y3, Y3
	HSUM4(Y0, Y1, Y2, Y3, X0, X1, X2, X3, X8, (DI))
	VZEROUPPER
	RET

// func f32x4x2(w0, w1, w2, w3 unsafe.Pointer, x0, x1 *float32, n int, out *[8]float32)
TEXT ·f32x4x2(SB), NOSPLIT, $0-64
	LOADARGS2
	ZERO8
	XORQ AX, AX

f32x2loop:
	VMOVUPS     (SI)(AX*4), Y12
	VMOVUPS     (DX)(AX*4), Y13
	VMOVUPS     (R8)(AX*4), Y8
	VMOVUPS     (R9)(AX*4), Y9
	VMOVUPS     (R10)(AX*4), Y10
	VMOVUPS     (R11)(AX*4), Y11
	VFMADD231PS Y12, Y8, Y0
	VFMADD231PS Y13, Y8, Y4
	VFMADD231PS Y12, Y9, Y1
	VFMADD231PS Y13, Y9, Y5
	VFMADD231PS Y12, Y10, Y2
	VFMADD231PS Y13, Y10, Y6
	VFMADD231PS Y12, Y11, Y3
	VFMADD231PS Y13, Y11, Y7
	ADDQ        $8, AX
	CMPQ        AX, CX
	JLT         f32x2loop

	HSUM4(Y0, Y1, Y2, Y3, X0, X1, X2, X3, X8, (DI))
	HSUM4(Y4, Y5, Y6, Y7, X4, X5, X6, X7, X8, 16(DI))
	VZEROUPPER
	RET

// func f16x4x1(w0, w1, w2, w3 unsafe.Pointer, x *float32, n int, out *[8]float32)
TEXT ·f16x4x1(SB), NOSPLIT, $0-56
	LOADARGS1
	ZERO8
	XORQ AX, AX

f16x1loop:
	VMOVUPS     (SI)(AX*4), Y12
	VCVTPH2PS   (R8)(AX*2), Y8
	VCVTPH2PS   (R9)(AX*2), Y9
	VCVTPH2PS   (R10)(AX*2), Y10
	VCVTPH2PS   (R11)(AX*2), Y11
	VFMADD231PS Y12, Y8, Y0
	VFMADD231PS Y12, Y9, Y1
	VFMADD231PS Y12, Y10, Y2
	VFMADD231PS Y12, Y11, Y3
	ADDQ        $8, AX
	CMPQ        AX, CX
	JLT         f16x1loop

	HSUM4(Y0, Y1, Y2, Y3, X0, X1, X2, X3, X8, (DI))
	VZEROUPPER
	RET

// func f16x4x2(w0, w1, w2, w3 unsafe.Pointer, x0, x1 *float32, n int, out *[8]float32)
TEXT ·f16x4x2(SB), NOSPLIT, $0-64
	LOADARGS2
	ZERO8
	XORQ AX, AX

f16x2loop:
	VMOVUPS     (SI)(AX*4), Y12
	VMOVUPS     (DX)(AX*4), Y13
	VCVTPH2PS   (R8)(AX*2), Y8
	VCVTPH2PS   (R9)(AX*2), Y9
	VCVTPH2PS   (R10)(AX*2), Y10
	VCVTPH2PS   (R11)(AX*2), Y11
	VFMADD231PS Y12, Y8, Y0
	VFMADD231PS Y13, Y8, Y4
	VFMADD231PS Y12, Y9, Y1
	VFMADD231PS Y13, Y9, Y5
	VFMADD231PS Y12, Y10, Y2
	VFMADD231PS Y13, Y10, Y6
	VFMADD231PS Y12, Y11, Y3
	VFMADD231PS Y13, Y11, Y7
	ADDQ        $8, AX
	CMPQ        AX, CX
	JLT         f16x2loop

	HSUM4(Y0, Y1, Y2, Y3, X0, X1, X2, X3, X8, (DI))
	HSUM4(Y4, Y5, Y6, Y7, X4, X5, X6, X7, X8, 16(DI))
	VZEROUPPER
	RET

// Q8_0: a block is a little-endian half scale d and 32 int8 quants. The
// quants are widened to int32 (VPMOVSXBD), converted to float and multiplied
// into x in two chains, and the block sum is scaled by d into the row's
// accumulator: d * sum(q*x), the reference's order of scaling.

// Q8DEQ widens and converts the 32 quants of the block at P into Y8-Y11.
#define Q8DEQ(P) \
	VPMOVSXBD 2(P), Y8; \
	VPMOVSXBD 10(P), Y9; \
	VPMOVSXBD 18(P), Y10; \
	VPMOVSXBD 26(P), Y11; \
	VCVTDQ2PS Y8, Y8; \
	VCVTDQ2PS Y9, Y9; \
	VCVTDQ2PS Y10, Y10; \
	VCVTDQ2PS Y11, Y11

// Q8SCALE broadcasts the block's scale into Y. Register broadcasts and the
// register form of VCVTPH2PS use the shuffle port that VPMOVSXBD already
// saturates, so the scale goes through a stack slot: convert from memory,
// store one float, broadcast it back from memory (load port only).
#define Q8SCALE(P, X, Y, SLOT) \
	VCVTPH2PS    (P), X; \
	VMOVSS       X, SLOT; \
	VBROADCASTSS SLOT, Y

#define Q8BLK1(P, ACC, SLOT) \
	Q8DEQ(P); \
	VMULPS       (SI), Y8, Y8; \
	VMULPS       32(SI), Y9, Y9; \
	VFMADD231PS  64(SI), Y10, Y8; \
	VFMADD231PS  96(SI), Y11, Y9; \
	VADDPS       Y9, Y8, Y8; \
	Q8SCALE(P, X12, Y12, SLOT); \
	VFMADD231PS  Y12, Y8, ACC

#define Q8BLK2(P, ACC0, ACC1, SLOT) \
	Q8DEQ(P); \
	VMULPS       (SI), Y8, Y12; \
	VMULPS       (DX), Y8, Y13; \
	VFMADD231PS  32(SI), Y9, Y12; \
	VFMADD231PS  32(DX), Y9, Y13; \
	VFMADD231PS  64(SI), Y10, Y12; \
	VFMADD231PS  64(DX), Y10, Y13; \
	VFMADD231PS  96(SI), Y11, Y12; \
	VFMADD231PS  96(DX), Y11, Y13; \
	Q8SCALE(P, X14, Y14, SLOT); \
	VFMADD231PS  Y14, Y12, ACC0; \
	VFMADD231PS  Y14, Y13, ACC1

// func q8x4x1(w0, w1, w2, w3 *byte, x *float32, n int, out *[8]float32)
TEXT ·q8x4x1(SB), NOSPLIT, $16-56
	LOADARGS1
	ZERO8

q8x1loop:
	Q8BLK1(R8, Y0, 0(SP))
	Q8BLK1(R9, Y1, 4(SP))
	Q8BLK1(R10, Y2, 8(SP))
	Q8BLK1(R11, Y3, 12(SP))
	ADDQ $34, R8
	ADDQ $34, R9
	ADDQ $34, R10
	ADDQ $34, R11
	ADDQ $128, SI
	DECQ CX
	JNZ  q8x1loop

	HSUM4(Y0, Y1, Y2, Y3, X0, X1, X2, X3, X8, (DI))
	VZEROUPPER
	RET

// func q8x4x2(w0, w1, w2, w3 *byte, x0, x1 *float32, n int, out *[8]float32)
TEXT ·q8x4x2(SB), NOSPLIT, $16-64
	LOADARGS2
	ZERO8

q8x2loop:
	Q8BLK2(R8, Y0, Y4, 0(SP))
	Q8BLK2(R9, Y1, Y5, 4(SP))
	Q8BLK2(R10, Y2, Y6, 8(SP))
	Q8BLK2(R11, Y3, Y7, 12(SP))
	ADDQ $34, R8
	ADDQ $34, R9
	ADDQ $34, R10
	ADDQ $34, R11
	ADDQ $128, SI
	ADDQ $128, DX
	DECQ CX
	JNZ  q8x2loop

	HSUM4(Y0, Y1, Y2, Y3, X0, X1, X2, X3, X8, (DI))
	HSUM4(Y4, Y5, Y6, Y7, X4, X5, X6, X7, X8, 16(DI))
	VZEROUPPER
	RET

// func dotAVX(a, b *float32, n int) float32
TEXT ·dotAVX(SB), NOSPLIT, $0-28
	MOVQ   a+0(FP), SI
	MOVQ   b+8(FP), DI
	MOVQ   n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	XORQ   AX, AX
	MOVQ   CX, BX
	ANDQ   $-32, BX
	JZ     dottail

dotloop:
	VMOVUPS     (SI)(AX*4), Y4
	VMOVUPS     32(SI)(AX*4), Y5
	VMOVUPS     64(SI)(AX*4), Y6
	VMOVUPS     96(SI)(AX*4), Y7
	VFMADD231PS (DI)(AX*4), Y4, Y0
	VFMADD231PS 32(DI)(AX*4), Y5, Y1
	VFMADD231PS 64(DI)(AX*4), Y6, Y2
	VFMADD231PS 96(DI)(AX*4), Y7, Y3
	ADDQ        $32, AX
	CMPQ        AX, BX
	JLT         dotloop

dottail:
	CMPQ        AX, CX
	JGE         dotdone
	VMOVUPS     (SI)(AX*4), Y4
	VFMADD231PS (DI)(AX*4), Y4, Y0
	ADDQ        $8, AX
	JMP         dottail

dotdone:
	VADDPS       Y1, Y0, Y0
	VADDPS       Y3, Y2, Y2
	VADDPS       Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VHADDPS      X0, X0, X0
	VHADDPS      X0, X0, X0
	VMOVSS       X0, ret+24(FP)
	VZEROUPPER
	RET

// func axpyAVX(alpha float32, x, y *float32, n int)
TEXT ·axpyAVX(SB), NOSPLIT, $0-32
	VBROADCASTSS alpha+0(FP), Y0
	MOVQ         x+8(FP), SI
	MOVQ         y+16(FP), DI
	MOVQ         n+24(FP), CX
	XORQ         AX, AX
	MOVQ         CX, BX
	ANDQ         $-32, BX
	JZ           axpytail

axpyloop:
	VMOVUPS     (DI)(AX*4), Y1
	VMOVUPS     32(DI)(AX*4), Y2
	VMOVUPS     64(DI)(AX*4), Y3
	VMOVUPS     96(DI)(AX*4), Y4
	VFMADD231PS (SI)(AX*4), Y0, Y1
	VFMADD231PS 32(SI)(AX*4), Y0, Y2
	VFMADD231PS 64(SI)(AX*4), Y0, Y3
	VFMADD231PS 96(SI)(AX*4), Y0, Y4
	VMOVUPS     Y1, (DI)(AX*4)
	VMOVUPS     Y2, 32(DI)(AX*4)
	VMOVUPS     Y3, 64(DI)(AX*4)
	VMOVUPS     Y4, 96(DI)(AX*4)
	ADDQ        $32, AX
	CMPQ        AX, BX
	JLT         axpyloop

axpytail:
	CMPQ        AX, CX
	JGE         axpydone
	VMOVUPS     (DI)(AX*4), Y1
	VFMADD231PS (SI)(AX*4), Y0, Y1
	VMOVUPS     Y1, (DI)(AX*4)
	ADDQ        $8, AX
	JMP         axpytail

axpydone:
	VZEROUPPER
	RET

// Q8_0 x Q8 (ggml's q8_0.q8_0 dot): the activation vector was quantized to
// int8 blocks xq with float scales xd. Per block: |w| and x*sign(w) with
// VPSIGNB, VPMADDUBSW to 16 int16 pair sums (|w| <= 128, |x| <= 127: no
// saturation), VPMADDWD with ones to 8 int32, convert, and scale by
// d_w*d_x into the row's accumulator. Y13 holds int16 ones, Y14 x's block
// scale, Y15 x's quants.
#define Q8Q8ROW(P, ACC, SLOT) \
	VMOVDQU      2(P), Y8; \
	VPSIGNB      Y8, Y8, Y9; \
	VPSIGNB      Y8, Y15, Y10; \
	VPMADDUBSW   Y10, Y9, Y9; \
	VPMADDWD     Y13, Y9, Y9; \
	VCVTDQ2PS    Y9, Y9; \
	VCVTPH2PS    (P), X12; \
	VMULSS       X14, X12, X12; \
	VMOVSS       X12, SLOT; \
	VBROADCASTSS SLOT, Y12; \
	VFMADD231PS  Y12, Y9, ACC

// func q8q8x4x1(w0, w1, w2, w3 unsafe.Pointer, xq *byte, xd *float32, n int, out *[8]float32)
TEXT ·q8q8x4x1(SB), NOSPLIT, $16-64
	MOVQ      w0+0(FP), R8
	MOVQ      w1+8(FP), R9
	MOVQ      w2+16(FP), R10
	MOVQ      w3+24(FP), R11
	MOVQ      xq+32(FP), SI
	MOVQ      xd+40(FP), DX
	MOVQ      n+48(FP), CX
	MOVQ      out+56(FP), DI
	ZERO8
	VPCMPEQW  Y13, Y13, Y13
	VPSRLW    $15, Y13, Y13

q8q8loop:
	VMOVDQU (SI), Y15
	VMOVSS  (DX), X14
	Q8Q8ROW(R8, Y0, 0(SP))
	Q8Q8ROW(R9, Y1, 4(SP))
	Q8Q8ROW(R10, Y2, 8(SP))
	Q8Q8ROW(R11, Y3, 12(SP))
	ADDQ    $34, R8
	ADDQ    $34, R9
	ADDQ    $34, R10
	ADDQ    $34, R11
	ADDQ    $32, SI
	ADDQ    $4, DX
	DECQ    CX
	JNZ     q8q8loop

	HSUM4(Y0, Y1, Y2, Y3, X0, X1, X2, X3, X8, (DI))
	VZEROUPPER
	RET
