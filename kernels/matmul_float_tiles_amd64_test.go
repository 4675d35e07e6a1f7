//go:build amd64 && !purego && linux

package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"syscall"
	"testing"
	"unsafe"
)

// guarded returns n bytes that end where an unreadable page begins, so a
// kernel that reads one byte past them faults.
func guarded(t *testing.T, n int) []byte {
	t.Helper()
	page := os.Getpagesize()
	size := (n+page-1)/page*page + page
	mem, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Skipf("mmap: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Munmap(mem) })
	if err := syscall.Mprotect(mem[size-page:], syscall.PROT_NONE); err != nil {
		t.Skipf("mprotect: %v", err)
	}
	return mem[size-page-n : size-page]
}

func guardedFloats(t *testing.T, v []float32) []float32 {
	b := guarded(t, 4*len(v))
	f := unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), len(v))
	copy(f, v)
	return f
}

// TestFloatZTailsStayInside: the avx512 kernels' masked last step reads
// no byte past a row, so a matrix or activation rows that end at an
// unreadable page do not fault, for every kernel (batches 1 to 7, rows
// not a multiple of 4) and F32, F16 and BF16 weights; the products still match
// the pure-Go reference.
func TestFloatZTailsStayInside(t *testing.T) {
	if !haveAVX512 {
		t.Skip("no AVX-512 F/BW/VL/VNNI on this CPU: the avx512 kernels cannot run")
	}
	rng := rand.New(rand.NewPCG(25, 26))
	for _, typ := range []DType{F32, F16, BF16} {
		for _, cols := range []int{1, 21, 1024 + 16 + 9} {
			const rows = 7
			src := randMatrix(t, rng, typ, rows, cols)
			w := &Matrix{Rows: rows, Cols: cols, Type: typ}
			if typ == F32 {
				w.F32 = guardedFloats(t, src.F32)
			} else {
				w.Raw = guarded(t, len(src.Raw))
				copy(w.Raw, src.Raw)
			}
			t.Run(fmt.Sprintf("%v/%dx%d", typ, rows, cols), func(t *testing.T) {
				for batch := 1; batch <= 7; batch++ {
					x := guardedFloats(t, randVec(rng, batch*cols))
					got := make([]float32, batch*rows)
					want := make([]float32, batch*rows)
					if !floatRowsZ(got, w, x, batch, 0, rows) {
						t.Fatal("floatRowsZ declined a float product")
					}
					matMulRowsGeneric(want, w, x, batch, 0, rows)
					scale := absDots(w, x, batch)
					for i := range want {
						if d := math.Abs(float64(got[i] - want[i])); d > 2e-5*scale[i]+1e-30 {
							t.Fatalf("batch %d out[%d] = %v, want %v", batch, i, got[i], want[i])
						}
					}
				}
			})
		}
	}
}

// TestFloatPackedTailsStayInside: the kernels over packed weights load
// and store a group's sixteen outputs through lane masks, so activation
// rows and outputs that end at an unreadable page do not fault when the
// last group is cut short (rows not a multiple of 16, ranges that end
// inside a group), for every group count and batches of one to seven and
// thirteen (two blocks, column chunks); the products are still those of
// one FMA a column.
func TestFloatPackedTailsStayInside(t *testing.T) {
	if !haveAVX512 {
		t.Skip("no AVX-512 F/BW/VL/VNNI on this CPU: the avx512 kernels cannot run")
	}
	rng := rand.New(rand.NewPCG(27, 28))
	for _, typ := range []DType{F32, F16, BF16} {
		for _, shape := range [][2]int{{1, 1}, {7, 21}, {37, 1031}, {100, 13}} {
			rows, cols := shape[0], shape[1]
			w := randMatrix(t, rng, typ, rows, cols)
			w.pk = nil
			prepare([]*Matrix{w}, pathAVX512, nil)
			t.Run(fmt.Sprintf("%v/%dx%d", typ, rows, cols), func(t *testing.T) {
				for _, batch := range []int{1, 2, 3, 4, 5, 6, 7, 13} {
					x := guardedFloats(t, randVec(rng, batch*cols))
					want := make([]float32, batch*rows)
					packedFloatRowsGo(want, w, x, batch, 0, rows)
					for _, hi := range []int{rows, max(1, rows-3)} {
						got := guardedFloats(t, make([]float32, batch*rows))
						if !floatRowsPacked(got[:(batch-1)*rows+hi], w, x, batch, 0, hi) {
							t.Fatal("floatRowsPacked declined a packed matrix")
						}
						for i, v := range got {
							if i%rows < hi && math.Float32bits(v) != math.Float32bits(want[i]) {
								t.Fatalf("batch %d rows [0,%d): out[%d] = %v, want %v", batch, hi, i, v, want[i])
							}
						}
					}
				}
			})
		}
	}
}
