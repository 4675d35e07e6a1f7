package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
)

// intTypes are the weight types with integer-dot products.
var intTypes = []DType{Q8_0, Q4_0, Q5_0, Q4_1, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K}

// TestActLayout pins the block layouts the assembly reads at fixed offsets.
func TestActLayout(t *testing.T) {
	var a q8Act
	var k q8KAct
	got := []uintptr{unsafe.Sizeof(a), unsafe.Offsetof(a.d), unsafe.Offsetof(a.sum),
		unsafe.Sizeof(k), unsafe.Offsetof(k.bsums), unsafe.Offsetof(k.d)}
	if diff := cmp.Diff([]uintptr{40, 32, 36, 304, 256, 288}, got); diff != "" {
		t.Errorf("activation block layout (-want +got):\n%s", diff)
	}
}

// TestQuantizeAct checks both activation formats: every value is within
// half a step of d*q, the extreme value is exactly ±127 steps, the sums
// are the quants' sums, and a zero block is all zero.
func TestQuantizeAct(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	x := randVec(rng, 2*QK_K)
	x[3] = -1.5 // the extreme of the first blocks
	clear(x[QK_K : QK_K+Q8Block])
	q8 := make([]q8Act, len(x)/Q8Block)
	quantizeQ8Act(q8, x)
	for k, a := range q8 {
		var sum int32
		for j, q := range a.qs {
			sum += int32(q)
			v := x[k*Q8Block+j]
			// d is rounded to half: allow its relative error on top.
			if d := math.Abs(float64(v) - float64(a.d)*float64(q)); d > float64(a.d)/2+math.Abs(float64(v))*1e-3 {
				t.Fatalf("q8 block %d value %d: %v vs %v*%d", k, j, v, a.d, q)
			}
		}
		if sum != a.sum {
			t.Errorf("q8 block %d: sum %d, quants sum to %d", k, a.sum, sum)
		}
	}
	if q8[0].qs[3] != -127 {
		t.Errorf("q8 extreme quant %d, want -127", q8[0].qs[3])
	}
	if q8[QK_K/Q8Block] != (q8Act{}) {
		t.Errorf("zero q8 block quantized to %+v", q8[QK_K/Q8Block])
	}
	qk := make([]q8KAct, 2)
	quantizeQ8KAct(qk, x)
	for k, a := range qk {
		for j, q := range a.qs {
			v := x[k*QK_K+j]
			if d := math.Abs(float64(v) - float64(a.d)*float64(q)); d > math.Abs(float64(a.d))/2*(1+1e-6) {
				t.Fatalf("q8K block %d value %d: %v vs %v*%d", k, j, v, a.d, q)
			}
		}
		for i, s := range a.bsums {
			var want int16
			for _, q := range a.qs[16*i : 16*i+16] {
				want += int16(q)
			}
			if s != want {
				t.Errorf("q8K block %d bsum %d = %d, want %d", k, i, s, want)
			}
		}
	}
	if qk[0].qs[3] != -127 || qk[0].d != 1.5/127 {
		t.Errorf("q8K extreme -1.5 gave quant %d with d %v, want -127 with d 1.5/127", qk[0].qs[3], qk[0].d)
	}
}

// TestIntProducts runs the integer products of every type on every kernel
// path this CPU has (through a Pool, batches 1 to 9, rows not a multiple
// of 4) and checks them twice: against the exact product of the weights
// with x, within the error of quantizing x (half a step per value, times
// |w|); and against the pure-Go integer product, to float32 rounding.
func TestIntProducts(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, path := range Paths() {
		pool, err := NewPoolOpts(2, Options{Path: path})
		if err != nil {
			t.Fatal(err)
		}
		defer pool.Close()
		for _, typ := range intTypes {
			elems, _, _ := typ.Block()
			for _, nb := range []int{1, 3} {
				cols := max(nb*elems, 2*QK_K*(nb/3))
				const rows = 9
				w := randMatrix(t, rng, typ, rows, cols)
				t.Run(fmt.Sprintf("%s/%v/%dx%d", path, typ, rows, cols), func(t *testing.T) {
					for batch := 1; batch <= 9; batch++ {
						checkIntProduct(t, pool, w, randVec(rng, batch*cols), batch)
					}
				})
			}
		}
	}
}

