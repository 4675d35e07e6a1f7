//go:build amd64 && !purego

#include "textflag.h"

// quantizeQ8KActAVX512: n blocks of 256 float32 at x into q8KAct blocks
// at dst (304 bytes: 256 int8 quants, 16 int16 sums of 16 quants at 256,
// d as float32 at 288), the same arithmetic as quantizeQ8KAct in the same
// float32 order: amax, m the first value of that magnitude, iscale =
// -127/m, q = min(127, round-half-even(iscale*x)), d = 1/iscale; an
// all-zero block when amax is 0 or iscale overflows. (A NaN among the values is not skipped
// as the Go form skips it; activations have none.)

DATA kqabs<>+0(SB)/4, $0x7fffffff
GLOBL kqabs<>(SB), RODATA|NOPTR, $4

DATA kqm127<>+0(SB)/4, $-127.0
GLOBL kqm127<>(SB), RODATA|NOPTR, $4

DATA kqone<>+0(SB)/4, $1.0
GLOBL kqone<>(SB), RODATA|NOPTR, $4

DATA kq127<>+0(SB)/4, $127
GLOBL kq127<>(SB), RODATA|NOPTR, $4

// kqpick takes dword 0 of each 128-bit lane of two registers (VPERMI2D):
// the eight lanes' sums of a pair of 64-quant rows, in order.
DATA kqpick<>+0(SB)/8, $0x0000000400000000
DATA kqpick<>+8(SB)/8, $0x0000000c00000008
DATA kqpick<>+16(SB)/8, $0x0000001400000010
DATA kqpick<>+24(SB)/8, $0x0000001c00000018
DATA kqpick<>+32(SB)/8, $0
DATA kqpick<>+40(SB)/8, $0
DATA kqpick<>+48(SB)/8, $0
DATA kqpick<>+56(SB)/8, $0
GLOBL kqpick<>(SB), RODATA|NOPTR, $64

// KQFIND jumps to kqfound with AX the index of the first value of
// magnitude amax (Z16) among the 16 at I*64(SI), whose magnitudes are ZA.
#define KQFIND(I, ZA) \
	VCMPPS $0, Z16, ZA, K1; \
	KMOVW  K1, AX; \
	MOVL   $(16*I), DX; \
	TESTL  AX, AX; \
	JNZ    kqfound

// KQUANT writes the 16 quants of values 16I..16I+15: iscale (Z18) times
// x, rounded to nearest even, capped at 127, narrowed to bytes.
#define KQUANT(I) \
	VMULPS    (64*I)(SI), Z18, Z17; \
	VCVTPS2DQ.RN_SAE Z17, Z17; \
	VPMINSD   Z30, Z17, Z17; \
	VPMOVDB   Z17, (16*I)(DI)

// KQSUMS sets each dword of 128-bit lane l of ZS to the sum of quants
// 64J+16l..64J+16l+15 (VPDPBUSD of ones against them, then the lane's
// four dwords added).
#define KQSUMS(J, ZS) \
	VPXORD   ZS, ZS, ZS; \
	VPDPBUSD (64*J)(DI), Z28, ZS; \
	VPSHUFD  $0x4e, ZS, Z17; \
	VPADDD   Z17, ZS, ZS; \
	VPSHUFD  $0xb1, ZS, Z17; \
	VPADDD   Z17, ZS, ZS

// func quantizeQ8KActAVX512(dst *q8KAct, x *float32, n int)
TEXT ·quantizeQ8KActAVX512(SB), NOSPLIT, $0-24
	MOVQ         dst+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         n+16(FP), CX
	TESTQ        CX, CX
	JZ           kqdone
	VPBROADCASTD kqabs<>(SB), Z31
	VPBROADCASTD kq127<>(SB), Z30
	MOVL         $0x01010101, AX
	VPBROADCASTD AX, Z28
	VMOVDQU32    kqpick<>(SB), Z27

