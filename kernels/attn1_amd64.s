//go:build amd64 && !purego

#include "textflag.h"
#include "dot_amd64.h"

// One query row against a slot's cache, for decode: one call covers every
// position instead of one Dot or Axpy call per position (at 600 positions
// those calls were half of a stories110M decode step). Both are
// bit-identical to the per-position calls they replace.

// func attnScores1AVX(out, q, keys *float32, stride, hs, n int)
//
// out[p] = the dot of q with the key at SI + p*stride (bytes), for hs (a
// multiple of 8) values, by dotAVX's own DOTF32.
TEXT ·attnScores1AVX(SB), NOSPLIT, $0-48
	MOVQ out+0(FP), DI
	MOVQ q+8(FP), R8
	MOVQ keys+16(FP), SI
	MOVQ stride+24(FP), R9
	MOVQ hs+32(FP), CX
	MOVQ n+40(FP), DX
	MOVQ CX, BX
	ANDQ $-32, BX

s1key:
	DOTF32(R8, SI)
	VMOVSS       X0, (DI)
	ADDQ         $4, DI
	ADDQ         R9, SI
	DECQ         DX
	JNZ          s1key
	VZEROUPPER
	RET

// func attnValues1AVX(o, a, vals *float32, stride, hs, n int)
//
// o[0:hs] += a[p] * the value at SI + p*stride (bytes), for p in order,
// one FMA per value and position as axpyAVX does, so each output value
// sees the same rounding as n Axpy calls. The head is walked in 32-value
// column blocks (four accumulators, all n positions each), then 8-value
// ones; hs is a multiple of 8 and n at least 1.
TEXT ·attnValues1AVX(SB), NOSPLIT, $0-48
	MOVQ o+0(FP), DI
	MOVQ a+8(FP), R8
	MOVQ vals+16(FP), R10
	MOVQ stride+24(FP), R9
	MOVQ hs+32(FP), CX
	MOVQ n+40(FP), DX
	MOVQ CX, BX
	ANDQ $-32, BX
	XORQ AX, AX              // column

v1blk:
	CMPQ    AX, BX
	JGE     v1tailblk
	VMOVUPS (DI)(AX*4), Y0
	VMOVUPS 32(DI)(AX*4), Y1
	VMOVUPS 64(DI)(AX*4), Y2
	VMOVUPS 96(DI)(AX*4), Y3
	LEAQ    (R10)(AX*4), SI
	XORQ    R11, R11         // position

v1pos:
	VBROADCASTSS (R8)(R11*4), Y4
	VFMADD231PS  (SI), Y4, Y0
	VFMADD231PS  32(SI), Y4, Y1
	VFMADD231PS  64(SI), Y4, Y2
	VFMADD231PS  96(SI), Y4, Y3
	ADDQ         R9, SI
	INCQ         R11
	CMPQ         R11, DX
	JLT          v1pos

	VMOVUPS Y0, (DI)(AX*4)
	VMOVUPS Y1, 32(DI)(AX*4)
	VMOVUPS Y2, 64(DI)(AX*4)
	VMOVUPS Y3, 96(DI)(AX*4)
	ADDQ    $32, AX
	JMP     v1blk

v1tailblk:
	CMPQ    AX, CX
	JGE     v1done
	VMOVUPS (DI)(AX*4), Y0
	LEAQ    (R10)(AX*4), SI
	XORQ    R11, R11

v1tailpos:
	VBROADCASTSS (R8)(R11*4), Y4
	VFMADD231PS  (SI), Y4, Y0
	ADDQ         R9, SI
	INCQ         R11
	CMPQ         R11, DX
	JLT          v1tailpos

	VMOVUPS Y0, (DI)(AX*4)
	ADDQ    $8, AX
	JMP     v1tailblk

v1done:
	VZEROUPPER
	RET
