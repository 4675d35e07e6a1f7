//go:build amd64 && !purego

#include "textflag.h"

// The avx2 forms of the delta rule's kernels (deltamm.go, delta.go);
// strides are in bytes, column counts multiples of 8.

// func mm4A(c, a, b *float32, k, n, lda, ldb, ldc int, cs *float32, css int)
//
// Four rows of C (DI, R11 bytes apart) = cs_r*C + A B over k terms, cs_r at
// cs + r*css (css is 0 or 4); A at
// SI, R9 bytes a row; B at DX, R10 a row): per 16 columns the 8
// sums (Y0-Y7) stay in registers across the k sum, one row of B
// (Y8-Y9) against four broadcast A values a term; the last
// columns go 8 at a time.
TEXT ·mm4A(SB), NOSPLIT, $0-80
	MOVQ c+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+32(FP), R8
	MOVQ lda+40(FP), R9
	MOVQ ldb+48(FP), R10
	MOVQ ldc+56(FP), R11

m4amain:
	CMPQ R8, $16
	JLT  m4atail
	MOVQ cs+64(FP), AX
	MOVQ css+72(FP), BX
	LEAQ (AX)(BX*2), R13
	VBROADCASTSS (AX), Y10
	VBROADCASTSS (AX)(BX*1), Y11
	VBROADCASTSS (R13), Y12
	VBROADCASTSS (R13)(BX*1), Y13
	LEAQ (DI)(R11*2), R12
	VMULPS (DI), Y10, Y0
	VMULPS 32(DI), Y10, Y1
	VMULPS (DI)(R11*1), Y11, Y2
	VMULPS 32(DI)(R11*1), Y11, Y3
	VMULPS (R12), Y12, Y4
	VMULPS 32(R12), Y12, Y5
	VMULPS (R12)(R11*1), Y13, Y6
	VMULPS 32(R12)(R11*1), Y13, Y7
	MOVQ SI, AX
	LEAQ (SI)(R9*2), R13
	MOVQ DX, BX
	MOVQ k+24(FP), R12
m4amaink:
	VMOVUPS (BX), Y8
	VMOVUPS 32(BX), Y9
	VBROADCASTSS (AX), Y10
	VBROADCASTSS (AX)(R9*1), Y11
	VBROADCASTSS (R13), Y12
	VBROADCASTSS (R13)(R9*1), Y13
	VFMADD231PS Y10, Y8, Y0
	VFMADD231PS Y10, Y9, Y1
	VFMADD231PS Y11, Y8, Y2
	VFMADD231PS Y11, Y9, Y3
	VFMADD231PS Y12, Y8, Y4
	VFMADD231PS Y12, Y9, Y5
	VFMADD231PS Y13, Y8, Y6
	VFMADD231PS Y13, Y9, Y7
	ADDQ $4, AX
	ADDQ $4, R13
	ADDQ R10, BX
	DECQ R12
	JNZ  m4amaink
	LEAQ (DI)(R11*2), R12
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, (DI)(R11*1)
	VMOVUPS Y3, 32(DI)(R11*1)
	VMOVUPS Y4, (R12)
	VMOVUPS Y5, 32(R12)
	VMOVUPS Y6, (R12)(R11*1)
	VMOVUPS Y7, 32(R12)(R11*1)
	ADDQ $64, DI
	ADDQ $64, DX
	SUBQ $16, R8
	JMP  m4amain

m4atail:
	CMPQ R8, $8
	JLT  m4adone
	MOVQ cs+64(FP), AX
	MOVQ css+72(FP), BX
	LEAQ (AX)(BX*2), R13
	VBROADCASTSS (AX), Y10
	VBROADCASTSS (AX)(BX*1), Y11
	VBROADCASTSS (R13), Y12
	VBROADCASTSS (R13)(BX*1), Y13
	LEAQ (DI)(R11*2), R12
	VMULPS (DI), Y10, Y0
	VMULPS (DI)(R11*1), Y11, Y2
	VMULPS (R12), Y12, Y4
	VMULPS (R12)(R11*1), Y13, Y6
	MOVQ SI, AX
	LEAQ (SI)(R9*2), R13
	MOVQ DX, BX
	MOVQ k+24(FP), R12
m4atailk:
	VMOVUPS (BX), Y8
	VBROADCASTSS (AX), Y10
	VBROADCASTSS (AX)(R9*1), Y11
	VBROADCASTSS (R13), Y12
	VBROADCASTSS (R13)(R9*1), Y13
	VFMADD231PS Y10, Y8, Y0
	VFMADD231PS Y11, Y8, Y2
	VFMADD231PS Y12, Y8, Y4
	VFMADD231PS Y13, Y8, Y6
	ADDQ $4, AX
	ADDQ $4, R13
	ADDQ R10, BX
	DECQ R12
	JNZ  m4atailk
	LEAQ (DI)(R11*2), R12
	VMOVUPS Y0, (DI)
	VMOVUPS Y2, (DI)(R11*1)
	VMOVUPS Y4, (R12)
	VMOVUPS Y6, (R12)(R11*1)
	ADDQ $32, DI
	ADDQ $32, DX
	SUBQ $8, R8
	JMP  m4atail

m4adone:
	VZEROUPPER
	RET

