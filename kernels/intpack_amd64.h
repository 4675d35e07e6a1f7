// Macros shared by the AVX-512 VNNI kernels over packed weights
// (intpack_amd64.s: Q8_0; intpack_nib_amd64.s: Q4_0, Q5_0, Q4_1, Q5_1;
// intpack_k_amd64.s: Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, which take PSTRIDES and STOREn
// only; the layouts are pack_layout.go's). Every kernel is one group of sixteen
// weight rows, one per 32-bit lane, against 1, 2, 4 or 8 rows of
// quantized activations (q8Act blocks, 40 bytes; rows xs bytes apart).
// Per block, a type's COLS macro leaves the block's weights unsigned in
// Z16-Z23, register c holding values 4c..4c+3 of each row, and its
// scales in Z24 (and Z26); then per activation row eight VPDPBUSD with
// a broadcast of four activation bytes each sum the sixteen rows' exact
// block products in the lanes (DOT8), and the type's ROW macro converts
// the sum once and scales it into the row's float accumulator: per lane
// the same operations whichever activation rows share the call, so a
// row's result does not depend on them. The sums go to out + j*ostride
// for activation row j, the lanes of mask only.
//
// Registers: R8 the group's scales, R9 its quants, SI the first
// activation row, BX/R10/R11/R12 one/three/five/seven row strides, CX
// the block count, DI out, DX ostride, AX scratch. Z0-Z7 the rows'
// float sums, Z8-Z15 their integer block sums, Z16-Z23 a block's
// weights, Z24 its scales d, Z25 scratch, Z26 the mins m (the _1
// types), Z27 the offset of ROWOFF, Z28-Z30 the nibble types' constants
// and fifth bits, Z31 zero.

// PSTRIDES sets, from one activation row stride in BX, R10, R11 and R12
// to three, five and seven strides, so that rows 0..7 are (SI),
// (SI)(BX*1), (SI)(BX*2), (SI)(R10*1), (SI)(BX*4), (SI)(R11*1),
// (SI)(R10*2) and (SI)(R12*1).
#define PSTRIDES \
	LEAQ (BX)(BX*2), R10; \
	LEAQ (BX)(BX*4), R11; \
	LEAQ (R10)(BX*4), R12

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

// DOT8 adds into ZI the products of the 32 activation quants of the block
// at A with the weights in Z16-Z23, four bytes of A broadcast to each.
#define DOT8(ZI, A) \
	VPDPBUSD.BCST 0 A, Z16, ZI; \
	VPDPBUSD.BCST 4 A, Z17, ZI; \
	VPDPBUSD.BCST 8 A, Z18, ZI; \
	VPDPBUSD.BCST 12 A, Z19, ZI; \
	VPDPBUSD.BCST 16 A, Z20, ZI; \
	VPDPBUSD.BCST 20 A, Z21, ZI; \
	VPDPBUSD.BCST 24 A, Z22, ZI; \
	VPDPBUSD.BCST 28 A, Z23, ZI

// SCALE converts the block sums ZI and adds them times d_w*d_x (sixteen
// weight scales in Z24, the activation's at 32 A) into ZF with one FMA.
#define SCALE(ZI, ZF, A) \
	VCVTDQ2PS ZI, ZI; \
	VMULPS.BCST 32 A, Z24, Z25; \
	VFMADD231PS Z25, ZI, ZF

// OFFSET(SH) sets Z27 for ROWOFF, for a type whose unsigned quants are
// the weights plus 1<<SH (Q8_0's 128, Q4_0's 8, Q5_0's 16): dwords whose
// low word is -(1<<SH) and high word 0.
#define OFFSET(SH) \
	MOVL         $(0x10000-(1<<SH)), AX; \
	VPBROADCASTD AX, Z27

