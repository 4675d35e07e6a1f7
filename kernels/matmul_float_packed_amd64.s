//go:build amd64 && !purego

#include "textflag.h"

// AVX-512 F32, F16 and BF16 products over packed weights (the avx512
// path; pack_layout.go's float layout): a group of sixteen consecutive weight
// rows stores, for each column c, the sixteen rows' weights side by side,
// lane i holding row 16g+i (64 bytes a column for F32, 32 for F16 and
// BF16). One load of a column and one broadcast of activation x[a][c]
// meet in one FMA that adds column c's term to the sixteen outputs of
// activation row a at once: an outer product, with no horizontal sum;
// an activation row's sixteen results are one masked store.
//
// Order: every output is one lane of one accumulator, and every kernel
// here adds its terms in column order, one FMA a column, starting from
// +0 or from the partial sum a previous call stored at out (the caller
// splits a row into column chunks; the float32 it stores is the
// accumulator as it was, so a chunk boundary changes no bit). So an
// output depends only on its weight row and its activation row, never on
// the kernel, the number of activation rows in the call, the chunking or
// the other rows of the batch: a row's result is bit-identical alone or
// in any batch (TestFloatBatchInvisible).
//
// Kernels: pGxA multiplies G = 4, 2 or 1 groups (64, 32 or 16 weight
// rows, group j gs*j bytes after the first) by A activation rows (xs
// bytes apart; A = 1..3 for four groups, 1..12 for two and one) over n
// columns, into G*A accumulators (at most 24 of the 32 registers). The
// caller gives a batch of one to three four groups a call, so that even
// one activation row has four FMA chains, and wider batches two (the
// one-group kernels serve a range's odd last group). Per column the
// four- and two-group kernels load G weight columns and broadcast each
// activation once into a register that feeds the G groups' FMAs (G + A
// loads for G*A FMAs); VFMADD231PS.BCST would load each activation G
// times, and a 2x12 loop in L1 ran 0.9x as fast that way on a quiet core,
// 0.7x with another thread on it. The one-group kernels, where it is one
// load either way, take the broadcast as the FMA's memory operand.
//
// Registers: R8 the weight cursor (group 0; group 1 at (R8)(R9*1), 2 at
// (R8)(R9*2), 3 at R10), R9 gs, DX and DI the prefetch cursors (group 0
// and group 3) during the loop; SI activation rows 0-5, R11 rows 6-11 (SI
// plus six strides), BX xs, R12 three strides, R13 five; CX the 4-column
// steps, AX the columns left after them. Before and after the loop DI is
// out (activation row a's sixteen outputs of group j at out + a*ostride
// + 64j) and DX ostride. K1 holds the lanes of group 0 that are stored,
// K2 those of the last group (a range cut inside a group, a matrix's last
// rows); the four-group kernels' middle groups are whole. Z0-Z11
// accumulate group 0's activation rows 0-11 and Z12-Z23 group 1's (two
// groups), or Z0-Z11 activation row a's four groups at Z4a..Z4a+3 (four
// groups); Z24-Z25 (Z24-Z27) hold a column of each group's weights, the
// registers after them the broadcast activations.
//
// Prefetch: each pass of four columns asks for the lines of four columns
// of each group at pf, one request per 64-byte line, pf being pAhead
// bytes ahead of the weights for the first activation block of a column
// chunk (the one that streams them from memory) and the weights
// themselves for the others (matmul_float_packed_amd64.go's pAhead says what it gains).
//
// Zeros and signs: an accumulator starts at +0 (or a stored partial sum)
// and the loads past a matrix's last row are of zero weights in lanes that
// are never stored, so no masked-off lane reaches memory.

// Xa(D) is activation row a's value D bytes past the cursors.
#define X0(D) D(SI)
#define X1(D) D(SI)(BX*1)
#define X2(D) D(SI)(BX*2)
#define X3(D) D(SI)(R12*1)
#define X4(D) D(SI)(BX*4)
#define X5(D) D(SI)(R13*1)
#define X6(D) D(R11)
#define X7(D) D(R11)(BX*1)
#define X8(D) D(R11)(BX*2)
#define X9(D) D(R11)(R12*1)
#define X10(D) D(R11)(BX*4)
#define X11(D) D(R11)(R13*1)

