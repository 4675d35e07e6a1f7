//go:build amd64 && !purego

#include "textflag.h"
#include "intpack_amd64.h"

// AVX-512 VNNI kernels over packed weights (pack.go): sixteen weight rows,
// one per 32-bit lane, against 1, 2, 4 or 8 rows of quantized activations
// (q8Act blocks, 40 bytes; rows xs bytes apart). Per block and activation
// row, eight VPDPBUSD with a broadcast of four activation bytes each sum
// the sixteen rows' exact block products in the lanes; the packed quants
// are the weights plus 128, so the sum starts at -128 times the
// activation's quant sum. It is converted once, scaled by d_w*d_x
// (sixteen weight scales, one activation scale) and added into the row's
// accumulator with one FMA: per lane exactly what the pure-Go product does
// with one FMA, so a row's result does not depend on which rows share its
// call. The sums go to out + j*ostride for activation row j, the lanes of
// mask only.
//
// Registers: R8 the group's scales, R9 its quants, SI the first activation
// row, BX/R10/R11/R12 one/three/five/seven row strides (PSTRIDES,
// intpack_amd64.h), CX the block count, DI out, DX ostride. Z0-Z7 the rows' float sums, Z8-Z15 their
// integer block sums, Z16-Z23 a block's eight quant columns, Z24 its
// scales, Z25 scratch, Z31 zero.

#define LOADARGSP \
	MOVQ w+0(FP), R8; \
	MOVQ quant+8(FP), R9; \
	ADDQ R8, R9; \
	MOVQ xa+16(FP), SI; \
	MOVQ xs+24(FP), BX; \
	PSTRIDES; \
	MOVQ nb+32(FP), CX; \
	MOVQ out+40(FP), DI; \
	MOVQ ostride+48(FP), DX; \
	KMOVW mask+56(FP), K1; \
	VPXORD Z31, Z31, Z31

// Q8COLS loads a block's scales and quant columns and steps past it.
#define Q8COLS \
	VCVTPH2PS (R8), Z24; \
	VMOVDQU32 (R9), Z16; \
	VMOVDQU32 64(R9), Z17; \
	VMOVDQU32 128(R9), Z18; \
	VMOVDQU32 192(R9), Z19; \
	VMOVDQU32 256(R9), Z20; \
	VMOVDQU32 320(R9), Z21; \
	VMOVDQU32 384(R9), Z22; \
	VMOVDQU32 448(R9), Z23; \
	ADDQ $32, R8; \
	ADDQ $512, R9

// Q8ROW adds one activation row's block (at A) into its float sums ZF,
// through the integer sums ZI.
#define Q8ROW(ZI, ZF, A) \
	VPBROADCASTD 36 A, Z25; \
	VPSLLD $7, Z25, Z25; \
	VPSUBD Z25, Z31, ZI; \
	VPDPBUSD.BCST 0 A, Z16, ZI; \
	VPDPBUSD.BCST 4 A, Z17, ZI; \
	VPDPBUSD.BCST 8 A, Z18, ZI; \
	VPDPBUSD.BCST 12 A, Z19, ZI; \
	VPDPBUSD.BCST 16 A, Z20, ZI; \
	VPDPBUSD.BCST 20 A, Z21, ZI; \
	VPDPBUSD.BCST 24 A, Z22, ZI; \
	VPDPBUSD.BCST 28 A, Z23, ZI; \
	VCVTDQ2PS ZI, ZI; \
	VMULPS.BCST 32 A, Z24, Z25; \
	VFMADD231PS Z25, ZI, ZF

// func q8_0p16x1(w unsafe.Pointer, quant uintptr, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)
TEXT ·q8_0p16x1(SB), NOSPLIT, $0-64
	LOADARGSP
	VPXORD Z0, Z0, Z0

q8_0p16x1loop:
	Q8COLS
	Q8ROW(Z8, Z0, (SI))
	ADDQ $40, SI
	DECQ CX
	JNZ  q8_0p16x1loop

	PSTORE1
	VZEROUPPER
	RET

// func q8_0p16x2(w unsafe.Pointer, quant uintptr, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)
TEXT ·q8_0p16x2(SB), NOSPLIT, $0-64
	LOADARGSP
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1

q8_0p16x2loop:
	Q8COLS
	Q8ROW(Z8, Z0, (SI))
	Q8ROW(Z9, Z1, (SI)(BX*1))
	ADDQ $40, SI
	DECQ CX
	JNZ  q8_0p16x2loop

	PSTORE2
	VZEROUPPER
	RET

// func q8_0p16x4(w unsafe.Pointer, quant uintptr, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)
TEXT ·q8_0p16x4(SB), NOSPLIT, $0-64
	LOADARGSP
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3

q8_0p16x4loop:
	Q8COLS
	Q8ROW(Z8, Z0, (SI))
	Q8ROW(Z9, Z1, (SI)(BX*1))
	Q8ROW(Z10, Z2, (SI)(BX*2))
	Q8ROW(Z11, Z3, (SI)(R10*1))
	ADDQ $40, SI
	DECQ CX
	JNZ  q8_0p16x4loop

	PSTORE4
	VZEROUPPER
	RET

// func q8_0p16x8(w unsafe.Pointer, quant uintptr, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)
TEXT ·q8_0p16x8(SB), NOSPLIT, $0-64
	LOADARGSP
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7

q8_0p16x8loop:
	Q8COLS
	Q8ROW(Z8, Z0, (SI))
	Q8ROW(Z9, Z1, (SI)(BX*1))
	Q8ROW(Z10, Z2, (SI)(BX*2))
	Q8ROW(Z11, Z3, (SI)(R10*1))
	Q8ROW(Z12, Z4, (SI)(BX*4))
	Q8ROW(Z13, Z5, (SI)(R11*1))
	Q8ROW(Z14, Z6, (SI)(R10*2))
	Q8ROW(Z15, Z7, (SI)(R12*1))
	ADDQ $40, SI
	DECQ CX
	JNZ  q8_0p16x8loop

	PSTORE8
	VZEROUPPER
	RET
