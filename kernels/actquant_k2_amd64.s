//go:build amd64 && !purego

#include "textflag.h"

// quantizeQ8KActAVX2: quantizeQ8KActAVX512 for CPUs without AVX-512 (the
// avx2 and avxvnni paths), in AVX2 on 16 YMM registers: n blocks of 256
// float32 at x into q8KAct blocks at dst (304 bytes: 256 int8 quants, 16
// int16 sums of 16 quants at 256, d as float32 at 288), the arithmetic of
// quantizeQ8KAct in the same float32 order. The 256 values do not fit in
// the registers, so a block takes two passes over x: amax, then the first
// index of that magnitude (m), the scalar iscale = -127/m and d = 1/iscale;
// then q = min(127, round-half-even(iscale*x)) (VCVTPS2DQ under the
// default MXCSR), narrowed to bytes by keeping each dword's low byte as Go's
// int8 conversion and VPMOVDB do (so the 0x80000000 of a NaN product, from
// an infinite value, gives 0 as there), and the sums. An all-zero block
// when amax is 0 or iscale overflows. (A NaN among the values is not
// skipped as the Go form skips it; activations have none. Where no value
// matches amax, which only a NaN can cause, the block is zero.)

DATA kq2abs<>+0(SB)/4, $0x7fffffff
GLOBL kq2abs<>(SB), RODATA|NOPTR, $4

DATA kq2m127<>+0(SB)/4, $-127.0
GLOBL kq2m127<>(SB), RODATA|NOPTR, $4

DATA kq2one<>+0(SB)/4, $1.0
GLOBL kq2one<>(SB), RODATA|NOPTR, $4

DATA kq2c127<>+0(SB)/4, $127
GLOBL kq2c127<>(SB), RODATA|NOPTR, $4

DATA kq2low<>+0(SB)/4, $0xff
GLOBL kq2low<>(SB), RODATA|NOPTR, $4

DATA kq2b1<>+0(SB)/4, $0x01010101
GLOBL kq2b1<>(SB), RODATA|NOPTR, $4

DATA kq2w1<>+0(SB)/4, $0x00010001
GLOBL kq2w1<>(SB), RODATA|NOPTR, $4

// kq2perm puts back in order the dwords of a register whose two 128-bit
// lanes hold dwords 0-3 and 4-7 of each of four rows interleaved
// ([a0-3 b0-3 c0-3 d0-3 | a4-7 b4-7 c4-7 d4-7] after the packs; [s0 s2
// s4 s6 | s1 s3 s5 s7] after the sums' horizontal adds): 0 4 1 5 2 6 3 7.
DATA kq2perm<>+0(SB)/8, $0x0000000400000000
DATA kq2perm<>+8(SB)/8, $0x0000000500000001
DATA kq2perm<>+16(SB)/8, $0x0000000600000002
DATA kq2perm<>+24(SB)/8, $0x0000000700000003
GLOBL kq2perm<>(SB), RODATA|NOPTR, $32

// KQ2MAX folds the magnitudes of values 8I..8I+7 into YA.
#define KQ2MAX(I, YA) \
	VANDPS (32*I)(SI), Y15, Y0; \
	VMAXPS Y0, YA, YA

// KQ2QUANT writes quants 32G..32G+31 (iscale in Y14) and leaves in YS the
// dword sums of their four-quant groups (VPMADDUBSW of ones against them,
// then VPMADDWD of ones): dwords 0-3 the first 16 quants', 4-7 the last 16's.
#define KQ2QUANT(G, YS) \
	VMULPS     (128*G)(SI), Y14, Y0; \
	VMULPS     (128*G+32)(SI), Y14, Y1; \
	VMULPS     (128*G+64)(SI), Y14, Y2; \
	VMULPS     (128*G+96)(SI), Y14, Y3; \
	VCVTPS2DQ  Y0, Y0; \
	VCVTPS2DQ  Y1, Y1; \
	VCVTPS2DQ  Y2, Y2; \
	VCVTPS2DQ  Y3, Y3; \
	VPMINSD    Y13, Y0, Y0; \
	VPMINSD    Y13, Y1, Y1; \
	VPMINSD    Y13, Y2, Y2; \
	VPMINSD    Y13, Y3, Y3; \
	VPAND      Y12, Y0, Y0; \
	VPAND      Y12, Y1, Y1; \
	VPAND      Y12, Y2, Y2; \
	VPAND      Y12, Y3, Y3; \
	VPACKUSDW  Y1, Y0, Y0; \
	VPACKUSDW  Y3, Y2, Y2; \
	VPACKUSWB  Y2, Y0, Y0; \
	VPERMD     Y0, Y11, Y0; \
	VMOVDQU    Y0, (32*G)(DI); \
	VPMADDUBSW Y0, Y10, YS; \
	VPMADDWD   Y9, YS, YS

// func quantizeQ8KActAVX2(dst *q8KAct, x *float32, n int)
TEXT ·quantizeQ8KActAVX2(SB), NOSPLIT, $0-24
	MOVQ         dst+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         n+16(FP), CX
	TESTQ        CX, CX
	JZ           kq2done
	VBROADCASTSS kq2abs<>(SB), Y15
	VPBROADCASTD kq2c127<>(SB), Y13
	VPBROADCASTD kq2low<>(SB), Y12
	VMOVDQU      kq2perm<>(SB), Y11
	VPBROADCASTD kq2b1<>(SB), Y10
	VPBROADCASTD kq2w1<>(SB), Y9

