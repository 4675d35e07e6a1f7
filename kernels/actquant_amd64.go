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

// Implemented in actquant_k2_amd64.s.
//
//go:noescape
func quantizeQ8KActAVX2(dst *q8KAct, x *float32, n int)

// quantizeQ8KActArch is quantizeQ8KAct in assembly for kernel path kp:
// AVX-512 on avx512 and amx, AVX2 on avx2 and avxvnni (which must run
// on CPUs without AVX-512, and through Options.Path on those with it);
// both are bit-identical to the Go form for values that are not NaN.
// False means the caller runs the Go form.
func quantizeQ8KActArch(kp kpath, dst []q8KAct, x []float32) bool {
	avx512 := kp >= pathAVX512 && haveAVX512
	if !avx512 && (kp < pathAVX2 || !haveAVX2) {
		return false
	}
	n := len(x) / QK_K
	if n == 0 {
		return true
	}
	_ = dst[n-1]
	if avx512 {
		quantizeQ8KActAVX512(&dst[0], &x[0], n)
	} else {
		quantizeQ8KActAVX2(&dst[0], &x[0], n)
	}
	return true
}
