package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
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

// TestAttn1MatchesDotAxpy checks that the one-query attention calls give,
// bit for bit, what one Dot per position and one Axpy per position give,
// on every head size a model may have (multiples of 8 take the assembly,
// others the Go loop), strides wider than the head and n from 0 up.
func TestAttn1MatchesDotAxpy(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	for _, hs := range []int{4, 8, 12, 16, 24, 32, 40, 64, 72, 96, 128, 256} {
		for _, n := range []int{0, 1, 2, 7, 33} {
			stride := hs + 8*rng.IntN(3)
			keys := randVec(rng, n*stride+hs)
			q := randVec(rng, hs)
			want := make([]float32, n)
			for p := range want {
				want[p] = Dot(q, keys[p*stride:p*stride+hs])
			}
			got := make([]float32, n+1)
			got[n] = 42 // past the end
			AttnScores1(got, q, keys, stride, n)
			for p := range want {
				if math.Float32bits(got[p]) != math.Float32bits(want[p]) {
					t.Fatalf("hs %d n %d: score %d = %v, Dot gives %v", hs, n, p, got[p], want[p])
				}
			}
			if got[n] != 42 {
				t.Fatalf("hs %d n %d: AttnScores1 wrote past n", hs, n)
			}
			a := randVec(rng, n)
			o0 := randVec(rng, hs+1)
			wantO := slices.Clone(o0[:hs])
			for p, w := range a {
				Axpy(w, keys[p*stride:p*stride+hs], wantO)
			}
			gotO := slices.Clone(o0)
			AttnValues1(gotO[:hs], a, keys, stride, n)
			for i := range wantO {
				if math.Float32bits(gotO[i]) != math.Float32bits(wantO[i]) {
					t.Fatalf("hs %d n %d: value %d = %v, Axpy gives %v", hs, n, i, gotO[i], wantO[i])
				}
			}
			if gotO[hs] != o0[hs] {
				t.Fatalf("hs %d n %d: AttnValues1 wrote past the head", hs, n)
			}
		}
	}
}

// TestAttnValues4AddSplits checks that the weighted values of positions
// split into runs, one AttnValues4Add per run in order (a paged KV cache's
// blocks), are bit for bit those of one AttnValues4 over all of them, on
// the assembly's head sizes and the Go loop's.
func TestAttnValues4AddSplits(t *testing.T) { checkValues4Splits(t) }

func checkValues4Splits(t *testing.T) {
	t.Helper()
	rng := rand.New(rand.NewPCG(43, 44))
	for _, hs := range []int{12, 16, 32, 48, 64, 80, 128} {
		for _, split := range [][]int{{1, 1}, {3, 5}, {4, 4, 4}, {64, 7}, {2, 64, 1}} {
			n := 0
			for _, k := range split {
				n += k
			}
			stride := hs + 16*rng.IntN(2)
			vals := randVec(rng, n*stride+hs)
			a := randVec(rng, 4*n)
			var want, got [4][]float32
			for r := range 4 {
				want[r] = randVec(rng, hs) // overwritten: AttnValues4 sets
				got[r] = make([]float32, hs)
			}
			AttnValues4(&want, a, vals, stride, n)
			p := 0
			for _, k := range split {
				AttnValues4Add(&got, a[4*p:], vals[p*stride:], stride, k)
				p += k
			}
			for r := range 4 {
				for i := range hs {
					if math.Float32bits(got[r][i]) != math.Float32bits(want[r][i]) {
						t.Fatalf("hs %d split %v: row %d value %d = %v, one call gives %v", hs, split, r, i, got[r][i], want[r][i])
					}
				}
			}
		}
	}
}
