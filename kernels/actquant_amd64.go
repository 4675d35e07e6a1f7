//go:build amd64 && !purego

package kernels

// Implemented in actquant_amd64.s.
//
//go:noescape
func quantizeQ8ActAVX(dst *q8Act, x *float32, n int)

// quantizeQ8ActArch is quantizeQ8Act in AVX2 assembly, bit-identical to
// it; false means the caller runs the Go form.
func quantizeQ8ActArch(dst []q8Act, x []float32) bool {
	n := len(x) / Q8Block
	if n == 0 {
		return true
	}
	_ = dst[n-1]
	quantizeQ8ActAVX(&dst[0], &x[0], n)
	return true
}

//go:noescape
func quantizeQ8KActAVX512(dst *q8KAct, x *float32, n int)

// quantizeQ8KActArch is quantizeQ8KAct in AVX-512 assembly (on CPUs with
// the avx512 path), bit-identical to it for values that are not NaN;
// false means the caller runs the Go form.
func quantizeQ8KActArch(dst []q8KAct, x []float32) bool {
	if !haveAVX512 {
		return false
	}
	n := len(x) / QK_K
	if n == 0 {
		return true
	}
	_ = dst[n-1]
	quantizeQ8KActAVX512(&dst[0], &x[0], n)
	return true
}
