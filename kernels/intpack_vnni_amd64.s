//go:build amd64 && !purego

#include "textflag.h"

// AVX-VNNI kernels over packed Q8_0 weights (pack_layout.go), for CPUs with the
// VEX form of VPDPBUSD and no AVX-512: eight rows of a packed group (one
// half: lanes 0-7 or 8-15, 32 bytes of each 64-byte quant column) against
// 1, 2 or 4 rows of q8Act activations, xs bytes apart. Per block and
// activation row, the same operations in the same order as the avx512
// kernels (intpack_amd64.s) on the same lanes, so that both paths give
// the same bits: the integer sum starts at -128 times the activation's
// quant sum, eight VPDPBUSD add the quant columns times a broadcast of four
// activation bytes, then one conversion, d_w*d_x and one FMA. The sums go
// to out + j*ostride for activation row j, through the lane mask at mask
// (eight int32, sign bit set for a lane to store).
//
// The Go assembler encodes VPDPBUSD only in its EVEX (AVX-512) form, so
// the VEX one is spelled out in bytes: VNNIk is VPDPBUSD Y9, Y8, Yk (Yk +=
// the unsigned bytes of Y8 times the signed bytes of Y9), for the integer
// sums Y4-Y7 (C4, R and B inverted with map 0F38, W0 vvvv=~8 L1 pp=66,
// opcode 50, ModRM register form).
//
// Registers: R8 the half's scales (32 bytes a block), R9 its quants (512
// bytes a block), SI the first activation row, BX/R10 one/three row
// strides, CX the block count, DI out, DX ostride. Y0-Y3 the rows' float
// sums, Y4-Y7 their integer block sums, Y8 a quant column, Y9 a broadcast
// of activation bytes, Y10 the block's scales, Y11 scratch, Y12 the store
// mask, Y15 zero.

#define VNNI4 BYTE $0xc4; BYTE $0xc2; BYTE $0x3d; BYTE $0x50; BYTE $0xe1
#define VNNI5 BYTE $0xc4; BYTE $0xc2; BYTE $0x3d; BYTE $0x50; BYTE $0xe9
#define VNNI6 BYTE $0xc4; BYTE $0xc2; BYTE $0x3d; BYTE $0x50; BYTE $0xf1
#define VNNI7 BYTE $0xc4; BYTE $0xc2; BYTE $0x3d; BYTE $0x50; BYTE $0xf9

#define LOADARGSV \
	MOVQ    w+0(FP), R8; \
	MOVQ    quant+8(FP), R9; \
	ADDQ    R8, R9; \
	MOVQ    xa+16(FP), SI; \
	MOVQ    xs+24(FP), BX; \
	LEAQ    (BX)(BX*2), R10; \
	MOVQ    nb+32(FP), CX; \
	MOVQ    out+40(FP), DI; \
	MOVQ    ostride+48(FP), DX; \
	MOVQ    mask+56(FP), AX; \
	VMOVDQU (AX), Y12; \
	VPXOR   Y15, Y15, Y15

// VINIT starts row A's integer sum YI at -128 times its quant sum.
#define VINIT(YI, A) \
	VPBROADCASTD 36 A, Y11; \
	VPSLLD       $7, Y11, Y11; \
	VPSUBD       Y11, Y15, YI

// VCOL loads quant column Q (at 64Q) for the rows that follow.
#define VCOL(Q) VMOVDQU (64*Q)(R9), Y8

// VDOT adds column Q of row A's block into its integer sum (VNNI macro).
#define VDOT(Q, A, VNNI) \
	VPBROADCASTD (4*Q) A, Y9; \
	VNNI

// VSCALE adds row A's block, converted and scaled by d_w*d_x, into YF.
#define VSCALE(YI, YF, A) \
	VCVTDQ2PS    YI, YI; \
	VBROADCASTSS 32 A, Y11; \
	VMULPS       Y10, Y11, Y11; \
	VFMADD231PS  Y11, YI, YF

// VCOLn(Q) loads quant column Q and adds it into the first n rows' sums.
#define VCOL1(Q) VCOL(Q); VDOT(Q, (SI), VNNI4)
#define VCOL2(Q) VCOL1(Q); VDOT(Q, (SI)(BX*1), VNNI5)
#define VCOL4(Q) VCOL2(Q); VDOT(Q, (SI)(BX*2), VNNI6); VDOT(Q, (SI)(R10*1), VNNI7)

// VINITn, VSCALEn, VZEROn and VSTOREn: VINIT, VSCALE, the clearing of the
// float sums and their stores, for the first n rows.
#define VINIT1 VINIT(Y4, (SI))
#define VINIT2 VINIT1; VINIT(Y5, (SI)(BX*1))
#define VINIT4 VINIT2; VINIT(Y6, (SI)(BX*2)); VINIT(Y7, (SI)(R10*1))
#define VSCALE1 VSCALE(Y4, Y0, (SI))
#define VSCALE2 VSCALE1; VSCALE(Y5, Y1, (SI)(BX*1))
#define VSCALE4 VSCALE2; VSCALE(Y6, Y2, (SI)(BX*2)); VSCALE(Y7, Y3, (SI)(R10*1))
#define VZERO1 VXORPS Y0, Y0, Y0
#define VZERO2 VZERO1; VXORPS Y1, Y1, Y1
#define VZERO4 VZERO2; VXORPS Y2, Y2, Y2; VXORPS Y3, Y3, Y3
#define VSTORE1 VMASKMOVPS Y0, Y12, (DI)
#define VSTORE2 VSTORE1; VMASKMOVPS Y1, Y12, (DI)(DX*1)
#define VSTORE4 VSTORE2; VMASKMOVPS Y2, Y12, (DI)(DX*2); LEAQ (DX)(DX*2), AX; VMASKMOVPS Y3, Y12, (DI)(AX*1)

// VKERNEL is a whole kernel of n rows (its VZERO, VINIT, VCOL, VSCALE,
// VSTORE), the block loop labelled LOOP.
#define VKERNEL(ZERO, INIT, COL, SCALE, STORE, LOOP) \
	LOADARGSV; \
	ZERO; \
LOOP: \
	VCVTPH2PS (R8), Y10; \
	INIT; \
	COL(0); \
	COL(1); \
	COL(2); \
	COL(3); \
	COL(4); \
	COL(5); \
	COL(6); \
	COL(7); \
	SCALE; \
	ADDQ $32, R8; \
	ADDQ $512, R9; \
	ADDQ $40, SI; \
	DECQ CX; \
	JNZ  LOOP; \
	STORE; \
	VZEROUPPER; \
	RET

// func q8_0p8v1(w unsafe.Pointer, quant uintptr, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask *[8]int32)
TEXT ·q8_0p8v1(SB), NOSPLIT, $0-64
	VKERNEL(VZERO1, VINIT1, VCOL1, VSCALE1, VSTORE1, q8_0p8v1loop)

// func q8_0p8v2(w unsafe.Pointer, quant uintptr, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask *[8]int32)
TEXT ·q8_0p8v2(SB), NOSPLIT, $0-64
	VKERNEL(VZERO2, VINIT2, VCOL2, VSCALE2, VSTORE2, q8_0p8v2loop)

// func q8_0p8v4(w unsafe.Pointer, quant uintptr, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask *[8]int32)
TEXT ·q8_0p8v4(SB), NOSPLIT, $0-64
	VKERNEL(VZERO4, VINIT4, VCOL4, VSCALE4, VSTORE4, q8_0p8v4loop)
