package kernels

import "fmt"

// deltaC is the chunk of DeltaChunk: the tokens whose interactions are
// solved as one C x C triangular system (the size transformers and
// flash-linear-attention use).
const deltaC = 64

// DeltaChunkScratch is the number of float32 values of scratch DeltaChunk
// needs for n tokens with key size dk and value size dv: about
// 2*64*(64+dk+dv) + 64*dk for n of 64 and more, less for shorter runs.
func DeltaChunkScratch(n, dk, dv int) int {
	c := min(n, deltaC)
	ld := (c + 15) &^ 15
	return 2*ld + 2*c*ld + dk*ld + c*(2*dk+2*dv)
}

// deltaBufs are the pieces of DeltaChunk's scratch. The c x c matrices
// and kT have rows ld apart (c rounded up to 16, so the column counts of
// their products suit the assembly).
type deltaBufs struct {
	ld     int
	G, tmp []float32 // cumulative log-decays; a row of coefficients
	D, A   []float32 // c x ld: e^(G_i-G_j); the system, then T, then P
	kT     []float32 // dk x ld: the keys transposed, then decayed to the chunk's end
	kb, W  []float32 // c x dk: beta*k, then -beta*e^G*k, then e^G*q; W = T kb
	vb, Vn []float32 // c x dv: beta*v; the corrected values
}

func carveDelta(s []float32, n, dk, dv int) deltaBufs {
	c := min(n, deltaC)
	ld := (c + 15) &^ 15
	take := func(m int) []float32 {
		x := s[:m:m]
		s = s[m:]
		return x
	}
	return deltaBufs{ld: ld, G: take(ld), tmp: take(ld), D: take(c * ld), A: take(c * ld),
		kT: take(dk * ld), kb: take(c * dk), W: take(c * dk), vb: take(c * dv), Vn: take(c * dv)}
}

// DeltaChunk processes n consecutive tokens of one head, as n DeltaStep
// calls would up to float32 rounding: q and k are n x dk row-major, v and
// out n x dv, g and beta hold n values, S (dk x dv) is the incoming state
// and is left as the state after the last token. scratch must hold
// DeltaChunkScratch(n, dk, dv) values; nothing else is written. The
// tokens go in chunks of 64 in the WY form (as transformers'
// torch_chunk_gated_delta_rule): within a chunk, with G the cumulative
// sum of g, the tokens' corrections solve one triangular system, and the
// rest is matrix products against S. Decays are taken as e^(G_i-G_j) with
// i >= j, never as quotients, so heads that decay by e^-30 a token give
// zeros, not NaN.
func DeltaChunk(S []float32, dk, dv, n int, q, k, v, g, beta, out, scratch []float32) {
	deltaChunk(best, S, dk, dv, n, q, k, v, g, beta, out, scratch)
}

func deltaChunk(p kpath, S []float32, dk, dv, n int, q, k, v, g, beta, out, scratch []float32) {
	checkDelta(S, dk, dv, n, q, k, v, out)
	if len(g) < n || len(beta) < n {
		panic(fmt.Sprintf("kernels: DeltaChunk of %d tokens has %d decays, %d betas", n, len(g), len(beta)))
	}
	if need := DeltaChunkScratch(n, dk, dv); len(scratch) < need {
		panic(fmt.Sprintf("kernels: DeltaChunk scratch has %d values, need %d", len(scratch), need))
	}
	if n == 0 {
		return
	}
	if dk == 0 || dv == 0 {
		clear(out[:n*dv])
		return
	}
	b := carveDelta(scratch, n, dk, dv)
	for t := 0; t < n; t += deltaC {
		c := min(deltaC, n-t)
		b.chunk(p, S, dk, dv, c, q[t*dk:], k[t*dk:], v[t*dv:], g[t:t+c], beta[t:t+c], out[t*dv:])
	}
}

