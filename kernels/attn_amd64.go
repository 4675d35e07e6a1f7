//go:build amd64 && !purego

package kernels

import "unsafe"

// Implemented in attn_amd64.s: AttnScores4 and AttnValues4 for a head
// size hs that is a multiple of 16; stride is in bytes.
//
//go:noescape
func attnScores4AVX(q *[4]unsafe.Pointer, out, keys *float32, stride, hs, n int)

//go:noescape
func attnValues4AVX(o *[4]unsafe.Pointer, a, vals *float32, stride, hs, n int)

func attnScoresArch(out []float32, q *[4][]float32, keys []float32, stride, n, hs int) bool {
	if !haveAVX2 || hs == 0 || hs%16 != 0 {
		return false
	}
	var qp [4]unsafe.Pointer
	for r := range qp {
		qp[r] = unsafe.Pointer(&q[r][0])
	}
	done := 0
	if haveAVX512 && n >= 4 {
		// Four keys a pass, sixteen dots reduced at once; the last n%4
		// keys take the AVX2 kernel.
		done = n &^ 3
		attnScores4Z(&qp, &out[0], &keys[0], 4*stride, hs, done)
	}
	if done < n {
		attnScores4AVX(&qp, &out[4*done], &keys[done*stride], 4*stride, hs, n-done)
	}
	return true
}

func attnValuesArch(o *[4][]float32, a []float32, vals []float32, stride, n, hs int) bool {
	if !haveAVX2 || hs == 0 || hs%16 != 0 {
		return false
	}
	var op [4]unsafe.Pointer
	for r := range op {
		op[r] = unsafe.Pointer(&o[r][0])
	}
	if !haveAVX512 {
		attnValues4AVX(&op, &a[0], &vals[0], 4*stride, hs, n)
		return true
	}
	// Up to 64 columns a pass over the positions (a head of 48 or 64 in
	// one), the rest in one pass of its 16-column chunks.
	for col := 0; col < hs; col += 64 {
		switch min(hs-col, 64) / 16 {
		case 4:
			attnValues4Z4(&op, &a[0], &vals[0], 4*stride, col, n)
		case 3:
			attnValues4Z3(&op, &a[0], &vals[0], 4*stride, col, n)
		case 2:
			attnValues4Z2(&op, &a[0], &vals[0], 4*stride, col, n)
		default:
			attnValues4Z1(&op, &a[0], &vals[0], 4*stride, col, n)
		}
	}
	return true
}

// Implemented in attn1_amd64.s: AttnScores1 and AttnValues1 for a head
// size that is a multiple of 8; stride is in bytes.
//
//go:noescape
func attnScores1AVX(out, q, keys *float32, stride, hs, n int)

//go:noescape
func attnValues1AVX(o, a, vals *float32, stride, hs, n int)

func attnScores1Arch(out, q, keys []float32, stride, n int) bool {
	hs := len(q)
	if !haveAVX2 || hs == 0 || hs%8 != 0 {
		return false
	}
	attnScores1AVX(&out[0], &q[0], &keys[0], 4*stride, hs, n)
	return true
}

func attnValues1Arch(o, a, vals []float32, stride, n int) bool {
	hs := len(o)
	if !haveAVX2 || hs == 0 || hs%8 != 0 {
		return false
	}
	attnValues1AVX(&o[0], &a[0], &vals[0], 4*stride, hs, n)
	return true
}

// Implemented in attnz_amd64.s: the avx512 forms of AttnScores4 (for a
// multiple of 4 positions) and of AttnValues4 (C = 1 to 4 chunks of 16
// columns from column col); stride is in bytes.
//
//go:noescape
func attnScores4Z(q *[4]unsafe.Pointer, out, keys *float32, stride, hs, n int)

//go:noescape
func attnValues4Z1(o *[4]unsafe.Pointer, a, vals *float32, stride, col, n int)

//go:noescape
func attnValues4Z2(o *[4]unsafe.Pointer, a, vals *float32, stride, col, n int)

//go:noescape
func attnValues4Z3(o *[4]unsafe.Pointer, a, vals *float32, stride, col, n int)

//go:noescape
func attnValues4Z4(o *[4]unsafe.Pointer, a, vals *float32, stride, col, n int)
