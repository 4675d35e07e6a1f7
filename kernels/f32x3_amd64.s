//go:build amd64 && !purego

#include "textflag.h"
#include "hsum_amd64.h"

// func f32x4x3(w0, w1, w2, w3 unsafe.Pointer, x0, x1, x2 *float32, n int, out *[12]float32)
//
// The F32 product tile of prefill chunks and batched decode: four weight
// rows against three activation rows, 12 accumulators (Y0-Y3 against x0,
// Y4-Y7 x1, Y8-Y11 x2), the three activation chunks in Y12-Y14 and one
// weight chunk at a time in Y15: 7 loads per 12 FMAs where the 4x2 tile
// needs 6 per 8. Each (row, activation) pair has one accumulator and the
// 4x2 tile's reduction, so its sum is bit-identical to f32x4x2's. n is a
// multiple of 8 and at least 8.
TEXT ·f32x4x3(SB), NOSPLIT, $0-72
	MOVQ   w0+0(FP), R8
	MOVQ   w1+8(FP), R9
	MOVQ   w2+16(FP), R10
	MOVQ   w3+24(FP), R11
	MOVQ   x0+32(FP), SI
	MOVQ   x1+40(FP), DX
	MOVQ   x2+48(FP), BX
	MOVQ   n+56(FP), CX
	MOVQ   out+64(FP), DI
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	XORQ   AX, AX

f32x3loop:
	VMOVUPS     (SI)(AX*4), Y12
	VMOVUPS     (DX)(AX*4), Y13
	VMOVUPS     (BX)(AX*4), Y14
	VMOVUPS     (R8)(AX*4), Y15
	VFMADD231PS Y12, Y15, Y0
	VFMADD231PS Y13, Y15, Y4
	VFMADD231PS Y14, Y15, Y8
	VMOVUPS     (R9)(AX*4), Y15
	VFMADD231PS Y12, Y15, Y1
	VFMADD231PS Y13, Y15, Y5
	VFMADD231PS Y14, Y15, Y9
	VMOVUPS     (R10)(AX*4), Y15
	VFMADD231PS Y12, Y15, Y2
	VFMADD231PS Y13, Y15, Y6
	VFMADD231PS Y14, Y15, Y10
	VMOVUPS     (R11)(AX*4), Y15
	VFMADD231PS Y12, Y15, Y3
	VFMADD231PS Y13, Y15, Y7
	VFMADD231PS Y14, Y15, Y11
	ADDQ        $8, AX
	CMPQ        AX, CX
	JLT         f32x3loop

	HSUM4(Y0, Y1, Y2, Y3, X0, X1, X2, X3, X12, (DI))
	HSUM4(Y4, Y5, Y6, Y7, X4, X5, X6, X7, X12, 16(DI))
	HSUM4(Y8, Y9, Y10, Y11, X8, X9, X10, X11, X12, 32(DI))
	VZEROUPPER
	RET