// Weight loads: sixteen weights of one column into DST, as float32.
// WB16 widens each bfloat16 to a float32's high half (exact).
#define WF32(ADDR, DST) VMOVUPS ADDR, DST
#define WF16(ADDR, DST) VCVTPH2PS ADDR, DST
#define WB16(ADDR, DST) VPMOVZXWD ADDR, DST; VPSLLD $16, DST, DST

// R2(XA, T, A0, A1) adds activation XA times the column in Z24 (group 0)
// to A0 and times Z25 (group 1) to A1, through broadcast register T;
// R1(XA, A0) adds XA times Z24 to A0.
#define R2(XA, T, A0, A1) \
	VBROADCASTSS XA, T; \
	VFMADD231PS  T, Z24, A0; \
	VFMADD231PS  T, Z25, A1

#define R1(XA, A0) VFMADD231PS.BCST XA, Z24, A0

// R4(XA, T, A0, A1, A2, A3) is R2 for four groups, their columns in
// Z24-Z27.
#define R4(XA, T, A0, A1, A2, A3) \
	VBROADCASTSS XA, T; \
	VFMADD231PS  T, Z24, A0; \
	VFMADD231PS  T, Z25, A1; \
	VFMADD231PS  T, Z26, A2; \
	VFMADD231PS  T, Z27, A3

// F2xA(D), F4xA(D) and F1xA(D) are one column's FMAs for A activation
// rows, the activations D bytes on.
#define F2x1(D) R2(X0(D), Z26, Z0, Z12)
#define F2x2(D) F2x1(D); R2(X1(D), Z27, Z1, Z13)
#define F2x3(D) F2x2(D); R2(X2(D), Z28, Z2, Z14)
#define F2x4(D) F2x3(D); R2(X3(D), Z29, Z3, Z15)
#define F2x5(D) F2x4(D); R2(X4(D), Z30, Z4, Z16)
#define F2x6(D) F2x5(D); R2(X5(D), Z31, Z5, Z17)
#define F2x7(D) F2x6(D); R2(X6(D), Z26, Z6, Z18)
#define F2x8(D) F2x7(D); R2(X7(D), Z27, Z7, Z19)
#define F2x9(D) F2x8(D); R2(X8(D), Z28, Z8, Z20)
#define F2x10(D) F2x9(D); R2(X9(D), Z29, Z9, Z21)
#define F2x11(D) F2x10(D); R2(X10(D), Z30, Z10, Z22)
#define F2x12(D) F2x11(D); R2(X11(D), Z31, Z11, Z23)

#define F4x1(D) R4(X0(D), Z28, Z0, Z1, Z2, Z3)
#define F4x2(D) F4x1(D); R4(X1(D), Z29, Z4, Z5, Z6, Z7)
#define F4x3(D) F4x2(D); R4(X2(D), Z30, Z8, Z9, Z10, Z11)

#define F1x1(D) R1(X0(D), Z0)
#define F1x2(D) F1x1(D); R1(X1(D), Z1)
#define F1x3(D) F1x2(D); R1(X2(D), Z2)
#define F1x4(D) F1x3(D); R1(X3(D), Z3)
#define F1x5(D) F1x4(D); R1(X4(D), Z4)
#define F1x6(D) F1x5(D); R1(X5(D), Z5)
#define F1x7(D) F1x6(D); R1(X6(D), Z6)
#define F1x8(D) F1x7(D); R1(X7(D), Z7)
#define F1x9(D) F1x8(D); R1(X8(D), Z8)
#define F1x10(D) F1x9(D); R1(X9(D), Z9)
#define F1x11(D) F1x10(D); R1(X10(D), Z10)
#define F1x12(D) F1x11(D); R1(X11(D), Z11)

