//go:build amd64 && !purego

#include "textflag.h"
#include "intdot_amd64.h"
#include "prefetch_amd64.h"
#include "q6k_amd64.h"
#include "lowk_amd64.h"

// AVX2 integer-dot kernels of the K-quants (Q2_K..Q6_K) against
// q8KAct activation blocks; see intdot_amd64.s for the scheme.

// Q4_K super-block at P (d, dmin halves; 12 bytes of packed 6-bit scales
// and mins; 128 bytes of nibbles) against the q8KAct block at SI. The
// scales and mins are unpacked in general registers (sc0-3 = u0&0x3f..,
// m0-3 = u1&0x3f.., sc4-7 = u2&0x0f.. | (u0>>6&0x03..)<<4, m4-7 =
// u2>>4&0x0f.. | (u1>>6&0x03..)<<4 over the three little-endian words u)
// by KSCALES in registers (X9 scales, X10 mins: storing the bytes and
// reloading them wider would stall on store forwarding every block); each
// scale is then widened to a dword holding it twice as int16 at
// 16(SP)+4j for VPMADDWD. The mins meet
// the activation's 16-value sums (each min repeated for its two sums).
// Y15 holds 0x0F bytes. Uses AX, BX, DX, R12 and Y8-Y14.
#define KSCALES(P) \
	MOVL         4(P), AX; \
	MOVL         8(P), BX; \
	MOVL         12(P), DX; \
	MOVL         AX, R12; \
	ANDL         $0x3f3f3f3f, R12; \
	VMOVD        R12, X9; \
	MOVL         DX, R12; \
	ANDL         $0x0f0f0f0f, R12; \
	SHRL         $6, AX; \
	ANDL         $0x03030303, AX; \
	SHLL         $4, AX; \
	ORL          AX, R12; \
	VPINSRD      $1, R12, X9, X9; \
	MOVL         BX, R12; \
	ANDL         $0x3f3f3f3f, R12; \
	VMOVD        R12, X10; \
	SHRL         $4, DX; \
	ANDL         $0x0f0f0f0f, DX; \
	SHRL         $6, BX; \
	ANDL         $0x03030303, BX; \
	SHLL         $4, BX; \
	ORL          BX, DX; \
	VPINSRD      $1, DX, X10, X10; \
	VPMOVZXBW    X10, X10; \
	VPUNPCKHWD   X10, X10, X12; \
	VPUNPCKLWD   X10, X10, X11; \
	VINSERTI128  $1, X12, Y11, Y11; \
	VPMADDWD     256(SI), Y11, Y11; \
	VPMOVZXBD    X9, Y9; \
	VPSLLD       $16, Y9, Y10; \
	VPOR         Y10, Y9, Y9; \
	VMOVDQU      Y9, 16(SP); \
	VPXOR        Y12, Y12, Y12

// KFINISH scales the super-block's int32 sums (Y12) by d*dx and its min
// sums (Y11) by dmin*dx into ACC.
#define KFINISH(P, ACC) \
	VCVTDQ2PS    Y12, Y12; \
	VCVTDQ2PS    Y11, Y11; \
	VCVTPH2PS    (P), X13; \
	VBROADCASTSS 288(SI), X14; \
	VMULPS       X14, X13, X13; \
	VMOVSHDUP    X13, X14; \
	VBROADCASTSS X13, Y13; \
	VBROADCASTSS X14, Y14; \
	VFMADD231PS  Y13, Y12, ACC; \
	VFNMADD231PS Y14, Y11, ACC

#define Q4KROW(P, ACC) \
	KSCALES(P); \
	Q4KPAIR(P, 0, 0, 16, 20); \
	Q4KPAIR(P, 32, 64, 24, 28); \
	Q4KPAIR(P, 64, 128, 32, 36); \
	Q4KPAIR(P, 96, 192, 40, 44); \
	KFINISH(P, ACC)

