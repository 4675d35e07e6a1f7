//go:build amd64 && !purego

#include "textflag.h"

// AVX2/FMA/F16C kernels. Each product kernel computes the dot products of
// four weight rows with one or two activation vectors, so that a weight row
// is streamed from memory once while it meets every activation vector of the
// batch (the Go side walks the batch two vectors at a time over the same four
// rows, which stay in L1/L2). Accumulators: Y0-Y3 rows 0-3 against x (or x0),
// Y4-Y7 rows 0-3 against x1 (or a second chain in the 4x1 forms).

#include "hsum_amd64.h"
#include "prefetch_amd64.h"
#include "dot_amd64.h"

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
	PFNEXT
	XORQ AX, AX
	MOVQ CX, BX
	ANDQ $-16, BX
	JZ   f32x1tail

f32x1loop:
	PF4L(0)
	ADDQ        $256, R13
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

// The half-precision rows, F16 and BF16, differ only in how eight weights
// become floats: CVTF16 converts them (F16C), CVTBF16 widens each to the
// high half of a float32 (a bfloat16 is a float32's top 16 bits), both
// exactly. H4X1 and H4X2 are the 4x1 and 4x2 kernels of such rows, with
// loop label LOOP.
#define CVTF16(ADDR, Y) VCVTPH2PS ADDR, Y
#define CVTBF16(ADDR, Y) VPMOVZXWD ADDR, Y; VPSLLD $16, Y, Y

#define H4X1(CVT, LOOP) \
	LOADARGS1; \
	ZERO8; \
	XORQ AX, AX; \
LOOP: \
	VMOVUPS     (SI)(AX*4), Y12; \
	CVT((R8)(AX*2), Y8); \
	CVT((R9)(AX*2), Y9); \
	CVT((R10)(AX*2), Y10); \
	CVT((R11)(AX*2), Y11); \
	VFMADD231PS Y12, Y8, Y0; \
	VFMADD231PS Y12, Y9, Y1; \
	VFMADD231PS Y12, Y10, Y2; \
	VFMADD231PS Y12, Y11, Y3; \
	ADDQ        $8, AX; \
	CMPQ        AX, CX; \
	JLT         LOOP; \
	HSUM4(Y0, Y1, Y2, Y3, X0, X1, X2, X3, X8, (DI)); \
	VZEROUPPER; \
	RET

#define H4X2(CVT, LOOP) \
	LOADARGS2; \
	ZERO8; \
	XORQ AX, AX; \
LOOP: \
	VMOVUPS     (SI)(AX*4), Y12; \
	VMOVUPS     (DX)(AX*4), Y13; \
	CVT((R8)(AX*2), Y8); \
	CVT((R9)(AX*2), Y9); \
	CVT((R10)(AX*2), Y10); \
	CVT((R11)(AX*2), Y11); \
	VFMADD231PS Y12, Y8, Y0; \
	VFMADD231PS Y13, Y8, Y4; \
	VFMADD231PS Y12, Y9, Y1; \
	VFMADD231PS Y13, Y9, Y5; \
	VFMADD231PS Y12, Y10, Y2; \
	VFMADD231PS Y13, Y10, Y6; \
	VFMADD231PS Y12, Y11, Y3; \
	VFMADD231PS Y13, Y11, Y7; \
	ADDQ        $8, AX; \
	CMPQ        AX, CX; \
	JLT         LOOP; \
	HSUM4(Y0, Y1, Y2, Y3, X0, X1, X2, X3, X8, (DI)); \
	HSUM4(Y4, Y5, Y6, Y7, X4, X5, X6, X7, X8, 16(DI)); \
	VZEROUPPER; \
	RET

// func f16x4x1(w0, w1, w2, w3 unsafe.Pointer, x *float32, n int, out *[8]float32)
TEXT ·f16x4x1(SB), NOSPLIT, $0-56
	H4X1(CVTF16, f16x1loop)

// func f16x4x2(w0, w1, w2, w3 unsafe.Pointer, x0, x1 *float32, n int, out *[8]float32)
TEXT ·f16x4x2(SB), NOSPLIT, $0-64
	H4X2(CVTF16, f16x2loop)

