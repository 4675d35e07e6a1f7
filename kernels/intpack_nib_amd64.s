//go:build amd64 && !purego

#include "textflag.h"
#include "intpack_amd64.h"

// The kernels of the legacy 4- and 5-bit types over packed weights
// (pack_layout.go; the scheme and the registers are intpack_amd64.h's). A block's
// four nibble columns are unpacked once, for every activation row of the
// call: the low nibbles of column q (values 4q..4q+3) into Z16+q, the high
// ones (values 16+4q..16+4q+3) into Z20+q, so that register c holds values
// 4c..4c+3 as DOT8 wants; Q5's fifth bits are then shifted into bit 4 of
// each byte. The quants stay unsigned (0..15, 0..31): Q4_0 and Q5_0 start
// each sum at -8 or -16 times the activation's quant sum, the _1 types add
// their min term after it.
//
// Constants: Z30 0x0F bytes, Z29 0x10 bytes (Q5); Z28 holds a block's
// fifth bits.

#define NIBSETUP \
	MOVL $0x0f0f0f0f, AX; \
	VPBROADCASTD AX, Z30

#define NIB5SETUP \
	NIBSETUP; \
	MOVL $0x10101010, AX; \
	VPBROADCASTD AX, Z29

// Q4_0SETUP and Q5_0SETUP add ROWOFF's offset of 8 or 16.
#define Q4_0SETUP NIBSETUP; OFFSET(3)
#define Q5_0SETUP NIB5SETUP; OFFSET(4)

// NIBBLES unpacks the four nibble columns at R9 into Z16-Z23.
#define NIBBLES \
	VPANDD (R9), Z30, Z16; \
	VPSRLW $4, (R9), Z20; \
	VPANDD Z30, Z20, Z20; \
	VPANDD 64(R9), Z30, Z17; \
	VPSRLW $4, 64(R9), Z21; \
	VPANDD Z30, Z21, Z21; \
	VPANDD 128(R9), Z30, Z18; \
	VPSRLW $4, 128(R9), Z22; \
	VPANDD Z30, Z22, Z22; \
	VPANDD 192(R9), Z30, Z19; \
	VPSRLW $4, 192(R9), Z23; \
	VPANDD Z30, Z23, Z23

// FIFTH ORs the fifth bits at 256(R9) into Z16-Z23: byte j of a lane holds
// in bit q that of register q's byte j (q = 0..7), which a word shift left
// by 4-q or right by q-4 brings to bit 4 (the bit comes from the same
// byte), where Z29 picks it; VPTERNLOGD $0xf8 is dst |= Z25 & Z29.
#define FIFTH \
	VMOVDQU32 256(R9), Z28; \
	VPSLLW $4, Z28, Z25; \
	VPTERNLOGD $0xf8, Z29, Z25, Z16; \
	VPSLLW $3, Z28, Z25; \
	VPTERNLOGD $0xf8, Z29, Z25, Z17; \
	VPSLLW $2, Z28, Z25; \
	VPTERNLOGD $0xf8, Z29, Z25, Z18; \
	VPSLLW $1, Z28, Z25; \
	VPTERNLOGD $0xf8, Z29, Z25, Z19; \
	VPTERNLOGD $0xf8, Z29, Z28, Z20; \
	VPSRLW $1, Z28, Z25; \
	VPTERNLOGD $0xf8, Z29, Z25, Z21; \
	VPSRLW $2, Z28, Z25; \
	VPTERNLOGD $0xf8, Z29, Z25, Z22; \
	VPSRLW $3, Z28, Z25; \
	VPTERNLOGD $0xf8, Z29, Z25, Z23

// The blocks of each type: scales (d, and m at 32 for the _1 types), the
// weights, and the step past both.
#define Q4_0COLS \
	VCVTPH2PS (R8), Z24; \
	NIBBLES; \
	ADDQ $32, R8; \
	ADDQ $256, R9

#define Q5_0COLS \
	VCVTPH2PS (R8), Z24; \
	NIBBLES; \
	FIFTH; \
	ADDQ $32, R8; \
	ADDQ $320, R9

#define Q4_1COLS \
	VCVTPH2PS (R8), Z24; \
	VCVTPH2PS 32(R8), Z26; \
	NIBBLES; \
	ADDQ $64, R8; \
	ADDQ $256, R9

#define Q5_1COLS \
	VCVTPH2PS (R8), Z24; \
	VCVTPH2PS 32(R8), Z26; \
	NIBBLES; \
	FIFTH; \
	ADDQ $64, R8; \
	ADDQ $320, R9

#define Q4_0ROW(ZI, ZF, A) ROWOFF(ZI, ZF, A)
#define Q5_0ROW(ZI, ZF, A) ROWOFF(ZI, ZF, A)

