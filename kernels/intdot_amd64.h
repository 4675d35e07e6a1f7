#include "hsum_amd64.h"

// Macros shared by the integer-dot kernels (intdot_amd64.s,
// intdot_k_amd64.s): argument loading, the four row accumulators Y0-Y3
// and their reduction.

// HSUMI4 reduces the eight lanes of Y0-Y3 and stores the four sums at
// DST: the float kernels' HSUM4 on the integer kernels' accumulators.
#define HSUMI4(DST) HSUM4(Y0, Y1, Y2, Y3, X0, X1, X2, X3, X8, DST)

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