// func bf16x4x1(w0, w1, w2, w3 unsafe.Pointer, x *float32, n int, out *[8]float32)
TEXT ·bf16x4x1(SB), NOSPLIT, $0-56
	H4X1(CVTBF16, bf16x1loop)

// func bf16x4x2(w0, w1, w2, w3 unsafe.Pointer, x0, x1 *float32, n int, out *[8]float32)
TEXT ·bf16x4x2(SB), NOSPLIT, $0-64
	H4X2(CVTBF16, bf16x2loop)

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
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ n+16(FP), CX
	MOVQ CX, BX
	ANDQ $-32, BX
	DOTF32(SI, DI)
	VMOVSS X0, ret+24(FP)
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

// Vector exp: the float32 Cephes scheme of exp.go, eight lanes at a time.
// Each constant is eight copies (32 bytes) so it can be a memory operand.
// lo
DATA expc<>+0(SB)/4, $0xc2aeac50
DATA expc<>+4(SB)/4, $0xc2aeac50
DATA expc<>+8(SB)/4, $0xc2aeac50
DATA expc<>+12(SB)/4, $0xc2aeac50
DATA expc<>+16(SB)/4, $0xc2aeac50
DATA expc<>+20(SB)/4, $0xc2aeac50
DATA expc<>+24(SB)/4, $0xc2aeac50
DATA expc<>+28(SB)/4, $0xc2aeac50
// hi
DATA expc<>+32(SB)/4, $0x42b00000
DATA expc<>+36(SB)/4, $0x42b00000
DATA expc<>+40(SB)/4, $0x42b00000
DATA expc<>+44(SB)/4, $0x42b00000
DATA expc<>+48(SB)/4, $0x42b00000
DATA expc<>+52(SB)/4, $0x42b00000
DATA expc<>+56(SB)/4, $0x42b00000
DATA expc<>+60(SB)/4, $0x42b00000
// log2e
DATA expc<>+64(SB)/4, $0x3fb8aa3b
DATA expc<>+68(SB)/4, $0x3fb8aa3b
DATA expc<>+72(SB)/4, $0x3fb8aa3b
DATA expc<>+76(SB)/4, $0x3fb8aa3b
DATA expc<>+80(SB)/4, $0x3fb8aa3b
DATA expc<>+84(SB)/4, $0x3fb8aa3b
DATA expc<>+88(SB)/4, $0x3fb8aa3b
DATA expc<>+92(SB)/4, $0x3fb8aa3b
// ln2hi
DATA expc<>+96(SB)/4, $0x3f318000
DATA expc<>+100(SB)/4, $0x3f318000
DATA expc<>+104(SB)/4, $0x3f318000
DATA expc<>+108(SB)/4, $0x3f318000
DATA expc<>+112(SB)/4, $0x3f318000
DATA expc<>+116(SB)/4, $0x3f318000
DATA expc<>+120(SB)/4, $0x3f318000
DATA expc<>+124(SB)/4, $0x3f318000
// ln2lo
DATA expc<>+128(SB)/4, $0xb95e8083
DATA expc<>+132(SB)/4, $0xb95e8083
DATA expc<>+136(SB)/4, $0xb95e8083
DATA expc<>+140(SB)/4, $0xb95e8083
DATA expc<>+144(SB)/4, $0xb95e8083
DATA expc<>+148(SB)/4, $0xb95e8083
DATA expc<>+152(SB)/4, $0xb95e8083
DATA expc<>+156(SB)/4, $0xb95e8083
// p0
DATA expc<>+160(SB)/4, $0x39506967
DATA expc<>+164(SB)/4, $0x39506967
DATA expc<>+168(SB)/4, $0x39506967
DATA expc<>+172(SB)/4, $0x39506967
DATA expc<>+176(SB)/4, $0x39506967
DATA expc<>+180(SB)/4, $0x39506967
DATA expc<>+184(SB)/4, $0x39506967
DATA expc<>+188(SB)/4, $0x39506967
// p1
DATA expc<>+192(SB)/4, $0x3ab743ce
DATA expc<>+196(SB)/4, $0x3ab743ce
DATA expc<>+200(SB)/4, $0x3ab743ce
DATA expc<>+204(SB)/4, $0x3ab743ce
DATA expc<>+208(SB)/4, $0x3ab743ce
DATA expc<>+212(SB)/4, $0x3ab743ce
DATA expc<>+216(SB)/4, $0x3ab743ce
DATA expc<>+220(SB)/4, $0x3ab743ce
// p2
DATA expc<>+224(SB)/4, $0x3c088908
DATA expc<>+228(SB)/4, $0x3c088908
DATA expc<>+232(SB)/4, $0x3c088908
DATA expc<>+236(SB)/4, $0x3c088908
DATA expc<>+240(SB)/4, $0x3c088908
DATA expc<>+244(SB)/4, $0x3c088908
DATA expc<>+248(SB)/4, $0x3c088908
DATA expc<>+252(SB)/4, $0x3c088908
// p3
DATA expc<>+256(SB)/4, $0x3d2aa9c1
DATA expc<>+260(SB)/4, $0x3d2aa9c1
DATA expc<>+264(SB)/4, $0x3d2aa9c1
DATA expc<>+268(SB)/4, $0x3d2aa9c1
DATA expc<>+272(SB)/4, $0x3d2aa9c1
DATA expc<>+276(SB)/4, $0x3d2aa9c1
DATA expc<>+280(SB)/4, $0x3d2aa9c1
DATA expc<>+284(SB)/4, $0x3d2aa9c1
// p4
DATA expc<>+288(SB)/4, $0x3e2aaaaa
DATA expc<>+292(SB)/4, $0x3e2aaaaa
DATA expc<>+296(SB)/4, $0x3e2aaaaa
DATA expc<>+300(SB)/4, $0x3e2aaaaa
DATA expc<>+304(SB)/4, $0x3e2aaaaa
DATA expc<>+308(SB)/4, $0x3e2aaaaa
DATA expc<>+312(SB)/4, $0x3e2aaaaa
DATA expc<>+316(SB)/4, $0x3e2aaaaa
// p5
DATA expc<>+320(SB)/4, $0x3f000000
DATA expc<>+324(SB)/4, $0x3f000000
DATA expc<>+328(SB)/4, $0x3f000000
DATA expc<>+332(SB)/4, $0x3f000000
DATA expc<>+336(SB)/4, $0x3f000000
DATA expc<>+340(SB)/4, $0x3f000000
DATA expc<>+344(SB)/4, $0x3f000000
DATA expc<>+348(SB)/4, $0x3f000000
// one
DATA expc<>+352(SB)/4, $0x3f800000
DATA expc<>+356(SB)/4, $0x3f800000
DATA expc<>+360(SB)/4, $0x3f800000
DATA expc<>+364(SB)/4, $0x3f800000
DATA expc<>+368(SB)/4, $0x3f800000
DATA expc<>+372(SB)/4, $0x3f800000
DATA expc<>+376(SB)/4, $0x3f800000
DATA expc<>+380(SB)/4, $0x3f800000
// bias
DATA expc<>+384(SB)/4, $0x0000007f
DATA expc<>+388(SB)/4, $0x0000007f
DATA expc<>+392(SB)/4, $0x0000007f
DATA expc<>+396(SB)/4, $0x0000007f
DATA expc<>+400(SB)/4, $0x0000007f
DATA expc<>+404(SB)/4, $0x0000007f
DATA expc<>+408(SB)/4, $0x0000007f
DATA expc<>+412(SB)/4, $0x0000007f
GLOBL expc<>(SB), RODATA|NOPTR, $416

