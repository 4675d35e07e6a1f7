//go:build linux && amd64 && !purego

#include "textflag.h"

// AMX kernel over packed Q8_0 weights (the amx path): one packed group of
// sixteen weight rows against sixteen activation rows, all blocks. Per
// block, the 16x32 activation quants (tile 1, rows xs bytes apart) times
// the block's eight quant columns (tile 2: the packed layout's 512 bytes
// are exactly a B tile, eight rows of sixteen lanes of four bytes) give
// the 16x16 exact integer block sums in tile 0 with one TDPBSUD (signed
// activations, unsigned weights plus 128). Stored to scratch, each row of
// sums then takes the avx512 kernels' own steps, in their order: the
// -128*sum offset (one VPDPWSSD), one conversion, d_w*d_x (sixteen weight
// scales, the row's activation scale) and one FMA into the row's
// accumulator. So a row's result is bit for bit the avx512 kernels', and
// a batch may mix the two.
//
// tab holds, per block, the sixteen activation rows' scales d (float32)
// and quant sums (int32): 128 bytes (quantAct.fill, amxRows).
//
// The Go assembler knows no AMX instruction: they are spelled out in
// bytes (VEX, checked against objdump):
//	LDTILECFG (AX)              C4 E2 78 49 00
//	TILERELEASE                 C4 E2 78 49 C0
//	TILELOADD (SI)(BX*1), TMM1  C4 E2 7B 4B 0C 1E
//	TILELOADD (R9)(R13*1), TMM2 C4 82 7B 4B 14 29
//	TILEZERO TMM0               C4 E2 7B 49 C0
//	TDPBSUD TMM2, TMM1, TMM0    C4 E2 6A 5E C1 (tmm0 += signed tmm1 x unsigned tmm2)
//	TILESTORED TMM0, (R12)(R13*1) C4 82 7A 4B 04 2C
//	TILESTORED TMM0, (R11)(R13*1) C4 82 7A 4B 04 2B
//
// The tile work of block k runs one step ahead of block k-1's vector
// work, through two scratch buffers (R12, R11 = R12+1024): the vector
// loads of a block's sums then do not wait on the stores just issued.
//
// Registers: R8 the block's weight scales, R9 its quants, SI the
// activation quants, BX their row stride (SI and R9 step with the tile
// work), R10 the d/sum table (R8 and R10 step with the vector work), CX
// the blocks left, DI out, DX ostride, R12/R11 the two scratch buffers,
// R13 64 (the tiles' row stride in memory). Z0-Z15 the rows' float sums, Z24 the weight scales,
// Z25/Z26 scratch, Z27 the offset constant.

// amxcfg is the tile configuration: palette 1; tile 0 16 rows of 64
// bytes (the int32 sums), tile 1 16 rows of 32 bytes (activation quants),
// tile 2 8 rows of 64 bytes (weight quants).
DATA amxcfg<>+0(SB)/8, $1
DATA amxcfg<>+8(SB)/8, $0
DATA amxcfg<>+16(SB)/8, $0x0000004000200040
DATA amxcfg<>+24(SB)/8, $0
DATA amxcfg<>+32(SB)/8, $0
DATA amxcfg<>+40(SB)/8, $0
DATA amxcfg<>+48(SB)/8, $0x0000000000081010
DATA amxcfg<>+56(SB)/8, $0
GLOBL amxcfg<>(SB), RODATA|NOPTR, $64

#define LDTILECFG_AX BYTE $0xc4; BYTE $0xe2; BYTE $0x78; BYTE $0x49; BYTE $0x00
#define TILERELEASE BYTE $0xc4; BYTE $0xe2; BYTE $0x78; BYTE $0x49; BYTE $0xc0
#define TILELOAD_A BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x4b; BYTE $0x0c; BYTE $0x1e
#define TILELOAD_B BYTE $0xc4; BYTE $0x82; BYTE $0x7b; BYTE $0x4b; BYTE $0x14; BYTE $0x29
#define TILEZERO_C BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x49; BYTE $0xc0
#define TDPBSUD_CAB BYTE $0xc4; BYTE $0xe2; BYTE $0x6a; BYTE $0x5e; BYTE $0xc1
#define TILESTORE_C0 BYTE $0xc4; BYTE $0x82; BYTE $0x7a; BYTE $0x4b; BYTE $0x04; BYTE $0x2c
#define TILESTORE_C1 BYTE $0xc4; BYTE $0x82; BYTE $0x7a; BYTE $0x4b; BYTE $0x04; BYTE $0x2b

