//go:build amd64 && !purego

#include "textflag.h"
#include "hsum_amd64.h"

// func attnScores4AVX(q *[4]unsafe.Pointer, out, keys *float32, stride, hs, n int)
//
// For each of n keys (SI, BX bytes apart): the dots of the four queries
// (R8-R11) with it, two accumulators per query (Y0-Y3 over even 8-value
// chunks, Y4-Y7 over odd ones; hs is a multiple of 16), summed and stored
// as four floats at DI, which moves 16 bytes per key.
TEXT ·attnScores4AVX(SB), NOSPLIT, $0-48
	MOVQ q+0(FP), AX
	MOVQ 0(AX), R8
	MOVQ 8(AX), R9
	MOVQ 16(AX), R10
	MOVQ 24(AX), R11
	MOVQ out+8(FP), DI
	MOVQ keys+16(FP), SI
	MOVQ stride+24(FP), BX
	MOVQ hs+32(FP), CX
	MOVQ n+40(FP), DX

scorekey:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	XORQ   AX, AX

scorecol:
	VMOVUPS     (SI)(AX*4), Y8
	VMOVUPS     32(SI)(AX*4), Y9
	VFMADD231PS (R8)(AX*4), Y8, Y0
	VFMADD231PS 32(R8)(AX*4), Y9, Y4
	VFMADD231PS (R9)(AX*4), Y8, Y1
	VFMADD231PS 32(R9)(AX*4), Y9, Y5
	VFMADD231PS (R10)(AX*4), Y8, Y2
	VFMADD231PS 32(R10)(AX*4), Y9, Y6
	VFMADD231PS (R11)(AX*4), Y8, Y3
	VFMADD231PS 32(R11)(AX*4), Y9, Y7
	ADDQ        $16, AX
	CMPQ        AX, CX
	JLT         scorecol

	VADDPS Y4, Y0, Y0
	VADDPS Y5, Y1, Y1
	VADDPS Y6, Y2, Y2
	VADDPS Y7, Y3, Y3
	HSUM4(Y0, Y1, Y2, Y3, X0, X1, X2, X3, X8, (DI))
	ADDQ   $16, DI
	ADDQ   BX, SI
	DECQ   DX
	JNZ    scorekey
	VZEROUPPER
	RET

// func attnValues4AVX(o *[4]unsafe.Pointer, a, vals *float32, stride, hs, n int)
//
// For each 16-value column block of the head: the four rows' sums,
// starting from the outputs' values, over the n positions (values at R12, BX bytes apart; weights interleaved
// four per position at R13) in Y0-Y7 (rows 0-3, low and high halves),
// one FMA per position in position order, stored to the four outputs
// (R8-R11) at column AX.
TEXT ·attnValues4AVX(SB), NOSPLIT, $0-48
	MOVQ o+0(FP), AX
	MOVQ 0(AX), R8
	MOVQ 8(AX), R9
	MOVQ 16(AX), R10
	MOVQ 24(AX), R11
	MOVQ vals+16(FP), SI
	MOVQ stride+24(FP), BX
	MOVQ hs+32(FP), CX
	XORQ AX, AX

valcol:
	VMOVUPS (R8)(AX*4), Y0
	VMOVUPS 32(R8)(AX*4), Y4
	VMOVUPS (R9)(AX*4), Y1
	VMOVUPS 32(R9)(AX*4), Y5
	VMOVUPS (R10)(AX*4), Y2
	VMOVUPS 32(R10)(AX*4), Y6
	VMOVUPS (R11)(AX*4), Y3
	VMOVUPS 32(R11)(AX*4), Y7
	LEAQ   (SI)(AX*4), R12
	MOVQ   a+8(FP), R13
	MOVQ   n+40(FP), DX

valpos:
	VMOVUPS      (R12), Y8
	VMOVUPS      32(R12), Y9
	VBROADCASTSS 0(R13), Y10
	VFMADD231PS  Y10, Y8, Y0
	VFMADD231PS  Y10, Y9, Y4
	VBROADCASTSS 4(R13), Y10
	VFMADD231PS  Y10, Y8, Y1
	VFMADD231PS  Y10, Y9, Y5
	VBROADCASTSS 8(R13), Y10
	VFMADD231PS  Y10, Y8, Y2
	VFMADD231PS  Y10, Y9, Y6
	VBROADCASTSS 12(R13), Y10
	VFMADD231PS  Y10, Y8, Y3
	VFMADD231PS  Y10, Y9, Y7
	ADDQ         BX, R12
	ADDQ         $16, R13
	DECQ         DX
	JNZ          valpos

	VMOVUPS Y0, (R8)(AX*4)
	VMOVUPS Y4, 32(R8)(AX*4)
	VMOVUPS Y1, (R9)(AX*4)
	VMOVUPS Y5, 32(R9)(AX*4)
	VMOVUPS Y2, (R10)(AX*4)
	VMOVUPS Y6, 32(R10)(AX*4)
	VMOVUPS Y3, (R11)(AX*4)
	VMOVUPS Y7, 32(R11)(AX*4)
	ADDQ    $16, AX
	CMPQ    AX, CX
	JLT     valcol
	VZEROUPPER
	RET