// A2xA(OP), A4xA(OP) and A1xA(OP) apply OP to the accumulators of A
// activation rows, in row order: each row's (group 0's, group 1's), its
// four groups' or group 0's.
#define A2x1(OP) OP(Z0, Z12)
#define A2x2(OP) A2x1(OP); OP(Z1, Z13)
#define A2x3(OP) A2x2(OP); OP(Z2, Z14)
#define A2x4(OP) A2x3(OP); OP(Z3, Z15)
#define A2x5(OP) A2x4(OP); OP(Z4, Z16)
#define A2x6(OP) A2x5(OP); OP(Z5, Z17)
#define A2x7(OP) A2x6(OP); OP(Z6, Z18)
#define A2x8(OP) A2x7(OP); OP(Z7, Z19)
#define A2x9(OP) A2x8(OP); OP(Z8, Z20)
#define A2x10(OP) A2x9(OP); OP(Z9, Z21)
#define A2x11(OP) A2x10(OP); OP(Z10, Z22)
#define A2x12(OP) A2x11(OP); OP(Z11, Z23)

#define A4x1(OP) OP(Z0, Z1, Z2, Z3)
#define A4x2(OP) A4x1(OP); OP(Z4, Z5, Z6, Z7)
#define A4x3(OP) A4x2(OP); OP(Z8, Z9, Z10, Z11)

#define A1x1(OP) OP(Z0)
#define A1x2(OP) A1x1(OP); OP(Z1)
#define A1x3(OP) A1x2(OP); OP(Z2)
#define A1x4(OP) A1x3(OP); OP(Z3)
#define A1x5(OP) A1x4(OP); OP(Z4)
#define A1x6(OP) A1x5(OP); OP(Z5)
#define A1x7(OP) A1x6(OP); OP(Z6)
#define A1x8(OP) A1x7(OP); OP(Z7)
#define A1x9(OP) A1x8(OP); OP(Z8)
#define A1x10(OP) A1x9(OP); OP(Z9)
#define A1x11(OP) A1x10(OP); OP(Z10)
#define A1x12(OP) A1x11(OP); OP(Z11)

// The accumulator operations: clear; load (the lanes of K1 for group 0
// and K2 for the last, zeros elsewhere; the four-group kernels' middle
// groups whole) the partial sums of one activation row at DI and step DI
// to the next row's; store them likewise.
#define CLR2(A0, A1) VPXORD A0, A0, A0; VPXORD A1, A1, A1
#define CLR1(A0) VPXORD A0, A0, A0
#define CLR4(A0, A1, A2, A3) CLR2(A0, A1); CLR2(A2, A3)

#define GET4(A0, A1, A2, A3) \
	VMOVUPS.Z (DI), K1, A0; \
	VMOVUPS   64(DI), A1; \
	VMOVUPS   128(DI), A2; \
	VMOVUPS.Z 192(DI), K2, A3; \
	ADDQ      DX, DI

#define PUT4(A0, A1, A2, A3) \
	VMOVUPS A0, K1, (DI); \
	VMOVUPS A1, 64(DI); \
	VMOVUPS A2, 128(DI); \
	VMOVUPS A3, K2, 192(DI); \
	ADDQ    DX, DI

#define GET2(A0, A1) \
	VMOVUPS.Z (DI), K1, A0; \
	VMOVUPS.Z 64(DI), K2, A1; \
	ADDQ      DX, DI

#define GET1(A0) \
	VMOVUPS.Z (DI), K1, A0; \
	ADDQ      DX, DI

#define PUT2(A0, A1) \
	VMOVUPS A0, K1, (DI); \
	VMOVUPS A1, K2, 64(DI); \
	ADDQ    DX, DI

#define PUT1(A0) \
	VMOVUPS A0, K1, (DI); \
	ADDQ    DX, DI

// STEP2, STEP4 and STEP1(LW, F, D, WD) are one column: the weights WD
// bytes on (loaded by LW), the activations D bytes on, F its FMAs.
#define STEP2(LW, F, D, WD) \
	LW(WD(R8), Z24); \
	LW(WD(R8)(R9*1), Z25); \
	F(D)

#define STEP4(LW, F, D, WD) \
	LW(WD(R8), Z24); \
	LW(WD(R8)(R9*1), Z25); \
	LW(WD(R8)(R9*2), Z26); \
	LW(WD(R10), Z27); \
	F(D)

#define STEP1(LW, F, D, WD) \
	LW(WD(R8), Z24); \
	F(D)

// The prefetches of a 4-column pass: PFGx4 four lines of each of G
// groups (F32: 256 bytes a group), PFGx2 two (F16, BF16).
#define PF1x4 \
	PREFETCHT0 (DX); \
	PREFETCHT0 64(DX); \
	PREFETCHT0 128(DX); \
	PREFETCHT0 192(DX)

