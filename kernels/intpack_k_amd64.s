//go:build amd64 && !purego

#include "textflag.h"
#include "intpack_amd64.h"

// AVX-512 VNNI kernels of the K-quants over packed weights (pack_layout.go's
// Q2_K, Q3_K, Q4_K, Q5_K and Q6_K layouts): a group of sixteen weight rows, one per 32-bit
// lane, against 1, 2, 4 or 8 rows of q8KAct activations (304 bytes a
// block: quants at 0, sums of 16 at 256, d at 288; rows xs bytes apart).
// A VPDPBUSD.BCST meets four activation bytes with four weights of each
// of the sixteen rows; the sub-block scales are applied exactly in
// integers, so a lane's super-block sums are the pure-Go product's
// (dot_int.go), and its float operations are the same for every
// activation row whichever rows share the call: a row's result does not
// depend on them (TestIntBatchInvisible). The sums go to out + j*ostride
// for activation row j, the lanes of mask only.
//
// Registers, all kernels: R8 the group's current super-block, SI the first
// activation row's block (strides PSTRIDES, intpack_amd64.h), CX the block
// count, DI out, DX ostride, K1 the mask; Z0-Z7 the activation rows' float
// sums, Z8-Z15 their integer super-block sums.

#define LOADARGSK \
	MOVQ  w+0(FP), R8; \
	MOVQ  xa+8(FP), SI; \
	MOVQ  xs+16(FP), BX; \
	PSTRIDES; \
	MOVQ  nb+24(FP), CX; \
	MOVQ  out+32(FP), DI; \
	MOVQ  ostride+40(FP), DX; \
	KMOVW mask+48(FP), K1

// Rows 0..7 of the activations, for the per-row macros.
#define XR0 (SI)
#define XR1 (SI)(BX*1)
#define XR2 (SI)(BX*2)
#define XR3 (SI)(R10*1)
#define XR4 (SI)(BX*4)
#define XR5 (SI)(R11*1)
#define XR6 (SI)(R10*2)
#define XR7 (SI)(R12*1)

// ---- Q4_K ----
//
// Per chunk j (0..3) of a super-block, half h (0..1): four nibble columns
// (Z16-Z19 their low nibbles, sub-block 2j; Z20-Z23 their high nibbles,
// sub-block 2j+1) meet sixteen activations of each sub-block. A half
// sub-block's sum of q*x (16 weights of at most 15 times 127: it fits an
// int16) is gathered in Z26/Z27 from zero, then VPDPWSSD multiplies its
// low word by the sub-block scale, whose dword is the scale byte
// zero-extended (Z24 for 2j, Z25 for 2j+1), into the row's int sum. At
// the end of a super-block (KDMINS, KFIN) the int sums are scaled by d*dx
// (Z29 the sixteen d), and the mins, as (m, m) word pairs (VPSHUFB of the
// min bytes by kminshuf<> in Z31), meet pairs of the activation's sums of
// 16 by VPDPWSSD.BCST and are scaled by dmin*dx (Z30): per lane, acc +=
// (d*dx)*isum, then acc -= (dmin*dx)*imin. Z28 holds 0x0F bytes.

// kminshuf<> (Q4_K, Q5_K) makes dword i of each 128-bit lane L the pair (m, m) of
// byte 4L+i, from a 16-byte row broadcast to every lane.
DATA kminshuf<>+0(SB)/8, $0x8001800180008000
DATA kminshuf<>+8(SB)/8, $0x8003800380028002
DATA kminshuf<>+16(SB)/8, $0x8005800580048004
DATA kminshuf<>+24(SB)/8, $0x8007800780068006
DATA kminshuf<>+32(SB)/8, $0x8009800980088008
DATA kminshuf<>+40(SB)/8, $0x800b800b800a800a
DATA kminshuf<>+48(SB)/8, $0x800d800d800c800c
DATA kminshuf<>+56(SB)/8, $0x800f800f800e800e
GLOBL kminshuf<>(SB), RODATA|NOPTR, $64

#define Q4KCONST \
	MOVL         $0x0f0f0f0f, AX; \
	VPBROADCASTD AX, Z28; \
	VMOVDQU32    kminshuf<>(SB), Z31

// Q4KSC(J) widens the scales of sub-blocks 2J and 2J+1 into Z24, Z25.
#define Q4KSC(J) \
	VPMOVZXBD 64+32*J(R8), Z24; \
	VPMOVZXBD 80+32*J(R8), Z25

// Q4KCOLS(OFF) loads the four nibble columns at OFF(R8) and splits them.
#define Q4KCOLS(OFF) \
	VMOVDQU32 OFF(R8), Z16; \
	VMOVDQU32 OFF+64(R8), Z17; \
	VMOVDQU32 OFF+128(R8), Z18; \
	VMOVDQU32 OFF+192(R8), Z19; \
	VPSRLD    $4, Z16, Z20; \
	VPSRLD    $4, Z17, Z21; \
	VPSRLD    $4, Z18, Z22; \
	VPSRLD    $4, Z19, Z23; \
	VPANDD    Z28, Z16, Z16; \
	VPANDD    Z28, Z17, Z17; \
	VPANDD    Z28, Z18, Z18; \
	VPANDD    Z28, Z19, Z19; \
	VPANDD    Z28, Z20, Z20; \
	VPANDD    Z28, Z21, Z21; \
	VPANDD    Z28, Z22, Z22; \
	VPANDD    Z28, Z23, Z23

// Q4KROW(ZI, A, X) adds the two half sub-blocks of the current columns,
// activations X and X+32 of the row at A, times their scales, into ZI.
#define Q4KROW(ZI, A, X) \
	VPXORD        Z26, Z26, Z26; \
	VPDPBUSD.BCST X+0 A, Z16, Z26; \
	VPDPBUSD.BCST X+4 A, Z17, Z26; \
	VPDPBUSD.BCST X+8 A, Z18, Z26; \
	VPDPBUSD.BCST X+12 A, Z19, Z26; \
	VPDPWSSD      Z24, Z26, ZI; \
	VPXORD        Z27, Z27, Z27; \
	VPDPBUSD.BCST X+32 A, Z20, Z27; \
	VPDPBUSD.BCST X+36 A, Z21, Z27; \
	VPDPBUSD.BCST X+40 A, Z22, Z27; \
	VPDPBUSD.BCST X+44 A, Z23, Z27; \
	VPDPWSSD      Z25, Z27, ZI

// KDMINS(ZD, ZDM) loads a Q4_K or Q5_K super-block's sixteen d into ZD
// and dmin into ZDM, and widens its eight sub-blocks' mins into (m, m)
// pairs in Z16-Z23 (the quants are done with). Z31 holds kminshuf<>.
#define KDMINS(ZD, ZDM) \
	VCVTPH2PS       (R8), ZD; \
	VCVTPH2PS       32(R8), ZDM; \
	VBROADCASTI32X4 192(R8), Z16; \
	VBROADCASTI32X4 208(R8), Z17; \
	VBROADCASTI32X4 224(R8), Z18; \
	VBROADCASTI32X4 240(R8), Z19; \
	VBROADCASTI32X4 256(R8), Z20; \
	VBROADCASTI32X4 272(R8), Z21; \
	VBROADCASTI32X4 288(R8), Z22; \
	VBROADCASTI32X4 304(R8), Z23; \
	VPSHUFB         Z31, Z16, Z16; \
	VPSHUFB         Z31, Z17, Z17; \
	VPSHUFB         Z31, Z18, Z18; \
	VPSHUFB         Z31, Z19, Z19; \
	VPSHUFB         Z31, Z20, Z20; \
	VPSHUFB         Z31, Z21, Z21; \
	VPSHUFB         Z31, Z22, Z22; \
	VPSHUFB         Z31, Z23, Z23

