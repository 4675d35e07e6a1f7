// DOTF32(A, B) leaves in X0 (lane 0) the dot product of the CX values
// (a multiple of 8) at A and B, BX holding CX rounded down to 32: four
// accumulators over 32-value chunks, 8-value tail chunks into Y0, then
// Y0+Y1, Y2+Y3, their sum, the two halves and two VHADDPS. dotAVX and
// attnScores1AVX both expand it, so a decode row's attention scores are
// bit-identical to Dot's. Uses AX and Y0-Y7; its labels are dotloop,
// dottail and dotdone, so a function expands it once.
#define DOTF32(A, B) \
	VXORPS       Y0, Y0, Y0; \
	VXORPS       Y1, Y1, Y1; \
	VXORPS       Y2, Y2, Y2; \
	VXORPS       Y3, Y3, Y3; \
	XORQ         AX, AX; \
	TESTQ        BX, BX; \
	JZ           dottail; \
dotloop: \
	VMOVUPS      (A)(AX*4), Y4; \
	VMOVUPS      32(A)(AX*4), Y5; \
	VMOVUPS      64(A)(AX*4), Y6; \
	VMOVUPS      96(A)(AX*4), Y7; \
	VFMADD231PS  (B)(AX*4), Y4, Y0; \
	VFMADD231PS  32(B)(AX*4), Y5, Y1; \
	VFMADD231PS  64(B)(AX*4), Y6, Y2; \
	VFMADD231PS  96(B)(AX*4), Y7, Y3; \
	ADDQ         $32, AX; \
	CMPQ         AX, BX; \
	JLT          dotloop; \
dottail: \
	CMPQ         AX, CX; \
	JGE          dotdone; \
	VMOVUPS      (A)(AX*4), Y4; \
	VFMADD231PS  (B)(AX*4), Y4, Y0; \
	ADDQ         $8, AX; \
	JMP          dottail; \
dotdone: \
	VADDPS       Y1, Y0, Y0; \
	VADDPS       Y3, Y2, Y2; \
	VADDPS       Y2, Y0, Y0; \
	VEXTRACTF128 $1, Y0, X1; \
	VADDPS       X1, X0, X0; \
	VHADDPS      X0, X0, X0; \
	VHADDPS      X0, X0, X0