// EXP8 replaces Y0 by e^Y0, using Y1-Y3. Inputs are clamped to
// [-87.34, 88]: below, the result is the smallest normal float (a softmax
// weight or a SiLU gate of about zero either way); above, e^88. NaN
// propagates (the clamps keep the input operand in the NaN-winning slot).
#define EXP8 \
	VMOVUPS      expc<>+0(SB), Y1; \
	VMAXPS       Y0, Y1, Y0; \
	VMOVUPS      expc<>+32(SB), Y1; \
	VMINPS       Y0, Y1, Y0; \
	VMULPS       expc<>+64(SB), Y0, Y1; \
	VROUNDPS     $0, Y1, Y1; \
	VFNMADD231PS expc<>+96(SB), Y1, Y0; \
	VFNMADD231PS expc<>+128(SB), Y1, Y0; \
	VMOVUPS      expc<>+160(SB), Y2; \
	VFMADD213PS  expc<>+192(SB), Y0, Y2; \
	VFMADD213PS  expc<>+224(SB), Y0, Y2; \
	VFMADD213PS  expc<>+256(SB), Y0, Y2; \
	VFMADD213PS  expc<>+288(SB), Y0, Y2; \
	VFMADD213PS  expc<>+320(SB), Y0, Y2; \
	VMULPS       Y0, Y0, Y3; \
	VFMADD213PS  Y0, Y3, Y2; \
	VADDPS       expc<>+352(SB), Y2, Y2; \
	VCVTPS2DQ    Y1, Y1; \
	VPADDD       expc<>+384(SB), Y1, Y1; \
	VPSLLD       $23, Y1, Y1; \
	VMULPS       Y1, Y2, Y0

