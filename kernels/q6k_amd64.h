// Shared by the Q6_K kernels (intdot_k_amd64.s, intdot_kx2_amd64.s): the
// scale-shuffle table and the unpacking of one half super-block, which calls
// GROUP(X, R) for each of its four 32-weight groups (the one- and two-row
// kernels differ only in that macro).

// Q6_K: per 128-weight half h, the 32 bytes A = ql[64h:], B = ql[64h+32:]
// and H = qh[32h:] hold four 32-weight groups k: low nibbles of A (k=0)
// and B (k=1), high nibbles of A (k=2) and B (k=3), with bits 4-5 from H
// at shift 2k. The unsigned 6-bit quants (0..63) meet x by VPMADDUBSW and
// the two 16-weight sub-blocks of each group their int8 scales by
// VPMADDWD (scales picked by VPSHUFB with q6shuf<> row 4h+k, sign
// extended); the -32 offset is subtracted once per block as 32 times the
// scales against the activation's 16-value sums. Y15 holds 0x0F bytes,
// Y14 0x30 bytes, X4 the block's 16 scales.

DATA q6shuf<>+0(SB)/8, $0x0000000000000000
DATA q6shuf<>+8(SB)/8, $0x0101010101010101
DATA q6shuf<>+16(SB)/8, $0x0202020202020202
DATA q6shuf<>+24(SB)/8, $0x0303030303030303
DATA q6shuf<>+32(SB)/8, $0x0404040404040404
DATA q6shuf<>+40(SB)/8, $0x0505050505050505
DATA q6shuf<>+48(SB)/8, $0x0606060606060606
DATA q6shuf<>+56(SB)/8, $0x0707070707070707
DATA q6shuf<>+64(SB)/8, $0x0808080808080808
DATA q6shuf<>+72(SB)/8, $0x0909090909090909
DATA q6shuf<>+80(SB)/8, $0x0a0a0a0a0a0a0a0a
DATA q6shuf<>+88(SB)/8, $0x0b0b0b0b0b0b0b0b
DATA q6shuf<>+96(SB)/8, $0x0c0c0c0c0c0c0c0c
DATA q6shuf<>+104(SB)/8, $0x0d0d0d0d0d0d0d0d
DATA q6shuf<>+112(SB)/8, $0x0e0e0e0e0e0e0e0e
DATA q6shuf<>+120(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL q6shuf<>(SB), RODATA|NOPTR, $128

// Q6HALF unpacks half H of the super-block at P into Y7, a group at a
// time, and hands each to GROUP(activation offset, q6shuf<> row offset).
#define Q6HALF(P, H, GROUP) \
	VMOVDQU   64*H(P), Y5; \
	VMOVDQU   64*H+32(P), Y6; \
	VMOVDQU   128+32*H(P), Y9; \
	VPAND     Y15, Y5, Y7; \
	VPSLLW    $4, Y9, Y8; \
	VPAND     Y14, Y8, Y8; \
	VPOR      Y8, Y7, Y7; \
	GROUP(128*H, 64*H); \
	VPAND     Y15, Y6, Y7; \
	VPSLLW    $2, Y9, Y8; \
	VPAND     Y14, Y8, Y8; \
	VPOR      Y8, Y7, Y7; \
	GROUP(128*H+32, 64*H+16); \
	VPSRLW    $4, Y5, Y7; \
	VPAND     Y15, Y7, Y7; \
	VPAND     Y14, Y9, Y8; \
	VPOR      Y8, Y7, Y7; \
	GROUP(128*H+64, 64*H+32); \
	VPSRLW    $4, Y6, Y7; \
	VPAND     Y15, Y7, Y7; \
	VPSRLW    $2, Y9, Y8; \
	VPAND     Y14, Y8, Y8; \
	VPOR      Y8, Y7, Y7; \
	GROUP(128*H+96, 64*H+48)
