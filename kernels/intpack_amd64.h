// Shared by the packed-weight kernels (intpack_amd64.s, intpack_k_amd64.s):
// the activation row strides and the masked stores of the sixteen-lane
// sums. The kernels take the first activation row in SI, the output in
// DI with its row stride in DX, and the lane mask in K1.

// PSTRIDES sets, from one activation row stride in BX, R10, R11 and R12
// to three, five and seven strides, so that rows 0..7 are (SI),
// (SI)(BX*1), (SI)(BX*2), (SI)(R10*1), (SI)(BX*4), (SI)(R11*1),
// (SI)(R10*2) and (SI)(R12*1).
#define PSTRIDES \
	LEAQ (BX)(BX*2), R10; \
	LEAQ (BX)(BX*4), R11; \
	LEAQ (R10)(BX*4), R12

// PSTOREn stores the float sums of activation rows 0..n-1 (Z0..Zn-1) at
// DI + j*DX, the lanes of K1 only. Uses AX.
#define PSTORE1 \
	VMOVUPS Z0, K1, (DI)

#define PSTORE2 \
	PSTORE1; \
	VMOVUPS Z1, K1, (DI)(DX*1)

#define PSTORE4 \
	PSTORE2; \
	VMOVUPS Z2, K1, (DI)(DX*2); \
	LEAQ    (DX)(DX*2), AX; \
	VMOVUPS Z3, K1, (DI)(AX*1)

#define PSTORE8 \
	PSTORE4; \
	VMOVUPS Z4, K1, (DI)(DX*4); \
	LEAQ    (DX)(DX*4), AX; \
	VMOVUPS Z5, K1, (DI)(AX*1); \
	LEAQ    (DX)(DX*2), AX; \
	VMOVUPS Z6, K1, (DI)(AX*2); \
	LEAQ    (DX)(AX*2), AX; \
	VMOVUPS Z7, K1, (DI)(AX*1)
