//go:build amd64 && !purego

#include "textflag.h"

// AVX-512 float products (the avx512 path): F32, F16 and BF16 weight rows
// against float32 activation rows, sixteen columns a step in ZMM
// registers. Every (weight row, activation row) pair has one accumulator,
// and every kernel here meets it in the same order: lane i sums
// w[c]*x[c] for c = i, i+16, i+32, ... with one FMA per step (the last
// step of a row whose length is not a multiple of 16 loads zeros past the
// end, which leave a lane as it was: see below), then the sixteen lanes
// are added by one halving tree (ZRED1, ZRED4: lanes 8 apart, then 4, 2,
// 1). Long rows are summed in chunks of the caller's chunk columns (the
// Go side's zChunk for both kernels), each chunk's sum added in column
// order onto the row's. So a pair's result depends only on the two rows,
// never on which kernel computed it or which other rows shared the call:
// the one-row kernels (f32z1, f16z1) and the 4xJ tiles give the same bits.
//
// Zeros and signs: an accumulator starts at +0 and an FMA whose exact
// result is zero rounds to +0 unless both addends are -0, so no lane, and
// no sum of lanes, is ever -0. Adding +0 (a masked tail step, 0*0, or the
// first chunk's sum onto the +0 a row starts from) therefore changes no bit.
//
// Tile registers (f32z4xJ, f16z4xJ for J = 1, 2, 3, 4, 6: four weight
// rows ws bytes apart against J activation rows xs bytes apart): R8 the
// first weight row, DX its stride, R9 three strides; SI the first
// activation row, BX its stride, R12 three strides, R13 five; R10 the
// prefetch cursor; CX whole steps, AX the tail's column count, K1 its
// lanes; after the loop DI out, R10 ostride, R11 add. Accumulator (row r,
// activation j) is Z(r*J+j); Z24-Z29 hold a step's activation columns,
// Z30 a weight row's.

// ZARGS loads a tile's arguments and splits n into CX whole steps and a
// tail of AX columns, K1 its lanes.
#define ZARGS \
	MOVQ   n+40(FP), CX; \
	ANDQ   $15, CX; \
	MOVQ   CX, AX; \
	MOVL   $1, R11; \
	SHLL   CX, R11; \
	DECL   R11; \
	KMOVW  R11, K1; \
	MOVQ   n+40(FP), CX; \
	SHRQ   $4, CX; \
	MOVQ   w+0(FP), R8; \
	MOVQ   ws+8(FP), DX; \
	LEAQ   (DX)(DX*2), R9; \
	MOVQ   pf+16(FP), R10; \
	MOVQ   x+24(FP), SI; \
	MOVQ   xs+32(FP), BX; \
	LEAQ   (BX)(BX*2), R12; \
	LEAQ   (BX)(BX*4), R13

// ZOUT loads the epilogue's registers.
#define ZOUT \
	MOVQ out+48(FP), DI; \
	MOVQ ostride+56(FP), R10; \
	MOVQ add+64(FP), R11

// A step's loads: XF/XT(ADDR, DST) load sixteen activation columns (XT
// the tail's, zeros past it), WF32/WF32T, WF16/WF16T and WB16/WB16T
// sixteen weights of one row into Z30. The whole steps load without a mask: a masked load
// is a load and a blend, and the blends took FMA ports (a 4x6 step loop,
// best of 200 runs: 160 GFLOP/s plain, 113 masked).
#define XF(ADDR, DST) VMOVUPS ADDR, DST
#define XT(ADDR, DST) VMOVUPS.Z ADDR, K1, DST
#define WF32(ADDR) VMOVUPS ADDR, Z30
#define WF32T(ADDR) VMOVUPS.Z ADDR, K1, Z30
#define WF16(ADDR) VCVTPH2PS ADDR, Z30
#define WF16T(ADDR) VCVTPH2PS.Z ADDR, K1, Z30
// WB16/WB16T: sixteen bfloat16 weights, each widened to the high half of
// a float32 (exact; zeros past the tail).
#define WB16(ADDR) VPMOVZXWD ADDR, Z30; VPSLLD $16, Z30, Z30
#define WB16T(ADDR) VPMOVZXWD.Z ADDR, K1, Z30; VPSLLD $16, Z30, Z30