// Q4KPAIR adds sub-blocks 2j (low nibbles of the 32 bytes at 16+Q(P),
// activations X(SI)) and 2j+1 (high nibbles, X+32(SI)) times their scales
// (dwords at S0(SP), S1(SP)) to the int32 sums in Y12.
#define Q4KPAIR(P, Q, X, S0, S1) \
	VMOVDQU      16+Q(P), Y13; \
	VPAND        Y15, Y13, Y14; \
	VPMADDUBSW   X(SI), Y14, Y14; \
	VPBROADCASTD S0(SP), Y10; \
	VPMADDWD     Y10, Y14, Y14; \
	VPADDD       Y14, Y12, Y12; \
	VPSRLW       $4, Y13, Y13; \
	VPAND        Y15, Y13, Y13; \
	VPMADDUBSW   X+32(SI), Y13, Y13; \
	VPBROADCASTD S1(SP), Y10; \
	VPMADDWD     Y10, Y13, Y13; \
	VPADDD       Y13, Y12, Y12

// Q5_K: Q4_K's layout with qh[32] at 16(P) and the nibbles at 48(P): bit
// s of qh[l] is bit 4 of weight l of sub-block s, moved into place by a
// word shift (SHL/SHR by NL for sub-block 2j, NH for 2j+1) and a 0x10 mask
// (Y6). Y5 holds qh.
#define Q5KPAIR(P, Q, X, S0, S1, SHL, NL, SHH, NH) \
	VMOVDQU      48+Q(P), Y13; \
	VPAND        Y15, Y13, Y14; \
	SHL          $NL, Y5, Y10; \
	VPAND        Y6, Y10, Y10; \
	VPOR         Y10, Y14, Y14; \
	VPMADDUBSW   X(SI), Y14, Y14; \
	VPBROADCASTD S0(SP), Y10; \
	VPMADDWD     Y10, Y14, Y14; \
	VPADDD       Y14, Y12, Y12; \
	VPSRLW       $4, Y13, Y13; \
	VPAND        Y15, Y13, Y13; \
	SHH          $NH, Y5, Y10; \
	VPAND        Y6, Y10, Y10; \
	VPOR         Y10, Y13, Y13; \
	VPMADDUBSW   X+32(SI), Y13, Y13; \
	VPBROADCASTD S1(SP), Y10; \
	VPMADDWD     Y10, Y13, Y13; \
	VPADDD       Y13, Y12, Y12

#define Q5KROW(P, ACC) \
	KSCALES(P); \
	VMOVDQU 16(P), Y5; \
	Q5KPAIR(P, 0, 0, 16, 20, VPSLLW, 4, VPSLLW, 3); \
	Q5KPAIR(P, 32, 64, 24, 28, VPSLLW, 2, VPSLLW, 1); \
	Q5KPAIR(P, 64, 128, 32, 36, VPSRLW, 0, VPSRLW, 1); \
	Q5KPAIR(P, 96, 192, 40, 44, VPSRLW, 2, VPSRLW, 3); \
	KFINISH(P, ACC)

// Q6GROUP adds group k of half h (the 6-bit quants built in Y7, pair row
// R of q6shuf<>, activations at X(SI)) to the int32 sums in Y12.
#define Q6GROUP(X, R) \
	VPMADDUBSW X(SI), Y7, Y7; \
	VPSHUFB    q6shuf<>+R(SB), X4, X8; \
	VPMOVSXBW  X8, Y8; \
	VPMADDWD   Y8, Y7, Y7; \
	VPADDD     Y7, Y12, Y12


#define Q6KROW(P, ACC) \
	VMOVDQU      192(P), X4; \
	VPXOR        Y12, Y12, Y12; \
	Q6HALF(P, 0, Q6GROUP); \
	Q6HALF(P, 1, Q6GROUP); \
	VPMOVSXBW    X4, Y11; \
	VPMADDWD     256(SI), Y11, Y11; \
	VPSLLD       $5, Y11, Y11; \
	VPSUBD       Y11, Y12, Y12; \
	VCVTDQ2PS    Y12, Y12; \
	MOVWLZX      208(P), AX; \
	VMOVD        AX, X13; \
	VCVTPH2PS    X13, X13; \
	VMULSS       288(SI), X13, X13; \
	VBROADCASTSS X13, Y13; \
	VFMADD231PS  Y13, Y12, ACC



