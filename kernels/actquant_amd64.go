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