// KFIN(ZF, ZI, A, ZD, ZDM) ends a Q4_K or Q5_K super-block for the row at
// A: ZF += (d*dx)*isum, then ZF -= (dmin*dx)*imin, the mins' sum gathered
// in Z26 (Z27 scratch).
#define KFIN(ZF, ZI, A, ZD, ZDM) \
	VCVTDQ2PS     ZI, ZI; \
	VMULPS.BCST   288 A, ZD, Z27; \
	VFMADD231PS   Z27, ZI, ZF; \
	VPXORD        Z26, Z26, Z26; \
	VPDPWSSD.BCST 256 A, Z16, Z26; \
	VPDPWSSD.BCST 260 A, Z17, Z26; \
	VPDPWSSD.BCST 264 A, Z18, Z26; \
	VPDPWSSD.BCST 268 A, Z19, Z26; \
	VPDPWSSD.BCST 272 A, Z20, Z26; \
	VPDPWSSD.BCST 276 A, Z21, Z26; \
	VPDPWSSD.BCST 280 A, Z22, Z26; \
	VPDPWSSD.BCST 284 A, Z23, Z26; \
	VCVTDQ2PS     Z26, Z26; \
	VMULPS.BCST   288 A, ZDM, Z27; \
	VFNMADD231PS  Z27, Z26, ZF

#define KFIN1(ZD, ZDM) \
	KFIN(Z0, Z8, XR0, ZD, ZDM)

#define KFIN2(ZD, ZDM) \
	KFIN1(ZD, ZDM); \
	KFIN(Z1, Z9, XR1, ZD, ZDM)

#define KFIN4(ZD, ZDM) \
	KFIN2(ZD, ZDM); \
	KFIN(Z2, Z10, XR2, ZD, ZDM); \
	KFIN(Z3, Z11, XR3, ZD, ZDM)

#define KFIN8(ZD, ZDM) \
	KFIN4(ZD, ZDM); \
	KFIN(Z4, Z12, XR4, ZD, ZDM); \
	KFIN(Z5, Z13, XR5, ZD, ZDM); \
	KFIN(Z6, Z14, XR6, ZD, ZDM); \
	KFIN(Z7, Z15, XR7, ZD, ZDM)

// Q4KHALFn(J, H): columns 4H..4H+3 of chunk J against n rows.
#define Q4KHALF1(J, H) \
	Q4KCOLS(320+64*(8*J+4*H)); \
	Q4KROW(Z8, XR0, 64*J+16*H)

#define Q4KHALF2(J, H) \
	Q4KHALF1(J, H); \
	Q4KROW(Z9, XR1, 64*J+16*H)

#define Q4KHALF4(J, H) \
	Q4KHALF2(J, H); \
	Q4KROW(Z10, XR2, 64*J+16*H); \
	Q4KROW(Z11, XR3, 64*J+16*H)

#define Q4KHALF8(J, H) \
	Q4KHALF4(J, H); \
	Q4KROW(Z12, XR4, 64*J+16*H); \
	Q4KROW(Z13, XR5, 64*J+16*H); \
	Q4KROW(Z14, XR6, 64*J+16*H); \
	Q4KROW(Z15, XR7, 64*J+16*H)

// Q4KBLOCK(HALF) runs a super-block's eight half chunks with HALF.
#define Q4KBLOCK(HALF) \
	Q4KSC(0); \
	HALF(0, 0); \
	HALF(0, 1); \
	Q4KSC(1); \
	HALF(1, 0); \
	HALF(1, 1); \
	Q4KSC(2); \
	HALF(2, 0); \
	HALF(2, 1); \
	Q4KSC(3); \
	HALF(3, 0); \
	HALF(3, 1); \
	KDMINS(Z29, Z30)

// ZEROPAIR clears two registers.
#define ZEROPAIR(A, B) \
	VPXORD A, A, A; \
	VPXORD B, B, B

// func q4_Kp16x1(w, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)
TEXT ·q4_Kp16x1(SB), NOSPLIT, $0-56
	LOADARGSK
	Q4KCONST
	VPXORD Z0, Z0, Z0

q4kp1loop:
	VPXORD Z8, Z8, Z8
	Q4KBLOCK(Q4KHALF1)
	KFIN1(Z29, Z30)
	ADDQ $2368, R8
	ADDQ $304, SI
	DECQ CX
	JNZ  q4kp1loop

	STORE1
	VZEROUPPER
	RET

// func q4_Kp16x2(w, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)
TEXT ·q4_Kp16x2(SB), NOSPLIT, $0-56
	LOADARGSK
	Q4KCONST
	ZEROPAIR(Z0, Z1)

q4kp2loop:
	ZEROPAIR(Z8, Z9)
	Q4KBLOCK(Q4KHALF2)
	KFIN2(Z29, Z30)
	ADDQ $2368, R8
	ADDQ $304, SI
	DECQ CX
	JNZ  q4kp2loop

	STORE2
	VZEROUPPER
	RET

// func q4_Kp16x4(w, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)
TEXT ·q4_Kp16x4(SB), NOSPLIT, $0-56
	LOADARGSK
	Q4KCONST
	ZEROPAIR(Z0, Z1)
	ZEROPAIR(Z2, Z3)

q4kp4loop:
	ZEROPAIR(Z8, Z9)
	ZEROPAIR(Z10, Z11)
	Q4KBLOCK(Q4KHALF4)
	KFIN4(Z29, Z30)
	ADDQ $2368, R8
	ADDQ $304, SI
	DECQ CX
	JNZ  q4kp4loop

	STORE4
	VZEROUPPER
	RET

// func q4_Kp16x8(w, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)
TEXT ·q4_Kp16x8(SB), NOSPLIT, $0-56
	LOADARGSK
	Q4KCONST
	ZEROPAIR(Z0, Z1)
	ZEROPAIR(Z2, Z3)
	ZEROPAIR(Z4, Z5)
	ZEROPAIR(Z6, Z7)

q4kp8loop:
	ZEROPAIR(Z8, Z9)
	ZEROPAIR(Z10, Z11)
	ZEROPAIR(Z12, Z13)
	ZEROPAIR(Z14, Z15)
	Q4KBLOCK(Q4KHALF8)
	KFIN8(Z29, Z30)
	ADDQ $2368, R8
	ADDQ $304, SI
	DECQ CX
	JNZ  q4kp8loop

	STORE8
	VZEROUPPER
	RET

// ---- Q5_K ----
//
// Q4_K's scheme with a fifth bit a weight, but a sub-block's sum of q*x
// (32 weights of at most 31 times 127) needs 17 bits, so it is gathered
// whole in Z27 and multiplied by the scale in int32 (VPMULLD; Z24 the
// scales of sub-block 2j, Z25 of 2j+1). Per chunk j, the eight columns'
// low nibbles with their fifth bits (qh column >> j, bit 4) meet every row
// (Z16-Z23), then the high nibbles with theirs (qh column << 4-j, bit 4);
// a select by 0x0F bytes (Z28) merges nibble and bit, the bit masked by
// 0x10 bytes (Z29). The super-block ends as Q4_K's (KDMINS, KFIN; d and
// dmin in Z24, Z25).

#define Q5KCONST \
	MOVL         $0x0f0f0f0f, AX; \
	VPBROADCASTD AX, Z28; \
	MOVL         $0x10101010, AX; \
	VPBROADCASTD AX, Z29; \
	VMOVDQU32    kminshuf<>(SB), Z31

