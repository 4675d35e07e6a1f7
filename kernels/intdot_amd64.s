//go:build amd64 && !purego

#include "textflag.h"
#include "intdot_amd64.h"
#include "prefetch_amd64.h"

// AVX2 integer-dot kernels: four weight rows against one row of quantized
// activations (q8Act blocks of 40 bytes, q8KAct blocks of 304 bytes; see
// actquant.go). Per block, the weights' integer products with the int8
// activations are summed exactly in int16/int32 lanes (VPMADDUBSW, then
// VPMADDWD), converted to float once and scaled by d_w*d_x into the row's
// float accumulators (Y0-Y3, or Y0 alone below). The Go side loops over the batch with the same
// four rows, which stay in L1. out receives the four sums.

// The 32-value kernels (Q8_0, Q4_0, Q5_0) have one scale per 32 weights, so the
// float work per block is what bounds them: they sum each row's block
// product into 8 int32 lanes (SDOTI), fold the four rows' lanes into one
// vector with three VPHADDD (lanes r and r+4 hold row r), convert once,
// and scale all four rows by one FMA with [d_w0..d_w3]*d_x (the four
// halves gathered by VPINSRW) into Y0. HSUMQ adds the two halves of Y0.

// SDOTI sets DST to 8 int32 sums of the block product of the 32 signed
// weight bytes in W with x in Y15: |w| times x with w's sign (VPSIGNB), 16
// int16 pair sums (|w| <= 128, |x| <= 127: no saturation), then 8 int32
// (VPMADDWD with ones in Y13). Uses Y9, Y10.
#define SDOTI(W, DST) \
	VPSIGNB    W, W, Y9; \
	VPSIGNB    W, Y15, Y10; \
	VPMADDUBSW Y10, Y9, DST; \
	VPMADDWD   Y13, DST, DST

// FOLD4 adds the four rows' block sums (Y4-Y7) times their scales (the
// halves at offset 0 of the four blocks, times d_x at 32(SI)) into Y0.
#define FOLD4 \
	VPHADDD      Y5, Y4, Y4; \
	VPHADDD      Y7, Y6, Y6; \
	VPHADDD      Y6, Y4, Y4; \
	VCVTDQ2PS    Y4, Y4; \
	VPINSRW      $0, (R8), X8, X8; \
	VPINSRW      $1, (R9), X8, X8; \
	VPINSRW      $2, (R10), X8, X8; \
	VPINSRW      $3, (R11), X8, X8; \
	VCVTPH2PS    X8, X8; \
	VBROADCASTSS 32(SI), X9; \
	VMULPS       X9, X8, X8; \
	VINSERTF128  $1, X8, Y8, Y8; \
	VFMADD231PS  Y8, Y4, Y0

#define HSUMQ(DST) \
	VEXTRACTF128 $1, Y0, X1; \
	VADDPS       X1, X0, X0; \
	VMOVUPS      X0, DST

// Q4_0: 16 bytes of nibbles at 2(P): weight j < 16 is the low nibble of
// byte j, weight j+16 the high one; value nibble-8. Y14 holds 0x0F bytes,
// Y11 holds 8s; the weights land in Y12.
#define Q4UNPACK(P) \
	VMOVDQU     2(P), X12; \
	VPSRLW      $4, X12, X9; \
	VINSERTI128 $1, X9, Y12, Y12; \
	VPAND       Y14, Y12, Y12; \
	VPSUBB      Y11, Y12, Y12

// Q5_0: qh (32 bits) at 2(P), 16 bytes of nibbles at 6(P); weight j is
// nibble j | bit j of qh << 4, minus 16. The bits are spread to bytes by
// VPSHUFB (byte j takes qh's byte j/8) and picked by a per-byte mask
// (1 << j%8) and VPCMPEQB. Y14 holds 0x0F bytes, Y11 16s, Y2 0x10s; the
// weights land in Y12.
DATA q5spread<>+0(SB)/8, $0x0000000000000000
DATA q5spread<>+8(SB)/8, $0x0101010101010101
DATA q5spread<>+16(SB)/8, $0x0202020202020202
DATA q5spread<>+24(SB)/8, $0x0303030303030303
GLOBL q5spread<>(SB), RODATA|NOPTR, $32

DATA q5bits<>+0(SB)/8, $0x8040201008040201
DATA q5bits<>+8(SB)/8, $0x8040201008040201
DATA q5bits<>+16(SB)/8, $0x8040201008040201
DATA q5bits<>+24(SB)/8, $0x8040201008040201
GLOBL q5bits<>(SB), RODATA|NOPTR, $32

