// Software prefetch of the next group of four weight rows, for the product
// kernels that stream weights (kernels_amd64.s, intdot*_amd64.s; R13 is
// theirs). The hardware prefetchers do not follow four interleaved row
// streams of a few hundred bytes each, so without it a one-row product
// waited on DRAM at every new group (BenchmarkDecodeQuant Q8_0, stories110M
// shape, this AMD EPYC, quiet, alternated runs: 54-68 -> 117-121 tok/s,
// against a prefetch 1 KiB ahead in each row, which only covered the rows
// after the first of each group; Q6_K 58-71 -> 115-143, Q4_K 114-126 ->
// 164, Q5_K 96-100 -> 118-124). R13, because KSCALES takes R12.

// PFNEXT sets R13 to the start of the next group of four rows: the rows
// are consecutive, so it lies one row stride (R11-R10) past the last row.
// A short group (repeated rows) gets a stride of 0 and prefetches itself.
#define PFNEXT \
	MOVQ R11, R13; \
	SUBQ R10, R13; \
	ADDQ R11, R13

// PFLIN2/PFLIN3 ask for the next group's bytes in memory order, two or
// three lines an iteration, and advance R13 by the iteration's bytes
// (STEP, at most 128 or 192): by the time this group is done, the next
// one is in cache, and the four row streams never wait on a line.
#define PFLIN2(STEP) \
	PREFETCHT0 (R13); \
	PREFETCHT0 64(R13); \
	ADDQ       $STEP, R13

#define PFLIN3(STEP) \
	PREFETCHT0 (R13); \
	PREFETCHT0 64(R13); \
	PREFETCHT0 128(R13); \
	ADDQ       $STEP, R13

// PF4L(OFF) asks for the four lines from OFF bytes past R13, for the
// K-quant kernels, whose iteration reads 576 to 840 bytes.
#define PF4L(OFF) \
	PREFETCHT0 OFF(R13); \
	PREFETCHT0 OFF+64(R13); \
	PREFETCHT0 OFF+128(R13); \
	PREFETCHT0 OFF+192(R13)
