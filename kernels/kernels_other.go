//go:build !amd64 || purego

package kernels

// On other architectures, and with the purego build tag (to test the
// fallback on amd64), every product and vector op takes the pure-Go path.

func matMulRowsArch(out []float32, w *Matrix, x []float32, batch, lo, hi int) bool { return false }

func dotArch(a, b []float32) (float32, bool) { return 0, false }

func axpyArch(alpha float32, x, y []float32) bool { return false }

// haveAVX2 is false: there are no assembly kernels in this build.
const haveAVX2 = false

// haveAVX512, haveAVXVNNI and haveAMX are false for the same reason.
const (
	haveAVX512  = false
	haveAVXVNNI = false
	haveAMX     = false
)

func intRowsAMX(out []float32, w *Matrix, act *quantAct, batch, lo, hi int) bool { return false }

func intRowsPackedVNNI(out []float32, w *Matrix, act *quantAct, batch, lo, hi int) bool { return false }

func floatRowsZ(out []float32, w *Matrix, x []float32, batch, lo, hi int) bool { return false }

func floatRowsPacked(out []float32, w *Matrix, x []float32, batch, lo, hi int) bool { return false }

func intRowsPacked(out []float32, w *Matrix, act *quantAct, batch, lo, hi int) bool { return false }

func expSubSumArch(x []float32, sub float32) (float32, bool) { return 0, false }

func siluArch(x []float32) bool { return false }

func swigluArch(h, g []float32) bool { return false }

func intRowsArch(out []float32, w *Matrix, act *quantAct, batch, lo, hi int) bool { return false }

func attnScoresArch(out []float32, q *[4][]float32, keys []float32, stride, n, hs int) bool {
	return false
}

func attnValuesArch(o *[4][]float32, a []float32, vals []float32, stride, n, hs int) bool {
	return false
}

func quantizeQ8ActArch(dst []q8Act, x []float32) bool { return false }

func attnScores1Arch(out, q, keys []float32, stride, n int) bool { return false }

func attnValues1Arch(o, a, vals []float32, stride, n int) bool { return false }

func quantizeQ8KActArch(kp kpath, dst []q8KAct, x []float32) bool { return false }

func maxNumberArch(x []float32) (float32, int) { return 0, 0 }

func indexArch(x []float32, v float32) (int, int) { return -1, 0 }

func expScaleSumArch(dst, x []float32, sub, scale float32) (float64, int) { return 0, 0 }

func notBelowArch(x []float32, v float32) (int, int) { return -1, 0 }
