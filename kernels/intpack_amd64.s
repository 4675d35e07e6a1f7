//go:build amd64 && !purego

#include "textflag.h"
#include "intpack_amd64.h"

// The Q8_0 kernels over packed weights (pack_layout.go; the scheme and the
// registers are intpack_amd64.h's): eight four-byte quant columns a block,
// loaded as they are. The packed quants are the weights plus 128, so the
// sum starts at -128 times the activation's quant sum.

// Q8COLS loads a block's scales and quant columns and steps past it.
#define Q8COLS \
	VCVTPH2PS (R8), Z24; \
	VMOVDQU32 (R9), Z16; \
	VMOVDQU32 64(R9), Z17; \
	VMOVDQU32 128(R9), Z18; \
	VMOVDQU32 192(R9), Z19; \
	VMOVDQU32 256(R9), Z20; \
	VMOVDQU32 320(R9), Z21; \
	VMOVDQU32 384(R9), Z22; \
	VMOVDQU32 448(R9), Z23; \
	ADDQ $32, R8; \
	ADDQ $512, R9

#define Q8ROW(ZI, ZF, A) ROWOFF(ZI, ZF, A)

// Q8_0 needs no constants.
#define Q8SETUP OFFSET(7)

// func q8_0p16x1(w unsafe.Pointer, quant uintptr, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)
TEXT ·q8_0p16x1(SB), NOSPLIT, $0-64
	PACKED(Q8SETUP, Q8COLS, Q8ROW, ZERO1, ROWS1, STORE1, q8_0p16x1loop)

// func q8_0p16x2(w unsafe.Pointer, quant uintptr, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)
TEXT ·q8_0p16x2(SB), NOSPLIT, $0-64
	PACKED(Q8SETUP, Q8COLS, Q8ROW, ZERO2, ROWS2, STORE2, q8_0p16x2loop)

// func q8_0p16x4(w unsafe.Pointer, quant uintptr, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)
TEXT ·q8_0p16x4(SB), NOSPLIT, $0-64
	PACKED(Q8SETUP, Q8COLS, Q8ROW, ZERO4, ROWS4, STORE4, q8_0p16x4loop)

// func q8_0p16x8(w unsafe.Pointer, quant uintptr, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)
TEXT ·q8_0p16x8(SB), NOSPLIT, $0-64
	PACKED(Q8SETUP, Q8COLS, Q8ROW, ZERO8, ROWS8, STORE8, q8_0p16x8loop)
