package kernels

// The small matrix products of the delta rule (delta.go, deltachunk.go):
// an m x k by k x n product added to an m x n block, every matrix
// row-major with its own row stride. The assembly (deltamm_amd64.s,
// deltammz_amd64.s) holds four rows by up to 64 columns of the result in
// registers across the whole k sum, so each row of B is loaded once per
// four result rows, where an Axpy per term would load and store the
// result row k times.

// mm sets C[i][:n] = cs_i*C[i][:n] + sum over t < k of A[i][t]*B[t][:n]
// for i < m, where row i of X starts at X[i*ldx] and cs_i is cs[0] when
// cs has one value, else cs[i]; the sum runs in t order.
func mm(p kpath, c []float32, ldc int, a []float32, lda int, b []float32, ldb int, m, k, n int, cs []float32) {
	mmRows(p, c, ldc, a, lda, b, ldb, m, k, n, cs, mmFull)
}

// mmTri is mm for an A that is lower triangular with its diagonal (A[i][t]
// = 0 for t > i): row i's sum stops by t = i, or a little later, adding
// the zeros.
func mmTri(p kpath, c []float32, ldc int, a []float32, lda int, b []float32, ldb int, m, k, n int, cs []float32) {
	mmRows(p, c, ldc, a, lda, b, ldb, m, k, n, cs, mmLowerA)
}

// mmLower is mm where only C's lower triangle (with its diagonal) is
// wanted: row i's columns stop by i+1 rounded up to 16 (so the column
// count suits every path's assembly), the rest of C unwritten.
func mmLower(p kpath, c []float32, ldc int, a []float32, lda int, b []float32, ldb int, m, k, n int, cs []float32) {
	mmRows(p, c, ldc, a, lda, b, ldb, m, k, n, cs, mmLowerC)
}

// mmShape says which terms of a product mmRows may skip.
type mmShape uint8

const (
	mmFull   mmShape = iota
	mmLowerA         // A lower triangular: row i's sum stops by t = i
	mmLowerC         // C's lower triangle only: row i's columns stop by j = i
)

func mmRows(p kpath, c []float32, ldc int, a []float32, lda int, b []float32, ldb int, m, k, n int, cs []float32, shape mmShape) {
	if m == 0 || n == 0 {
		return
	}
	// Bounds, once, so that the assembly may index freely.
	_ = c[(m-1)*ldc+n-1]
	if len(cs) != 1 {
		_ = cs[m-1]
	}
	if k > 0 {
		_ = a[(m-1)*lda+k-1]
		_ = b[(k-1)*ldb+n-1]
	}
	for i := 0; i < m; {
		r := min(4, m-i)
		kk, nn := k, n
		switch shape {
		case mmLowerA:
			kk = min(k, i+r)
		case mmLowerC:
			nn = min(n, (i+r+15)&^15)
		}
		csi := cs
		if len(cs) != 1 {
			csi = cs[i : i+r]
		}
		if !mmArch(p, c[i*ldc:], ldc, a[i*lda:], lda, b, ldb, r, kk, nn, csi) {
			mmGeneric(c[i*ldc:], ldc, a[i*lda:], lda, b, ldb, r, kk, nn, csi)
		}
		i += r
	}
}

func mmGeneric(c []float32, ldc int, a []float32, lda int, b []float32, ldb int, m, k, n int, cs []float32) {
	for i := range m {
		row := c[i*ldc : i*ldc+n]
		if f := cs[min(i, len(cs)-1)]; f != 1 {
			for j := range row {
				row[j] *= f
			}
		}
		for t := range k {
			axpyGeneric(a[i*lda+t], b[t*ldb:t*ldb+n], row)
		}
	}
}