// func mm1A(c, a, b *float32, k, n, ldb int, cs *float32)
//
// mm4A for one row of C (DI) and of A (SI), cs at cs: 32 columns a
// pass, then 8.
TEXT ·mm1A(SB), NOSPLIT, $0-56
	MOVQ c+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+32(FP), R8
	MOVQ ldb+40(FP), R10
	MOVQ cs+48(FP), AX
	VBROADCASTSS (AX), Y15

m1amain:
	CMPQ R8, $32
	JLT  m1atail
	VMULPS (DI), Y15, Y0
	VMULPS 32(DI), Y15, Y1
	VMULPS 64(DI), Y15, Y2
	VMULPS 96(DI), Y15, Y3
	MOVQ SI, AX
	MOVQ DX, BX
	MOVQ k+24(FP), R12
m1amaink:
	VBROADCASTSS (AX), Y10
	VFMADD231PS (BX), Y10, Y0
	VFMADD231PS 32(BX), Y10, Y1
	VFMADD231PS 64(BX), Y10, Y2
	VFMADD231PS 96(BX), Y10, Y3
	ADDQ $4, AX
	ADDQ R10, BX
	DECQ R12
	JNZ  m1amaink
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ $128, DI
	ADDQ $128, DX
	SUBQ $32, R8
	JMP  m1amain

m1atail:
	CMPQ R8, $8
	JLT  m1adone
	VMULPS (DI), Y15, Y0
	MOVQ SI, AX
	MOVQ DX, BX
	MOVQ k+24(FP), R12
m1atailk:
	VBROADCASTSS (AX), Y10
	VFMADD231PS (BX), Y10, Y0
	ADDQ $4, AX
	ADDQ R10, BX
	DECQ R12
	JNZ  m1atailk
	VMOVUPS Y0, (DI)
	ADDQ $32, DI
	ADDQ $32, DX
	SUBQ $8, R8
	JMP  m1atail

m1adone:
	VZEROUPPER
	RET

// func deltaRowsA(s, k, q, u *float32, dk, dv int, eg float32)
//
// Per 32 columns: u (Y0-Y3, read from u) and the output sums
// (Y4-Y7); for each of the dk rows of S (SI, R10 bytes apart) the new
// row eg*S + k[i]*u (Y8-Y11) is stored and added, times q[i], to the
// sums, which then replace u. The last columns go 8 at a time.
TEXT ·deltaRowsA(SB), NOSPLIT, $0-52
	MOVQ s+0(FP), SI
	MOVQ u+24(FP), DI
	MOVQ dv+40(FP), R8
	MOVQ R8, R10
	SHLQ $2, R10
	VBROADCASTSS eg+48(FP), Y15

dramain:
	CMPQ R8, $32
	JLT  dratail
	VMOVUPS (DI), Y0
	VXORPS Y4, Y4, Y4
	VMOVUPS 32(DI), Y1
	VXORPS Y5, Y5, Y5
	VMOVUPS 64(DI), Y2
	VXORPS Y6, Y6, Y6
	VMOVUPS 96(DI), Y3
	VXORPS Y7, Y7, Y7
	MOVQ SI, BX
	MOVQ k+8(FP), AX
	MOVQ q+16(FP), DX
	MOVQ dk+32(FP), R12
dramaink:
	VBROADCASTSS (AX), Y12
	VBROADCASTSS (DX), Y13
	VMULPS (BX), Y15, Y8
	VMULPS 32(BX), Y15, Y9
	VMULPS 64(BX), Y15, Y10
	VMULPS 96(BX), Y15, Y11
	VFMADD231PS Y12, Y0, Y8
	VFMADD231PS Y12, Y1, Y9
	VFMADD231PS Y12, Y2, Y10
	VFMADD231PS Y12, Y3, Y11
	VMOVUPS Y8, (BX)
	VMOVUPS Y9, 32(BX)
	VMOVUPS Y10, 64(BX)
	VMOVUPS Y11, 96(BX)
	VFMADD231PS Y13, Y8, Y4
	VFMADD231PS Y13, Y9, Y5
	VFMADD231PS Y13, Y10, Y6
	VFMADD231PS Y13, Y11, Y7
	ADDQ $4, AX
	ADDQ $4, DX
	ADDQ R10, BX
	DECQ R12
	JNZ  dramaink
	VMOVUPS Y4, (DI)
	VMOVUPS Y5, 32(DI)
	VMOVUPS Y6, 64(DI)
	VMOVUPS Y7, 96(DI)
	ADDQ $128, DI
	ADDQ $128, SI
	SUBQ $32, R8
	JMP  dramain

dratail:
	CMPQ R8, $8
	JLT  dradone
	VMOVUPS (DI), Y0
	VXORPS Y4, Y4, Y4
	MOVQ SI, BX
	MOVQ k+8(FP), AX
	MOVQ q+16(FP), DX
	MOVQ dk+32(FP), R12
dratailk:
	VBROADCASTSS (AX), Y12
	VBROADCASTSS (DX), Y13
	VMULPS (BX), Y15, Y8
	VFMADD231PS Y12, Y0, Y8
	VMOVUPS Y8, (BX)
	VFMADD231PS Y13, Y8, Y4
	ADDQ $4, AX
	ADDQ $4, DX
	ADDQ R10, BX
	DECQ R12
	JNZ  dratailk
	VMOVUPS Y4, (DI)
	ADDQ $32, DI
	ADDQ $32, SI
	SUBQ $8, R8
	JMP  dratail

dradone:
	VZEROUPPER
	RET