// func expSubSumAVX(x *float32, n int, sub float32) float32
// x[i] = e^(x[i]-sub) for n (a multiple of 8) values; returns their sum.
TEXT ·expSubSumAVX(SB), NOSPLIT, $0-28
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	VBROADCASTSS sub+16(FP), Y4
	VXORPS       Y5, Y5, Y5
	XORQ         AX, AX

expsubloop:
	VMOVUPS (SI)(AX*4), Y0
	VSUBPS  Y4, Y0, Y0
	EXP8
	VMOVUPS Y0, (SI)(AX*4)
	VADDPS  Y0, Y5, Y5
	ADDQ    $8, AX
	CMPQ    AX, CX
	JLT     expsubloop

	VEXTRACTF128 $1, Y5, X1
	VADDPS       X1, X5, X5
	VHADDPS      X5, X5, X5
	VHADDPS      X5, X5, X5
	VMOVSS       X5, ret+24(FP)
	VZEROUPPER
	RET

// func siluAVX(x *float32, n int)
// x[i] = x[i] / (1 + e^-x[i]) for n (a multiple of 8) values.
TEXT ·siluAVX(SB), NOSPLIT, $0-16
	MOVQ    x+0(FP), SI
	MOVQ    n+8(FP), CX
	VXORPS  Y6, Y6, Y6
	VMOVUPS expc<>+352(SB), Y7
	XORQ    AX, AX

siluloop:
	VMOVUPS (SI)(AX*4), Y4
	VSUBPS  Y4, Y6, Y0
	EXP8
	VADDPS  Y7, Y0, Y0
	VDIVPS  Y0, Y4, Y4
	VMOVUPS Y4, (SI)(AX*4)
	ADDQ    $8, AX
	CMPQ    AX, CX
	JLT     siluloop
	VZEROUPPER
	RET

// func swigluAVX(h, gate *float32, n int)
// h[i] = h[i] / (1 + e^-h[i]) * gate[i] for n (a multiple of 8) values.
TEXT ·swigluAVX(SB), NOSPLIT, $0-24
	MOVQ    h+0(FP), SI
	MOVQ    gate+8(FP), DI
	MOVQ    n+16(FP), CX
	VXORPS  Y6, Y6, Y6
	VMOVUPS expc<>+352(SB), Y7
	XORQ    AX, AX

swigluloop:
	VMOVUPS (SI)(AX*4), Y4
	VSUBPS  Y4, Y6, Y0
	EXP8
	VADDPS  Y7, Y0, Y0
	VDIVPS  Y0, Y4, Y4
	VMULPS  (DI)(AX*4), Y4, Y4
	VMOVUPS Y4, (SI)(AX*4)
	ADDQ    $8, AX
	CMPQ    AX, CX
	JLT     swigluloop
	VZEROUPPER
	RET

// func maxAVX(x *float32, n int) float32
// The largest of n (a multiple of 32) values, NaN skipped: the accumulator
// is VMAXPS's second source, which it returns when the other is NaN.
// -Inf when every value is NaN.
TEXT ·maxAVX(SB), NOSPLIT, $0-20
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	MOVL         $0xff800000, AX
	MOVL         AX, X0
	VBROADCASTSS X0, Y0
	VMOVAPS      Y0, Y1
	VMOVAPS      Y0, Y2
	VMOVAPS      Y0, Y3
	XORQ         AX, AX