#define PF2x4 \
	PF1x4; \
	PREFETCHT0 (DX)(R9*1); \
	PREFETCHT0 64(DX)(R9*1); \
	PREFETCHT0 128(DX)(R9*1); \
	PREFETCHT0 192(DX)(R9*1)

#define PF1x2 \
	PREFETCHT0 (DX); \
	PREFETCHT0 64(DX)

#define PF2x2 \
	PF1x2; \
	PREFETCHT0 (DX)(R9*1); \
	PREFETCHT0 64(DX)(R9*1)

#define PF4x4 \
	PF2x4; \
	PREFETCHT0 (DX)(R9*2); \
	PREFETCHT0 64(DX)(R9*2); \
	PREFETCHT0 128(DX)(R9*2); \
	PREFETCHT0 192(DX)(R9*2); \
	PREFETCHT0 (DI); \
	PREFETCHT0 64(DI); \
	PREFETCHT0 128(DI); \
	PREFETCHT0 192(DI)

#define PF4x2 \
	PF2x2; \
	PREFETCHT0 (DX)(R9*2); \
	PREFETCHT0 64(DX)(R9*2); \
	PREFETCHT0 (DI); \
	PREFETCHT0 64(DI)

// PARGS loads a kernel's arguments but out's, its stride and the count.
#define PARGS \
	MOVQ   w+0(FP), R8; \
	MOVQ   gs+8(FP), R9; \
	LEAQ   (R9)(R9*2), R10; \
	ADDQ   R8, R10; \
	MOVQ   x+24(FP), SI; \
	MOVQ   xs+32(FP), BX; \
	LEAQ   (BX)(BX*2), R12; \
	LEAQ   (BX)(BX*4), R13; \
	LEAQ   (SI)(R12*2), R11; \
	MOVQ   masks+64(FP), AX; \
	KMOVW  AX, K1; \
	SHRQ   $16, AX; \
	KMOVW  AX, K2

// PKERN is a whole kernel: STEP (STEP4, STEP2 or STEP1) with F, ACC
// (A4xA, A2xA or A1xA) and CLR, GET, PUT of that group count, LW the
// weight load, WS the bytes of a weight column (64 or 32) and PF the
// prefetches of four columns. The kernels of fewer than four groups step
// R10 and DI too, unused. n may be 0 (the call then stores its start).
#define PKERN(STEP, F, ACC, CLR, GET, PUT, LW, WS, PF) \
	PARGS; \
	MOVQ  out+48(FP), DI; \
	MOVQ  ostride+56(FP), DX; \
	CMPQ  add+72(FP), $0; \
	JNE   pget; \
	ACC(CLR); \
	JMP   pcols; \
pget: \
	ACC(GET); \
pcols: \
	MOVQ  pf+16(FP), DX; \
	LEAQ  (R9)(R9*2), DI; \
	ADDQ  DX, DI; \
	MOVQ  n+40(FP), CX; \
	MOVQ  CX, AX; \
	ANDQ  $3, AX; \
	SHRQ  $2, CX; \
	JZ    ptail; \
ploop: \
	STEP(LW, F, 0, 0); \
	STEP(LW, F, 4, WS); \
	STEP(LW, F, 8, (2*WS)); \
	STEP(LW, F, 12, (3*WS)); \
	PF; \
	ADDQ  $16, SI; \
	ADDQ  $16, R11; \
	ADDQ  $(4*WS), R8; \
	ADDQ  $(4*WS), DX; \
	ADDQ  $(4*WS), DI; \
	ADDQ  $(4*WS), R10; \
	DECQ  CX; \
	JNZ   ploop; \
ptail: \
	TESTQ AX, AX; \
	JZ    pput; \
ploop1: \
	STEP(LW, F, 0, 0); \
	ADDQ  $4, SI; \
	ADDQ  $4, R11; \
	ADDQ  $WS, R8; \
	ADDQ  $WS, R10; \
	DECQ  AX; \
	JNZ   ploop1; \
pput: \
	MOVQ  out+48(FP), DI; \
	MOVQ  ostride+56(FP), DX; \
	ACC(PUT); \
	VZEROUPPER; \
	RET

