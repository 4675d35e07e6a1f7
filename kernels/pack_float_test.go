package kernels

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// floatTypes are the types whose products read float32 activations only.
var floatTypes = []DType{F32, F16, BF16}

// rowWeight is weight (r, c) of an F32, F16 or BF16 matrix, read from its
// rows.
func rowWeight(w *Matrix, r, c int) float32 {
	switch w.Type {
	case F32:
		return w.F32[r*w.Cols+c]
	case F16:
		return HalfToFloat(binary.LittleEndian.Uint16(w.Raw[2*(r*w.Cols+c):]))
	}
	return math.Float32frombits(uint32(binary.LittleEndian.Uint16(w.Raw[2*(r*w.Cols+c):])) << 16)
}

// packedWeight is weight (r, c) of a float matrix read from its packed
// copy: group r/16, column c, lane r%16 (pack_layout.go's float layout).
func packedWeight(w *Matrix, r, c int) float32 {
	p := packedOf(w)
	g, i := r/packRows, r%packRows
	grp := p.data[g*p.group : (g+1)*p.group]
	switch w.Type {
	case F32:
		return math.Float32frombits(binary.LittleEndian.Uint32(grp[4*(c*packRows+i):]))
	case F16:
		return HalfToFloat(binary.LittleEndian.Uint16(grp[2*(c*packRows+i):]))
	}
	return math.Float32frombits(uint32(binary.LittleEndian.Uint16(grp[2*(c*packRows+i):])) << 16)
}

// floatRowsSeq is the product of rows [lo,hi), each output one sum in
// column order of weight(r, c)*x[c] with a separate multiply and add, the
// same expression whatever reads the weights.
func floatRowsSeq(out []float32, w *Matrix, weight func(*Matrix, int, int) float32, x []float32, batch, lo, hi int) {
	for r := lo; r < hi; r++ {
		for b := range batch {
			xs := x[b*w.Cols : (b+1)*w.Cols]
			var s float32
			for c, v := range xs {
				s += weight(w, r, c) * v
			}
			out[b*w.Rows+r] = s
		}
	}
}

// packedFloatRowsGo is the product of rows [lo,hi) over w's packed copy
// in plain Go as the avx512 kernels compute it: per output, one fused
// multiply-add a column, in column order, from +0.
func packedFloatRowsGo(out []float32, w *Matrix, x []float32, batch, lo, hi int) {
	for r := lo; r < hi; r++ {
		for b := range batch {
			xs := x[b*w.Cols : (b+1)*w.Cols]
			var s float32
			for c, v := range xs {
				s = fma32(packedWeight(w, r, c), v, s)
			}
			out[b*w.Rows+r] = s
		}
	}
}

// fma32 is a*b+c rounded once to float32 (round to nearest, ties to
// even), as VFMADD231PS computes it, for finite a, b, c. The product is
// exact in float64; the float64 sum s and its error e (TwoSum) are the
// exact result, and rounding s to float32 rounds the exact result the
// same way unless s is exactly halfway between two float32s, when e
// decides.
func fma32(a, b, c float32) float32 {
	p, q := float64(a)*float64(b), float64(c)
	s := p + q
	bv := s - p
	e := (p - (s - bv)) + (q - bv)
	r := float32(s)
	if e == 0 || float64(r) == s {
		return r
	}
	other := math.Nextafter32(r, float32(math.Inf(1)))
	if float64(r) > s {
		other = math.Nextafter32(r, float32(math.Inf(-1)))
	}
	if (float64(r)+float64(other))/2 != s {
		return r
	}
	if (e > 0) == (float64(other) > s) {
		return other
	}
	return r
}

// TestFMA32: fma32 rounds like an exact sum rounded to float32 (big.Float
// with 24 bits, nearest even), on random operands, sums that cancel, and
// ties.
func TestFMA32(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	exact := func(a, b, c float32) float32 {
		v := new(big.Float).SetPrec(200).Mul(big.NewFloat(float64(a)).SetPrec(200), big.NewFloat(float64(b)).SetPrec(200))
		v.Add(v, big.NewFloat(float64(c)).SetPrec(200))
		f, _ := v.SetMode(big.ToNearestEven).Float32()
		return f
	}
	check := func(a, b, c float32) {
		if got, want := fma32(a, b, c), exact(a, b, c); math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("fma32(%g, %g, %g) = %g, want %g", a, b, c, got, want)
		}
	}
	for range 100000 {
		a, b := rng.Float32()*2-1, rng.Float32()*2-1
		c := (rng.Float32()*2 - 1) * float32(math.Ldexp(1, rng.IntN(40)-20))
		check(a, b, c)
		check(a, b, -a*b) // cancellation: the exact product's low bits remain
	}
	// Sums whose float64 rounding lands exactly halfway between two
	// float32s: (1+2^-12) * (1-4095*2^-24)*2^-24 = 2^-24 + 2^-60 above
	// 1.0 rounds up, where the float64 sum 1+2^-24 would tie to even
	// (down); (1+2^-23) * (1-2^-23)*2^-24 = 2^-24 - 2^-70 above 1+2^-23
	// rounds down, where the tie would go up.
	up := float32((1<<24 - 4095) * math.Ldexp(1, -48))
	down := float32(math.Ldexp(1, -24) * (1 - math.Ldexp(1, -23)))
	check(1+1.0/4096, up, 1)
	check(1+1.0/(1<<23), down, 1+1.0/(1<<23))
	check(-1-1.0/4096, up, -1)
	if fma32(1+1.0/4096, up, 1) != 1+1.0/(1<<23) {
		t.Error("the first tie case is not a tie rounded up")
	}
}