kq2loop:
	// amax: four running maxima, then across them and their lanes, into
	// every lane of Y4.
	VANDPS    (SI), Y15, Y4
	VANDPS    32(SI), Y15, Y5
	VANDPS    64(SI), Y15, Y6
	VANDPS    96(SI), Y15, Y7
	KQ2MAX(4, Y4)
	KQ2MAX(5, Y5)
	KQ2MAX(6, Y6)
	KQ2MAX(7, Y7)
	KQ2MAX(8, Y4)
	KQ2MAX(9, Y5)
	KQ2MAX(10, Y6)
	KQ2MAX(11, Y7)
	KQ2MAX(12, Y4)
	KQ2MAX(13, Y5)
	KQ2MAX(14, Y6)
	KQ2MAX(15, Y7)
	KQ2MAX(16, Y4)
	KQ2MAX(17, Y5)
	KQ2MAX(18, Y6)
	KQ2MAX(19, Y7)
	KQ2MAX(20, Y4)
	KQ2MAX(21, Y5)
	KQ2MAX(22, Y6)
	KQ2MAX(23, Y7)
	KQ2MAX(24, Y4)
	KQ2MAX(25, Y5)
	KQ2MAX(26, Y6)
	KQ2MAX(27, Y7)
	KQ2MAX(28, Y4)
	KQ2MAX(29, Y5)
	KQ2MAX(30, Y6)
	KQ2MAX(31, Y7)
	VMAXPS     Y5, Y4, Y4
	VMAXPS     Y7, Y6, Y6
	VMAXPS     Y6, Y4, Y4
	VPERM2F128 $0x01, Y4, Y4, Y5
	VMAXPS     Y5, Y4, Y4
	VPERMILPS  $0x4e, Y4, Y5
	VMAXPS     Y5, Y4, Y4
	VPERMILPS  $0xb1, Y4, Y5
	VMAXPS     Y5, Y4, Y4
	VMOVD      X4, AX
	TESTL      AX, AX
	JZ         kq2zero

	// The first value of magnitude amax: eight at a time.
	XORL DX, DX

kq2find:
	VANDPS    (SI)(DX*4), Y15, Y0
	VCMPPS    $0, Y4, Y0, Y0
	VMOVMSKPS Y0, AX
	TESTL     AX, AX
	JNZ       kq2found
	ADDL      $8, DX
	CMPL      DX, $256
	JB        kq2find
	JMP       kq2zero // no value matched: only a NaN among them does that

kq2found:
	BSFL         AX, AX
	ADDL         DX, AX
	VMOVSS       (SI)(AX*4), X0
	VMOVSS       kq2m127<>(SB), X14
	VDIVSS       X0, X14, X14
	VMOVD        X14, AX
	ANDL         $0x7fffffff, AX
	CMPL         AX, $0x7f800000
	JEQ          kq2zero // -127/m overflowed: m is under 127/MaxFloat32
	VMOVSS       kq2one<>(SB), X1
	VDIVSS       X14, X1, X1
	VMOVSS       X1, 288(DI)
	VBROADCASTSS X14, Y14

	// The quants, 32 at a time, and the 16 sums: a horizontal add of two
	// rows' group sums leaves per lane [r0 r0 r1 r1] pair sums, one of two
	// such leaves [s0 s2 s4 s6 | s1 s3 s5 s7] for rows 0-3 (kq2perm puts
	// them in order), and a pack of rows 0-3's and 4-7's sums leaves
	// [s0-3 s8-11 | s4-7 s12-15], which VPERMQ orders.
	KQ2QUANT(0, Y4)
	KQ2QUANT(1, Y5)
	VPHADDD Y5, Y4, Y6
	KQ2QUANT(2, Y4)
	KQ2QUANT(3, Y5)
	VPHADDD Y5, Y4, Y4
	VPHADDD Y4, Y6, Y7
	KQ2QUANT(4, Y4)
	KQ2QUANT(5, Y5)
	VPHADDD Y5, Y4, Y6
	KQ2QUANT(6, Y4)
	KQ2QUANT(7, Y5)
	VPHADDD Y5, Y4, Y4
	VPHADDD Y4, Y6, Y8
	VPERMD    Y7, Y11, Y7
	VPERMD    Y8, Y11, Y8
	VPACKSSDW Y8, Y7, Y7
	VPERMQ    $0xd8, Y7, Y7
	VMOVDQU   Y7, 256(DI)
	JMP       kq2next

kq2zero:
	VPXOR   Y0, Y0, Y0
	VMOVDQU Y0, (DI)
	VMOVDQU Y0, 32(DI)
	VMOVDQU Y0, 64(DI)
	VMOVDQU Y0, 96(DI)
	VMOVDQU Y0, 128(DI)
	VMOVDQU Y0, 160(DI)
	VMOVDQU Y0, 192(DI)
	VMOVDQU Y0, 224(DI)
	VMOVDQU Y0, 256(DI)
	MOVL    $0, 288(DI)

kq2next:
	ADDQ $1024, SI
	ADDQ $304, DI
	DECQ CX
	JNZ  kq2loop
	VZEROUPPER

kq2done:
	RET