kqloop:
	VANDPS (SI), Z31, Z0
	VANDPS 64(SI), Z31, Z1
	VANDPS 128(SI), Z31, Z2
	VANDPS 192(SI), Z31, Z3
	VANDPS 256(SI), Z31, Z4
	VANDPS 320(SI), Z31, Z5
	VANDPS 384(SI), Z31, Z6
	VANDPS 448(SI), Z31, Z7
	VANDPS 512(SI), Z31, Z8
	VANDPS 576(SI), Z31, Z9
	VANDPS 640(SI), Z31, Z10
	VANDPS 704(SI), Z31, Z11
	VANDPS 768(SI), Z31, Z12
	VANDPS 832(SI), Z31, Z13
	VANDPS 896(SI), Z31, Z14
	VANDPS 960(SI), Z31, Z15

	// amax: a tree over the 16 registers, then across the lanes, into
	// every lane of Z16.
	VMAXPS       Z1, Z0, Z16
	VMAXPS       Z3, Z2, Z17
	VMAXPS       Z5, Z4, Z18
	VMAXPS       Z7, Z6, Z19
	VMAXPS       Z9, Z8, Z20
	VMAXPS       Z11, Z10, Z21
	VMAXPS       Z13, Z12, Z22
	VMAXPS       Z15, Z14, Z23
	VMAXPS       Z17, Z16, Z16
	VMAXPS       Z19, Z18, Z18
	VMAXPS       Z21, Z20, Z20
	VMAXPS       Z23, Z22, Z22
	VMAXPS       Z18, Z16, Z16
	VMAXPS       Z22, Z20, Z20
	VMAXPS       Z20, Z16, Z16
	VSHUFF32X4   $0x4e, Z16, Z16, Z17
	VMAXPS       Z17, Z16, Z16
	VSHUFF32X4   $0xb1, Z16, Z16, Z17
	VMAXPS       Z17, Z16, Z16
	VPERMILPS    $0x4e, Z16, Z17
	VMAXPS       Z17, Z16, Z16
	VPERMILPS    $0xb1, Z16, Z17
	VMAXPS       Z17, Z16, Z16
	VMOVD        X16, AX
	TESTL        AX, AX
	JZ           kqzero

	KQFIND(0, Z0)
	KQFIND(1, Z1)
	KQFIND(2, Z2)
	KQFIND(3, Z3)
	KQFIND(4, Z4)
	KQFIND(5, Z5)
	KQFIND(6, Z6)
	KQFIND(7, Z7)
	KQFIND(8, Z8)
	KQFIND(9, Z9)
	KQFIND(10, Z10)
	KQFIND(11, Z11)
	KQFIND(12, Z12)
	KQFIND(13, Z13)
	KQFIND(14, Z14)
	KQFIND(15, Z15)
	JMP kqzero // only a NaN among the values gets here: a zero block, as the AVX2 form writes

kqfound:
	BSFL         AX, AX
	ADDL         DX, AX
	VMOVSS       (SI)(AX*4), X17
	VMOVSS       kqm127<>(SB), X18
	VDIVSS       X17, X18, X18
	VMOVD        X18, AX
	ANDL         $0x7fffffff, AX
	CMPL         AX, $0x7f800000
	JEQ          kqzero // -127/m overflowed: m is under 127/MaxFloat32
	VMOVSS       kqone<>(SB), X19
	VDIVSS       X18, X19, X19
	VMOVSS       X19, 288(DI)
	VBROADCASTSS X18, Z18

	KQUANT(0)
	KQUANT(1)
	KQUANT(2)
	KQUANT(3)
	KQUANT(4)
	KQUANT(5)
	KQUANT(6)
	KQUANT(7)
	KQUANT(8)
	KQUANT(9)
	KQUANT(10)
	KQUANT(11)
	KQUANT(12)
	KQUANT(13)
	KQUANT(14)
	KQUANT(15)

	KQSUMS(0, Z20)
	KQSUMS(1, Z21)
	KQSUMS(2, Z22)
	KQSUMS(3, Z23)
	VMOVDQA32    Z27, Z24
	VPERMI2D     Z21, Z20, Z24
	VMOVDQA32    Z27, Z25
	VPERMI2D     Z23, Z22, Z25
	VINSERTI64X4 $1, Y25, Z24, Z24
	VPMOVDW      Z24, 256(DI)
	JMP          kqnext

kqzero:
	VPXORD    Z17, Z17, Z17
	VMOVDQU32 Z17, (DI)
	VMOVDQU32 Z17, 64(DI)
	VMOVDQU32 Z17, 128(DI)
	VMOVDQU32 Z17, 192(DI)
	VMOVDQU32 Y17, 256(DI)
	MOVL      $0, 288(DI)

kqnext:
	ADDQ $1024, SI
	ADDQ $304, DI
	DECQ CX
	JNZ  kqloop
	VZEROUPPER

kqdone:
	RET