// TILES(STORE) runs one block's tile work: the sums into tile 0, stored
// by STORE to its scratch buffer; then steps to the next block.
#define TILES(STORE) \
	TILELOAD_A; \
	TILELOAD_B; \
	TILEZERO_C; \
	TDPBSUD_CAB; \
	STORE; \
	ADDQ $512, R9; \
	ADDQ $40, SI

// EPI(SCR) adds the block whose sums are at SCR into the rows' float sums
// Z0-Z15, as the avx512 kernels do; then steps to the next block.
#define EPI(SCR) \
	VCVTPH2PS (R8), Z24; \
	VMOVDQU32     0(SCR), Z25; \
	VPDPWSSD.BCST 64(R10), Z27, Z25; \
	VCVTDQ2PS     Z25, Z25; \
	VMULPS.BCST   0(R10), Z24, Z26; \
	VFMADD231PS   Z26, Z25, Z0; \
	VMOVDQU32     64(SCR), Z25; \
	VPDPWSSD.BCST 68(R10), Z27, Z25; \
	VCVTDQ2PS     Z25, Z25; \
	VMULPS.BCST   4(R10), Z24, Z26; \
	VFMADD231PS   Z26, Z25, Z1; \
	VMOVDQU32     128(SCR), Z25; \
	VPDPWSSD.BCST 72(R10), Z27, Z25; \
	VCVTDQ2PS     Z25, Z25; \
	VMULPS.BCST   8(R10), Z24, Z26; \
	VFMADD231PS   Z26, Z25, Z2; \
	VMOVDQU32     192(SCR), Z25; \
	VPDPWSSD.BCST 76(R10), Z27, Z25; \
	VCVTDQ2PS     Z25, Z25; \
	VMULPS.BCST   12(R10), Z24, Z26; \
	VFMADD231PS   Z26, Z25, Z3; \
	VMOVDQU32     256(SCR), Z25; \
	VPDPWSSD.BCST 80(R10), Z27, Z25; \
	VCVTDQ2PS     Z25, Z25; \
	VMULPS.BCST   16(R10), Z24, Z26; \
	VFMADD231PS   Z26, Z25, Z4; \
	VMOVDQU32     320(SCR), Z25; \
	VPDPWSSD.BCST 84(R10), Z27, Z25; \
	VCVTDQ2PS     Z25, Z25; \
	VMULPS.BCST   20(R10), Z24, Z26; \
	VFMADD231PS   Z26, Z25, Z5; \
	VMOVDQU32     384(SCR), Z25; \
	VPDPWSSD.BCST 88(R10), Z27, Z25; \
	VCVTDQ2PS     Z25, Z25; \
	VMULPS.BCST   24(R10), Z24, Z26; \
	VFMADD231PS   Z26, Z25, Z6; \
	VMOVDQU32     448(SCR), Z25; \
	VPDPWSSD.BCST 92(R10), Z27, Z25; \
	VCVTDQ2PS     Z25, Z25; \
	VMULPS.BCST   28(R10), Z24, Z26; \
	VFMADD231PS   Z26, Z25, Z7; \
	VMOVDQU32     512(SCR), Z25; \
	VPDPWSSD.BCST 96(R10), Z27, Z25; \
	VCVTDQ2PS     Z25, Z25; \
	VMULPS.BCST   32(R10), Z24, Z26; \
	VFMADD231PS   Z26, Z25, Z8; \
	VMOVDQU32     576(SCR), Z25; \
	VPDPWSSD.BCST 100(R10), Z27, Z25; \
	VCVTDQ2PS     Z25, Z25; \
	VMULPS.BCST   36(R10), Z24, Z26; \
	VFMADD231PS   Z26, Z25, Z9; \
	VMOVDQU32     640(SCR), Z25; \
	VPDPWSSD.BCST 104(R10), Z27, Z25; \
	VCVTDQ2PS     Z25, Z25; \
	VMULPS.BCST   40(R10), Z24, Z26; \
	VFMADD231PS   Z26, Z25, Z10; \
	VMOVDQU32     704(SCR), Z25; \
	VPDPWSSD.BCST 108(R10), Z27, Z25; \
	VCVTDQ2PS     Z25, Z25; \
	VMULPS.BCST   44(R10), Z24, Z26; \
	VFMADD231PS   Z26, Z25, Z11; \
	VMOVDQU32     768(SCR), Z25; \
	VPDPWSSD.BCST 112(R10), Z27, Z25; \
	VCVTDQ2PS     Z25, Z25; \
	VMULPS.BCST   48(R10), Z24, Z26; \
	VFMADD231PS   Z26, Z25, Z12; \
	VMOVDQU32     832(SCR), Z25; \
	VPDPWSSD.BCST 116(R10), Z27, Z25; \
	VCVTDQ2PS     Z25, Z25; \
	VMULPS.BCST   52(R10), Z24, Z26; \
	VFMADD231PS   Z26, Z25, Z13; \
	VMOVDQU32     896(SCR), Z25; \
	VPDPWSSD.BCST 120(R10), Z27, Z25; \
	VCVTDQ2PS     Z25, Z25; \
	VMULPS.BCST   56(R10), Z24, Z26; \
	VFMADD231PS   Z26, Z25, Z14; \
	VMOVDQU32     960(SCR), Z25; \
	VPDPWSSD.BCST 124(R10), Z27, Z25; \
	VCVTDQ2PS     Z25, Z25; \
	VMULPS.BCST   60(R10), Z24, Z26; \
	VFMADD231PS   Z26, Z25, Z15; \
	ADDQ $32, R8; \
	ADDQ $128, R10