// chunk is one chunk of n <= deltaC tokens.
func (b *deltaBufs) chunk(p kpath, S []float32, dk, dv, n int, q, k, v, g, beta, out []float32) {
	ld, np := b.ld, (n+15)&^15
	b.prepare(dk, dv, n, np, q, k, v, g, beta)
	// A = -(kb k^T) .* D below the diagonal, solved into T = (I - A)^-1 form.
	clear(b.A[:n*ld])
	mm(p, b.A, ld, b.kb, dk, b.kT, ld, n, dk, np, 1)
	b.solve(p, n, np)
	// U = T vb; W = T (-kb e^G); Vn = U + W S.
	clear(b.Vn[:n*dv])
	mmTri(p, b.Vn, dv, b.A, ld, b.vb, dv, n, n, dv, 1)
	for i := range n {
		scaleTo(b.kb[i*dk:(i+1)*dk], b.kb[i*dk:(i+1)*dk], -expf(b.G[i]))
	}
	clear(b.W[:n*dk])
	mmTri(p, b.W, dk, b.A, ld, b.kb, dk, n, n, dk, 1)
	mm(p, b.Vn, dv, b.W, dk, S, dv, n, dk, dv, 1)
	// out = (q e^G) S + P Vn, P = (q k^T) .* D on and below the diagonal.
	clear(b.A[:n*ld])
	mm(p, b.A, ld, q, dk, b.kT, ld, n, dk, np, 1)
	for i := range n {
		row, d := b.A[i*ld:i*ld+np], b.D[i*ld:i*ld+i+1]
		for j := range d {
			row[j] *= d[j]
		}
		clear(row[i+1:])
		scaleTo(b.kb[i*dk:(i+1)*dk], q[i*dk:(i+1)*dk], expf(b.G[i]))
	}
	clear(out[:n*dv])
	mm(p, out, dv, b.kb, dk, S, dv, n, dk, dv, 1)
	mmTri(p, out, dv, b.A, ld, b.Vn, dv, n, n, dv, 1)
	// S = e^G_last S + (k e^(G_last-G))^T Vn.
	gl := b.G[n-1]
	for j := range n {
		f := expf(gl - b.G[j])
		for m := range dk {
			b.kT[m*ld+j] *= f
		}
	}
	mm(p, S, dv, b.kT, ld, b.Vn, dv, dk, n, dv, expf(gl))
}

// prepare fills G, D, kT (zero past column n), kb and vb.
func (b *deltaBufs) prepare(dk, dv, n, np int, q, k, v, g, beta []float32) {
	ld := b.ld
	var s float32
	for i := range n {
		s += g[i]
		b.G[i] = s
	}
	for i := range n {
		d := b.D[i*ld : i*ld+i+1]
		for j := range d {
			d[j] = expf(b.G[i] - b.G[j])
		}
		scaleTo(b.kb[i*dk:(i+1)*dk], k[i*dk:(i+1)*dk], beta[i])
		scaleTo(b.vb[i*dv:(i+1)*dv], v[i*dv:(i+1)*dv], beta[i])
	}
	for m := range dk {
		row := b.kT[m*ld : m*ld+np]
		for i := range n {
			row[i] = k[i*dk+m]
		}
		clear(row[n:])
	}
}

// solve turns A = kb k^T into T: first A[i][j] = -A[i][j]*D[i][j] for j <
// i and 0 elsewhere, then row by row A[i][:i] += A[i][:i] A[:i][:i] with
// the rows above already done, and the unit diagonal.
func (b *deltaBufs) solve(p kpath, n, np int) {
	ld := b.ld
	for i := range n {
		row, d := b.A[i*ld:i*ld+np], b.D[i*ld:i*ld+i]
		for j := range d {
			row[j] = -row[j] * d[j]
		}
		clear(row[i:])
	}
	for i := 2; i < n; i++ {
		copy(b.tmp[:i], b.A[i*ld:i*ld+i])
		// Columns from i on stay 0: rows above i are 0 there.
		mm(p, b.A[i*ld:], ld, b.tmp, i, b.A, ld, 1, i, (i+15)&^15, 1)
	}
	for i := range n {
		b.A[i*ld+i] = 1
	}
}

// scaleTo sets dst[i] = f*x[i].
func scaleTo(dst, x []float32, f float32) {
	dst = dst[:len(x)]
	for i, v := range x {
		dst[i] = f * v
	}
}
