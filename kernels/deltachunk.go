package kernels

import "fmt"

// deltaC is the chunk of DeltaChunk: the tokens whose interactions are
// solved as one C x C triangular system (the size transformers and
// flash-linear-attention use).
const deltaC = 64

// DeltaChunkScratch is the number of float32 values of scratch DeltaChunk
// needs for n tokens with key size dk and value size dv: about
// 2*64*(64+dk) + 64*(dk+dv) for n of 64 and more, less for shorter runs.
func DeltaChunkScratch(n, dk, dv int) int {
	c := min(n, deltaC)
	ld := (c + 15) &^ 15
	return 3*ld + 2*c*ld + 2*dk*ld + c*(dk+dv)
}

// deltaBufs are the pieces of DeltaChunk's scratch. The c x c matrices
// and the transposed keys have rows ld apart (c rounded up to 16, so the
// column counts of their products suit the assembly).
type deltaBufs struct {
	ld         int
	G, eG, tmp []float32 // cumulative log-decays, e^G; a row of coefficients
	D, A       []float32 // c x ld: e^(G_i-G_j); the system, then T, then P
	kT, kTd    []float32 // dk x ld: k transposed; and decayed to the chunk's end
	W          []float32 // c x dk: T (-beta e^G k)
	Vn         []float32 // c x dv: the corrected values
}

func carveDelta(s []float32, n, dk, dv int) deltaBufs {
	c := min(n, deltaC)
	ld := (c + 15) &^ 15
	take := func(m int) []float32 {
		x := s[:m:m]
		s = s[m:]
		return x
	}
	return deltaBufs{ld: ld, G: take(ld), eG: take(ld), tmp: take(ld), D: take(c * ld), A: take(c * ld),
		kT: take(dk * ld), kTd: take(dk * ld), W: take(c * dk), Vn: take(c * dv)}
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
	one := [1]float32{1}
	b.prepare(p, dk, n, np, k, g)
	// A = -beta_i (k_i . k_j) D_ij below the diagonal, solved into T.
	clear(b.A[:n*ld])
	mmLower(p, b.A, ld, k, dk, b.kT, ld, n, dk, np, one[:])
	b.solve(p, n, np, beta)
	// U = T diag(beta) v; W = T diag(-beta e^G) k; Vn = U + W S.
	b.scaleCols(n, beta, 1)
	clear(b.Vn[:n*dv])
	mmTri(p, b.Vn, dv, b.A, ld, v, dv, n, n, dv, one[:])
	b.scaleCols(n, b.eG, -1)
	clear(b.W[:n*dk])
	mmTri(p, b.W, dk, b.A, ld, k, dk, n, n, dk, one[:])
	mm(p, b.Vn, dv, b.W, dk, S, dv, n, dk, dv, one[:])
	// out = diag(e^G) q S + P Vn, P = (q k^T) .* D on and below the diagonal.
	clear(b.A[:n*ld])
	mmLower(p, b.A, ld, q, dk, b.kT, ld, n, dk, np, one[:])
	for i := range n {
		row, d := b.A[i*ld:i*ld+np], b.D[i*ld:i*ld+i+1]
		for j := range d {
			row[j] *= d[j]
		}
		clear(row[i+1:])
	}
	clear(out[:n*dv])
	mm(p, out, dv, q, dk, S, dv, n, dk, dv, one[:])
	mmTri(p, out, dv, b.A, ld, b.Vn, dv, n, n, dv, b.eG[:n])
	// S = e^G_last S + kTd Vn, kTd the keys decayed to the chunk's end.
	eL := [1]float32{b.eG[n-1]}
	mm(p, S, dv, b.kTd, ld, b.Vn, dv, dk, n, dv, eL[:])
}

// prepare fills G, e^G, D (e^(G_i-G_j) for j <= i), and kT and kTd (zero
// from column n).
func (b *deltaBufs) prepare(p kpath, dk, n, np int, k, g []float32) {
	ld := b.ld
	var s float32
	for i := range n {
		s += g[i]
		b.G[i] = s
		b.eG[i] = expf(s)
	}
	for i := range n {
		// e^(x_j - sub) with x_j = -G_j and sub = -G_i.
		d := b.D[i*ld : i*ld+i+1]
		for j := range d {
			d[j] = -b.G[j]
		}
		if p == pathGeneric {
			expSubSumGeneric(d, -b.G[i])
		} else if _, ok := expSubSumArch(d, -b.G[i]); !ok {
			expSubSumGeneric(d, -b.G[i])
		}
	}
	// Token by token: k's rows read in order, each kT line written by 16
	// tokens in a row while it stays in L1.
	kT, kTd := b.kT[:dk*ld], b.kTd[:dk*ld]
	for i := range n {
		dn := b.D[(n-1)*ld+i] // e^(G_last - G_i)
		for m, x := range k[i*dk : (i+1)*dk] {
			kT[m*ld+i], kTd[m*ld+i] = x, x*dn
		}
	}
	for m := range dk {
		clear(kT[m*ld+n : m*ld+np])
		clear(kTd[m*ld+n : m*ld+np])
	}
}

// solve turns A = k k^T into T: first A[i][j] = -beta_i*A[i][j]*D[i][j]
// for j < i and 0 elsewhere, then row by row A[i][:i] += A[i][:i]
// A[:i][:i] with the rows above already done, and the unit diagonal.
func (b *deltaBufs) solve(p kpath, n, np int, beta []float32) {
	ld := b.ld
	one := [1]float32{1}
	for i := range n {
		row, d, bi := b.A[i*ld:i*ld+np], b.D[i*ld:i*ld+i], -beta[i]
		for j := range d {
			row[j] *= bi * d[j]
		}
		clear(row[i:])
	}
	for i := 2; i < n; i++ {
		copy(b.tmp[:i], b.A[i*ld:i*ld+i])
		// Columns from i on stay 0: rows above i are 0 there.
		mm(p, b.A[i*ld:], ld, b.tmp, i, b.A, ld, 1, i, (i+15)&^15, one[:])
	}
	for i := range n {
		b.A[i*ld+i] = 1
	}
}

// scaleCols multiplies column j of the lower triangle of A (diagonal
// included) by f*x[j].
func (b *deltaBufs) scaleCols(n int, x []float32, f float32) {
	for i := range n {
		row := b.A[i*b.ld : i*b.ld+i+1]
		for j := range row {
			row[j] *= f * x[j]
		}
	}
}
