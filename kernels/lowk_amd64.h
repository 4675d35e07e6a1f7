// Shared by the AVX2 Q3_K and Q2_K kernels (intdot_k_amd64.s,
// intdot_kx2_amd64.s), after q6k_amd64.h (their sub-block scales are
// picked by its q6shuf<> rows, as Q6_K's are): the scale unpacking and
// the quant building of one half super-block, which calls GROUP(X, R) for
// each of its four 32-weight groups, as Q6HALF does.
//
// Both types keep 2-bit fields in 32 bytes per half h: field j of byte l
// is weight 128h+32j+l, of sub-block 8h+2j+l/16, so group j of half h
// meets the activations at 128h+32j and the scales of q6shuf<> row 4h+j
// (byte offset 64h+16j) exactly as Q6_K's group k does.

// lowk<>: 0x0F bytes; the dword shifts 0, 2, 4, 6; 0x30 bytes; 0x20
// bytes; 0x03 bytes; 0x04 bytes.
DATA lowk<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA lowk<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA lowk<>+16(SB)/8, $0x0000000200000000
DATA lowk<>+24(SB)/8, $0x0000000600000004
DATA lowk<>+32(SB)/8, $0x3030303030303030
DATA lowk<>+40(SB)/8, $0x3030303030303030
DATA lowk<>+48(SB)/8, $0x2020202020202020
DATA lowk<>+56(SB)/8, $0x2020202020202020
DATA lowk<>+64(SB)/4, $0x03030303
DATA lowk<>+68(SB)/4, $0x04040404
GLOBL lowk<>(SB), RODATA|NOPTR, $72

// Q3_K block (110 bytes): hmask[32] at 0, the 2-bit quants at 32 (half h
// at 32+32h), 12 bytes of packed 6-bit scales at 96, d (half) at 108.
// Weight l of group j of half h is its 2-bit field with bit 4h+j of
// hmask[l] as bit 2: q in 0..7, the weight q-4. The unsigned q meet x by
// VPMADDUBSW and their two sub-blocks' signed scales by VPMADDWD; the -4
// is subtracted once per block as 4 times the scales against the
// activation's 16-value sums, as Q6_K's -32.

// Q3SCALES unpacks the block at P's sixteen scales into the int8 bytes of
// X4: byte j is (low nibble of byte j%8, its high nibble for j >= 8) |
// (bits 2(j/4)..+1 of byte 8+j%4) << 4, minus 32. Uses X6.
#define Q3SCALES(P) \
	VMOVQ        96(P), X4; \
	VPSRLW       $4, X4, X6; \
	VPUNPCKLQDQ  X6, X4, X4; \
	VPAND        lowk<>+0(SB), X4, X4; \
	VPBROADCASTD 104(P), X6; \
	VPSRLVD      lowk<>+16(SB), X6, X6; \
	VPSLLD       $4, X6, X6; \
	VPAND        lowk<>+32(SB), X6, X6; \
	VPOR         X6, X4, X4; \
	VPSUBB       lowk<>+48(SB), X4, X4

// Q3HALF builds the quants of half H of the block at P in Y7, a group at
// a time, and hands each to GROUP(activation offset, q6shuf<> row
// offset). Y9 holds hmask shifted right by 4H (the caller shifts it
// between the halves), so group j's bit is bit j: moved to bit 2 by a
// word shift and masked by Y14 (0x04 bytes); Y15 holds 0x03 bytes. Uses
// Y5, Y8.
#define Q3HALF(P, H, GROUP) \
	VMOVDQU   32+32*H(P), Y5; \
	VPAND     Y15, Y5, Y7; \
	VPSLLW    $2, Y9, Y8; \
	VPAND     Y14, Y8, Y8; \
	VPOR      Y8, Y7, Y7; \
	GROUP(128*H, 64*H); \
	VPSRLW    $2, Y5, Y7; \
	VPAND     Y15, Y7, Y7; \
	VPSLLW    $1, Y9, Y8; \
	VPAND     Y14, Y8, Y8; \
	VPOR      Y8, Y7, Y7; \
	GROUP(128*H+32, 64*H+16); \
	VPSRLW    $4, Y5, Y7; \
	VPAND     Y15, Y7, Y7; \
	VPAND     Y14, Y9, Y8; \
	VPOR      Y8, Y7, Y7; \
	GROUP(128*H+64, 64*H+32); \
	VPSRLW    $6, Y5, Y7; \
	VPAND     Y15, Y7, Y7; \
	VPSRLW    $1, Y9, Y8; \
	VPAND     Y14, Y8, Y8; \
	VPOR      Y8, Y7, Y7; \
	GROUP(128*H+96, 64*H+48)

// Q3QUANTS runs Q3HALF over both halves of the block at P.
#define Q3QUANTS(P, GROUP) \
	VMOVDQU   (P), Y9; \
	Q3HALF(P, 0, GROUP); \
	VPSRLW    $4, Y9, Y9; \
	Q3HALF(P, 1, GROUP)

// Q2_K block (84 bytes): 16 scale bytes at 0 (sub-block s's scale in the
// low nibble, its min in the high one), the 2-bit quants at 16 (half h at
// 16+32h), d and dmin (halves) at 80 and 82. The quants (0..3) meet x
// by VPMADDUBSW and their sub-blocks' scales by VPMADDWD; the mins meet
// the activation's 16-value sums once per block, for dmin*dx to
// subtract.

// Q2SCALES unpacks the block at P's sixteen scales into the bytes of X4
// and its mins into the words of Y11. Uses X6.
#define Q2SCALES(P) \
	VMOVDQU   (P), X6; \
	VPAND     lowk<>+0(SB), X6, X4; \
	VPSRLW    $4, X6, X6; \
	VPAND     lowk<>+0(SB), X6, X6; \
	VPMOVZXBW X6, Y11

// Q2HALF builds the quants of half H of the block at P in Y7, a group at
// a time, and hands each to GROUP(activation offset, q6shuf<> row
// offset), as Q3HALF does; Q2QUANTS runs it over both halves. Y15 holds
// 0x03 bytes. Uses Y5.
#define Q2HALF(P, H, GROUP) \
	VMOVDQU   16+32*H(P), Y5; \
	VPAND     Y15, Y5, Y7; \
	GROUP(128*H, 64*H); \
	VPSRLW    $2, Y5, Y7; \
	VPAND     Y15, Y7, Y7; \
	GROUP(128*H+32, 64*H+16); \
	VPSRLW    $4, Y5, Y7; \
	VPAND     Y15, Y7, Y7; \
	GROUP(128*H+64, 64*H+32); \
	VPSRLW    $6, Y5, Y7; \
	VPAND     Y15, Y7, Y7; \
	GROUP(128*H+96, 64*H+48)

#define Q2QUANTS(P, GROUP) \
	Q2HALF(P, 0, GROUP); \
	Q2HALF(P, 1, GROUP)