// Q5KLO(J, C, ZW) builds column C of chunk J's low weights in ZW.
#define Q5KLO(J, C, ZW) \
	VPSRLD     $J, 320+64*C(R8), Z26; \
	VPANDD     Z29, Z26, Z26; \
	VMOVDQU32  832+64*(8*J+C)(R8), ZW; \
	VPTERNLOGD $0xe4, Z28, Z26, ZW

// Q5KHI(J, C, ZW) builds column C of chunk J's high weights in ZW.
#define Q5KHI(J, C, ZW) \
	VPSLLD     $(4-J), 320+64*C(R8), Z26; \
	VPANDD     Z29, Z26, Z26; \
	VPSRLD     $4, 832+64*(8*J+C)(R8), ZW; \
	VPTERNLOGD $0xe4, Z28, Z26, ZW

#define Q5KCOLS(J, COL) \
	COL(J, 0, Z16); \
	COL(J, 1, Z17); \
	COL(J, 2, Z18); \
	COL(J, 3, Z19); \
	COL(J, 4, Z20); \
	COL(J, 5, Z21); \
	COL(J, 6, Z22); \
	COL(J, 7, Z23)

// Q5KROW(ZI, A, X, ZS) adds the sub-block of the current columns,
// activations X..X+31 of the row at A, times its scales ZS into ZI.
#define Q5KROW(ZI, A, X, ZS) \
	VPXORD        Z27, Z27, Z27; \
	VPDPBUSD.BCST X+0 A, Z16, Z27; \
	VPDPBUSD.BCST X+4 A, Z17, Z27; \
	VPDPBUSD.BCST X+8 A, Z18, Z27; \
	VPDPBUSD.BCST X+12 A, Z19, Z27; \
	VPDPBUSD.BCST X+16 A, Z20, Z27; \
	VPDPBUSD.BCST X+20 A, Z21, Z27; \
	VPDPBUSD.BCST X+24 A, Z22, Z27; \
	VPDPBUSD.BCST X+28 A, Z23, Z27; \
	VPMULLD       ZS, Z27, Z27; \
	VPADDD        Z27, ZI, ZI

#define Q5KROWS1(X, ZS) \
	Q5KROW(Z8, XR0, X, ZS)

#define Q5KROWS2(X, ZS) \
	Q5KROWS1(X, ZS); \
	Q5KROW(Z9, XR1, X, ZS)

#define Q5KROWS4(X, ZS) \
	Q5KROWS2(X, ZS); \
	Q5KROW(Z10, XR2, X, ZS); \
	Q5KROW(Z11, XR3, X, ZS)

#define Q5KROWS8(X, ZS) \
	Q5KROWS4(X, ZS); \
	Q5KROW(Z12, XR4, X, ZS); \
	Q5KROW(Z13, XR5, X, ZS); \
	Q5KROW(Z14, XR6, X, ZS); \
	Q5KROW(Z15, XR7, X, ZS)

// Q5KCHUNK(J, ROWS): chunk J's two sub-blocks against the rows of ROWS.
#define Q5KCHUNK(J, ROWS) \
	VPMOVZXBD 64+32*J(R8), Z24; \
	VPMOVZXBD 80+32*J(R8), Z25; \
	Q5KCOLS(J, Q5KLO); \
	ROWS(64*J, Z24); \
	Q5KCOLS(J, Q5KHI); \
	ROWS(64*J+32, Z25)

#define Q5KBLOCK(ROWS) \
	Q5KCHUNK(0, ROWS); \
	Q5KCHUNK(1, ROWS); \
	Q5KCHUNK(2, ROWS); \
	Q5KCHUNK(3, ROWS); \
	KDMINS(Z24, Z25)


// ---- Q6_K ----
//
// Per sub-block s (0..15) of a super-block: the three quant words at
// 320+192s hold four words of weights (pack_layout.go): w0..w2 are their bits 0-5
// (Z16-Z18, one mask each), w3 gathers their bits 6-7 (Z19: S1>>2 gives
// its bits 2-3 at 4-5 of each byte, S2 its bits 4-5 at 6-7, S0>>4 its bits
// 0-1 at 2-3; two selects and a shift put them at 0-5 of each byte).
// Sixteen activations meet them in Z22/Z23, which start at -32 times the
// activation's sum of the sixteen (so that the sum is of (q-32)*x, at most
// 65024 in magnitude) and are multiplied by the sub-block's scale (Z21,
// the int8 sign-extended; VPMULLD) into the row's int sum. The -32*sums
// of row r's block are computed once a block into 64*r(SP). At the end
// of a super-block a lane's int sum is scaled by d*dx (Z29 the sixteen d)
// into its float sum. Z24 holds 0xC0 bytes, Z25 0xF0, Z28 0x3F, Z31 zero.

#define Q6KCONST \
	MOVL         $0xc0c0c0c0, AX; \
	VPBROADCASTD AX, Z24; \
	MOVL         $0xf0f0f0f0, AX; \
	VPBROADCASTD AX, Z25; \
	MOVL         $0x3f3f3f3f, AX; \
	VPBROADCASTD AX, Z28; \
	VPXORD       Z31, Z31, Z31

// Q6KOFF(A, OFF) stores -32 times the sixteen sums of 16 of the row at A
// as dwords at OFF(SP).
#define Q6KOFF(A, OFF) \
	VPMOVSXWD 256 A, Z20; \
	VPSLLD    $5, Z20, Z20; \
	VPSUBD    Z20, Z31, Z20; \
	VMOVDQU32 Z20, OFF(SP)

// Q6KSUB(S) loads and unpacks sub-block S's weights into Z16-Z19 and its
// scales into Z21.
#define Q6KSUB(S) \
	VMOVDQU32  320+192*S(R8), Z16; \
	VMOVDQU32  384+192*S(R8), Z17; \
	VMOVDQU32  448+192*S(R8), Z18; \
	VPMOVSXBD  16*S(R8), Z21; \
	VPSRLD     $2, Z17, Z19; \
	VPTERNLOGD $0xd8, Z24, Z18, Z19; \
	VPSRLD     $4, Z16, Z20; \
	VPTERNLOGD $0xd8, Z25, Z19, Z20; \
	VPSRLD     $2, Z20, Z19; \
	VPANDD     Z28, Z19, Z19; \
	VPANDD     Z28, Z16, Z16; \
	VPANDD     Z28, Z17, Z17; \
	VPANDD     Z28, Z18, Z18

// Q6KROW(ZI, A, OFF, X, T) adds sub-block X/16 of the row at A, from its
// offset at OFF(SP), times its scale into ZI, through T.
#define Q6KROW(ZI, A, OFF, X, T) \
	VPBROADCASTD  OFF(SP), T; \
	VPDPBUSD.BCST X+0 A, Z16, T; \
	VPDPBUSD.BCST X+4 A, Z17, T; \
	VPDPBUSD.BCST X+8 A, Z18, T; \
	VPDPBUSD.BCST X+12 A, Z19, T; \
	VPMULLD       Z21, T, T; \
	VPADDD        T, ZI, ZI

// Q6KFIN(ZF, ZI, A) ends a super-block for the row at A: ZF += (d*dx)*isum.
#define Q6KFIN(ZF, ZI, A) \
	VCVTDQ2PS   ZI, ZI; \
	VMULPS.BCST 288 A, Z29, Z22; \
	VFMADD231PS Z22, ZI, ZF

// Q6KSUBn(S): sub-block S against n rows.
#define Q6KSUB1(S) \
	Q6KSUB(S); \
	Q6KROW(Z8, XR0, 4*S, 16*S, Z22)

#define Q6KSUB2(S) \
	Q6KSUB1(S); \
	Q6KROW(Z9, XR1, 64+4*S, 16*S, Z23)

