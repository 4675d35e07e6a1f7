//go:build amd64 && !purego

#include "textflag.h"

// quantizeQ8ActAVX: n blocks of 32 float32 at x into q8Act blocks at dst
// (40 bytes: 32 int8 quants, the half-rounded scale d as float32 at 32,
// the quants' sum as int32 at 36), the same arithmetic as quantizeQ8Act in
// the same float32 order: amax, d = amax/127 through binary16 and back
// (VCVTPS2PH mode 0: round to nearest even, as FloatToHalf), a zero block
// when that is 0, else id = 1/d and q = round-half-even(x*id) (VROUNDPS
// mode 0).

DATA q8absmask<>+0(SB)/4, $0x7fffffff
GLOBL q8absmask<>(SB), RODATA|NOPTR, $4

DATA q8c127<>+0(SB)/4, $127.0
GLOBL q8c127<>(SB), RODATA|NOPTR, $4

DATA q8one<>+0(SB)/4, $1.0
GLOBL q8one<>(SB), RODATA|NOPTR, $4

// Dword order after the two packs ([a0-3 b0-3 c0-3 d0-3 | a4-7 b4-7 c4-7
// d4-7]) back to a0-7 b0-7 c0-7 d0-7.
DATA q8perm<>+0(SB)/4, $0
DATA q8perm<>+4(SB)/4, $4
DATA q8perm<>+8(SB)/4, $1
DATA q8perm<>+12(SB)/4, $5
DATA q8perm<>+16(SB)/4, $2
DATA q8perm<>+20(SB)/4, $6
DATA q8perm<>+24(SB)/4, $3
DATA q8perm<>+28(SB)/4, $7
GLOBL q8perm<>(SB), RODATA|NOPTR, $32

// func quantizeQ8ActAVX(dst *q8Act, x *float32, n int)
TEXT ·quantizeQ8ActAVX(SB), NOSPLIT, $0-24
	MOVQ         dst+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         n+16(FP), CX
	TESTQ        CX, CX
	JZ           done
	VBROADCASTSS q8absmask<>(SB), Y15
	VMOVSS       q8c127<>(SB), X14
	VMOVSS       q8one<>(SB), X13
	VMOVDQU      q8perm<>(SB), Y12
	VXORPS       X11, X11, X11

loop:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3
	VANDPS  Y15, Y0, Y4
	VANDPS  Y15, Y1, Y5
	VMAXPS  Y5, Y4, Y4
	VANDPS  Y15, Y2, Y5
	VANDPS  Y15, Y3, Y6
	VMAXPS  Y6, Y5, Y5
	VMAXPS  Y5, Y4, Y4
	VEXTRACTF128 $1, Y4, X5
	VMAXPS  X5, X4, X4
	VMOVHLPS X4, X4, X5
	VMAXPS  X5, X4, X4
	VMOVSHDUP X4, X5
	VMAXSS  X5, X4, X4           // amax
	VDIVSS  X14, X4, X6          // d = amax/127
	VCVTPS2PH $0, X6, X10
	VCVTPH2PS X10, X10           // d as stored
	VUCOMISS X11, X10
	JEQ     zero
	VDIVSS  X6, X13, X7          // id = 1/d
	VBROADCASTSS X7, Y7
	VMULPS  Y7, Y0, Y0
	VMULPS  Y7, Y1, Y1
	VMULPS  Y7, Y2, Y2
	VMULPS  Y7, Y3, Y3
	VROUNDPS $0, Y0, Y0
	VROUNDPS $0, Y1, Y1
	VROUNDPS $0, Y2, Y2
	VROUNDPS $0, Y3, Y3
	VCVTPS2DQ Y0, Y0
	VCVTPS2DQ Y1, Y1
	VCVTPS2DQ Y2, Y2
	VCVTPS2DQ Y3, Y3
	VPADDD  Y1, Y0, Y8
	VPADDD  Y3, Y2, Y9
	VPADDD  Y9, Y8, Y8
	VEXTRACTI128 $1, Y8, X9
	VPADDD  X9, X8, X8
	VPSHUFD $0x4e, X8, X9
	VPADDD  X9, X8, X8
	VPSHUFD $0xb1, X8, X9
	VPADDD  X9, X8, X8
	VPACKSSDW Y1, Y0, Y0
	VPACKSSDW Y3, Y2, Y2
	VPACKSSWB Y2, Y0, Y0
	VPERMD  Y0, Y12, Y0
	VMOVDQU Y0, (DI)
	VMOVSS  X10, 32(DI)
	VMOVD   X8, 36(DI)
	JMP     next

zero:
	VXORPS  Y0, Y0, Y0
	VMOVDQU Y0, (DI)
	VMOVDQU X0, 24(DI)           // bytes 24..39: quants 24-31, d = 0, sum = 0

next:
	ADDQ $128, SI
	ADDQ $40, DI
	DECQ CX
	JNZ  loop

done:
	VZEROUPPER
	RET
