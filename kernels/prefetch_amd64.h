// Software prefetch of the next group of four weight rows, for the product
// kernels that stream weights (kernels_amd64.s, intdot*_amd64.s; R12 is
// theirs). The hardware prefetchers do not follow four interleaved row
// streams of a few hundred bytes each, so without it a one-row product
// waited on DRAM at every new group (BenchmarkDecodeQuant Q8_0, stories110M
// shape, this AMD EPYC, quiet, alternated runs: 54-68 -> 117-121 tok/s,
// against a prefetch 1 KiB ahead in each row, which only covered the rows
// after the first of each group; Q6_K 61-71 -> 121-143).

// PFNEXT sets R12 to the start of the next group of four rows: the rows
// are consecutive, so it lies one row stride (R11-R10) past the last row.
// A short group (repeated rows) gets a stride of 0 and prefetches itself.
#define PFNEXT \
	MOVQ R11, R12; \
	SUBQ R10, R12; \
	ADDQ R11, R12

// PFLIN2/PFLIN3 ask for the next group's bytes in memory order, two or
// three lines an iteration, and advance R12 by the iteration's bytes
// (STEP, at most 128 or 192): by the time this group is done, the next
// one is in cache, and the four row streams never wait on a line.
#define PFLIN2(STEP) \
	PREFETCHT0 (R12); \
	PREFETCHT0 64(R12); \
	ADDQ       $STEP, R12

#define PFLIN3(STEP) \
	PREFETCHT0 (R12); \
	PREFETCHT0 64(R12); \
	PREFETCHT0 128(R12); \
	ADDQ       $STEP, R12

// PF4L(OFF) asks for the four lines from OFF bytes past R12, for the
// K-quant kernels, whose iteration reads 576 to 840 bytes.
#define PF4L(OFF) \
	PREFETCHT0 OFF(R12); \
	PREFETCHT0 OFF+64(R12); \
	PREFETCHT0 OFF+128(R12); \
	PREFETCHT0 OFF+192(R12)
