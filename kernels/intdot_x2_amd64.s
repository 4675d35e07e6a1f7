//go:build amd64 && !purego

#include "textflag.h"
#include "intdot_amd64.h"
#include "prefetch_amd64.h"

// AVX2 integer-dot kernels of the 32-value block types that meet q8Act
// activations: four weight rows against TWO activation rows (the x2 forms,
// for prefill chunks and batched decode: each weight block is loaded and
// unpacked once for both rows), and the one-row forms of Q4_1 and Q5_1.
// The scheme is intdot_amd64.s's: per block, each row's exact int32 sums
// in 8 lanes, the four rows folded into one vector by three VPHADDD (lanes
// r and r+4 hold row r), converted once and scaled by [d_w0..d_w3]*d_x
// with one FMA. Each activation row sees the same operations in the same
// order as in the one-row kernel, so a row's result does not depend on
// which other row shares its call.
//
// Registers: R8-R11 the weight rows, SI and DX the activation rows, CX
// the block count, DI out. Y15 and Y14 the two rows' activation quants,
// Y13 int16 ones, Y12 the unpacked weights, Y0 and Y1 the rows'
// accumulators, Y2-Y7 the per-row sums, Y8 the four weight scales, Y9-Y11
// temporaries. Constants are read from memory, leaving no register free.