// func f32p4x1(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·f32p4x1(SB), NOSPLIT, $0-80
	PKERN(STEP4, F4x1, A4x1, CLR4, GET4, PUT4, WF32, 64, PF4x4)

// func f32p4x2(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·f32p4x2(SB), NOSPLIT, $0-80
	PKERN(STEP4, F4x2, A4x2, CLR4, GET4, PUT4, WF32, 64, PF4x4)

// func f32p4x3(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·f32p4x3(SB), NOSPLIT, $0-80
	PKERN(STEP4, F4x3, A4x3, CLR4, GET4, PUT4, WF32, 64, PF4x4)

// func f32p2x1(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·f32p2x1(SB), NOSPLIT, $0-80
	PKERN(STEP2, F2x1, A2x1, CLR2, GET2, PUT2, WF32, 64, PF2x4)

// func f32p2x2(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·f32p2x2(SB), NOSPLIT, $0-80
	PKERN(STEP2, F2x2, A2x2, CLR2, GET2, PUT2, WF32, 64, PF2x4)

// func f32p2x3(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·f32p2x3(SB), NOSPLIT, $0-80
	PKERN(STEP2, F2x3, A2x3, CLR2, GET2, PUT2, WF32, 64, PF2x4)

// func f32p2x4(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·f32p2x4(SB), NOSPLIT, $0-80
	PKERN(STEP2, F2x4, A2x4, CLR2, GET2, PUT2, WF32, 64, PF2x4)

// func f32p2x5(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·f32p2x5(SB), NOSPLIT, $0-80
	PKERN(STEP2, F2x5, A2x5, CLR2, GET2, PUT2, WF32, 64, PF2x4)

// func f32p2x6(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·f32p2x6(SB), NOSPLIT, $0-80
	PKERN(STEP2, F2x6, A2x6, CLR2, GET2, PUT2, WF32, 64, PF2x4)

// func f32p2x7(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·f32p2x7(SB), NOSPLIT, $0-80
	PKERN(STEP2, F2x7, A2x7, CLR2, GET2, PUT2, WF32, 64, PF2x4)

// func f32p2x8(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·f32p2x8(SB), NOSPLIT, $0-80
	PKERN(STEP2, F2x8, A2x8, CLR2, GET2, PUT2, WF32, 64, PF2x4)

// func f32p2x9(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·f32p2x9(SB), NOSPLIT, $0-80
	PKERN(STEP2, F2x9, A2x9, CLR2, GET2, PUT2, WF32, 64, PF2x4)

// func f32p2x10(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·f32p2x10(SB), NOSPLIT, $0-80
	PKERN(STEP2, F2x10, A2x10, CLR2, GET2, PUT2, WF32, 64, PF2x4)

// func f32p2x11(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·f32p2x11(SB), NOSPLIT, $0-80
	PKERN(STEP2, F2x11, A2x11, CLR2, GET2, PUT2, WF32, 64, PF2x4)

// func f32p2x12(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·f32p2x12(SB), NOSPLIT, $0-80
	PKERN(STEP2, F2x12, A2x12, CLR2, GET2, PUT2, WF32, 64, PF2x4)

// func f32p1x1(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·f32p1x1(SB), NOSPLIT, $0-80
	PKERN(STEP1, F1x1, A1x1, CLR1, GET1, PUT1, WF32, 64, PF1x4)

// func f32p1x2(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·f32p1x2(SB), NOSPLIT, $0-80
	PKERN(STEP1, F1x2, A1x2, CLR1, GET1, PUT1, WF32, 64, PF1x4)

// func f32p1x3(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·f32p1x3(SB), NOSPLIT, $0-80
	PKERN(STEP1, F1x3, A1x3, CLR1, GET1, PUT1, WF32, 64, PF1x4)

// func f32p1x4(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·f32p1x4(SB), NOSPLIT, $0-80
	PKERN(STEP1, F1x4, A1x4, CLR1, GET1, PUT1, WF32, 64, PF1x4)

// func f32p1x5(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·f32p1x5(SB), NOSPLIT, $0-80
	PKERN(STEP1, F1x5, A1x5, CLR1, GET1, PUT1, WF32, 64, PF1x4)

// func f32p1x6(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·f32p1x6(SB), NOSPLIT, $0-80
	PKERN(STEP1, F1x6, A1x6, CLR1, GET1, PUT1, WF32, 64, PF1x4)

