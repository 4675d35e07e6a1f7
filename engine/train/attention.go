package train

import "math"

// attnScratch holds one window of T scores and T score gradients per query
// head, so heads run in parallel without sharing.
type attnScratch[F float] struct {
	p, dp []F
}

func (s *attnScratch[F]) grow(heads, n int) {
	if len(s.p) < heads*n {
		s.p, s.dp = make([]F, heads*n), make([]F, heads*n)
	}
}

func silu[F float](x F) F { return x / (1 + F(math.Exp(-float64(x)))) }

// siluGrad is d silu(x)/dx = σ(x)·(1 + x·(1 − σ(x))).
func siluGrad[F float](x F) F {
	s := 1 / (1 + F(math.Exp(-float64(x))))
	return s * (1 + x*(1-s))
}

// attention computes rows s of A.o and A.lse from A.q, A.k, A.v: causal
// grouped-query attention of every position t in s over positions 0..t,
// query heads in parallel.
func (nt *net[F]) attention(A *layerActs[F], s span) {
	nt.la.pool.Run(nt.c.Heads, func(lo, hi int) {
		for h := lo; h < hi; h++ {
			nt.attnHead(A, h, s)
		}
	})
}

func (nt *net[F]) attnHead(A *layerActs[F], h int, s span) {
	c := nt.c
	n, q, kv, hs := nt.a.n, c.QDim(), c.KVDim(), c.HeadDim()
	off := (h / (c.Heads / c.KVHeads)) * hs
	scale := F(1 / math.Sqrt(float64(hs)))
	sc := nt.att.p[h*n : (h+1)*n]
	for t := s.lo; t < s.hi; t++ {
		qt := A.q[t*q+h*hs : t*q+(h+1)*hs]
		mx := F(math.Inf(-1))
		for p := 0; p <= t; p++ {
			sc[p] = dot(qt, A.k[p*kv+off:p*kv+off+hs]) * scale
			mx = max(mx, sc[p])
		}
		var sum float64
		for p := 0; p <= t; p++ {
			e := math.Exp(float64(sc[p] - mx))
			sc[p] = F(e)
			sum += e
		}
		out := A.o[t*q+h*hs : t*q+(h+1)*hs]
		clear(out)
		inv := F(1 / sum)
		for p := 0; p <= t; p++ {
			axpy(sc[p]*inv, A.v[p*kv+off:p*kv+off+hs], out)
		}
		A.lse[t*c.Heads+h] = mx + F(math.Log(sum))
	}
}

// attentionBack adds the gradients of A.q, A.k and A.v given bs.do to
// bs.dq, bs.dk, bs.dv, for the query rows s, recomputing the probabilities
// from the log-sum-exps. Query row t adds to the key and value gradients of
// rows 0..t, so those are complete only once the last rows have run. Each
// KV head and its query heads run on one worker, so no two workers write
// the same key or value gradient; on it the rows go in ascending order,
// within and across units, each row's query heads in turn, so every key
// and value gradient sums its terms in the same order however the rows
// are cut.
func (nt *net[F]) attentionBack(A *layerActs[F], s span) {
	c := nt.c
	nt.la.pool.Run(c.KVHeads, func(lo, hi int) {
		group := c.Heads / c.KVHeads
		for g := lo; g < hi; g++ {
			for t := s.lo; t < s.hi; t++ {
				for h := g * group; h < (g+1)*group; h++ {
					nt.attnRowBack(A, h, t)
				}
			}
		}
	})
}

// attnRowBack is query row t of head h of attentionBack.
func (nt *net[F]) attnRowBack(A *layerActs[F], h, t int) {
	c, b := nt.c, &nt.bs
	n, q, kv, hs := nt.a.n, c.QDim(), c.KVDim(), c.HeadDim()
	off := (h / (c.Heads / c.KVHeads)) * hs
	scale := F(1 / math.Sqrt(float64(hs)))
	pr, dp := nt.att.p[h*n:(h+1)*n], nt.att.dp[h*n:(h+1)*n]
	qt := A.q[t*q+h*hs : t*q+(h+1)*hs]
	dot_ := b.do[t*q+h*hs : t*q+(h+1)*hs]
	lse := A.lse[t*c.Heads+h]
	var D F
	for p := 0; p <= t; p++ {
		pr[p] = F(math.Exp(float64(dot(qt, A.k[p*kv+off:p*kv+off+hs])*scale - lse)))
		dp[p] = dot(dot_, A.v[p*kv+off:p*kv+off+hs])
		D += pr[p] * dp[p]
	}
	dqt := b.dq[t*q+h*hs : t*q+(h+1)*hs]
	for p := 0; p <= t; p++ {
		ds := pr[p] * (dp[p] - D) * scale
		axpy(ds, A.k[p*kv+off:p*kv+off+hs], dqt)
		axpy(ds, qt, b.dk[p*kv+off:p*kv+off+hs])
		axpy(pr[p], dot_, b.dv[p*kv+off:p*kv+off+hs])
	}
}