#define LDX1(LX) \
	LX((SI), Z24)

#define LDX2(LX) \
	LDX1(LX); \
	LX((SI)(BX*1), Z25)

#define LDX3(LX) \
	LDX2(LX); \
	LX((SI)(BX*2), Z26)

#define LDX4(LX) \
	LDX3(LX); \
	LX((SI)(R12*1), Z27)

#define LDX6(LX) \
	LDX4(LX); \
	LX((SI)(BX*4), Z28); \
	LX((SI)(R13*1), Z29)

// FMAJ(A0, ...) adds the weight row in Z30 times each activation column
// into that row's J accumulators.
#define FMA1(A0) \
	VFMADD231PS Z24, Z30, A0

#define FMA2(A0, A1) \
	FMA1(A0); \
	VFMADD231PS Z25, Z30, A1

#define FMA3(A0, A1, A2) \
	FMA2(A0, A1); \
	VFMADD231PS Z26, Z30, A2

#define FMA4(A0, A1, A2, A3) \
	FMA3(A0, A1, A2); \
	VFMADD231PS Z27, Z30, A3

#define FMA6(A0, A1, A2, A3, A4, A5) \
	FMA4(A0, A1, A2, A3); \
	VFMADD231PS Z28, Z30, A4; \
	VFMADD231PS Z29, Z30, A5

// STEP4xJ(LX, LW) is one sixteen-column step of a 4xJ tile, LX and LW
// its loads.
#define STEP4x1(LX, LW) \
	LDX1(LX); \
	LW((R8)); \
	FMA1(Z0); \
	LW((R8)(DX*1)); \
	FMA1(Z1); \
	LW((R8)(DX*2)); \
	FMA1(Z2); \
	LW((R8)(R9*1)); \
	FMA1(Z3)

#define STEP4x2(LX, LW) \
	LDX2(LX); \
	LW((R8)); \
	FMA2(Z0, Z1); \
	LW((R8)(DX*1)); \
	FMA2(Z2, Z3); \
	LW((R8)(DX*2)); \
	FMA2(Z4, Z5); \
	LW((R8)(R9*1)); \
	FMA2(Z6, Z7)

#define STEP4x3(LX, LW) \
	LDX3(LX); \
	LW((R8)); \
	FMA3(Z0, Z1, Z2); \
	LW((R8)(DX*1)); \
	FMA3(Z3, Z4, Z5); \
	LW((R8)(DX*2)); \
	FMA3(Z6, Z7, Z8); \
	LW((R8)(R9*1)); \
	FMA3(Z9, Z10, Z11)

#define STEP4x4(LX, LW) \
	LDX4(LX); \
	LW((R8)); \
	FMA4(Z0, Z1, Z2, Z3); \
	LW((R8)(DX*1)); \
	FMA4(Z4, Z5, Z6, Z7); \
	LW((R8)(DX*2)); \
	FMA4(Z8, Z9, Z10, Z11); \
	LW((R8)(R9*1)); \
	FMA4(Z12, Z13, Z14, Z15)

#define STEP4x6(LX, LW) \
	LDX6(LX); \
	LW((R8)); \
	FMA6(Z0, Z1, Z2, Z3, Z4, Z5); \
	LW((R8)(DX*1)); \
	FMA6(Z6, Z7, Z8, Z9, Z10, Z11); \
	LW((R8)(DX*2)); \
	FMA6(Z12, Z13, Z14, Z15, Z16, Z17); \
	LW((R8)(R9*1)); \
	FMA6(Z18, Z19, Z20, Z21, Z22, Z23)

// PFSTEP(WSTEP) asks for the line of each of four rows at R10 (the next
// block of weights the caller will multiply: the next chunk of these rows
// or the next group's first) and steps R10 on. The tiles read four rows
// at once, a pattern the hardware prefetchers leave waiting on memory
// when weights come from DRAM (decode steps); these requests overlap that
// wait with the current block's work.
#define PFSTEP(WSTEP) \
	PREFETCHT0 (R10); \
	PREFETCHT0 (R10)(DX*1); \
	PREFETCHT0 (R10)(DX*2); \
	PREFETCHT0 (R10)(R9*1); \
	ADDQ       $WSTEP, R10