// func f32p1x7(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·f32p1x7(SB), NOSPLIT, $0-80
	PKERN(STEP1, F1x7, A1x7, CLR1, GET1, PUT1, WF32, 64, PF1x4)

// func f32p1x8(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·f32p1x8(SB), NOSPLIT, $0-80
	PKERN(STEP1, F1x8, A1x8, CLR1, GET1, PUT1, WF32, 64, PF1x4)

// func f32p1x9(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·f32p1x9(SB), NOSPLIT, $0-80
	PKERN(STEP1, F1x9, A1x9, CLR1, GET1, PUT1, WF32, 64, PF1x4)

// func f32p1x10(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·f32p1x10(SB), NOSPLIT, $0-80
	PKERN(STEP1, F1x10, A1x10, CLR1, GET1, PUT1, WF32, 64, PF1x4)

// func f32p1x11(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·f32p1x11(SB), NOSPLIT, $0-80
	PKERN(STEP1, F1x11, A1x11, CLR1, GET1, PUT1, WF32, 64, PF1x4)

// func f32p1x12(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·f32p1x12(SB), NOSPLIT, $0-80
	PKERN(STEP1, F1x12, A1x12, CLR1, GET1, PUT1, WF32, 64, PF1x4)

// func f16p4x1(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·f16p4x1(SB), NOSPLIT, $0-80
	PKERN(STEP4, F4x1, A4x1, CLR4, GET4, PUT4, WF16, 32, PF4x2)

// func f16p4x2(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·f16p4x2(SB), NOSPLIT, $0-80
	PKERN(STEP4, F4x2, A4x2, CLR4, GET4, PUT4, WF16, 32, PF4x2)

// func f16p4x3(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·f16p4x3(SB), NOSPLIT, $0-80
	PKERN(STEP4, F4x3, A4x3, CLR4, GET4, PUT4, WF16, 32, PF4x2)

// func f16p2x1(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·f16p2x1(SB), NOSPLIT, $0-80
	PKERN(STEP2, F2x1, A2x1, CLR2, GET2, PUT2, WF16, 32, PF2x2)

// func f16p2x2(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·f16p2x2(SB), NOSPLIT, $0-80
	PKERN(STEP2, F2x2, A2x2, CLR2, GET2, PUT2, WF16, 32, PF2x2)

// func f16p2x3(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·f16p2x3(SB), NOSPLIT, $0-80
	PKERN(STEP2, F2x3, A2x3, CLR2, GET2, PUT2, WF16, 32, PF2x2)

// func f16p2x4(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·f16p2x4(SB), NOSPLIT, $0-80
	PKERN(STEP2, F2x4, A2x4, CLR2, GET2, PUT2, WF16, 32, PF2x2)

// func f16p2x5(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·f16p2x5(SB), NOSPLIT, $0-80
	PKERN(STEP2, F2x5, A2x5, CLR2, GET2, PUT2, WF16, 32, PF2x2)

// func f16p2x6(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·f16p2x6(SB), NOSPLIT, $0-80
	PKERN(STEP2, F2x6, A2x6, CLR2, GET2, PUT2, WF16, 32, PF2x2)

// func f16p2x7(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·f16p2x7(SB), NOSPLIT, $0-80
	PKERN(STEP2, F2x7, A2x7, CLR2, GET2, PUT2, WF16, 32, PF2x2)

// func f16p2x8(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·f16p2x8(SB), NOSPLIT, $0-80
	PKERN(STEP2, F2x8, A2x8, CLR2, GET2, PUT2, WF16, 32, PF2x2)

// func f16p2x9(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·f16p2x9(SB), NOSPLIT, $0-80
	PKERN(STEP2, F2x9, A2x9, CLR2, GET2, PUT2, WF16, 32, PF2x2)

// func f16p2x10(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·f16p2x10(SB), NOSPLIT, $0-80
	PKERN(STEP2, F2x10, A2x10, CLR2, GET2, PUT2, WF16, 32, PF2x2)

// func f16p2x11(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·f16p2x11(SB), NOSPLIT, $0-80
	PKERN(STEP2, F2x11, A2x11, CLR2, GET2, PUT2, WF16, 32, PF2x2)