// Q3_K (lowk_amd64.h): the block's quants meet x and their scales group
// by group as Q6_K's do (Q6GROUP); the -4 offset is then subtracted as
// 4 times the scales against the 16-value sums, and the int32 sums
// (Y12) times d*dx added to ACC. Y15 holds 0x03 bytes, Y14 0x04 bytes.
#define Q3KROW(P, ACC) \
	Q3SCALES(P); \
	VPXOR        Y12, Y12, Y12; \
	Q3QUANTS(P, Q6GROUP); \
	VPMOVSXBW    X4, Y11; \
	VPMADDWD     256(SI), Y11, Y11; \
	VPSLLD       $2, Y11, Y11; \
	VPSUBD       Y11, Y12, Y12; \
	VCVTDQ2PS    Y12, Y12; \
	MOVWLZX      108(P), AX; \
	VMOVD        AX, X13; \
	VCVTPH2PS    X13, X13; \
	VMULSS       288(SI), X13, X13; \
	VBROADCASTSS X13, Y13; \
	VFMADD231PS  Y13, Y12, ACC

// Q2_K (lowk_amd64.h): the quants meet x and their scales group by group
// as Q6_K's do (Q6GROUP: the 4-bit scales are non-negative, so sign
// extension widens them as well), the mins the 16-value sums (Y11); then
// KFINISH's steps with d and dmin at 80(P), read as one dword (VCVTPH2PS
// from memory would read 8 bytes, past the last block of a matrix). Y15
// holds 0x03 bytes.
#define Q2KROW(P, ACC) \
	Q2SCALES(P); \
	VPMADDWD     256(SI), Y11, Y11; \
	VPXOR        Y12, Y12, Y12; \
	Q2QUANTS(P, Q6GROUP); \
	VCVTDQ2PS    Y12, Y12; \
	VCVTDQ2PS    Y11, Y11; \
	MOVL         80(P), AX; \
	VMOVD        AX, X13; \
	VCVTPH2PS    X13, X13; \
	VBROADCASTSS 288(SI), X14; \
	VMULPS       X14, X13, X13; \
	VMOVSHDUP    X13, X14; \
	VBROADCASTSS X13, Y13; \
	VBROADCASTSS X14, Y14; \
	VFMADD231PS  Y13, Y12, ACC; \
	VFNMADD231PS Y14, Y11, ACC

// The kernels: the macros above are all defined before any TEXT so that
// go vet checks each stack offset against its own function's frame.

// func q4_Kx4(w0, w1, w2, w3, xa unsafe.Pointer, n int, out *[8]float32)
TEXT ·q4_Kx4(SB), NOSPLIT, $48-56
	LOADARGSI
	ZEROACC
	MOVL         $0x0f0f0f0f, AX
	MOVL         AX, 0(SP)
	VPBROADCASTD 0(SP), Y15
	PFNEXT

q4kloop:
	PF4L(0)
	PF4L(256)
	PREFETCHT0 512(R13)
	ADDQ       $576, R13
	Q4KROW(R8, Y0)
	Q4KROW(R9, Y1)
	Q4KROW(R10, Y2)
	Q4KROW(R11, Y3)
	ADDQ $144, R8
	ADDQ $144, R9
	ADDQ $144, R10
	ADDQ $144, R11
	ADDQ $304, SI
	DECQ CX
	JNZ  q4kloop

	HSUMI4((DI))
	VZEROUPPER
	RET