DATA k2nib<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA k2nib<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA k2nib<>+16(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA k2nib<>+24(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL k2nib<>(SB), RODATA|NOPTR, $32

DATA k2eight<>+0(SB)/8, $0x0808080808080808
DATA k2eight<>+8(SB)/8, $0x0808080808080808
DATA k2eight<>+16(SB)/8, $0x0808080808080808
DATA k2eight<>+24(SB)/8, $0x0808080808080808
GLOBL k2eight<>(SB), RODATA|NOPTR, $32

DATA k2sixteen<>+0(SB)/8, $0x1010101010101010
DATA k2sixteen<>+8(SB)/8, $0x1010101010101010
DATA k2sixteen<>+16(SB)/8, $0x1010101010101010
DATA k2sixteen<>+24(SB)/8, $0x1010101010101010
GLOBL k2sixteen<>(SB), RODATA|NOPTR, $32

DATA k2spread<>+0(SB)/8, $0x0000000000000000
DATA k2spread<>+8(SB)/8, $0x0101010101010101
DATA k2spread<>+16(SB)/8, $0x0202020202020202
DATA k2spread<>+24(SB)/8, $0x0303030303030303
GLOBL k2spread<>(SB), RODATA|NOPTR, $32

DATA k2bits<>+0(SB)/8, $0x8040201008040201
DATA k2bits<>+8(SB)/8, $0x8040201008040201
DATA k2bits<>+16(SB)/8, $0x8040201008040201
DATA k2bits<>+24(SB)/8, $0x8040201008040201
GLOBL k2bits<>(SB), RODATA|NOPTR, $32

// Weight unpacking into Y12 (uses Y9). U4: 16 bytes of nibbles at OFF(P),
// weight j < 16 the low nibble of byte j, weight j+16 the high one, as
// unsigned 0..15. H5: bit j of the 32-bit qh at QH(P) becomes bit 4 of
// weight j (spread to bytes by VPSHUFB, picked by a per-byte mask).
#define U4(P, OFF) \
	VMOVDQU     OFF(P), X12; \
	VPSRLW      $4, X12, X9; \
	VINSERTI128 $1, X9, Y12, Y12; \
	VPAND       k2nib<>(SB), Y12, Y12

#define H5(P, QH) \
	VPBROADCASTD QH(P), Y9; \
	VPSHUFB      k2spread<>(SB), Y9, Y9; \
	VPAND        k2bits<>(SB), Y9, Y9; \
	VPCMPEQB     k2bits<>(SB), Y9, Y9; \
	VPAND        k2sixteen<>(SB), Y9, Y9; \
	VPOR         Y9, Y12, Y12

#define UNPACK_Q8_0(P) VMOVDQU 2(P), Y12
#define UNPACK_Q4_0(P) U4(P, 2); VPSUBB k2eight<>(SB), Y12, Y12
#define UNPACK_Q5_0(P) U4(P, 6); H5(P, 2); VPSUBB k2sixteen<>(SB), Y12, Y12
#define UNPACK_Q4_1(P) U4(P, 4)
#define UNPACK_Q5_1(P) U4(P, 8); H5(P, 4)

// Block products of the weights in Y12 with the activations, into 8 int32
// lanes. Signed weights (the _0 types) go through |w| and x with w's sign
// (VPSIGNB; |w| <= 128, |x| <= 127: the int16 pair sums cannot saturate);
// unsigned ones (the _1 types, 0..31) meet x directly.
#define SDOT2(SA, SB) \
	VPSIGNB    Y12, Y12, Y11; \
	VPSIGNB    Y12, Y15, Y10; \
	VPMADDUBSW Y10, Y11, SA; \
	VPMADDWD   Y13, SA, SA; \
	VPSIGNB    Y12, Y14, Y10; \
	VPMADDUBSW Y10, Y11, SB; \
	VPMADDWD   Y13, SB, SB

#define UDOT2(SA, SB) \
	VPMADDUBSW Y15, Y12, SA; \
	VPMADDWD   Y13, SA, SA; \
	VPMADDUBSW Y14, Y12, SB; \
	VPMADDWD   Y13, SB, SB

#define UDOT1(SA) \
	VPMADDUBSW Y15, Y12, SA; \
	VPMADDWD   Y13, SA, SA

// SCALES4 gathers the four rows' halves at OFF of their blocks into
// [s0..s3] floats in X (upper 128 bits zero); words 4-7 of X are never
// read by VCVTPH2PS, so they need no clearing.
#define SCALES4(OFF, X) \
	VPINSRW   $0, OFF(R8), X, X; \
	VPINSRW   $1, OFF(R9), X, X; \
	VPINSRW   $2, OFF(R10), X, X; \
	VPINSRW   $3, OFF(R11), X, X; \
	VCVTPH2PS X, X

// BODY2 runs the four rows of one block against both activation rows and
// leaves the folded int32 sums in Y2 (row SI) and Y4 (row DX).
#define BODY2(UNPACK, DOT2) \
	VMOVDQU (SI), Y15; \
	VMOVDQU (DX), Y14; \
	UNPACK(R8); \
	DOT2(Y2, Y4); \
	UNPACK(R9); \
	DOT2(Y3, Y5); \
	VPHADDD Y3, Y2, Y2; \
	VPHADDD Y5, Y4, Y4; \
	UNPACK(R10); \
	DOT2(Y3, Y5); \
	UNPACK(R11); \
	DOT2(Y6, Y7); \
	VPHADDD Y6, Y3, Y3; \
	VPHADDD Y7, Y5, Y5; \
	VPHADDD Y3, Y2, Y2; \
	VPHADDD Y5, Y4, Y4

// SCALE2 adds the folded sums times [d_w]*d_x into each row's accumulator.
#define SCALE2 \
	VCVTDQ2PS    Y2, Y2; \
	VCVTDQ2PS    Y4, Y4; \
	SCALES4(0, X8); \
	VINSERTF128  $1, X8, Y8, Y8; \
	VBROADCASTSS 32(SI), Y9; \
	VMULPS       Y9, Y8, Y9; \
	VFMADD231PS  Y9, Y2, Y0; \
	VBROADCASTSS 32(DX), Y9; \
	VMULPS       Y9, Y8, Y9; \
	VFMADD231PS  Y9, Y4, Y1

// MINS adds the _1 types' offsets, m_w * d_x * sum(x quants), into the
// low half of ACC for the activation block at XP (X10 holds [m0..m3]).
#define MINS(XP, ACC) \
	VCVTSI2SSL 36(XP), X11, X11; \
	VMULSS    32(XP), X11, X11; \
	VBROADCASTSS X11, X11; \
	VMULPS    X11, X10, X11; \
	VADDPS    Y11, ACC, ACC

#define LOADARGS2I \
	MOVQ w0+0(FP), R8; \
	MOVQ w1+8(FP), R9; \
	MOVQ w2+16(FP), R10; \
	MOVQ w3+24(FP), R11; \
	MOVQ xa0+32(FP), SI; \
	MOVQ xa1+40(FP), DX; \
	MOVQ n+48(FP), CX; \
	MOVQ out+56(FP), DI

#define NEXT(WB) \
	ADDQ $WB, R8; \
	ADDQ $WB, R9; \
	ADDQ $WB, R10; \
	ADDQ $WB, R11; \
	ADDQ $40, SI

#define NEXT2(WB) \
	NEXT(WB); \
	ADDQ $40, DX

// HSUM2 stores the four sums of Y0 at 0(DI) and of Y1 at 16(DI).
#define HSUM2 \
	VEXTRACTF128 $1, Y0, X9; \
	VADDPS       X9, X0, X0; \
	VMOVUPS      X0, (DI); \
	VEXTRACTF128 $1, Y1, X9; \
	VADDPS       X9, X1, X1; \
	VMOVUPS      X1, 16(DI)

// ZERO2 clears the two rows' accumulators and the scale registers.
#define ZERO2 \
	VXORPS Y0, Y0, Y0; \
	VXORPS Y1, Y1, Y1; \
	VXORPS X8, X8, X8; \
	VXORPS X10, X10, X10

#define PRO2 \
	LOADARGS2I; \
	ZERO2; \
	ONES16(Y13); \
	PFNEXT

// func q8_0x4x2(w0, w1, w2, w3, xa0, xa1 unsafe.Pointer, n int, out *[8]float32)
TEXT ·q8_0x4x2(SB), NOSPLIT, $0-64
	PRO2

q80x2loop:
	PFLIN3(136)
	BODY2(UNPACK_Q8_0, SDOT2)
	SCALE2
	NEXT2(34)
	DECQ CX
	JNZ  q80x2loop

	HSUM2
	VZEROUPPER
	RET

// func q4_0x4x2(w0, w1, w2, w3, xa0, xa1 unsafe.Pointer, n int, out *[8]float32)
TEXT ·q4_0x4x2(SB), NOSPLIT, $0-64
	PRO2

q40x2loop:
	PFLIN2(72)
	BODY2(UNPACK_Q4_0, SDOT2)
	SCALE2
	NEXT2(18)
	DECQ CX
	JNZ  q40x2loop

	HSUM2
	VZEROUPPER
	RET

// func q5_0x4x2(w0, w1, w2, w3, xa0, xa1 unsafe.Pointer, n int, out *[8]float32)
TEXT ·q5_0x4x2(SB), NOSPLIT, $0-64
	PRO2

q50x2loop:
	PFLIN2(88)
	BODY2(UNPACK_Q5_0, SDOT2)
	SCALE2
	NEXT2(22)
	DECQ CX
	JNZ  q50x2loop

	HSUM2
	VZEROUPPER
	RET

// func q4_1x4x2(w0, w1, w2, w3, xa0, xa1 unsafe.Pointer, n int, out *[8]float32)
TEXT ·q4_1x4x2(SB), NOSPLIT, $0-64
	PRO2

q41x2loop:
	PFLIN2(80)
	BODY2(UNPACK_Q4_1, UDOT2)
	SCALE2
	SCALES4(2, X10)
	MINS(SI, Y0)
	MINS(DX, Y1)
	NEXT2(20)
	DECQ CX
	JNZ  q41x2loop

	HSUM2
	VZEROUPPER
	RET

// func q5_1x4x2(w0, w1, w2, w3, xa0, xa1 unsafe.Pointer, n int, out *[8]float32)
TEXT ·q5_1x4x2(SB), NOSPLIT, $0-64
	PRO2

q51x2loop:
	PFLIN2(96)
	BODY2(UNPACK_Q5_1, UDOT2)
	SCALE2
	SCALES4(2, X10)
	MINS(SI, Y0)
	MINS(DX, Y1)
	NEXT2(24)
	DECQ CX
	JNZ  q51x2loop

	HSUM2
	VZEROUPPER
	RET

// The one-row forms of the _1 types: BODY2 and SCALE2 for the row at SI
// alone (the sums in Y2).
#define BODY1(UNPACK) \
	VMOVDQU (SI), Y15; \
	UNPACK(R8); \
	UDOT1(Y2); \
	UNPACK(R9); \
	UDOT1(Y3); \
	VPHADDD Y3, Y2, Y2; \
	UNPACK(R10); \
	UDOT1(Y3); \
	UNPACK(R11); \
	UDOT1(Y6); \
	VPHADDD Y6, Y3, Y3; \
	VPHADDD Y3, Y2, Y2

#define SCALE1 \
	VCVTDQ2PS    Y2, Y2; \
	SCALES4(0, X8); \
	VINSERTF128  $1, X8, Y8, Y8; \
	VBROADCASTSS 32(SI), Y9; \
	VMULPS       Y9, Y8, Y9; \
	VFMADD231PS  Y9, Y2, Y0

#define PRO1 \
	LOADARGSI; \
	VXORPS Y0, Y0, Y0; \
	VXORPS X8, X8, X8; \
	VXORPS X10, X10, X10; \
	ONES16(Y13); \
	PFNEXT

#define HSUM1 \
	VEXTRACTF128 $1, Y0, X9; \
	VADDPS       X9, X0, X0; \
	VMOVUPS      X0, (DI)

// func q4_1x4(w0, w1, w2, w3, xa unsafe.Pointer, n int, out *[8]float32)
TEXT ·q4_1x4(SB), NOSPLIT, $0-56
	PRO1

q41loop:
	PFLIN2(80)
	BODY1(UNPACK_Q4_1)
	SCALE1
	SCALES4(2, X10)
	MINS(SI, Y0)
	NEXT(20)
	DECQ CX
	JNZ  q41loop

	HSUM1
	VZEROUPPER
	RET

// func q5_1x4(w0, w1, w2, w3, xa unsafe.Pointer, n int, out *[8]float32)
TEXT ·q5_1x4(SB), NOSPLIT, $0-56
	PRO1

q51loop:
	PFLIN2(96)
	BODY1(UNPACK_Q5_1)
	SCALE1
	SCALES4(2, X10)
	MINS(SI, Y0)
	NEXT(24)
	DECQ CX
	JNZ  q51loop

	HSUM1
	VZEROUPPER
	RET

// func q8_0x4x2n(w0, w1, w2, w3, xa unsafe.Pointer, xs, pairs, n int, out *float32, ostride int)
//
// q8_0x4x2 over pairs consecutive pairs of activation rows (row j at xa +
// j*xs bytes), the pair loop in the assembly rather than one Go call a
// pair: row j's four sums go to out + j*ostride bytes. Each pair runs
// exactly q8_0x4x2's instructions, so its sums are bit-identical to it.
// AX counts the pairs, R12 is the pair's first activation row, BX a
// reloaded stride.
TEXT ·q8_0x4x2n(SB), NOSPLIT, $0-80
	MOVQ  pairs+48(FP), AX
	MOVQ  xa+32(FP), R12
	MOVQ  out+64(FP), DI
	ONES16(Y13)

q80x2npair:
	MOVQ   w0+0(FP), R8
	MOVQ   w1+8(FP), R9
	MOVQ   w2+16(FP), R10
	MOVQ   w3+24(FP), R11
	MOVQ   R12, SI
	MOVQ   xs+40(FP), BX
	LEAQ   (R12)(BX*1), DX
	MOVQ   n+56(FP), CX
	ZERO2
	PFNEXT

q80x2nloop:
	PFLIN3(136)
	BODY2(UNPACK_Q8_0, SDOT2)
	SCALE2
	NEXT2(34)
	DECQ CX
	JNZ  q80x2nloop

	VEXTRACTF128 $1, Y0, X9
	VADDPS       X9, X0, X0
	VMOVUPS      X0, (DI)
	MOVQ         ostride+72(FP), BX
	VEXTRACTF128 $1, Y1, X9
	VADDPS       X9, X1, X1
	VMOVUPS      X1, (DI)(BX*1)
	LEAQ         (DI)(BX*2), DI
	MOVQ         xs+40(FP), BX
	LEAQ         (R12)(BX*2), R12
	DECQ         AX
	JNZ          q80x2npair

	VZEROUPPER
	RET
