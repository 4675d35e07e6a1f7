package kernels

import (
	"runtime"
	"sync"
)

// Prepare lays out each matrix's weights for this CPU's fastest kernels,
// once, after loading: on the avx512 path a Q8_0, Q4_0, Q5_0, Q4_1, Q5_1,
// Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, F32, F16 or BF16 matrix gets a packed copy (as many
// bytes again as its weights, but for padding: at most 3% more, and a
// float matrix's rows up to a multiple of 16) that products on that path
// read instead of the row-major data; on the avxvnni path a Q8_0 one.
// Elsewhere, and for the other types, it does nothing. It must run before
// the matrices are shared by concurrent products, and their data must not
// change afterwards (a copy given new data has no packed copy). The work
// is spread over GOMAXPROCS goroutines.
func Prepare(ms ...*Matrix) { PrepareThen(nil, ms...) }

// PrepareThen is Prepare that calls then(m), on the goroutine that packed
// m, as soon as m's packed copy exists (concurrently for different
// matrices): a loader releases m's row-major pages there, so that the
// whole model is never resident twice while it loads.
func PrepareThen(then func(*Matrix), ms ...*Matrix) {
	if best < pathAVXVNNI {
		return
	}
	prepare(ms, best, then)
}

// prepare packs the matrices of ms whose type path p has packed kernels
// for, whatever this CPU runs (the packing is plain Go; tests check it on
// every machine against the row-major product).
func prepare(ms []*Matrix, p kpath, then func(*Matrix)) {
	// The copies share one allocation (huge pages on Linux: allocPacked),
	// each at a 64-byte boundary of it.
	var todo []*Matrix
	var offs []int
	total := 0
	seen := make(map[*Matrix]bool, len(ms))
	for _, m := range ms {
		if m == nil || seen[m] {
			continue
		}
		seen[m] = true
		if m.pk == nil && packsFor(p, m.Type) {
			todo, offs = append(todo, m), append(offs, total)
			total += packedSize(m)
		}
	}
	if len(todo) == 0 {
		return
	}
	owner := &packed{}
	mem := allocPacked(owner, total)
	work := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(todo)) {
		wg.Go(func() {
			for i := range work {
				m := todo[i]
				pk := pack(m, mem[offs[i]:offs[i]+packedSize(m)])
				pk.mem = owner
				m.pk = pk
				if then != nil {
					then(m)
				}
			}
		})
	}
	for i := range todo {
		work <- i
	}
	close(work)
	wg.Wait()
}

// packable reports whether Prepare packs matrices of type t on the avx512
// path.
func packable(t DType) bool {
	tr, ok := t.traits()
	return ok && tr.pack != nil
}

// packsFor reports whether path p reads matrices of type t packed: the
// avxvnni path has packed kernels for Q8_0 only (packing the others would
// leave their row-major kernels reading released pages).
func packsFor(p kpath, t DType) bool {
	switch {
	case p >= pathAVX512:
		return packable(t)
	case p == pathAVXVNNI:
		return t == Q8_0
	}
	return false
}

// PackedBytes is the size of the packed copy Prepare made of m's weights,
// 0 when it made none.
func (m *Matrix) PackedBytes() int {
	if p := packedOf(m); p != nil {
		return len(p.data)
	}
	return 0
}

// pack builds the packed copy of a valid matrix of a packable type in buf
// (packedSize(m) bytes, 64-byte aligned), or in memory of its own when buf
// is nil.
func pack(m *Matrix, buf []byte) *packed {
	if !packable(m.Type) {
		return nil
	}
	return types[m.Type].pack(m, buf)
}