// TestIntProductsExtreme runs the integer products of every type on every
// path with every quant bit clear or set and activations all of the
// largest magnitude, either sign (and the Q6_K scales at -128): the sums
// the kernels gather in narrow lanes (the avx512 Q4_K kernel's half
// sub-blocks in int16 words, up to 16*15*127) at their bounds.
func TestIntProductsExtreme(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for _, path := range Paths() {
		pool, err := NewPoolOpts(1, Options{Path: path})
		if err != nil {
			t.Fatal(err)
		}
		defer pool.Close()
		for _, typ := range intTypes {
			elems, size, _ := typ.Block()
			cols := max(elems, 2*QK_K)
			halves := halfFields[typ]
			if typ == Q8_0 {
				halves = []int{0}
			}
			for _, fill := range []byte{0x00, 0xff} {
				w := randMatrix(t, rng, typ, 19, cols)
				w.pk = nil
				for b := 0; b < len(w.Raw); b += size {
					blk := w.Raw[b : b+size]
					for i := range blk {
						if !slices.Contains(halves, i) && !slices.Contains(halves, i-1) {
							blk[i] = fill
						}
					}
					if typ == Q6_K {
						for i := 192; i < 208; i++ {
							blk[i] = 0x80
						}
					}
				}
				Prepare(w)
				t.Run(fmt.Sprintf("%s/%v/%#02x", path, typ, fill), func(t *testing.T) {
					for _, sign := range []float32{1, -1} {
						x := make([]float32, 3*cols)
						for i := range x {
							x[i] = sign
						}
						checkIntProduct(t, pool, w, x, 3)
					}
				})
			}
		}
	}
}

func checkIntProduct(t *testing.T, pool *Pool, w *Matrix, x []float32, batch int) {
	t.Helper()
	got := make([]float32, batch*w.Rows)
	pool.MatMul(got, w, x, batch)
	var act quantAct
	act.fill(pathGeneric, intFormat(w.Type), x, batch, w.Cols)
	ref := make([]float32, batch*w.Rows)
	intRowsGeneric(ref, w, &act, batch, 0, w.Rows)
	exact := refProduct(w, x, batch)
	scale := absDots(w, x, batch)
	for b := range batch {
		steps := actSteps(&act, intFormat(w.Type), b, w.Cols)
		for r := range w.Rows {
			i := b*w.Rows + r
			row := dequantRow(w, r)
			var bound float64
			for c, v := range row {
				bound += math.Abs(float64(v)) * steps[c] / 2
			}
			bound = bound*(1+1e-3) + 1e-5*scale[i]
			if d := math.Abs(float64(got[i]) - exact[i]); d > bound {
				t.Fatalf("batch %d out[%d] = %v, exact %v (diff %g > %g)", batch, i, got[i], exact[i], d, bound)
			}
			if d := math.Abs(float64(got[i] - ref[i])); d > 1e-5*scale[i]+1e-30 {
				t.Fatalf("batch %d out[%d] = %v, pure-Go integer product %v (diff %g)", batch, i, got[i], ref[i], d)
			}
		}
	}
}

// actSteps is the quantization step |d| of each value of activation row b.
func actSteps(a *quantAct, f actFormat, b, cols int) []float64 {
	s := make([]float64, cols)
	for c := range s {
		if f == actQ8 {
			s[c] = float64(a.q8[(b*cols+c)/Q8Block].d)
		} else {
			s[c] = math.Abs(float64(a.q8k[(b*cols+c)/QK_K].d))
		}
	}
	return s
}

// TestPoolPaths checks the path names: Path is the first of Paths, the
// last is generic, a pool reports its path, and an unknown one fails.
func TestPoolPaths(t *testing.T) {
	paths := Paths()
	if paths[0] != Path() || paths[len(paths)-1] != "generic" {
		t.Errorf("Paths() = %v, Path() = %q", paths, Path())
	}
	for _, name := range paths {
		p, err := NewPoolOpts(1, Options{Path: name})
		if err != nil {
			t.Fatal(err)
		}
		if p.Path() != name {
			t.Errorf("pool on %q reports %q", name, p.Path())
		}
		p.Close()
	}
	if _, err := NewPoolOpts(1, Options{Path: "sse9"}); err == nil {
		t.Error("unknown path sse9 accepted")
	}
	t.Logf("paths %v, CPU features %s", paths, CPUFeatures())
}