// ROWOFF is the row of such a type: the sum starts at -(1<<SH) times the
// activation's quant sum (the int32 at 36 A), in one VPDPWSSD of its
// broadcast against Z27: the sum's low word times -(1<<SH) plus its high
// word (0 or -1: |sum| <= 32*127) times 0, exactly.
#define ROWOFF(ZI, ZF, A) \
	VPXORD ZI, ZI, ZI; \
	VPDPWSSD.BCST 36 A, Z27, ZI; \
	DOT8(ZI, A); \
	SCALE(ZI, ZF, A)

// ROWMIN is the row of the _1 types, whose quants are unsigned as stored:
// after the scaled sum, the min term m_w * (sum_x * d_x), with the mins in
// Z26, as a second FMA.
#define ROWMIN(ZI, ZF, A) \
	VPXORD ZI, ZI, ZI; \
	DOT8(ZI, A); \
	SCALE(ZI, ZF, A); \
	VPBROADCASTD 36 A, Z25; \
	VCVTDQ2PS Z25, Z25; \
	VMULPS.BCST 32 A, Z25, Z25; \
	VFMADD231PS Z26, Z25, ZF

// ROWSn runs ROW for the first n activation rows into Z0.., through Z8...
#define ROWS1(ROW) \
	ROW(Z8, Z0, (SI))

#define ROWS2(ROW) \
	ROWS1(ROW); \
	ROW(Z9, Z1, (SI)(BX*1))

#define ROWS4(ROW) \
	ROWS2(ROW); \
	ROW(Z10, Z2, (SI)(BX*2)); \
	ROW(Z11, Z3, (SI)(R10*1))

#define ROWS8(ROW) \
	ROWS4(ROW); \
	ROW(Z12, Z4, (SI)(BX*4)); \
	ROW(Z13, Z5, (SI)(R11*1)); \
	ROW(Z14, Z6, (SI)(R10*2)); \
	ROW(Z15, Z7, (SI)(R12*1))

// ZEROn clears the first n rows' float sums.
#define ZERO1 \
	VPXORD Z0, Z0, Z0

#define ZERO2 \
	ZERO1; \
	VPXORD Z1, Z1, Z1

#define ZERO4 \
	ZERO2; \
	VPXORD Z2, Z2, Z2; \
	VPXORD Z3, Z3, Z3

#define ZERO8 \
	ZERO4; \
	VPXORD Z4, Z4, Z4; \
	VPXORD Z5, Z5, Z5; \
	VPXORD Z6, Z6, Z6; \
	VPXORD Z7, Z7, Z7

// STOREn stores the first n rows' sums, row j at DI + j*DX, lanes K1.
#define STORE1 \
	VMOVUPS Z0, K1, (DI)

#define STORE2 \
	STORE1; \
	VMOVUPS Z1, K1, (DI)(DX*1)

#define STORE4 \
	STORE2; \
	VMOVUPS Z2, K1, (DI)(DX*2); \
	LEAQ (DX)(DX*2), AX; \
	VMOVUPS Z3, K1, (DI)(AX*1)

#define STORE8 \
	STORE4; \
	VMOVUPS Z4, K1, (DI)(DX*4); \
	LEAQ (DX)(DX*4), AX; \
	VMOVUPS Z5, K1, (DI)(AX*1); \
	LEAQ (DX)(DX*2), AX; \
	VMOVUPS Z6, K1, (DI)(AX*2); \
	LEAQ (DX)(AX*2), AX; \
	VMOVUPS Z7, K1, (DI)(AX*1)

// PACKED is a whole kernel for n activation rows (ZERO, ROWS and STORE
// of that n): SETUP loads the type's constants, then per block COLS and a
// ROW per activation row, the loop labelled LOOP.
#define PACKED(SETUP, COLS, ROW, ZERO, ROWS, STORE, LOOP) \
	LOADARGSP; \
	SETUP; \
	ZERO; \
LOOP: \
	COLS; \
	ROWS(ROW); \
	ADDQ $40, SI; \
	DECQ CX; \
	JNZ  LOOP; \
	STORE; \
	VZEROUPPER; \
	RET