maxloop:
	VMOVUPS (SI)(AX*4), Y4
	VMOVUPS 32(SI)(AX*4), Y5
	VMOVUPS 64(SI)(AX*4), Y6
	VMOVUPS 96(SI)(AX*4), Y7
	VMAXPS  Y0, Y4, Y0
	VMAXPS  Y1, Y5, Y1
	VMAXPS  Y2, Y6, Y2
	VMAXPS  Y3, Y7, Y3
	ADDQ    $32, AX
	CMPQ    AX, CX
	JLT     maxloop

	VMAXPS       Y1, Y0, Y0
	VMAXPS       Y3, Y2, Y2
	VMAXPS       Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VMAXPS       X1, X0, X0
	VPERMILPS    $0x4e, X0, X1
	VMAXPS       X1, X0, X0
	VPERMILPS    $0xb1, X0, X1
	VMAXPS       X1, X0, X0
	VMOVSS       X0, ret+16(FP)
	VZEROUPPER
	RET

// func indexAVX(x *float32, n int, v float32) int
// The first i < n (a multiple of 8) with x[i] == v, or -1.
TEXT ·indexAVX(SB), NOSPLIT, $0-32
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	VBROADCASTSS v+16(FP), Y1
	XORQ         AX, AX

indexloop:
	VCMPPS    $0, (SI)(AX*4), Y1, Y0
	VMOVMSKPS Y0, DX
	TESTL     DX, DX
	JNZ       indexfound
	ADDQ      $8, AX
	CMPQ      AX, CX
	JLT       indexloop
	MOVQ      $-1, ret+24(FP)
	VZEROUPPER
	RET

indexfound:
	BSFL DX, DX
	ADDQ DX, AX
	MOVQ AX, ret+24(FP)
	VZEROUPPER
	RET

// func expScaleSumAVX(dst, x *float32, n int, sub, scale float32) float64
// dst[i] = e^((x[i]-sub)*scale) for n (a multiple of 8) values, 0 where
// that exponent is under -87 or NaN; returns the sum in float64.
TEXT ·expScaleSumAVX(SB), NOSPLIT, $0-40
	MOVQ         dst+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSS sub+24(FP), Y4
	VBROADCASTSS scale+28(FP), Y6
	MOVL         $0xc2ae0000, AX // -87
	MOVL         AX, X7
	VBROADCASTSS X7, Y7
	VXORPD       Y5, Y5, Y5
	VXORPD       Y8, Y8, Y8
	XORQ         AX, AX

expscaleloop:
	VMOVUPS      (SI)(AX*4), Y0
	VSUBPS       Y4, Y0, Y0
	VMULPS       Y6, Y0, Y0
	VCMPPS       $0x1d, Y7, Y0, Y9 // GE_OQ: false for NaN
	EXP8
	VANDPS       Y9, Y0, Y0
	VMOVUPS      Y0, (DI)(AX*4)
	VCVTPS2PD    X0, Y1
	VEXTRACTF128 $1, Y0, X2
	VCVTPS2PD    X2, Y2
	VADDPD       Y1, Y5, Y5
	VADDPD       Y2, Y8, Y8
	ADDQ         $8, AX
	CMPQ         AX, CX
	JLT          expscaleloop

	VADDPD       Y8, Y5, Y5
	VEXTRACTF128 $1, Y5, X1
	VADDPD       X1, X5, X5
	VHADDPD      X5, X5, X5
	VMOVSD       X5, ret+32(FP)
	VZEROUPPER
	RET

// func notBelowAVX(x *float32, n int, v float32) int
// The first i < n (a multiple of 8) where x[i] < v is false (x[i] >= v or
// NaN), or -1.
TEXT ·notBelowAVX(SB), NOSPLIT, $0-32
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	VBROADCASTSS v+16(FP), Y1
	XORQ         AX, AX

notbelowloop:
	VMOVUPS   (SI)(AX*4), Y0
	VCMPPS    $0x15, Y1, Y0, Y0 // NLT_UQ: not (x < v), true for NaN
	VMOVMSKPS Y0, DX
	TESTL     DX, DX
	JNZ       notbelowfound
	ADDQ      $8, AX
	CMPQ      AX, CX
	JLT       notbelowloop
	MOVQ      $-1, ret+24(FP)
	VZEROUPPER
	RET

notbelowfound:
	BSFL DX, DX
	ADDQ DX, AX
	MOVQ AX, ret+24(FP)
	VZEROUPPER
	RET