// func q5_Kx4(w0, w1, w2, w3, xa unsafe.Pointer, n int, out *[8]float32)
TEXT ·q5_Kx4(SB), NOSPLIT, $48-56
	LOADARGSI
	ZEROACC
	MOVL         $0x0f0f0f0f, AX
	MOVL         AX, 0(SP)
	VPBROADCASTD 0(SP), Y15
	MOVL         $0x10101010, AX
	MOVL         AX, 0(SP)
	VPBROADCASTD 0(SP), Y6
	PFNEXT

q5kloop:
	PF4L(0)
	PF4L(256)
	PREFETCHT0 512(R13)
	PREFETCHT0 576(R13)
	PREFETCHT0 640(R13)
	ADDQ       $704, R13
	Q5KROW(R8, Y0)
	Q5KROW(R9, Y1)
	Q5KROW(R10, Y2)
	Q5KROW(R11, Y3)
	ADDQ $176, R8
	ADDQ $176, R9
	ADDQ $176, R10
	ADDQ $176, R11
	ADDQ $304, SI
	DECQ CX
	JNZ  q5kloop

	HSUMI4((DI))
	VZEROUPPER
	RET

// func q6_Kx4(w0, w1, w2, w3, xa unsafe.Pointer, n int, out *[8]float32)
TEXT ·q6_Kx4(SB), NOSPLIT, $8-56
	LOADARGSI
	ZEROACC
	MOVL         $0x0f0f0f0f, AX
	MOVL         AX, 0(SP)
	VPBROADCASTD 0(SP), Y15
	MOVL         $0x30303030, AX
	MOVL         AX, 0(SP)
	VPBROADCASTD 0(SP), Y14
	PFNEXT

q6kloop:
	PF4L(0)
	PF4L(256)
	PF4L(512)
	PREFETCHT0 768(R13)
	PREFETCHT0 832(R13)
	ADDQ       $840, R13
	Q6KROW(R8, Y0)
	Q6KROW(R9, Y1)
	Q6KROW(R10, Y2)
	Q6KROW(R11, Y3)
	ADDQ $210, R8
	ADDQ $210, R9
	ADDQ $210, R10
	ADDQ $210, R11
	ADDQ $304, SI
	DECQ CX
	JNZ  q6kloop

	HSUMI4((DI))
	VZEROUPPER
	RET

// func q3_Kx4(w0, w1, w2, w3, xa unsafe.Pointer, n int, out *[8]float32)
TEXT ·q3_Kx4(SB), NOSPLIT, $0-56
	LOADARGSI
	ZEROACC
	VPBROADCASTD lowk<>+64(SB), Y15
	VPBROADCASTD lowk<>+68(SB), Y14
	PFNEXT

q3kloop:
	PF4L(0)
	PREFETCHT0 256(R13)
	PREFETCHT0 320(R13)
	PREFETCHT0 384(R13)
	ADDQ       $440, R13
	Q3KROW(R8, Y0)
	Q3KROW(R9, Y1)
	Q3KROW(R10, Y2)
	Q3KROW(R11, Y3)
	ADDQ $110, R8
	ADDQ $110, R9
	ADDQ $110, R10
	ADDQ $110, R11
	ADDQ $304, SI
	DECQ CX
	JNZ  q3kloop

	HSUMI4((DI))
	VZEROUPPER
	RET

// func q2_Kx4(w0, w1, w2, w3, xa unsafe.Pointer, n int, out *[8]float32)
TEXT ·q2_Kx4(SB), NOSPLIT, $0-56
	LOADARGSI
	ZEROACC
	VPBROADCASTD lowk<>+64(SB), Y15
	PFNEXT

q2kloop:
	PF4L(0)
	PREFETCHT0 256(R13)
	PREFETCHT0 320(R13)
	ADDQ       $336, R13
	Q2KROW(R8, Y0)
	Q2KROW(R9, Y1)
	Q2KROW(R10, Y2)
	Q2KROW(R11, Y3)
	ADDQ $84, R8
	ADDQ $84, R9
	ADDQ $84, R10
	ADDQ $84, R11
	ADDQ $304, SI
	DECQ CX
	JNZ  q2kloop

	HSUMI4((DI))
	VZEROUPPER
	RET
