package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestAttn4 checks AttnScores4 and AttnValues4 against float64 sums on
// head sizes with and without the assembly (multiples of 16, and 40),
// cache strides wider than the head, 1 to 9 positions and a repeated
// query; AttnValues4 must also match Axpy position by position exactly,
// since it replaces that loop.
func TestAttn4(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	for _, hs := range []int{16, 40, 48, 64, 128} {
		for _, n := range []int{1, 2, 5, 9} {
			t.Run(fmt.Sprintf("hs=%d/n=%d", hs, n), func(t *testing.T) {
				stride := 3*hs + 8
				keys, vals := randVec(rng, n*stride), randVec(rng, n*stride)
				q := [4][]float32{randVec(rng, hs), randVec(rng, hs), randVec(rng, hs)}
				q[3] = q[1]
				sc := make([]float32, 4*n)
				AttnScores4(sc, &q, keys, stride, n)
				for p := range n {
					for r := range 4 {
						var want, mag float64
						for c := range hs {
							v := float64(q[r][c]) * float64(keys[p*stride+c])
							want, mag = want+v, mag+math.Abs(v)
						}
						if d := math.Abs(float64(sc[4*p+r]) - want); d > 1e-5*mag {
							t.Fatalf("score of row %d at %d = %v, want %v", r, p, sc[4*p+r], want)
						}
					}
				}
				a := randVec(rng, 4*n)
				a[4*(n-1)+2] = 0 // a causal row skipping the last position
				var o [4][]float32
				for r := range o {
					o[r] = randVec(rng, hs) // overwritten, not added to
				}
				AttnValues4(&o, a, vals, stride, n)
				for r := range 4 {
					want := make([]float32, hs)
					for p := range n {
						Axpy(a[4*p+r], vals[p*stride:p*stride+hs], want)
					}
					for c := range hs {
						if o[r][c] != want[c] {
							t.Fatalf("value sum of row %d col %d = %v, position-by-position Axpy %v", r, c, o[r][c], want[c])
						}
					}
				}
			})
		}
	}
}
