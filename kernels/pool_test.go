package kernels

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestPoolRunCoversRange checks that Run hands out disjoint ranges covering
// [0,n) exactly once, for more and fewer items than workers.
func TestPoolRunCoversRange(t *testing.T) {
	for _, workers := range []int{1, 2, 3, 7} {
		p := NewPool(workers)
		for _, n := range []int{0, 1, 2, 5, 7, 100, 1001} {
			t.Run(fmt.Sprintf("w%d/n%d", workers, n), func(t *testing.T) {
				hits := make([]int, n)
				var mu sync.Mutex
				calls := 0
				p.Run(n, func(lo, hi int) {
					mu.Lock()
					calls++
					mu.Unlock()
					for i := lo; i < hi; i++ {
						hits[i]++ // disjoint ranges: no race
					}
				})
				want := make([]int, n)
				for i := range want {
					want[i] = 1
				}
				if diff := cmp.Diff(want, hits); diff != "" {
					t.Errorf("hits (-want +got):\n%s", diff)
				}
				if calls > workers {
					t.Errorf("%d calls for %d workers", calls, workers)
				}
			})
		}
		p.Close()
	}
}

func TestPoolCloseIdempotentAndUsableAfter(t *testing.T) {
	p := NewPool(3)
	p.Close()
	p.Close()
	sum := 0
	p.Run(10, func(lo, hi int) { sum += hi - lo })
	if sum != 10 {
		t.Errorf("Run after Close covered %d of 10", sum)
	}
	if got := NewPool(0); got.Workers() < 1 {
		t.Errorf("NewPool(0).Workers() = %d", got.Workers())
	} else {
		got.Close()
	}
}

// TestPoolConcurrentCallers checks that two goroutines sharing a pool get
// serialized products (run with -race).
func TestPoolConcurrentCallers(t *testing.T) {
	p := NewPool(2)
	defer p.Close()
	var wg sync.WaitGroup
	totals := make([]int, 4)
	for g := range totals {
		wg.Go(func() {
			for range 100 {
				parts := make([]int, 2)
				p.Run(64, func(lo, hi int) { parts[lo/32] += hi - lo })
				totals[g] += parts[0] + parts[1]
			}
		})
	}
	wg.Wait()
	if diff := cmp.Diff([]int{6400, 6400, 6400, 6400}, totals); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestMatMulSet: one dispatch over several matrices gives exactly what
// separate MatMul calls give, for every split of the combined rows.
func TestMatMulSet(t *testing.T) {
	shapes := []struct{ rows, cols int }{{13, 64}, {7, 64}, {32, 64}}
	for _, workers := range []int{1, 2, 3, 8} {
		for _, batch := range []int{1, 2, 5} {
			t.Run(fmt.Sprintf("workers=%d/batch=%d", workers, batch), func(t *testing.T) {
				p := NewPool(workers)
				defer p.Close()
				rng := rand.New(rand.NewPCG(7, 8))
				x := randVec(rng, batch*64)
				var ws []*Matrix
				var got, want [][]float32
				for i, sh := range shapes {
					w := randMatrix(t, rng, []DType{F32, Q8_0, F16}[i%3], sh.rows, sh.cols)
					ws = append(ws, w)
					got = append(got, make([]float32, batch*sh.rows))
					want = append(want, make([]float32, batch*sh.rows))
					p.MatMul(want[i], w, x, batch)
				}
				p.MatMulSet(got, ws, x, batch)
				for i := range ws {
					for j := range want[i] {
						if got[i][j] != want[i][j] {
							t.Fatalf("matrix %d value %d: MatMulSet %v, MatMul %v", i, j, got[i][j], want[i][j])
						}
					}
				}
			})
		}
	}
}