// func q8_0amx16(w unsafe.Pointer, quant uintptr, xa unsafe.Pointer, xs uintptr, tab unsafe.Pointer, nb int, out *float32, ostride uintptr, mask int, scratch *[2048]byte)
TEXT ·q8_0amx16(SB), NOSPLIT, $0-80
	MOVQ  w+0(FP), R8
	MOVQ  quant+8(FP), R9
	ADDQ  R8, R9
	MOVQ  xa+16(FP), SI
	MOVQ  xs+24(FP), BX
	MOVQ  tab+32(FP), R10
	MOVQ  nb+40(FP), CX
	MOVQ  out+48(FP), DI
	MOVQ  ostride+56(FP), DX
	MOVQ  mask+64(FP), AX
	KMOVW AX, K1
	MOVQ  scratch+72(FP), R12
	LEAQ  1024(R12), R11
	MOVQ  $64, R13
	LEAQ  amxcfg<>(SB), AX
	LDTILECFG_AX
	MOVL  $0x0000ff80, AX
	VPBROADCASTD AX, Z27
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15

	TILES(TILESTORE_C0)
	DECQ CX
	JZ   amxlast0

amxloop:
	TILES(TILESTORE_C1)
	EPI(R12)
	DECQ CX
	JZ   amxlast1
	TILES(TILESTORE_C0)
	EPI(R11)
	DECQ CX
	JNZ  amxloop

amxlast0:
	EPI(R12)
	JMP  amxdone

amxlast1:
	EPI(R11)

amxdone:
	TILERELEASE
	VMOVUPS Z0, K1, (DI)
	ADDQ    DX, DI
	VMOVUPS Z1, K1, (DI)
	ADDQ    DX, DI
	VMOVUPS Z2, K1, (DI)
	ADDQ    DX, DI
	VMOVUPS Z3, K1, (DI)
	ADDQ    DX, DI
	VMOVUPS Z4, K1, (DI)
	ADDQ    DX, DI
	VMOVUPS Z5, K1, (DI)
	ADDQ    DX, DI
	VMOVUPS Z6, K1, (DI)
	ADDQ    DX, DI
	VMOVUPS Z7, K1, (DI)
	ADDQ    DX, DI
	VMOVUPS Z8, K1, (DI)
	ADDQ    DX, DI
	VMOVUPS Z9, K1, (DI)
	ADDQ    DX, DI
	VMOVUPS Z10, K1, (DI)
	ADDQ    DX, DI
	VMOVUPS Z11, K1, (DI)
	ADDQ    DX, DI
	VMOVUPS Z12, K1, (DI)
	ADDQ    DX, DI
	VMOVUPS Z13, K1, (DI)
	ADDQ    DX, DI
	VMOVUPS Z14, K1, (DI)
	ADDQ    DX, DI
	VMOVUPS Z15, K1, (DI)
	ADDQ    DX, DI
	VZEROUPPER
	RET
