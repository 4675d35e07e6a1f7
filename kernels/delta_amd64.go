//go:build amd64 && !purego

package kernels

// Implemented in delta_amd64.s (avx2: column counts a multiple of 8) and
// deltaz_amd64.s (avx512: a multiple of 16); strides are in bytes and k,
// dk are at least 1. mm4 and mm1 are mm over four rows and one;
// deltaRows is DeltaStep's second pass (deltaRowsGeneric).
//
//go:noescape
func mm4A(c, a, b *float32, k, n, lda, ldb, ldc int, cs *float32, css int)

//go:noescape
func mm1A(c, a, b *float32, k, n, ldb int, cs *float32)

//go:noescape
func deltaRowsA(s, k, q, u *float32, dk, dv int, eg float32)

//go:noescape
func mm4Z(c, a, b *float32, k, n, lda, ldb, ldc int, cs *float32, css int)

//go:noescape
func mm1Z(c, a, b *float32, k, n, ldb int, cs *float32)

//go:noescape
func deltaRowsZ(s, k, q, u *float32, dk, dv int, eg float32)

// deltaWidth is the column multiple of the assembly path p runs for n
// columns: 16 for the avx512 kernels, 8 for the avx2 ones (which the
// paths above avx2 take where n is no multiple of 16), or 0 for none.
func deltaWidth(p kpath, n int) int {
	switch {
	case p >= pathAVX512 && n%16 == 0:
		return 16
	case p >= pathAVX2 && n%8 == 0:
		return 8
	}
	return 0
}

// mmArch is mm over m <= 4 rows, cs holding one value or m (the caller
// has checked the bounds).
func mmArch(p kpath, c []float32, ldc int, a []float32, lda int, b []float32, ldb int, m, k, n int, cs []float32) bool {
	w := deltaWidth(p, n)
	if w == 0 || k == 0 {
		return false
	}
	css := 4 // cs holds m values, or one for all rows
	if len(cs) == 1 {
		css = 0
	}
	// Direct calls: through a func value the arguments would escape.
	switch {
	case m == 4 && w == 16:
		mm4Z(&c[0], &a[0], &b[0], k, n, 4*lda, 4*ldb, 4*ldc, &cs[0], css)
	case m == 4:
		mm4A(&c[0], &a[0], &b[0], k, n, 4*lda, 4*ldb, 4*ldc, &cs[0], css)
	default:
		for i := range m {
			if w == 16 {
				mm1Z(&c[i*ldc], &a[i*lda], &b[0], k, n, 4*ldb, &cs[i*css/4])
			} else {
				mm1A(&c[i*ldc], &a[i*lda], &b[0], k, n, 4*ldb, &cs[i*css/4])
			}
		}
	}
	return true
}

func deltaRowsArch(p kpath, S []float32, dk, dv int, q, k []float32, eg float32, out []float32) bool {
	w := deltaWidth(p, dv)
	if w == 0 {
		return false
	}
	_, _, _, _ = S[dk*dv-1], q[dk-1], k[dk-1], out[dv-1]
	if w == 16 {
		deltaRowsZ(&S[0], &k[0], &q[0], &out[0], dk, dv, eg)
	} else {
		deltaRowsA(&S[0], &k[0], &q[0], &out[0], dk, dv, eg)
	}
	return true
}
