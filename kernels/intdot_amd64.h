// Macros shared by the integer-dot kernels (intdot_amd64.s,
// intdot_k_amd64.s): argument loading, the four row accumulators Y0-Y3
// and their reduction.

// HSUMI4 reduces the eight lanes of Y0-Y3 and stores the four sums at DST.
#define HSUMI4(DST) \
	VEXTRACTF128 $1, Y0, X8; \
	VADDPS       X8, X0, X0; \
	VEXTRACTF128 $1, Y1, X8; \
	VADDPS       X8, X1, X1; \
	VEXTRACTF128 $1, Y2, X8; \
	VADDPS       X8, X2, X2; \
	VEXTRACTF128 $1, Y3, X8; \
	VADDPS       X8, X3, X3; \
	VHADDPS      X1, X0, X0; \
	VHADDPS      X3, X2, X2; \
	VHADDPS      X2, X0, X0; \
	VMOVUPS      X0, DST

#define ZEROACC \
	VXORPS Y0, Y0, Y0; \
	VXORPS Y1, Y1, Y1; \
	VXORPS Y2, Y2, Y2; \
	VXORPS Y3, Y3, Y3

#define LOADARGSI \
	MOVQ w0+0(FP), R8; \
	MOVQ w1+8(FP), R9; \
	MOVQ w2+16(FP), R10; \
	MOVQ w3+24(FP), R11; \
	MOVQ xa+32(FP), SI; \
	MOVQ n+40(FP), CX; \
	MOVQ out+48(FP), DI

#define ONES16(Y) \
	VPCMPEQW Y, Y, Y; \
	VPSRLW   $15, Y, Y

