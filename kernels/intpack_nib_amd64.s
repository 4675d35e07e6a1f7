//go:build amd64 && !purego

#include "textflag.h"
#include "intpack_amd64.h"

// The kernels of the legacy nibble types over packed weights (pack.go;
// the scheme and the registers are intpack_amd64.h's), Q4_0 for now. A
// block's four nibble columns are unpacked once, for every activation row
// of the call: the low nibbles of column q (values 4q..4q+3) into Z16+q,
// the high ones (values 16+4q..16+4q+3) into Z20+q, so that register c
// holds values 4c..4c+3 as DOT8 wants. The quants stay unsigned (0..15):
// Q4_0 starts each sum at -8 times the activation's quant sum.
//
// Constants: Z30 0x0F bytes.

#define NIBSETUP \
	MOVL $0x0f0f0f0f, AX; \
	VPBROADCASTD AX, Z30

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

// A block's scales, its weights, and the step past both.
#define Q4_0COLS \
	VCVTPH2PS (R8), Z24; \
	NIBBLES; \
	ADDQ $32, R8; \
	ADDQ $256, R9

#define Q4_0ROW(ZI, ZF, A) ROWOFF(3, ZI, ZF, A)

// func q4_0p16x1(w unsafe.Pointer, quant uintptr, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)
TEXT ·q4_0p16x1(SB), NOSPLIT, $0-64
	PACKED(NIBSETUP, Q4_0COLS, Q4_0ROW, ZERO1, ROWS1, STORE1, q4_0p16x1loop)

// func q4_0p16x2(w unsafe.Pointer, quant uintptr, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)
TEXT ·q4_0p16x2(SB), NOSPLIT, $0-64
	PACKED(NIBSETUP, Q4_0COLS, Q4_0ROW, ZERO2, ROWS2, STORE2, q4_0p16x2loop)

// func q4_0p16x4(w unsafe.Pointer, quant uintptr, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)
TEXT ·q4_0p16x4(SB), NOSPLIT, $0-64
	PACKED(NIBSETUP, Q4_0COLS, Q4_0ROW, ZERO4, ROWS4, STORE4, q4_0p16x4loop)

// func q4_0p16x8(w unsafe.Pointer, quant uintptr, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)
TEXT ·q4_0p16x8(SB), NOSPLIT, $0-64
	PACKED(NIBSETUP, Q4_0COLS, Q4_0ROW, ZERO8, ROWS8, STORE8, q4_0p16x8loop)