// ZLOOP(STEP, LW, LWT, WSTEP) runs CX whole steps (weight loads LW), then
// the tail step (LWT) when AX is not zero; WSTEP is the bytes of sixteen
// weights (64 for F32, 32 for F16). Its labels are zloop, ztail and zdone.
#define ZLOOP(STEP, LW, LWT, WSTEP) \
	TESTQ CX, CX; \
	JZ    ztail; \
zloop: \
	STEP(XF, LW); \
	PFSTEP(WSTEP); \
	ADDQ  $64, SI; \
	ADDQ  $WSTEP, R8; \
	DECQ  CX; \
	JNZ   zloop; \
ztail: \
	TESTQ AX, AX; \
	JZ    zdone; \
	STEP(XT, LWT); \
zdone:

// ZRED4(A, B, C, D) reduces four accumulators (rows 0-3 of one activation
// row) to their four sums, in that order, in the low lanes of A (XA); C is
// clobbered, Z24 and Z25 are scratch, Z31 holds zidx. Per accumulator it
// is ZRED1's tree: lanes i and i+8, then i and i+4, i and i+2, i and i+1.
#define ZRED4(A, B, C, D) \
	VSHUFF64X2 $0x44, B, A, Z24; \
	VSHUFF64X2 $0xEE, B, A, Z25; \
	VADDPS     Z25, Z24, A; \
	VSHUFF64X2 $0x44, D, C, Z24; \
	VSHUFF64X2 $0xEE, D, C, Z25; \
	VADDPS     Z25, Z24, C; \
	VSHUFF32X4 $0x88, C, A, Z24; \
	VSHUFF32X4 $0xDD, C, A, Z25; \
	VADDPS     Z25, Z24, A; \
	VPERMILPS  $0x4E, A, Z24; \
	VADDPS     Z24, A, A; \
	VPERMILPS  $0xB1, A, Z24; \
	VADDPS     Z24, A, A; \
	VPERMPS    A, Z31, A

// ZPUT(XA) stores (R11 == 0) or adds four sums at DI, then steps DI to the
// next activation row's outputs. Its branch is the same every call of a
// chunk, so it is predicted.
#define ZPUT(XA, L) \
	TESTQ   R11, R11; \
	JZ      L; \
	VADDPS  (DI), XA, XA; \
L: \
	VMOVUPS XA, (DI); \
	ADDQ    R10, DI

// ZRED1 leaves in X0 (lane 0) the sum of Z0's sixteen lanes by ZRED4's
// tree; X1 is scratch.
#define ZRED1 \
	VEXTRACTF64X4 $1, Z0, Y1; \
	VADDPS        Y1, Y0, Y0; \
	VEXTRACTF128  $1, Y0, X1; \
	VADDPS        X1, X0, X0; \
	VPERMILPS     $0x4E, X0, X1; \
	VADDPS        X1, X0, X0; \
	VPERMILPS     $0xB1, X0, X1; \
	VADDPS        X1, X0, X0

// zidx gathers lanes 0, 4, 8 and 12 (each 128-bit lane's sum) to 0-3.
DATA zidx<>+0(SB)/4, $0
DATA zidx<>+4(SB)/4, $4
DATA zidx<>+8(SB)/4, $8
DATA zidx<>+12(SB)/4, $12
GLOBL zidx<>(SB), RODATA|NOPTR, $64

#define ZERO4 \
	VPXORD Z0, Z0, Z0; \
	VPXORD Z1, Z1, Z1; \
	VPXORD Z2, Z2, Z2; \
	VPXORD Z3, Z3, Z3

#define ZERO8 \
	VPXORD Z0, Z0, Z0; \
	VPXORD Z1, Z1, Z1; \
	VPXORD Z2, Z2, Z2; \
	VPXORD Z3, Z3, Z3; \
	VPXORD Z4, Z4, Z4; \
	VPXORD Z5, Z5, Z5; \
	VPXORD Z6, Z6, Z6; \
	VPXORD Z7, Z7, Z7

