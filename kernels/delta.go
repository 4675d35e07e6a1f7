package kernels

import "fmt"

// The Gated DeltaNet delta rule (the linear-attention layers of Qwen3.5
// and Qwen3-Next): per value head a dk x dv float32 state S, row-major
// (S[i*dv+j], i over the key dimension), that each token decays by e^g,
// corrects toward its value along its key with strength beta, and reads
// with its query. DeltaStep is the recurrent form, one token (decode);
// DeltaChunk is the chunked (WY) form of n tokens (prefill), whose work is
// small matrix products (deltamm.go). Both choose the assembly of the
// fastest path (best) and fall back to pure Go, the reference; e^g is
// always expf in Go, so every path decays by the same factor.

// DeltaStep advances the state S of one head by one token and sets out
// to the token's output:
//
//	S <- e^g * S
//	u  = beta * (v - S^T k)
//	S <- S + k u^T
//	out = S^T q
//
// k and q have dk values (k L2-normalised, q already scaled), v and out dv;
// g <= 0 is the log-decay and beta in (0,1) the write strength. S has
// dk*dv values. It reads S twice and writes it once: a first pass sums
// w = S^T k, a second makes each new row and adds it, weighted by q, to
// out. out must not overlap the other arguments.
func DeltaStep(S []float32, dk, dv int, q, k, v []float32, g, beta float32, out []float32) {
	deltaStep(best, S, dk, dv, q, k, v, g, beta, out)
}

func deltaStep(p kpath, S []float32, dk, dv int, q, k, v []float32, g, beta float32, out []float32) {
	checkDelta(S, dk, dv, 1, q, k, v, out)
	if dk == 0 || dv == 0 {
		return
	}
	eg := expf(g)
	// Pass 1: out = S^T k, then out = u, the row update.
	clear(out[:dv])
	one := [1]float32{1}
	mm(p, out, dv, k, dk, S, dv, 1, dk, dv, one[:])
	for j, w := range out[:dv] {
		out[j] = beta * (v[j] - eg*w)
	}
	// Pass 2: the new rows, and out = S^T q over them (out holds u
	// until each column block's sum replaces it).
	if !deltaRowsArch(p, S, dk, dv, q, k, eg, out) {
		deltaRowsGeneric(S, dk, dv, q, k, eg, out)
	}
}

// deltaRowsGeneric sets S[i,:] = eg*S[i,:] + k[i]*u for every row, u
// being out's values, and then out = S^T q, one block of columns at a time.
func deltaRowsGeneric(S []float32, dk, dv int, q, k []float32, eg float32, out []float32) {
	const blk = 64
	var u, o [blk]float32
	for c0 := 0; c0 < dv; c0 += blk {
		w := min(blk, dv-c0)
		copy(u[:w], out[c0:c0+w])
		clear(o[:w])
		for i := range dk {
			row := S[i*dv+c0 : i*dv+c0+w]
			ki, qi := k[i], q[i]
			for j, s := range row {
				s = eg*s + ki*u[j]
				row[j] = s
				o[j] += qi * s
			}
		}
		copy(out[c0:c0+w], o[:w])
	}
}

// checkDelta panics, like an index out of range, unless the state holds
// dk*dv values and q, k hold n rows of dk, v and out n rows of dv.
func checkDelta(S []float32, dk, dv, n int, q, k, v, out []float32) {
	switch {
	case dk < 0 || dv < 0 || n < 0:
		panic(fmt.Sprintf("kernels: delta rule of %d tokens with dk %d, dv %d", n, dk, dv))
	case len(S) < dk*dv:
		panic(fmt.Sprintf("kernels: delta state has %d values, need %d x %d", len(S), dk, dv))
	case len(q) < n*dk || len(k) < n*dk:
		panic(fmt.Sprintf("kernels: delta q, k have %d, %d values, need %d x %d", len(q), len(k), n, dk))
	case len(v) < n*dv || len(out) < n*dv:
		panic(fmt.Sprintf("kernels: delta v, out have %d, %d values, need %d x %d", len(v), len(out), n, dv))
	}
}