#define Q6KSUB4(S) \
	Q6KSUB2(S); \
	Q6KROW(Z10, XR2, 128+4*S, 16*S, Z22); \
	Q6KROW(Z11, XR3, 192+4*S, 16*S, Z23)

#define Q6KSUB8(S) \
	Q6KSUB4(S); \
	Q6KROW(Z12, XR4, 256+4*S, 16*S, Z22); \
	Q6KROW(Z13, XR5, 320+4*S, 16*S, Z23); \
	Q6KROW(Z14, XR6, 384+4*S, 16*S, Z22); \
	Q6KROW(Z15, XR7, 448+4*S, 16*S, Z23)

// Q6KBLOCK(SUB) runs a super-block's sixteen sub-blocks with SUB and
// loads its d.
#define Q6KBLOCK(SUB) \
	SUB(0); \
	SUB(1); \
	SUB(2); \
	SUB(3); \
	SUB(4); \
	SUB(5); \
	SUB(6); \
	SUB(7); \
	SUB(8); \
	SUB(9); \
	SUB(10); \
	SUB(11); \
	SUB(12); \
	SUB(13); \
	SUB(14); \
	SUB(15); \
	VCVTPH2PS 256(R8), Z29

#define Q6KOFF1 \
	Q6KOFF(XR0, 0)

#define Q6KOFF2 \
	Q6KOFF1; \
	Q6KOFF(XR1, 64)

#define Q6KOFF4 \
	Q6KOFF2; \
	Q6KOFF(XR2, 128); \
	Q6KOFF(XR3, 192)

#define Q6KOFF8 \
	Q6KOFF4; \
	Q6KOFF(XR4, 256); \
	Q6KOFF(XR5, 320); \
	Q6KOFF(XR6, 384); \
	Q6KOFF(XR7, 448)

#define Q6KFIN1 \
	Q6KFIN(Z0, Z8, XR0)

#define Q6KFIN2 \
	Q6KFIN1; \
	Q6KFIN(Z1, Z9, XR1)

#define Q6KFIN4 \
	Q6KFIN2; \
	Q6KFIN(Z2, Z10, XR2); \
	Q6KFIN(Z3, Z11, XR3)

#define Q6KFIN8 \
	Q6KFIN4; \
	Q6KFIN(Z4, Z12, XR4); \
	Q6KFIN(Z5, Z13, XR5); \
	Q6KFIN(Z6, Z14, XR6); \
	Q6KFIN(Z7, Z15, XR7)

// func q6_Kp16x1(w, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)
TEXT ·q6_Kp16x1(SB), NOSPLIT, $64-56
	LOADARGSK
	Q6KCONST
	VPXORD Z0, Z0, Z0

q6kp1loop:
	Q6KOFF1
	VPXORD Z8, Z8, Z8
	Q6KBLOCK(Q6KSUB1)
	Q6KFIN1
	ADDQ $3392, R8
	ADDQ $304, SI
	DECQ CX
	JNZ  q6kp1loop

	STORE1
	VZEROUPPER
	RET

// func q6_Kp16x2(w, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)
TEXT ·q6_Kp16x2(SB), NOSPLIT, $128-56
	LOADARGSK
	Q6KCONST
	ZEROPAIR(Z0, Z1)

q6kp2loop:
	Q6KOFF2
	ZEROPAIR(Z8, Z9)
	Q6KBLOCK(Q6KSUB2)
	Q6KFIN2
	ADDQ $3392, R8
	ADDQ $304, SI
	DECQ CX
	JNZ  q6kp2loop

	STORE2
	VZEROUPPER
	RET

// func q6_Kp16x4(w, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)
TEXT ·q6_Kp16x4(SB), NOSPLIT, $256-56
	LOADARGSK
	Q6KCONST
	ZEROPAIR(Z0, Z1)
	ZEROPAIR(Z2, Z3)

q6kp4loop:
	Q6KOFF4
	ZEROPAIR(Z8, Z9)
	ZEROPAIR(Z10, Z11)
	Q6KBLOCK(Q6KSUB4)
	Q6KFIN4
	ADDQ $3392, R8
	ADDQ $304, SI
	DECQ CX
	JNZ  q6kp4loop

	STORE4
	VZEROUPPER
	RET

// func q6_Kp16x8(w, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)
TEXT ·q6_Kp16x8(SB), NOSPLIT, $512-56
	LOADARGSK
	Q6KCONST
	ZEROPAIR(Z0, Z1)
	ZEROPAIR(Z2, Z3)
	ZEROPAIR(Z4, Z5)
	ZEROPAIR(Z6, Z7)

q6kp8loop:
	Q6KOFF8
	ZEROPAIR(Z8, Z9)
	ZEROPAIR(Z10, Z11)
	ZEROPAIR(Z12, Z13)
	ZEROPAIR(Z14, Z15)
	Q6KBLOCK(Q6KSUB8)
	Q6KFIN8
	ADDQ $3392, R8
	ADDQ $304, SI
	DECQ CX
	JNZ  q6kp8loop

	STORE8
	VZEROUPPER
	RET

// func q5_Kp16x1(w, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)
TEXT ·q5_Kp16x1(SB), NOSPLIT, $0-56
	LOADARGSK
	Q5KCONST
	VPXORD Z0, Z0, Z0

q5kp1loop:
	VPXORD Z8, Z8, Z8
	Q5KBLOCK(Q5KROWS1)
	KFIN1(Z24, Z25)
	ADDQ $2880, R8
	ADDQ $304, SI
	DECQ CX
	JNZ  q5kp1loop

	STORE1
	VZEROUPPER
	RET

// func q5_Kp16x2(w, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)
TEXT ·q5_Kp16x2(SB), NOSPLIT, $0-56
	LOADARGSK
	Q5KCONST
	ZEROPAIR(Z0, Z1)

q5kp2loop:
	ZEROPAIR(Z8, Z9)
	Q5KBLOCK(Q5KROWS2)
	KFIN2(Z24, Z25)
	ADDQ $2880, R8
	ADDQ $304, SI
	DECQ CX
	JNZ  q5kp2loop

	STORE2
	VZEROUPPER
	RET

// func q5_Kp16x4(w, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)
TEXT ·q5_Kp16x4(SB), NOSPLIT, $0-56
	LOADARGSK
	Q5KCONST
	ZEROPAIR(Z0, Z1)
	ZEROPAIR(Z2, Z3)

q5kp4loop:
	ZEROPAIR(Z8, Z9)
	ZEROPAIR(Z10, Z11)
	Q5KBLOCK(Q5KROWS4)
	KFIN4(Z24, Z25)
	ADDQ $2880, R8
	ADDQ $304, SI
	DECQ CX
	JNZ  q5kp4loop

	STORE4
	VZEROUPPER
	RET

// func q5_Kp16x8(w, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)
TEXT ·q5_Kp16x8(SB), NOSPLIT, $0-56
	LOADARGSK
	Q5KCONST
	ZEROPAIR(Z0, Z1)
	ZEROPAIR(Z2, Z3)
	ZEROPAIR(Z4, Z5)
	ZEROPAIR(Z6, Z7)

q5kp8loop:
	ZEROPAIR(Z8, Z9)
	ZEROPAIR(Z10, Z11)
	ZEROPAIR(Z12, Z13)
	ZEROPAIR(Z14, Z15)
	Q5KBLOCK(Q5KROWS8)
	KFIN8(Z24, Z25)
	ADDQ $2880, R8
	ADDQ $304, SI
	DECQ CX
	JNZ  q5kp8loop

	STORE8
	VZEROUPPER
	RET