#define ZERO12 \
	ZERO8; \
	VPXORD Z8, Z8, Z8; \
	VPXORD Z9, Z9, Z9; \
	VPXORD Z10, Z10, Z10; \
	VPXORD Z11, Z11, Z11

#define ZERO16 \
	ZERO12; \
	VPXORD Z12, Z12, Z12; \
	VPXORD Z13, Z13, Z13; \
	VPXORD Z14, Z14, Z14; \
	VPXORD Z15, Z15, Z15

#define ZERO24 \
	ZERO16; \
	VPXORD Z16, Z16, Z16; \
	VPXORD Z17, Z17, Z17; \
	VPXORD Z18, Z18, Z18; \
	VPXORD Z19, Z19, Z19; \
	VPXORD Z20, Z20, Z20; \
	VPXORD Z21, Z21, Z21; \
	VPXORD Z22, Z22, Z22; \
	VPXORD Z23, Z23, Z23

// The epilogues: reduce each activation row's four accumulators and put
// its sums.
#define EPI4x1 \
	VMOVDQU32 zidx<>(SB), Z31; \
	ZRED4(Z0, Z1, Z2, Z3); \
	ZPUT(X0, zput0)

#define EPI4x2 \
	VMOVDQU32 zidx<>(SB), Z31; \
	ZRED4(Z0, Z2, Z4, Z6); \
	ZRED4(Z1, Z3, Z5, Z7); \
	ZPUT(X0, zput0); \
	ZPUT(X1, zput1)

#define EPI4x3 \
	VMOVDQU32 zidx<>(SB), Z31; \
	ZRED4(Z0, Z3, Z6, Z9); \
	ZRED4(Z1, Z4, Z7, Z10); \
	ZRED4(Z2, Z5, Z8, Z11); \
	ZPUT(X0, zput0); \
	ZPUT(X1, zput1); \
	ZPUT(X2, zput2)

#define EPI4x4 \
	VMOVDQU32 zidx<>(SB), Z31; \
	ZRED4(Z0, Z4, Z8, Z12); \
	ZRED4(Z1, Z5, Z9, Z13); \
	ZRED4(Z2, Z6, Z10, Z14); \
	ZRED4(Z3, Z7, Z11, Z15); \
	ZPUT(X0, zput0); \
	ZPUT(X1, zput1); \
	ZPUT(X2, zput2); \
	ZPUT(X3, zput3)

#define EPI4x6 \
	VMOVDQU32 zidx<>(SB), Z31; \
	ZRED4(Z0, Z6, Z12, Z18); \
	ZRED4(Z1, Z7, Z13, Z19); \
	ZRED4(Z2, Z8, Z14, Z20); \
	ZRED4(Z3, Z9, Z15, Z21); \
	ZRED4(Z4, Z10, Z16, Z22); \
	ZRED4(Z5, Z11, Z17, Z23); \
	ZPUT(X0, zput0); \
	ZPUT(X1, zput1); \
	ZPUT(X2, zput2); \
	ZPUT(X3, zput3); \
	ZPUT(X4, zput4); \
	ZPUT(X5, zput5)

// The one-row kernels: rows weight rows ws bytes apart (from w) against
// one activation row x of n columns, row r's sum to out[r], a row from
// start to end before the next. They serve a last group of fewer than
// four rows; a batch of one runs the 4x1 tile, whose four rows and
// next-block prefetch read memory faster than one row at a time (a
// stories110M decode step's products, alternated: 23.5 vs 19.5 GB/s).
// Registers: R8 the row, R9/R10 the weight and activation cursors, R13
// the columns left, R12 n, R11 the rows left, BX chunk, X3 the row's sum.
//
// Z1ROW(LW, LWT, WSTEP) sums one row's chunks into X3, loading weights
// with LW (LWT in the tail step), WSTEP bytes a step.
#define Z1ROW(LW, LWT, WSTEP) \
	MOVQ    R8, R9; \
	MOVQ    SI, R10; \
	MOVQ    R12, R13; \
	VXORPS  X3, X3, X3; \
