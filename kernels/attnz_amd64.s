//go:build amd64 && !purego

#include "textflag.h"

// AVX-512 forms of a prefill chunk's attention (attn.go), used where the
// CPU has the avx512 path: four query rows of one head against the cached
// keys and values, sixteen head columns to a register.

// func attnScores4Z(q *[4]unsafe.Pointer, out, keys *float32, stride, hs, n int)
//
// n (a multiple of 4) keys, four at a time (SI the first, BX bytes
// apart, R12 two keys on): per chunk of 16 columns the four keys
// (Z16-Z19) meet the four query rows (R8-R11, Z20-Z23) in sixteen
// accumulators, one per (row, key), each a 16-lane partial dot. They are
// reduced together, by one transposing tree of four levels (lanes 8
// apart with VSHUFF64X2, then 4 with VSHUFF32X4, 2 and 1 with VSHUFPS):
// each level adds two registers' halves pairwise into one, so sixteen
// dots land in one register at a cost of 45 instructions for the four
// keys. The accumulators are named so that the tree leaves the dot of
// key j with row r in lane 4j+r: out's order, stored as one register.
//
// Registers: R8-R11 the query rows and SI, R12 the key pointers, all
// stepped a chunk at a time and put back after a group (AX the head's
// bytes); CX the chunks left, DX the groups left, DI out.

#define SCORECHUNK \
	VMOVUPS (SI), Z16; \
	VMOVUPS (SI)(BX*1), Z17; \
	VMOVUPS (SI)(BX*2), Z18; \
	VMOVUPS (R12)(BX*1), Z19; \
	VMOVUPS (R8), Z20; \
	VMOVUPS (R9), Z21; \
	VMOVUPS (R10), Z22; \
	VMOVUPS (R11), Z23; \
	VFMADD231PS Z20, Z16, Z0; \
	VFMADD231PS Z21, Z16, Z2; \
	VFMADD231PS Z22, Z16, Z1; \
	VFMADD231PS Z23, Z16, Z3; \
	VFMADD231PS Z20, Z17, Z8; \
	VFMADD231PS Z21, Z17, Z10; \
	VFMADD231PS Z22, Z17, Z9; \
	VFMADD231PS Z23, Z17, Z11; \
	VFMADD231PS Z20, Z18, Z4; \
	VFMADD231PS Z21, Z18, Z6; \
	VFMADD231PS Z22, Z18, Z5; \
	VFMADD231PS Z23, Z18, Z7; \
	VFMADD231PS Z20, Z19, Z12; \
	VFMADD231PS Z21, Z19, Z14; \
	VFMADD231PS Z22, Z19, Z13; \
	VFMADD231PS Z23, Z19, Z15

// PAIR(IMM1, IMM2, SHUF, A, B) sets A to SHUF(IMM1: A, B) + SHUF(IMM2: A,
// B), with Z24 scratch: one level of the reduction tree.
#define PAIR(IMM1, IMM2, SHUF, A, B) \
	SHUF $IMM2, B, A, Z24; \
	SHUF $IMM1, B, A, A; \
	VADDPS Z24, A, A

// func attnValues4ZC(o *[4]unsafe.Pointer, a, vals *float32, stride, col, n int)
//
// attnValues4Z1..4: C = 1 to 4 chunks of 16 columns from column col of
// the four rows' weighted value sums: per position (R12, BX bytes
// apart; the weights interleaved four per position at R13) the four
// rows' weights, broadcast (Z20-Z23), and the C value chunks (Z16-Z19)
// are loaded once and added, one FMA per row and chunk, into 4C
// accumulators (row r, chunk c in Z(4c+r)), in position order: per
// element the same FMAs, in the same order, as AttnValues4's Axpy per
// position. The outputs are R8-R11, from column col.

// VCHUNK loads the value chunk at OFF into ZV and adds it times the four
// rows' weights into their accumulators A0-A3.
#define VCHUNK(OFF, ZV, A0, A1, A2, A3) \
	VMOVUPS     OFF(R12), ZV; \
	VFMADD231PS Z20, ZV, A0; \
	VFMADD231PS Z21, ZV, A1; \
	VFMADD231PS Z22, ZV, A2; \
	VFMADD231PS Z23, ZV, A3

#define VPOS1 VCHUNK(0, Z16, Z0, Z1, Z2, Z3)
#define VPOS2 VPOS1; VCHUNK(64, Z17, Z4, Z5, Z6, Z7)
#define VPOS3 VPOS2; VCHUNK(128, Z18, Z8, Z9, Z10, Z11)
#define VPOS4 VPOS3; VCHUNK(192, Z19, Z12, Z13, Z14, Z15)

// VLOAD loads the four accumulators of a chunk from OFF of the four
// outputs (the sums continue from them); VPUT stores them there.
#define VLOAD(OFF, A0, A1, A2, A3) \
	VMOVUPS OFF(R8), A0; \
	VMOVUPS OFF(R9), A1; \
	VMOVUPS OFF(R10), A2; \
	VMOVUPS OFF(R11), A3

#define VPUT(OFF, A0, A1, A2, A3) \
	VMOVUPS A0, OFF(R8); \
	VMOVUPS A1, OFF(R9); \
	VMOVUPS A2, OFF(R10); \
	VMOVUPS A3, OFF(R11)

#define VLOAD1 VLOAD(0, Z0, Z1, Z2, Z3)
#define VLOAD2 VLOAD1; VLOAD(64, Z4, Z5, Z6, Z7)
#define VLOAD3 VLOAD2; VLOAD(128, Z8, Z9, Z10, Z11)
#define VLOAD4 VLOAD3; VLOAD(192, Z12, Z13, Z14, Z15)
#define VPUT1 VPUT(0, Z0, Z1, Z2, Z3)
#define VPUT2 VPUT1; VPUT(64, Z4, Z5, Z6, Z7)
#define VPUT3 VPUT2; VPUT(128, Z8, Z9, Z10, Z11)
#define VPUT4 VPUT3; VPUT(192, Z12, Z13, Z14, Z15)