// func f16p2x12(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·f16p2x12(SB), NOSPLIT, $0-80
	PKERN(STEP2, F2x12, A2x12, CLR2, GET2, PUT2, WF16, 32, PF2x2)

// func f16p1x1(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·f16p1x1(SB), NOSPLIT, $0-80
	PKERN(STEP1, F1x1, A1x1, CLR1, GET1, PUT1, WF16, 32, PF1x2)

// func f16p1x2(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·f16p1x2(SB), NOSPLIT, $0-80
	PKERN(STEP1, F1x2, A1x2, CLR1, GET1, PUT1, WF16, 32, PF1x2)

// func f16p1x3(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·f16p1x3(SB), NOSPLIT, $0-80
	PKERN(STEP1, F1x3, A1x3, CLR1, GET1, PUT1, WF16, 32, PF1x2)

// func f16p1x4(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·f16p1x4(SB), NOSPLIT, $0-80
	PKERN(STEP1, F1x4, A1x4, CLR1, GET1, PUT1, WF16, 32, PF1x2)

// func f16p1x5(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·f16p1x5(SB), NOSPLIT, $0-80
	PKERN(STEP1, F1x5, A1x5, CLR1, GET1, PUT1, WF16, 32, PF1x2)

// func f16p1x6(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·f16p1x6(SB), NOSPLIT, $0-80
	PKERN(STEP1, F1x6, A1x6, CLR1, GET1, PUT1, WF16, 32, PF1x2)

// func f16p1x7(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·f16p1x7(SB), NOSPLIT, $0-80
	PKERN(STEP1, F1x7, A1x7, CLR1, GET1, PUT1, WF16, 32, PF1x2)

// func f16p1x8(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·f16p1x8(SB), NOSPLIT, $0-80
	PKERN(STEP1, F1x8, A1x8, CLR1, GET1, PUT1, WF16, 32, PF1x2)

// func f16p1x9(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·f16p1x9(SB), NOSPLIT, $0-80
	PKERN(STEP1, F1x9, A1x9, CLR1, GET1, PUT1, WF16, 32, PF1x2)

// func f16p1x10(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·f16p1x10(SB), NOSPLIT, $0-80
	PKERN(STEP1, F1x10, A1x10, CLR1, GET1, PUT1, WF16, 32, PF1x2)

// func f16p1x11(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·f16p1x11(SB), NOSPLIT, $0-80
	PKERN(STEP1, F1x11, A1x11, CLR1, GET1, PUT1, WF16, 32, PF1x2)

// func f16p1x12(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·f16p1x12(SB), NOSPLIT, $0-80
	PKERN(STEP1, F1x12, A1x12, CLR1, GET1, PUT1, WF16, 32, PF1x2)

// func bf16p4x1(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·bf16p4x1(SB), NOSPLIT, $0-80
	PKERN(STEP4, F4x1, A4x1, CLR4, GET4, PUT4, WB16, 32, PF4x2)

// func bf16p4x2(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·bf16p4x2(SB), NOSPLIT, $0-80
	PKERN(STEP4, F4x2, A4x2, CLR4, GET4, PUT4, WB16, 32, PF4x2)

// func bf16p4x3(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·bf16p4x3(SB), NOSPLIT, $0-80
	PKERN(STEP4, F4x3, A4x3, CLR4, GET4, PUT4, WB16, 32, PF4x2)

// func bf16p2x1(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·bf16p2x1(SB), NOSPLIT, $0-80
	PKERN(STEP2, F2x1, A2x1, CLR2, GET2, PUT2, WB16, 32, PF2x2)

// func bf16p2x2(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·bf16p2x2(SB), NOSPLIT, $0-80
	PKERN(STEP2, F2x2, A2x2, CLR2, GET2, PUT2, WB16, 32, PF2x2)

// func bf16p2x3(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·bf16p2x3(SB), NOSPLIT, $0-80
	PKERN(STEP2, F2x3, A2x3, CLR2, GET2, PUT2, WB16, 32, PF2x2)

// func bf16p2x4(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·bf16p2x4(SB), NOSPLIT, $0-80
	PKERN(STEP2, F2x4, A2x4, CLR2, GET2, PUT2, WB16, 32, PF2x2)