// ---- Q3_K ----
//
// Per pair p (0..7) of sub-blocks of a super-block, the three quant words
// at 256+192p unpack into eight weight words (pack_layout.go): Z16-Z19 the
// weights of sub-block 2p, Z20-Z23 those of 2p+1; w0..w5 are bits 0-2 or
// 3-5 of a word (a mask by 0x07 bytes in Z24, after a shift by 3), w6 and
// w7 bits 6-7 of words 0 and 1 (shifted to 0-1) merged with bit 6 or 7 of
// word 2 (shifted to bit 2 and masked by 0x04 bytes, Z26) by a select of
// 0x03 bytes (Z25). A sub-block's sixteen activations meet them in Z31,
// which starts at -4 times the activation's sum of the sixteen (the
// -4*sums of row r's block computed once a block into 64*r(SP)), so that
// it is the sum of (q-4)*x: at most 16*4*127 in magnitude, a word. The
// scale bytes (sc<<2 and two bits of d) widen to words (VPMOVSXBW), shift
// back to sc (VPSRAW) and widen again to dwords whose high word is zero
// (VPMOVZXWD; Z29 for 2p, Z30 for 2p+1), so that one VPDPWSSD adds
// sc*sum to the row's int sum exactly. Sub-blocks 0..7 first shift their
// two bits of d into the words of Y28 (D = D<<2 | byte&3, the 0x0003
// words in Z27; eight steps of a word push out what the previous
// super-block left), which at the end of the super-block is its sixteen
// d, converted into Z29; then a lane's int sum is scaled by d*dx into its
// float sum. The 1-, 2- and 4-row kernels gather odd sub-blocks in
// Z12.., which the even sums take at the end, so that a row's int sum is
// two chains of VPDPWSSD, not one sixteen long.

#define Q3KCONST \
	MOVL         $0x07070707, AX; \
	VPBROADCASTD AX, Z24; \
	MOVL         $0x03030303, AX; \
	VPBROADCASTD AX, Z25; \
	MOVL         $0x04040404, AX; \
	VPBROADCASTD AX, Z26; \
	MOVL         $0x00030003, AX; \
	VPBROADCASTD AX, Z27

// Q3KOFF(A, OFF) stores -4 times the sixteen sums of 16 of the row at A
// as dwords at OFF(SP) (Z16, Z17 scratch).
#define Q3KOFF(A, OFF) \
	VPMOVSXWD 256 A, Z16; \
	VPSLLD    $2, Z16, Z16; \
	VPXORD    Z17, Z17, Z17; \
	VPSUBD    Z16, Z17, Z16; \
	VMOVDQU32 Z16, OFF(SP)

// Q3KQ(P) unpacks pair P's weights into Z16-Z23.
#define Q3KQ(P) \
	VPSRLD     $6, 256+192*P(R8), Z22; \
	VPSRLD     $4, 384+192*P(R8), Z21; \
	VPANDD     Z26, Z21, Z21; \
	VPTERNLOGD $0xe4, Z25, Z21, Z22; \
	VPSRLD     $6, 320+192*P(R8), Z23; \
	VPSRLD     $5, 384+192*P(R8), Z21; \
	VPANDD     Z26, Z21, Z21; \
	VPTERNLOGD $0xe4, Z25, Z21, Z23; \
	VPANDD     256+192*P(R8), Z24, Z16; \
	VPSRLD     $3, 256+192*P(R8), Z17; \
	VPANDD     Z24, Z17, Z17; \
	VPANDD     320+192*P(R8), Z24, Z18; \
	VPSRLD     $3, 320+192*P(R8), Z19; \
	VPANDD     Z24, Z19, Z19; \
	VPANDD     384+192*P(R8), Z24, Z20; \
	VPSRLD     $3, 384+192*P(R8), Z21; \
	VPANDD     Z24, Z21, Z21

// Q3KSC(OFF, YS, ZS) widens the scales at OFF(R8) into (sc, 0) word
// pairs in ZS; Q3KSCD also shifts their two bits of d into Y28.
#define Q3KSC(OFF, YS, ZS) \
	VPMOVSXBW OFF(R8), YS; \
	VPSRAW    $2, YS, YS; \
	VPMOVZXWD YS, ZS

#define Q3KSCD(OFF, YS, ZS) \
	VPMOVSXBW  OFF(R8), YS; \
	VPSLLW     $2, Y28, Y28; \
	VPTERNLOGD $0xf8, Y27, YS, Y28; \
	VPSRAW     $2, YS, YS; \
	VPMOVZXWD  YS, ZS

// Q3KROW(ZI, A, OFF, X, W0, W1, W2, W3, ZS) adds the sub-block of weights
// W0-W3, activations X..X+15 of the row at A, from its offset at OFF(SP),
// times its scales ZS into ZI.
#define Q3KROW(ZI, A, OFF, X, W0, W1, W2, W3, ZS) \
	VPBROADCASTD  OFF(SP), Z31; \
	VPDPBUSD.BCST X+0 A, W0, Z31; \
	VPDPBUSD.BCST X+4 A, W1, Z31; \
	VPDPBUSD.BCST X+8 A, W2, Z31; \
	VPDPBUSD.BCST X+12 A, W3, Z31; \
	VPDPWSSD      ZS, Z31, ZI

// Q3KEn(OFF, X) and Q3KOn(OFF, X): an even or odd sub-block against n
// rows (OFF and X row 0's offset and activations).
#define Q3KE1(OFF, X) \
	Q3KROW(Z8, XR0, OFF, X, Z16, Z17, Z18, Z19, Z29)
#define Q3KO1(OFF, X) \
	Q3KROW(Z12, XR0, OFF, X, Z20, Z21, Z22, Z23, Z30)
#define Q3KE2(OFF, X) \
	Q3KROW(Z8, XR0, OFF, X, Z16, Z17, Z18, Z19, Z29); \
	Q3KROW(Z9, XR1, 64+OFF, X, Z16, Z17, Z18, Z19, Z29)
#define Q3KO2(OFF, X) \
	Q3KROW(Z12, XR0, OFF, X, Z20, Z21, Z22, Z23, Z30); \
	Q3KROW(Z13, XR1, 64+OFF, X, Z20, Z21, Z22, Z23, Z30)
#define Q3KE4(OFF, X) \
	Q3KROW(Z8, XR0, OFF, X, Z16, Z17, Z18, Z19, Z29); \
	Q3KROW(Z9, XR1, 64+OFF, X, Z16, Z17, Z18, Z19, Z29); \
	Q3KROW(Z10, XR2, 128+OFF, X, Z16, Z17, Z18, Z19, Z29); \
	Q3KROW(Z11, XR3, 192+OFF, X, Z16, Z17, Z18, Z19, Z29)
#define Q3KO4(OFF, X) \
	Q3KROW(Z12, XR0, OFF, X, Z20, Z21, Z22, Z23, Z30); \
	Q3KROW(Z13, XR1, 64+OFF, X, Z20, Z21, Z22, Z23, Z30); \
	Q3KROW(Z14, XR2, 128+OFF, X, Z20, Z21, Z22, Z23, Z30); \
	Q3KROW(Z15, XR3, 192+OFF, X, Z20, Z21, Z22, Z23, Z30)