z1chunk: \
	MOVQ    BX, CX; \
	CMPQ    R13, CX; \
	CMOVQLT R13, CX; \
	SUBQ    CX, R13; \
	SHRQ    $4, CX; \
	VPXORD  Z0, Z0, Z0; \
	TESTQ   CX, CX; \
	JZ      z1tail; \
z1loop: \
	LW((R9)); \
	VFMADD231PS (R10), Z30, Z0; \
	ADDQ    $WSTEP, R9; \
	ADDQ    $64, R10; \
	DECQ    CX; \
	JNZ     z1loop; \
z1tail: \
	TESTQ   R13, R13; \
	JNZ     z1sum; \
	TESTQ   AX, AX; \
	JZ      z1sum; \
	XT((R10), Z1); \
	LWT((R9)); \
	VFMADD231PS Z1, Z30, Z0; \
z1sum: \
	ZRED1; \
	VADDSS  X0, X3, X3; \
	TESTQ   R13, R13; \
	JNZ     z1chunk

// Z1ARGS loads a one-row kernel's arguments; AX becomes n%16, K1 its
// lanes.
#define Z1ARGS \
	MOVQ  w+0(FP), R8; \
	MOVQ  ws+8(FP), DX; \
	MOVQ  rows+16(FP), R11; \
	MOVQ  x+24(FP), SI; \
	MOVQ  n+32(FP), R12; \
	MOVQ  chunk+40(FP), BX; \
	MOVQ  out+48(FP), DI; \
	MOVQ  R12, CX; \
	ANDQ  $15, CX; \
	MOVQ  CX, AX; \
	MOVL  $1, R13; \
	SHLL  CX, R13; \
	DECL  R13; \
	KMOVW R13, K1

// func f32z4x1(w unsafe.Pointer, ws uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, add int)
TEXT ·f32z4x1(SB), NOSPLIT, $0-72
	ZARGS
	ZERO4
	ZLOOP(STEP4x1, WF32, WF32T, 64)
	ZOUT
	EPI4x1
	VZEROUPPER
	RET

// func f32z4x2(w unsafe.Pointer, ws uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, add int)
TEXT ·f32z4x2(SB), NOSPLIT, $0-72
	ZARGS
	ZERO8
	ZLOOP(STEP4x2, WF32, WF32T, 64)
	ZOUT
	EPI4x2
	VZEROUPPER
	RET

// func f32z4x3(w unsafe.Pointer, ws uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, add int)
TEXT ·f32z4x3(SB), NOSPLIT, $0-72
	ZARGS
	ZERO12
	ZLOOP(STEP4x3, WF32, WF32T, 64)
	ZOUT
	EPI4x3
	VZEROUPPER
	RET

// func f32z4x4(w unsafe.Pointer, ws uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, add int)
TEXT ·f32z4x4(SB), NOSPLIT, $0-72
	ZARGS
	ZERO16
	ZLOOP(STEP4x4, WF32, WF32T, 64)
	ZOUT
	EPI4x4
	VZEROUPPER
	RET

// func f32z4x6(w unsafe.Pointer, ws uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, add int)
TEXT ·f32z4x6(SB), NOSPLIT, $0-72
	ZARGS
	ZERO24
	ZLOOP(STEP4x6, WF32, WF32T, 64)
	ZOUT
	EPI4x6
	VZEROUPPER
	RET

// func f16z4x1(w unsafe.Pointer, ws uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, add int)
TEXT ·f16z4x1(SB), NOSPLIT, $0-72
	ZARGS
	ZERO4
	ZLOOP(STEP4x1, WF16, WF16T, 32)
	ZOUT
	EPI4x1
	VZEROUPPER
	RET

// func f16z4x2(w unsafe.Pointer, ws uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, add int)
TEXT ·f16z4x2(SB), NOSPLIT, $0-72
	ZARGS
	ZERO8
	ZLOOP(STEP4x2, WF16, WF16T, 32)
	ZOUT
	EPI4x2
	VZEROUPPER
	RET

