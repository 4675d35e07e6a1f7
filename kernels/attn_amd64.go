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
	attnScores4AVX(&qp, &out[0], &keys[0], 4*stride, hs, n)
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
	attnValues4AVX(&op, &a[0], &vals[0], 4*stride, hs, n)
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