#define Q3KE8(OFF, X) \
	Q3KROW(Z8, XR0, OFF, X, Z16, Z17, Z18, Z19, Z29); \
	Q3KROW(Z9, XR1, 64+OFF, X, Z16, Z17, Z18, Z19, Z29); \
	Q3KROW(Z10, XR2, 128+OFF, X, Z16, Z17, Z18, Z19, Z29); \
	Q3KROW(Z11, XR3, 192+OFF, X, Z16, Z17, Z18, Z19, Z29); \
	Q3KROW(Z12, XR4, 256+OFF, X, Z16, Z17, Z18, Z19, Z29); \
	Q3KROW(Z13, XR5, 320+OFF, X, Z16, Z17, Z18, Z19, Z29); \
	Q3KROW(Z14, XR6, 384+OFF, X, Z16, Z17, Z18, Z19, Z29); \
	Q3KROW(Z15, XR7, 448+OFF, X, Z16, Z17, Z18, Z19, Z29)
#define Q3KO8(OFF, X) \
	Q3KROW(Z8, XR0, OFF, X, Z20, Z21, Z22, Z23, Z30); \
	Q3KROW(Z9, XR1, 64+OFF, X, Z20, Z21, Z22, Z23, Z30); \
	Q3KROW(Z10, XR2, 128+OFF, X, Z20, Z21, Z22, Z23, Z30); \
	Q3KROW(Z11, XR3, 192+OFF, X, Z20, Z21, Z22, Z23, Z30); \
	Q3KROW(Z12, XR4, 256+OFF, X, Z20, Z21, Z22, Z23, Z30); \
	Q3KROW(Z13, XR5, 320+OFF, X, Z20, Z21, Z22, Z23, Z30); \
	Q3KROW(Z14, XR6, 384+OFF, X, Z20, Z21, Z22, Z23, Z30); \
	Q3KROW(Z15, XR7, 448+OFF, X, Z20, Z21, Z22, Z23, Z30)
// Q3KPAIR(P, SC, E, O): pair P's two sub-blocks, their scales by SC,
// against the rows of E and O.
#define Q3KPAIR(P, SC, E, O) \
	Q3KQ(P); \
	SC(32*P, Y29, Z29); \
	E(8*P, 32*P); \
	SC(32*P+16, Y30, Z30); \
	O(8*P+4, 32*P+16)

// Q3KBLOCK(E, O) runs a super-block's eight pairs and converts its d
// into Z29.
#define Q3KBLOCK(E, O) \
	Q3KPAIR(0, Q3KSCD, E, O); \
	Q3KPAIR(1, Q3KSCD, E, O); \
	Q3KPAIR(2, Q3KSCD, E, O); \
	Q3KPAIR(3, Q3KSCD, E, O); \
	Q3KPAIR(4, Q3KSC, E, O); \
	Q3KPAIR(5, Q3KSC, E, O); \
	Q3KPAIR(6, Q3KSC, E, O); \
	Q3KPAIR(7, Q3KSC, E, O); \
	VCVTPH2PS Y28, Z29

// Q3KFIN(ZF, ZI, A) ends a super-block for the row at A: ZF += (d*dx)*isum.
#define Q3KFIN(ZF, ZI, A) \
	VCVTDQ2PS   ZI, ZI; \
	VMULPS.BCST 288 A, Z29, Z31; \
	VFMADD231PS Z31, ZI, ZF
#define Q3KOFF1 \
	Q3KOFF(XR0, 0)
#define Q3KFIN1 \
	VPADDD Z12, Z8, Z8; \
	Q3KFIN(Z0, Z8, XR0)
#define Q3KOFF2 \
	Q3KOFF(XR0, 0); \
	Q3KOFF(XR1, 64)
#define Q3KFIN2 \
	VPADDD Z12, Z8, Z8; \
	VPADDD Z13, Z9, Z9; \
	Q3KFIN(Z0, Z8, XR0); \
	Q3KFIN(Z1, Z9, XR1)
#define Q3KOFF4 \
	Q3KOFF(XR0, 0); \
	Q3KOFF(XR1, 64); \
	Q3KOFF(XR2, 128); \
	Q3KOFF(XR3, 192)
#define Q3KFIN4 \
	VPADDD Z12, Z8, Z8; \
	VPADDD Z13, Z9, Z9; \
	VPADDD Z14, Z10, Z10; \
	VPADDD Z15, Z11, Z11; \
	Q3KFIN(Z0, Z8, XR0); \
	Q3KFIN(Z1, Z9, XR1); \
	Q3KFIN(Z2, Z10, XR2); \
	Q3KFIN(Z3, Z11, XR3)
#define Q3KOFF8 \
	Q3KOFF(XR0, 0); \
	Q3KOFF(XR1, 64); \
	Q3KOFF(XR2, 128); \
	Q3KOFF(XR3, 192); \
	Q3KOFF(XR4, 256); \
	Q3KOFF(XR5, 320); \
	Q3KOFF(XR6, 384); \
	Q3KOFF(XR7, 448)
#define Q3KFIN8 \
	Q3KFIN(Z0, Z8, XR0); \
	Q3KFIN(Z1, Z9, XR1); \
	Q3KFIN(Z2, Z10, XR2); \
	Q3KFIN(Z3, Z11, XR3); \
	Q3KFIN(Z4, Z12, XR4); \
	Q3KFIN(Z5, Z13, XR5); \
	Q3KFIN(Z6, Z14, XR6); \
	Q3KFIN(Z7, Z15, XR7)
// func q3_Kp16x1(w, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)
TEXT ·q3_Kp16x1(SB), NOSPLIT, $64-56
	LOADARGSK
	Q3KCONST
	VPXORD Z0, Z0, Z0
q3kp1loop:
	Q3KOFF1
	ZEROPAIR(Z8, Z12)
	Q3KBLOCK(Q3KE1, Q3KO1)
	Q3KFIN1
	ADDQ $1792, R8
	ADDQ $304, SI
	DECQ CX
	JNZ  q3kp1loop

	STORE1
	VZEROUPPER
	RET
// func q3_Kp16x2(w, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)
TEXT ·q3_Kp16x2(SB), NOSPLIT, $128-56
	LOADARGSK
	Q3KCONST
	ZEROPAIR(Z0, Z1)
q3kp2loop:
	Q3KOFF2
	ZEROPAIR(Z8, Z9)
	ZEROPAIR(Z12, Z13)
	Q3KBLOCK(Q3KE2, Q3KO2)
	Q3KFIN2
	ADDQ $1792, R8
	ADDQ $304, SI
	DECQ CX
	JNZ  q3kp2loop

	STORE2
	VZEROUPPER
	RET
// func q3_Kp16x4(w, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)
TEXT ·q3_Kp16x4(SB), NOSPLIT, $256-56
	LOADARGSK
	Q3KCONST
	ZEROPAIR(Z0, Z1)
	ZEROPAIR(Z2, Z3)
q3kp4loop:
	Q3KOFF4
	ZEROPAIR(Z8, Z9)
	ZEROPAIR(Z10, Z11)
	ZEROPAIR(Z12, Z13)
	ZEROPAIR(Z14, Z15)
	Q3KBLOCK(Q3KE4, Q3KO4)
	Q3KFIN4
	ADDQ $1792, R8
	ADDQ $304, SI
	DECQ CX
	JNZ  q3kp4loop

	STORE4
	VZEROUPPER
	RET
// func q3_Kp16x8(w, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)
TEXT ·q3_Kp16x8(SB), NOSPLIT, $512-56
	LOADARGSK
	Q3KCONST
	ZEROPAIR(Z0, Z1)
	ZEROPAIR(Z2, Z3)
	ZEROPAIR(Z4, Z5)
	ZEROPAIR(Z6, Z7)
q3kp8loop:
	Q3KOFF8
	ZEROPAIR(Z8, Z9)
	ZEROPAIR(Z10, Z11)
	ZEROPAIR(Z12, Z13)
	ZEROPAIR(Z14, Z15)
	Q3KBLOCK(Q3KE8, Q3KO8)
	Q3KFIN8
	ADDQ $1792, R8
	ADDQ $304, SI
	DECQ CX
	JNZ  q3kp8loop

	STORE8
	VZEROUPPER
	RET

