package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestDeltaChunk checks every path's DeltaChunk against the float64
// recurrence and against n generic DeltaStep calls, for runs shorter than,
// equal to and longer than a chunk, mild and strong decay. The scratch
// starts as NaN (nothing may be read before it is written) and is
// followed by sentinels, as are the state and the outputs.
func TestDeltaChunk(t *testing.T) {
	for _, name := range Paths() {
		p, err := parsePath(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range deltaDims {
			for _, n := range []int{1, 7, 16, 63, 64, 100} {
				for _, strong := range []bool{false, true} {
					t.Run(fmt.Sprintf("%s/dk=%d/dv=%d/n=%d/strong=%v", name, d[0], d[1], n, strong), func(t *testing.T) {
						c := newDeltaCase(rand.New(rand.NewPCG(uint64(n), uint64(d[0]*d[1]))), d[0], d[1], n, strong)
						checkDeltaChunk(t, p, c)
					})
				}
			}
		}
	}
}

func checkDeltaChunk(t *testing.T, p kpath, c deltaCase) {
	t.Helper()
	dk, dv, n := c.dk, c.dv, c.n
	wantS, wantOut := c.ref()
	need := DeltaChunkScratch(n, dk, dv)
	scratch := make([]float32, need+8)
	for i := range scratch {
		scratch[i] = float32(math.NaN())
	}
	for i := need; i < len(scratch); i++ {
		scratch[i] = 42
	}
	S := slices.Concat(c.S, []float32{42})
	out := make([]float32, n*dv+1)
	out[n*dv] = 42
	deltaChunk(p, S[:dk*dv], dk, dv, n, c.q, c.k, c.v, c.g, c.beta, out[:n*dv], scratch[:need])
	within(t, "out", out, wantOut, 1e-4)
	within(t, "S", S, wantS, 1e-4)
	for i := need; i < len(scratch); i++ {
		if scratch[i] != 42 {
			t.Fatalf("DeltaChunk wrote scratch[%d], past the %d of DeltaChunkScratch", i, need)
		}
	}
	if S[dk*dv] != 42 || out[n*dv] != 42 {
		t.Errorf("DeltaChunk wrote past its state or output")
	}
	// n generic DeltaStep calls, the recurrent form in float32.
	stepS, stepOut := slices.Clone(c.S), make([]float32, n*dv)
	for i := range n {
		deltaStep(pathGeneric, stepS, dk, dv, c.q[i*dk:], c.k[i*dk:], c.v[i*dv:], c.g[i], c.beta[i], stepOut[i*dv:(i+1)*dv])
	}
	within(t, "out against DeltaStep", out, f64s(stepOut), 1e-4)
	within(t, "S against DeltaStep", S, f64s(stepS), 1e-4)
	// The same inputs give the same bits, whatever the scratch held.
	S2, out2 := slices.Clone(c.S), make([]float32, n*dv)
	deltaChunk(p, S2, dk, dv, n, c.q, c.k, c.v, c.g, c.beta, out2, scratch[:need])
	if !slices.Equal(f32bits(S2), f32bits(S[:dk*dv])) || !slices.Equal(f32bits(out2), f32bits(out[:n*dv])) {
		t.Errorf("a second DeltaChunk on the same inputs gave other bits")
	}
}

func f64s(x []float32) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = float64(v)
	}
	return y
}

// TestDeltaChunkShortScratch checks that too little scratch panics rather
// than writing past it.
func TestDeltaChunkShortScratch(t *testing.T) {
	c := newDeltaCase(rand.New(rand.NewPCG(1, 2)), 32, 32, 10, false)
	defer func() {
		if recover() == nil {
			t.Errorf("DeltaChunk with one value of scratch short did not panic")
		}
	}()
	DeltaChunk(c.S, 32, 32, 10, c.q, c.k, c.v, c.g, c.beta, make([]float32, 10*32), make([]float32, DeltaChunkScratch(10, 32, 32)-1))
}

// TestDeltaChunkFullDecay runs heads that forget almost everything each
// token (g = -30 throughout, e^G far below the smallest float32 within a
// chunk): the outputs must stay finite and match the recurrence.
func TestDeltaChunkFullDecay(t *testing.T) {
	for _, name := range Paths() {
		p, _ := parsePath(name)
		t.Run(name, func(t *testing.T) {
			c := newDeltaCase(rand.New(rand.NewPCG(5, 6)), 64, 64, 100, false)
			for i := range c.g {
				c.g[i] = -30
			}
			checkDeltaChunk(t, p, c)
		})
	}
}