// TestPackedFloatMatchesRowMajor packs F32, F16 and BF16 matrices on any
// machine and reads every weight back from the packed layout: a product
// that sums the packed weights in column order is bit-identical to the
// same sum over the rows, for row counts that leave a short last group,
// columns not a multiple of 16 and row ranges that cut groups; a group is
// 16 rows of the row-major bytes, zeros past the last row.
func TestPackedFloatMatchesRowMajor(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 44))
	for _, typ := range floatTypes {
		for _, shape := range [][2]int{{1, 1}, {9, 7}, {16, 16}, {17, 33}, {37, 100}, {40, 300}} {
			rows, cols := shape[0], shape[1]
			t.Run(fmt.Sprintf("%v/%dx%d", typ, rows, cols), func(t *testing.T) {
				w := randMatrix(t, rng, typ, rows, cols)
				w.pk = nil
				prepare([]*Matrix{w}, pathAVX512, nil)
				p := packedOf(w)
				if p == nil {
					t.Fatal("prepare made no packed copy")
				}
				groups := (rows + packRows - 1) / packRows
				if _, elem, _ := typ.Block(); p.group != cols*packRows*elem || len(p.data) != groups*p.group {
					t.Fatalf("packed %d bytes in groups of %d, want %d groups of %d", len(p.data), p.group, groups, cols*packRows*elem)
				}
				for g := range groups {
					for c := range cols {
						for i := range packRows {
							r := g*packRows + i
							want := float32(0)
							if r < rows {
								want = rowWeight(w, r, c)
							}
							if got := packedWeight(w, r, c); math.Float32bits(got) != math.Float32bits(want) {
								t.Fatalf("group %d column %d lane %d: %v, want %v", g, c, i, got, want)
							}
						}
					}
				}
				const batch = 3
				x := randVec(rng, batch*cols)
				want := make([]float32, batch*rows)
				floatRowsSeq(want, w, rowWeight, x, batch, 0, rows)
				got := make([]float32, batch*rows)
				for _, cut := range [][2]int{{0, min(5, rows)}, {min(5, rows), rows}} {
					floatRowsSeq(got, w, packedWeight, x, batch, cut[0], cut[1])
				}
				if d := cmp.Diff(f32bits(want), f32bits(got)); d != "" {
					t.Errorf("packed product differs from the row-major one (-row-major +packed bits):\n%s", d)
				}
			})
		}
	}
}

// TestFloatPackedKernels runs the avx512 float kernels (where this CPU has
// them) over packed F32, F16 and BF16 matrices: every output is
// bit-identical to packedFloatRowsGo (one FMA a column, in order), for
// rows that leave a short last group and pairs and fours of groups cut
// short, columns that are not a multiple of 4 or 16 and longer than a
// column chunk, batches of 1 to 17 (every kernel width, one and two
// blocks) and 25 and 40 (three and four blocks); and a row range that
// cuts groups stores exactly its rows, with the values of the whole
// product.
func TestFloatPackedKernels(t *testing.T) {
	if !haveAVX512 {
		t.Skip("no AVX-512 F/BW/VL/VNNI on this CPU (or a purego build): the packed float kernels cannot run")
	}
	rng := rand.New(rand.NewPCG(45, 46))
	batches := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 25, 40}
	for _, typ := range floatTypes {
		for _, shape := range [][2]int{{5, 3}, {37, 22}, {100, 64}, {130, 1031}} {
			rows, cols := shape[0], shape[1]
			t.Run(fmt.Sprintf("%v/%dx%d", typ, rows, cols), func(t *testing.T) {
				w := randMatrix(t, rng, typ, rows, cols)
				w.pk = nil
				prepare([]*Matrix{w}, pathAVX512, nil)
				for _, batch := range batches {
					x := randVec(rng, batch*cols)
					want := make([]float32, batch*rows)
					packedFloatRowsGo(want, w, x, batch, 0, rows)
					all := make([]float32, batch*rows)
					if !floatRowsPacked(all, w, x, batch, 0, rows) {
						t.Fatal("floatRowsPacked declined a packed matrix")
					}
					if d := cmp.Diff(f32bits(want), f32bits(all)); d != "" {
						t.Fatalf("batch %d: kernels differ from one FMA a column (-Go +avx512 bits):\n%s", batch, d)
					}
					for _, cut := range [][2]int{{0, 1}, {3, 4}, {1, rows - 1}, {rows / 3, rows - rows/5}, {min(16, rows-1), rows}} {
						got := make([]float32, batch*rows)
						for i := range got {
							got[i] = float32(math.NaN())
						}
						floatRowsPacked(got, w, x, batch, cut[0], cut[1])
						for i, v := range got {
							if r := i % rows; r >= cut[0] && r < cut[1] {
								if math.Float32bits(v) != math.Float32bits(all[i]) {
									t.Fatalf("batch %d rows %v: out[%d] = %v, the whole product's %v", batch, cut, i, v, all[i])
								}
							} else if !math.IsNaN(float64(v)) {
								t.Fatalf("batch %d rows %v: out[%d] (row %d) written", batch, cut, i, r)
							}
						}
					}
				}
			})
		}
	}
}