// func bf16p2x5(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·bf16p2x5(SB), NOSPLIT, $0-80
	PKERN(STEP2, F2x5, A2x5, CLR2, GET2, PUT2, WB16, 32, PF2x2)

// func bf16p2x6(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·bf16p2x6(SB), NOSPLIT, $0-80
	PKERN(STEP2, F2x6, A2x6, CLR2, GET2, PUT2, WB16, 32, PF2x2)

// func bf16p2x7(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·bf16p2x7(SB), NOSPLIT, $0-80
	PKERN(STEP2, F2x7, A2x7, CLR2, GET2, PUT2, WB16, 32, PF2x2)

// func bf16p2x8(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·bf16p2x8(SB), NOSPLIT, $0-80
	PKERN(STEP2, F2x8, A2x8, CLR2, GET2, PUT2, WB16, 32, PF2x2)

// func bf16p2x9(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·bf16p2x9(SB), NOSPLIT, $0-80
	PKERN(STEP2, F2x9, A2x9, CLR2, GET2, PUT2, WB16, 32, PF2x2)

// func bf16p2x10(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·bf16p2x10(SB), NOSPLIT, $0-80
	PKERN(STEP2, F2x10, A2x10, CLR2, GET2, PUT2, WB16, 32, PF2x2)

// func bf16p2x11(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·bf16p2x11(SB), NOSPLIT, $0-80
	PKERN(STEP2, F2x11, A2x11, CLR2, GET2, PUT2, WB16, 32, PF2x2)

// func bf16p2x12(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·bf16p2x12(SB), NOSPLIT, $0-80
	PKERN(STEP2, F2x12, A2x12, CLR2, GET2, PUT2, WB16, 32, PF2x2)

// func bf16p1x1(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·bf16p1x1(SB), NOSPLIT, $0-80
	PKERN(STEP1, F1x1, A1x1, CLR1, GET1, PUT1, WB16, 32, PF1x2)

// func bf16p1x2(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·bf16p1x2(SB), NOSPLIT, $0-80
	PKERN(STEP1, F1x2, A1x2, CLR1, GET1, PUT1, WB16, 32, PF1x2)

// func bf16p1x3(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·bf16p1x3(SB), NOSPLIT, $0-80
	PKERN(STEP1, F1x3, A1x3, CLR1, GET1, PUT1, WB16, 32, PF1x2)

// func bf16p1x4(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·bf16p1x4(SB), NOSPLIT, $0-80
	PKERN(STEP1, F1x4, A1x4, CLR1, GET1, PUT1, WB16, 32, PF1x2)

// func bf16p1x5(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·bf16p1x5(SB), NOSPLIT, $0-80
	PKERN(STEP1, F1x5, A1x5, CLR1, GET1, PUT1, WB16, 32, PF1x2)

// func bf16p1x6(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·bf16p1x6(SB), NOSPLIT, $0-80
	PKERN(STEP1, F1x6, A1x6, CLR1, GET1, PUT1, WB16, 32, PF1x2)

// func bf16p1x7(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·bf16p1x7(SB), NOSPLIT, $0-80
	PKERN(STEP1, F1x7, A1x7, CLR1, GET1, PUT1, WB16, 32, PF1x2)

// func bf16p1x8(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·bf16p1x8(SB), NOSPLIT, $0-80
	PKERN(STEP1, F1x8, A1x8, CLR1, GET1, PUT1, WB16, 32, PF1x2)

// func bf16p1x9(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·bf16p1x9(SB), NOSPLIT, $0-80
	PKERN(STEP1, F1x9, A1x9, CLR1, GET1, PUT1, WB16, 32, PF1x2)

// func bf16p1x10(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·bf16p1x10(SB), NOSPLIT, $0-80
	PKERN(STEP1, F1x10, A1x10, CLR1, GET1, PUT1, WB16, 32, PF1x2)

// func bf16p1x11(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·bf16p1x11(SB), NOSPLIT, $0-80
	PKERN(STEP1, F1x11, A1x11, CLR1, GET1, PUT1, WB16, 32, PF1x2)

// func bf16p1x12(w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int)
TEXT ·bf16p1x12(SB), NOSPLIT, $0-80
	PKERN(STEP1, F1x12, A1x12, CLR1, GET1, PUT1, WB16, 32, PF1x2)