// ---- Q2_K ----
//
// Per quad q (0..3) of sub-blocks of a super-block, the four quant words
// at 320+256q hold sub-block 4q+f in bits 2f..2f+1 of each byte (pack_layout.go):
// masks by 0x03 and 0x0C bytes (Z24, Z25) unpack sub-blocks 4q and 4q+1
// into Z16-Z19 and Z20-Z23, then, after a shift of the words by 4,
// 4q+2 and 4q+3. The odd sub-blocks' quants are thus 4q, their sums of
// q*x four times the sum (at most 4*16*3*127, a word). A sub-block's
// sixteen activations meet them in Z30, from zero, and one VPDPWSSD adds
// the sum times the scale, a dword whose high word is zero, to the row's
// int sum: 4*sc for an even sub-block (Z28), sc for an odd one (Z29),
// so that the int sum is four times the reference's. A pair of
// sub-blocks' scale bytes (m | sc<<4, side by side) widen to words
// (VPMOVZXBW); sc<<2 of the even one is the dword shifted right by 2 and
// masked by 0x3C (Z27), sc of the odd one the dword shifted by 20. At
// the end of a super-block the mins are those words masked by 0x0F bytes
// (Z26): (m, m') pairs in Z16-Z23 that meet pairs of the activation's
// sums of 16 by VPDPWSSD.BCST; per lane, acc += (d/4*dx)*isum (d/4 is
// exact, and so is the float of four times the sum), then acc -=
// (dmin*dx)*imin (Z28 the d/4, Z29 dmin, Z30, Z31 scratch). The 1-, 2-
// and 4-row kernels gather odd sub-blocks in Z12.., as Q3_K's.

#define Q2KCONST \
	MOVL         $0x03030303, AX; \
	VPBROADCASTD AX, Z24; \
	MOVL         $0x0c0c0c0c, AX; \
	VPBROADCASTD AX, Z25; \
	MOVL         $0x0f0f0f0f, AX; \
	VPBROADCASTD AX, Z26; \
	MOVL         $0x3c, AX; \
	VPBROADCASTD AX, Z27

// Q2KLO(Q) unpacks sub-blocks 4Q, 4Q+1 into Z16-Z19, Z20-Z23; Q2KHI(Q)
// sub-blocks 4Q+2, 4Q+3.
#define Q2KLO(Q) \
	VPANDD 320+256*Q(R8), Z24, Z16; \
	VPANDD 384+256*Q(R8), Z24, Z17; \
	VPANDD 448+256*Q(R8), Z24, Z18; \
	VPANDD 512+256*Q(R8), Z24, Z19; \
	VPANDD 320+256*Q(R8), Z25, Z20; \
	VPANDD 384+256*Q(R8), Z25, Z21; \
	VPANDD 448+256*Q(R8), Z25, Z22; \
	VPANDD 512+256*Q(R8), Z25, Z23

#define Q2KHI(Q) \
	VPSRLD $4, 320+256*Q(R8), Z20; \
	VPSRLD $4, 384+256*Q(R8), Z21; \
	VPSRLD $4, 448+256*Q(R8), Z22; \
	VPSRLD $4, 512+256*Q(R8), Z23; \
	VPANDD Z24, Z20, Z16; \
	VPANDD Z24, Z21, Z17; \
	VPANDD Z24, Z22, Z18; \
	VPANDD Z24, Z23, Z19; \
	VPANDD Z25, Z20, Z20; \
	VPANDD Z25, Z21, Z21; \
	VPANDD Z25, Z22, Z22; \
	VPANDD Z25, Z23, Z23

// Q2KSC(OFF) widens the scales of the pair of sub-blocks at OFF(R8):
// (4*sc, 0) of the even one into Z28, (sc, 0) of the odd one into Z29.
#define Q2KSC(OFF) \
	VPMOVZXBW OFF(R8), Z29; \
	VPSRLD    $2, Z29, Z28; \
	VPANDD    Z27, Z28, Z28; \
	VPSRLD    $20, Z29, Z29

// Q2KROW(ZI, A, X, W0, W1, W2, W3, ZS) adds the sub-block of weights
// W0-W3, activations X..X+15 of the row at A, times its scales ZS into ZI.
#define Q2KROW(ZI, A, X, W0, W1, W2, W3, ZS) \
	VPXORD        Z30, Z30, Z30; \
	VPDPBUSD.BCST X+0 A, W0, Z30; \
	VPDPBUSD.BCST X+4 A, W1, Z30; \
	VPDPBUSD.BCST X+8 A, W2, Z30; \
	VPDPBUSD.BCST X+12 A, W3, Z30; \
	VPDPWSSD      ZS, Z30, ZI

// Q2KEn(X) and Q2KOn(X): an even or odd sub-block, activations X of row
// 0, against n rows.
#define Q2KE1(X) \
	Q2KROW(Z8, XR0, X, Z16, Z17, Z18, Z19, Z28)
#define Q2KO1(X) \
	Q2KROW(Z12, XR0, X, Z20, Z21, Z22, Z23, Z29)
#define Q2KE2(X) \
	Q2KROW(Z8, XR0, X, Z16, Z17, Z18, Z19, Z28); \
	Q2KROW(Z9, XR1, X, Z16, Z17, Z18, Z19, Z28)
#define Q2KO2(X) \
	Q2KROW(Z12, XR0, X, Z20, Z21, Z22, Z23, Z29); \
	Q2KROW(Z13, XR1, X, Z20, Z21, Z22, Z23, Z29)
#define Q2KE4(X) \
	Q2KROW(Z8, XR0, X, Z16, Z17, Z18, Z19, Z28); \
	Q2KROW(Z9, XR1, X, Z16, Z17, Z18, Z19, Z28); \
	Q2KROW(Z10, XR2, X, Z16, Z17, Z18, Z19, Z28); \
	Q2KROW(Z11, XR3, X, Z16, Z17, Z18, Z19, Z28)
#define Q2KO4(X) \
	Q2KROW(Z12, XR0, X, Z20, Z21, Z22, Z23, Z29); \
	Q2KROW(Z13, XR1, X, Z20, Z21, Z22, Z23, Z29); \
	Q2KROW(Z14, XR2, X, Z20, Z21, Z22, Z23, Z29); \
	Q2KROW(Z15, XR3, X, Z20, Z21, Z22, Z23, Z29)
#define Q2KE8(X) \
	Q2KROW(Z8, XR0, X, Z16, Z17, Z18, Z19, Z28); \
	Q2KROW(Z9, XR1, X, Z16, Z17, Z18, Z19, Z28); \
	Q2KROW(Z10, XR2, X, Z16, Z17, Z18, Z19, Z28); \
	Q2KROW(Z11, XR3, X, Z16, Z17, Z18, Z19, Z28); \
	Q2KROW(Z12, XR4, X, Z16, Z17, Z18, Z19, Z28); \
	Q2KROW(Z13, XR5, X, Z16, Z17, Z18, Z19, Z28); \
	Q2KROW(Z14, XR6, X, Z16, Z17, Z18, Z19, Z28); \
	Q2KROW(Z15, XR7, X, Z16, Z17, Z18, Z19, Z28)