// VALUES is a whole kernel of C chunks: VLOADC, VPOSC and VPUTC, the
// position loop labelled LOOP.
#define VALUES(LOAD, POS, PUT, LOOP) \
	MOVQ o+0(FP), AX; \
	MOVQ 0(AX), R8; \
	MOVQ 8(AX), R9; \
	MOVQ 16(AX), R10; \
	MOVQ 24(AX), R11; \
	MOVQ col+32(FP), AX; \
	SHLQ $2, AX; \
	ADDQ AX, R8; \
	ADDQ AX, R9; \
	ADDQ AX, R10; \
	ADDQ AX, R11; \
	MOVQ vals+16(FP), R12; \
	ADDQ AX, R12; \
	MOVQ a+8(FP), R13; \
	MOVQ stride+24(FP), BX; \
	MOVQ n+40(FP), DX; \
	LOAD; \
LOOP: \
	VBROADCASTSS (R13), Z20; \
	VBROADCASTSS 4(R13), Z21; \
	VBROADCASTSS 8(R13), Z22; \
	VBROADCASTSS 12(R13), Z23; \
	POS; \
	ADDQ BX, R12; \
	ADDQ $16, R13; \
	DECQ DX; \
	JNZ  LOOP; \
	PUT; \
	VZEROUPPER; \
	RET

TEXT ·attnScores4Z(SB), NOSPLIT, $0-48
	MOVQ q+0(FP), AX
	MOVQ 0(AX), R8
	MOVQ 8(AX), R9
	MOVQ 16(AX), R10
	MOVQ 24(AX), R11
	MOVQ out+8(FP), DI
	MOVQ keys+16(FP), SI
	MOVQ stride+24(FP), BX
	MOVQ hs+32(FP), AX
	SHLQ $2, AX
	MOVQ n+40(FP), DX
	SHRQ $2, DX

zscoregroup:
	LEAQ (SI)(BX*2), R12
	MOVQ AX, CX
	SHRQ $6, CX
	VXORPS Z0, Z0, Z0
	VXORPS Z1, Z1, Z1
	VXORPS Z2, Z2, Z2
	VXORPS Z3, Z3, Z3
	VXORPS Z4, Z4, Z4
	VXORPS Z5, Z5, Z5
	VXORPS Z6, Z6, Z6
	VXORPS Z7, Z7, Z7
	VXORPS Z8, Z8, Z8
	VXORPS Z9, Z9, Z9
	VXORPS Z10, Z10, Z10
	VXORPS Z11, Z11, Z11
	VXORPS Z12, Z12, Z12
	VXORPS Z13, Z13, Z13
	VXORPS Z14, Z14, Z14
	VXORPS Z15, Z15, Z15

zscorechunk:
	SCORECHUNK
	ADDQ $64, SI
	ADDQ $64, R12
	ADDQ $64, R8
	ADDQ $64, R9
	ADDQ $64, R10
	ADDQ $64, R11
	DECQ CX
	JNZ  zscorechunk

	SUBQ AX, SI
	SUBQ AX, R8
	SUBQ AX, R9
	SUBQ AX, R10
	SUBQ AX, R11

	// Lanes 8 apart: register s with s+8 (its 256-bit halves 0,1 then 2,3).
	PAIR(0x44, 0xee, VSHUFF64X2, Z0, Z8)
	PAIR(0x44, 0xee, VSHUFF64X2, Z1, Z9)
	PAIR(0x44, 0xee, VSHUFF64X2, Z2, Z10)
	PAIR(0x44, 0xee, VSHUFF64X2, Z3, Z11)
	PAIR(0x44, 0xee, VSHUFF64X2, Z4, Z12)
	PAIR(0x44, 0xee, VSHUFF64X2, Z5, Z13)
	PAIR(0x44, 0xee, VSHUFF64X2, Z6, Z14)
	PAIR(0x44, 0xee, VSHUFF64X2, Z7, Z15)
	// Lanes 4 apart: s with s+4 (128-bit lanes 0,2 then 1,3).
	PAIR(0x88, 0xdd, VSHUFF32X4, Z0, Z4)
	PAIR(0x88, 0xdd, VSHUFF32X4, Z1, Z5)
	PAIR(0x88, 0xdd, VSHUFF32X4, Z2, Z6)
	PAIR(0x88, 0xdd, VSHUFF32X4, Z3, Z7)
	// Lanes 2 and 1 apart, within 128-bit lanes.
	PAIR(0x44, 0xee, VSHUFPS, Z0, Z2)
	PAIR(0x44, 0xee, VSHUFPS, Z1, Z3)
	PAIR(0x88, 0xdd, VSHUFPS, Z0, Z1)
	VMOVUPS Z0, (DI)

	ADDQ $64, DI
	LEAQ (SI)(BX*4), SI
	DECQ DX
	JNZ  zscoregroup
	VZEROUPPER
	RET

TEXT ·attnValues4Z1(SB), NOSPLIT, $0-48
	VALUES(VLOAD1, VPOS1, VPUT1, zval1pos)

TEXT ·attnValues4Z2(SB), NOSPLIT, $0-48
	VALUES(VLOAD2, VPOS2, VPUT2, zval2pos)

TEXT ·attnValues4Z3(SB), NOSPLIT, $0-48
	VALUES(VLOAD3, VPOS3, VPUT3, zval3pos)

TEXT ·attnValues4Z4(SB), NOSPLIT, $0-48
	VALUES(VLOAD4, VPOS4, VPUT4, zval4pos)