// func q4_0p16x1(w unsafe.Pointer, quant uintptr, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)
TEXT ·q4_0p16x1(SB), NOSPLIT, $0-64
	PACKED(Q4_0SETUP, Q4_0COLS, Q4_0ROW, ZERO1, ROWS1, STORE1, q4_0p16x1loop)

// func q4_0p16x2(w unsafe.Pointer, quant uintptr, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)
TEXT ·q4_0p16x2(SB), NOSPLIT, $0-64
	PACKED(Q4_0SETUP, Q4_0COLS, Q4_0ROW, ZERO2, ROWS2, STORE2, q4_0p16x2loop)

// func q4_0p16x4(w unsafe.Pointer, quant uintptr, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)
TEXT ·q4_0p16x4(SB), NOSPLIT, $0-64
	PACKED(Q4_0SETUP, Q4_0COLS, Q4_0ROW, ZERO4, ROWS4, STORE4, q4_0p16x4loop)

// func q4_0p16x8(w unsafe.Pointer, quant uintptr, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)
TEXT ·q4_0p16x8(SB), NOSPLIT, $0-64
	PACKED(Q4_0SETUP, Q4_0COLS, Q4_0ROW, ZERO8, ROWS8, STORE8, q4_0p16x8loop)

// func q5_0p16x1(w unsafe.Pointer, quant uintptr, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)
TEXT ·q5_0p16x1(SB), NOSPLIT, $0-64
	PACKED(Q5_0SETUP, Q5_0COLS, Q5_0ROW, ZERO1, ROWS1, STORE1, q5_0p16x1loop)

// func q5_0p16x2(w unsafe.Pointer, quant uintptr, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)
TEXT ·q5_0p16x2(SB), NOSPLIT, $0-64
	PACKED(Q5_0SETUP, Q5_0COLS, Q5_0ROW, ZERO2, ROWS2, STORE2, q5_0p16x2loop)

// func q5_0p16x4(w unsafe.Pointer, quant uintptr, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)
TEXT ·q5_0p16x4(SB), NOSPLIT, $0-64
	PACKED(Q5_0SETUP, Q5_0COLS, Q5_0ROW, ZERO4, ROWS4, STORE4, q5_0p16x4loop)

// func q5_0p16x8(w unsafe.Pointer, quant uintptr, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)
TEXT ·q5_0p16x8(SB), NOSPLIT, $0-64
	PACKED(Q5_0SETUP, Q5_0COLS, Q5_0ROW, ZERO8, ROWS8, STORE8, q5_0p16x8loop)

// func q4_1p16x1(w unsafe.Pointer, quant uintptr, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)
TEXT ·q4_1p16x1(SB), NOSPLIT, $0-64
	PACKED(NIBSETUP, Q4_1COLS, ROWMIN, ZERO1, ROWS1, STORE1, q4_1p16x1loop)

// func q4_1p16x2(w unsafe.Pointer, quant uintptr, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)
TEXT ·q4_1p16x2(SB), NOSPLIT, $0-64
	PACKED(NIBSETUP, Q4_1COLS, ROWMIN, ZERO2, ROWS2, STORE2, q4_1p16x2loop)

// func q4_1p16x4(w unsafe.Pointer, quant uintptr, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)
TEXT ·q4_1p16x4(SB), NOSPLIT, $0-64
	PACKED(NIBSETUP, Q4_1COLS, ROWMIN, ZERO4, ROWS4, STORE4, q4_1p16x4loop)

// func q4_1p16x8(w unsafe.Pointer, quant uintptr, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)
TEXT ·q4_1p16x8(SB), NOSPLIT, $0-64
	PACKED(NIBSETUP, Q4_1COLS, ROWMIN, ZERO8, ROWS8, STORE8, q4_1p16x8loop)

// func q5_1p16x1(w unsafe.Pointer, quant uintptr, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)
TEXT ·q5_1p16x1(SB), NOSPLIT, $0-64
	PACKED(NIB5SETUP, Q5_1COLS, ROWMIN, ZERO1, ROWS1, STORE1, q5_1p16x1loop)

// func q5_1p16x2(w unsafe.Pointer, quant uintptr, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)
TEXT ·q5_1p16x2(SB), NOSPLIT, $0-64
	PACKED(NIB5SETUP, Q5_1COLS, ROWMIN, ZERO2, ROWS2, STORE2, q5_1p16x2loop)

// func q5_1p16x4(w unsafe.Pointer, quant uintptr, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)
TEXT ·q5_1p16x4(SB), NOSPLIT, $0-64
	PACKED(NIB5SETUP, Q5_1COLS, ROWMIN, ZERO4, ROWS4, STORE4, q5_1p16x4loop)

// func q5_1p16x8(w unsafe.Pointer, quant uintptr, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)
TEXT ·q5_1p16x8(SB), NOSPLIT, $0-64
	PACKED(NIB5SETUP, Q5_1COLS, ROWMIN, ZERO8, ROWS8, STORE8, q5_1p16x8loop)