#define Q2KO8(X) \
	Q2KROW(Z8, XR0, X, Z20, Z21, Z22, Z23, Z29); \
	Q2KROW(Z9, XR1, X, Z20, Z21, Z22, Z23, Z29); \
	Q2KROW(Z10, XR2, X, Z20, Z21, Z22, Z23, Z29); \
	Q2KROW(Z11, XR3, X, Z20, Z21, Z22, Z23, Z29); \
	Q2KROW(Z12, XR4, X, Z20, Z21, Z22, Z23, Z29); \
	Q2KROW(Z13, XR5, X, Z20, Z21, Z22, Z23, Z29); \
	Q2KROW(Z14, XR6, X, Z20, Z21, Z22, Z23, Z29); \
	Q2KROW(Z15, XR7, X, Z20, Z21, Z22, Z23, Z29)
// Q2KQUAD(Q, E, O): quad Q's four sub-blocks against the rows of E and O.
#define Q2KQUAD(Q, E, O) \
	Q2KLO(Q); \
	Q2KSC(64*Q); \
	E(64*Q); \
	O(64*Q+16); \
	Q2KHI(Q); \
	Q2KSC(64*Q+32); \
	E(64*Q+32); \
	O(64*Q+48)

// Q2KBLOCK(E, O) runs a super-block's four quads, then loads its mins as
// (m, m') pairs into Z16-Z23, d/4 into Z28 and dmin into Z29.
#define Q2KBLOCK(E, O) \
	Q2KQUAD(0, E, O); \
	Q2KQUAD(1, E, O); \
	Q2KQUAD(2, E, O); \
	Q2KQUAD(3, E, O); \
	VPMOVZXBW    (R8), Z16; \
	VPMOVZXBW    32(R8), Z17; \
	VPMOVZXBW    64(R8), Z18; \
	VPMOVZXBW    96(R8), Z19; \
	VPMOVZXBW    128(R8), Z20; \
	VPMOVZXBW    160(R8), Z21; \
	VPMOVZXBW    192(R8), Z22; \
	VPMOVZXBW    224(R8), Z23; \
	VPANDD       Z26, Z16, Z16; \
	VPANDD       Z26, Z17, Z17; \
	VPANDD       Z26, Z18, Z18; \
	VPANDD       Z26, Z19, Z19; \
	VPANDD       Z26, Z20, Z20; \
	VPANDD       Z26, Z21, Z21; \
	VPANDD       Z26, Z22, Z22; \
	VPANDD       Z26, Z23, Z23; \
	MOVL         $0x3e800000, AX; \
	VPBROADCASTD AX, Z31; \
	VCVTPH2PS    256(R8), Z28; \
	VMULPS       Z31, Z28, Z28; \
	VCVTPH2PS    288(R8), Z29

// Q2KFIN(ZF, ZI, A) ends a super-block for the row at A: ZF +=
// (d/4*dx)*isum, then ZF -= (dmin*dx)*imin, the mins' sum gathered in Z30.
#define Q2KFIN(ZF, ZI, A) \
	VCVTDQ2PS     ZI, ZI; \
	VMULPS.BCST   288 A, Z28, Z31; \
	VFMADD231PS   Z31, ZI, ZF; \
	VPXORD        Z30, Z30, Z30; \
	VPDPWSSD.BCST 256 A, Z16, Z30; \
	VPDPWSSD.BCST 260 A, Z17, Z30; \
	VPDPWSSD.BCST 264 A, Z18, Z30; \
	VPDPWSSD.BCST 268 A, Z19, Z30; \
	VPDPWSSD.BCST 272 A, Z20, Z30; \
	VPDPWSSD.BCST 276 A, Z21, Z30; \
	VPDPWSSD.BCST 280 A, Z22, Z30; \
	VPDPWSSD.BCST 284 A, Z23, Z30; \
	VCVTDQ2PS     Z30, Z30; \
	VMULPS.BCST   288 A, Z29, Z31; \
	VFNMADD231PS  Z31, Z30, ZF
#define Q2KFIN1 \
	VPADDD Z12, Z8, Z8; \
	Q2KFIN(Z0, Z8, XR0)
#define Q2KFIN2 \
	VPADDD Z12, Z8, Z8; \
	VPADDD Z13, Z9, Z9; \
	Q2KFIN(Z0, Z8, XR0); \
	Q2KFIN(Z1, Z9, XR1)
#define Q2KFIN4 \
	VPADDD Z12, Z8, Z8; \
	VPADDD Z13, Z9, Z9; \
	VPADDD Z14, Z10, Z10; \
	VPADDD Z15, Z11, Z11; \
	Q2KFIN(Z0, Z8, XR0); \
	Q2KFIN(Z1, Z9, XR1); \
	Q2KFIN(Z2, Z10, XR2); \
	Q2KFIN(Z3, Z11, XR3)
#define Q2KFIN8 \
	Q2KFIN(Z0, Z8, XR0); \
	Q2KFIN(Z1, Z9, XR1); \
	Q2KFIN(Z2, Z10, XR2); \
	Q2KFIN(Z3, Z11, XR3); \
	Q2KFIN(Z4, Z12, XR4); \
	Q2KFIN(Z5, Z13, XR5); \
	Q2KFIN(Z6, Z14, XR6); \
	Q2KFIN(Z7, Z15, XR7)
// func q2_Kp16x1(w, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)
TEXT ·q2_Kp16x1(SB), NOSPLIT, $0-56
	LOADARGSK
	Q2KCONST
	VPXORD Z0, Z0, Z0
q2kp1loop:
	ZEROPAIR(Z8, Z12)
	Q2KBLOCK(Q2KE1, Q2KO1)
	Q2KFIN1
	ADDQ $1344, R8
	ADDQ $304, SI
	DECQ CX
	JNZ  q2kp1loop

	STORE1
	VZEROUPPER
	RET
// func q2_Kp16x2(w, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)
TEXT ·q2_Kp16x2(SB), NOSPLIT, $0-56
	LOADARGSK
	Q2KCONST
	ZEROPAIR(Z0, Z1)
q2kp2loop:
	ZEROPAIR(Z8, Z9)
	ZEROPAIR(Z12, Z13)
	Q2KBLOCK(Q2KE2, Q2KO2)
	Q2KFIN2
	ADDQ $1344, R8
	ADDQ $304, SI
	DECQ CX
	JNZ  q2kp2loop

	STORE2
	VZEROUPPER
	RET
// func q2_Kp16x4(w, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)
TEXT ·q2_Kp16x4(SB), NOSPLIT, $0-56
	LOADARGSK
	Q2KCONST
	ZEROPAIR(Z0, Z1)
	ZEROPAIR(Z2, Z3)
q2kp4loop:
	ZEROPAIR(Z8, Z9)
	ZEROPAIR(Z10, Z11)
	ZEROPAIR(Z12, Z13)
	ZEROPAIR(Z14, Z15)
	Q2KBLOCK(Q2KE4, Q2KO4)
	Q2KFIN4
	ADDQ $1344, R8
	ADDQ $304, SI
	DECQ CX
	JNZ  q2kp4loop

	STORE4
	VZEROUPPER
	RET
// func q2_Kp16x8(w, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int)
TEXT ·q2_Kp16x8(SB), NOSPLIT, $0-56
	LOADARGSK
	Q2KCONST
	ZEROPAIR(Z0, Z1)
	ZEROPAIR(Z2, Z3)
	ZEROPAIR(Z4, Z5)
	ZEROPAIR(Z6, Z7)
q2kp8loop:
	ZEROPAIR(Z8, Z9)
	ZEROPAIR(Z10, Z11)
	ZEROPAIR(Z12, Z13)
	ZEROPAIR(Z14, Z15)
	Q2KBLOCK(Q2KE8, Q2KO8)
	Q2KFIN8
	ADDQ $1344, R8
	ADDQ $304, SI
	DECQ CX
	JNZ  q2kp8loop

	STORE8
	VZEROUPPER
	RET