#define Q5UNPACK(P) \
	VMOVDQU      6(P), X12; \
	VPSRLW       $4, X12, X9; \
	VINSERTI128  $1, X9, Y12, Y12; \
	VPAND        Y14, Y12, Y12; \
	VPBROADCASTD 2(P), Y9; \
	VPSHUFB      q5spread<>(SB), Y9, Y9; \
	VPAND        q5bits<>(SB), Y9, Y9; \
	VPCMPEQB     q5bits<>(SB), Y9, Y9; \
	VPAND        Y2, Y9, Y9; \
	VPOR         Y9, Y12, Y12; \
	VPSUBB       Y11, Y12, Y12

// The kernels: the macros above are all defined before any TEXT so that
// go vet checks each stack offset against its own function's frame.

// func q8_0x4(w0, w1, w2, w3, xa unsafe.Pointer, n int, out *[8]float32)
TEXT ·q8_0x4(SB), NOSPLIT, $0-56
	LOADARGSI
	VXORPS Y0, Y0, Y0
	VXORPS X8, X8, X8
	ONES16(Y13)
	PFNEXT

q80loop:
	PFLIN3(136)
	VMOVDQU (SI), Y15
	VMOVDQU 2(R8), Y11
	SDOTI(Y11, Y4)
	VMOVDQU 2(R9), Y11
	SDOTI(Y11, Y5)
	VMOVDQU 2(R10), Y11
	SDOTI(Y11, Y6)
	VMOVDQU 2(R11), Y11
	SDOTI(Y11, Y7)
	FOLD4
	ADDQ    $34, R8
	ADDQ    $34, R9
	ADDQ    $34, R10
	ADDQ    $34, R11
	ADDQ    $40, SI
	DECQ    CX
	JNZ     q80loop

	HSUMQ((DI))
	VZEROUPPER
	RET

// func q4_0x4(w0, w1, w2, w3, xa unsafe.Pointer, n int, out *[8]float32)
TEXT ·q4_0x4(SB), NOSPLIT, $8-56
	LOADARGSI
	VXORPS       Y0, Y0, Y0
	VXORPS       X8, X8, X8
	ONES16(Y13)
	MOVL         $0x0f0f0f0f, AX
	MOVL         AX, 0(SP)
	VPBROADCASTD 0(SP), Y14
	MOVL         $0x08080808, AX
	MOVL         AX, 0(SP)
	VPBROADCASTD 0(SP), Y11
	PFNEXT

q40loop:
	PFLIN2(72)
	VMOVDQU (SI), Y15
	Q4UNPACK(R8)
	SDOTI(Y12, Y4)
	Q4UNPACK(R9)
	SDOTI(Y12, Y5)
	Q4UNPACK(R10)
	SDOTI(Y12, Y6)
	Q4UNPACK(R11)
	SDOTI(Y12, Y7)
	FOLD4
	ADDQ    $18, R8
	ADDQ    $18, R9
	ADDQ    $18, R10
	ADDQ    $18, R11
	ADDQ    $40, SI
	DECQ    CX
	JNZ     q40loop

	HSUMQ((DI))
	VZEROUPPER
	RET

// func q5_0x4(w0, w1, w2, w3, xa unsafe.Pointer, n int, out *[8]float32)
TEXT ·q5_0x4(SB), NOSPLIT, $8-56
	LOADARGSI
	VXORPS       Y0, Y0, Y0
	VXORPS       X8, X8, X8
	ONES16(Y13)
	MOVL         $0x0f0f0f0f, AX
	MOVL         AX, 0(SP)
	VPBROADCASTD 0(SP), Y14
	MOVL         $0x10101010, AX
	MOVL         AX, 0(SP)
	VPBROADCASTD 0(SP), Y11
	VPBROADCASTD 0(SP), Y2
	PFNEXT

q50loop:
	PFLIN2(88)
	VMOVDQU (SI), Y15
	Q5UNPACK(R8)
	SDOTI(Y12, Y4)
	Q5UNPACK(R9)
	SDOTI(Y12, Y5)
	Q5UNPACK(R10)
	SDOTI(Y12, Y6)
	Q5UNPACK(R11)
	SDOTI(Y12, Y7)
	FOLD4
	ADDQ    $22, R8
	ADDQ    $22, R9
	ADDQ    $22, R10
	ADDQ    $22, R11
	ADDQ    $40, SI
	DECQ    CX
	JNZ     q50loop

	HSUMQ((DI))
	VZEROUPPER
	RET
