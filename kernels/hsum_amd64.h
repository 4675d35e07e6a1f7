// Shared by the product kernels (kernels_amd64.s, f32x3_amd64.s, attn_amd64.s,
// and through intdot_amd64.h the integer ones).

// HSUM4 reduces the eight lanes of each of A,B,C,D (whose low halves are
// XA..XD) and stores the four sums at DST; T is a scratch X register.
#define HSUM4(A, B, C, D, XA, XB, XC, XD, T, DST) \
	VEXTRACTF128 $1, A, T; \
	VADDPS T, XA, XA; \
	VEXTRACTF128 $1, B, T; \
	VADDPS T, XB, XB; \
	VEXTRACTF128 $1, C, T; \
	VADDPS T, XC, XC; \
	VEXTRACTF128 $1, D, T; \
	VADDPS T, XD, XD; \
	VHADDPS XB, XA, XA; \
	VHADDPS XD, XC, XC; \
	VHADDPS XC, XA, XA; \
	VMOVUPS XA, DST