// func f16z4x3(w unsafe.Pointer, ws uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, add int)
TEXT ·f16z4x3(SB), NOSPLIT, $0-72
	ZARGS
	ZERO12
	ZLOOP(STEP4x3, WF16, WF16T, 32)
	ZOUT
	EPI4x3
	VZEROUPPER
	RET

// func f16z4x4(w unsafe.Pointer, ws uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, add int)
TEXT ·f16z4x4(SB), NOSPLIT, $0-72
	ZARGS
	ZERO16
	ZLOOP(STEP4x4, WF16, WF16T, 32)
	ZOUT
	EPI4x4
	VZEROUPPER
	RET

// func f16z4x6(w unsafe.Pointer, ws uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, add int)
TEXT ·f16z4x6(SB), NOSPLIT, $0-72
	ZARGS
	ZERO24
	ZLOOP(STEP4x6, WF16, WF16T, 32)
	ZOUT
	EPI4x6
	VZEROUPPER
	RET

// func f32z1(w unsafe.Pointer, ws uintptr, rows int, x *float32, n, chunk int, out *float32)
TEXT ·f32z1(SB), NOSPLIT, $0-56
	Z1ARGS

f32z1row:
	Z1ROW(WF32, WF32T, 64)
	VMOVSS X3, (DI)
	ADDQ   $4, DI
	ADDQ   DX, R8
	DECQ   R11
	JNZ    f32z1row
	VZEROUPPER
	RET

// func f16z1(w unsafe.Pointer, ws uintptr, rows int, x *float32, n, chunk int, out *float32)
TEXT ·f16z1(SB), NOSPLIT, $0-56
	Z1ARGS

f16z1row:
	Z1ROW(WF16, WF16T, 32)
	VMOVSS X3, (DI)
	ADDQ   $4, DI
	ADDQ   DX, R8
	DECQ   R11
	JNZ    f16z1row
	VZEROUPPER
	RET

// func bf16z4x1(w unsafe.Pointer, ws uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, add int)
TEXT ·bf16z4x1(SB), NOSPLIT, $0-72
	ZARGS
	ZERO4
	ZLOOP(STEP4x1, WB16, WB16T, 32)
	ZOUT
	EPI4x1
	VZEROUPPER
	RET

// func bf16z4x2(w unsafe.Pointer, ws uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, add int)
TEXT ·bf16z4x2(SB), NOSPLIT, $0-72
	ZARGS
	ZERO8
	ZLOOP(STEP4x2, WB16, WB16T, 32)
	ZOUT
	EPI4x2
	VZEROUPPER
	RET

// func bf16z4x3(w unsafe.Pointer, ws uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, add int)
TEXT ·bf16z4x3(SB), NOSPLIT, $0-72
	ZARGS
	ZERO12
	ZLOOP(STEP4x3, WB16, WB16T, 32)
	ZOUT
	EPI4x3
	VZEROUPPER
	RET

// func bf16z4x4(w unsafe.Pointer, ws uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, add int)
TEXT ·bf16z4x4(SB), NOSPLIT, $0-72
	ZARGS
	ZERO16
	ZLOOP(STEP4x4, WB16, WB16T, 32)
	ZOUT
	EPI4x4
	VZEROUPPER
	RET

// func bf16z4x6(w unsafe.Pointer, ws uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, add int)
TEXT ·bf16z4x6(SB), NOSPLIT, $0-72
	ZARGS
	ZERO24
	ZLOOP(STEP4x6, WB16, WB16T, 32)
	ZOUT
	EPI4x6
	VZEROUPPER
	RET

// func bf16z1(w unsafe.Pointer, ws uintptr, rows int, x *float32, n, chunk int, out *float32)
TEXT ·bf16z1(SB), NOSPLIT, $0-56
	Z1ARGS

bf16z1row:
	Z1ROW(WB16, WB16T, 32)
	VMOVSS X3, (DI)
	ADDQ   $4, DI
	ADDQ   DX, R8
	DECQ   R11
	JNZ    bf16z1row
	VZEROUPPER
	RET
