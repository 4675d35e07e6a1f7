//go:build !amd64 || purego

package kernels

// Without assembly the delta rule's products and row updates run in Go.

func mmArch(p kpath, c []float32, ldc int, a []float32, lda int, b []float32, ldb int, m, k, n int, cs []float32) bool {
	return false
}

func deltaRowsArch(p kpath, S []float32, dk, dv int, q, k []float32, eg float32, out []float32) bool {
	return false
}
