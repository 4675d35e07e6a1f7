package kernels

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// spinFor is how long a worker polls for its next part, and the caller for
// the end of a product, before parking. A decode step runs a product every
// few microseconds, and waking a parked goroutine costs more than that (a
// futex round trip through the OS scheduler): without this window the two
// cores of a decode step spent most of their time waking each other. The
// poll yields to the Go scheduler between checks and always ends in a park,
// so an idle or overloaded pool costs at most this much CPU per product:
// it is not a spin barrier.
const spinFor = 50 * time.Microsecond

// Pool is a fixed set of worker goroutines that run the parts of one
// product. It is created by NewPool and stopped by Close.
//
// Each worker owns a preallocated job and a one-slot wake channel; a product
// fills the jobs, posts each worker's part (a counter the worker polls) and
// sends a wake token only to a worker that has parked, runs its own part on
// the caller's goroutine, then polls for the other parts' end and waits on
// a WaitGroup. Nothing is allocated per call. Workers and the caller do
// poll: each for up to spinFor (50 us), yielding between checks, before it
// parks; a worker idle for longer than that is parked on its channel
// receive and costs nothing.
type Pool struct {
	workers  int
	jobs     []job           // jobs[0] is the caller's part
	wake     []chan struct{} // wake[i] feeds worker i (i >= 1) when it is parked
	posted   []atomic.Uint64 // posted[i]: products handed to worker i
	parked   []atomic.Bool   // parked[i]: worker i sleeps (or is about to) on wake[i]
	pending  atomic.Int32    // parts of the running product still going
	wg       sync.WaitGroup  // the same count, for a caller that parks
	done     sync.WaitGroup  // live worker goroutines
	mu       sync.Mutex      // one product at a time; guards closed and act
	closed   bool
	kp       kpath    // the kernels every product of this pool runs
	floatAct bool     // quantized weights meet float32 activations
	act      quantAct // the running product's quantized activations
}

// Options configures a Pool beyond its size.
type Options struct {
	// Path is the kernel path (one of Paths); "" means Path(), the
	// fastest this CPU runs.
	Path string
	// FloatActivations makes the products of quantized weights read the
	// activations in float32 instead of quantizing them per block for the
	// integer dot products: slower, and exact up to float32 rounding (the
	// reference the integer products are checked against).
	FloatActivations bool
}

// jobKind says which body a job runs; a kind instead of a closure keeps
// MatMul free of allocations.
type jobKind uint8

const (
	jobRun jobKind = iota
	jobMatMul
	jobMatMulSet
)

type job struct {
	kind   jobKind
	lo, hi int
	fn     func(lo, hi int) // jobRun
	out    []float32        // jobMatMul
	w      *Matrix
	x      []float32
	batch  int
	outs   [][]float32 // jobMatMulSet: the products, rows numbered across them
	ws     []*Matrix
	kp     kpath     // jobMatMul, jobMatMulSet: the kernel path
	act    *quantAct // x quantized for the integer products, or nil
}

func (j *job) exec() {
	switch j.kind {
	case jobRun:
		j.fn(j.lo, j.hi)
	case jobMatMul:
		matMulRowsOn(j.kp, j.out, j.w, j.x, j.act, j.batch, j.lo, j.hi)
	case jobMatMulSet:
		off := 0
		for i, w := range j.ws {
			lo, hi := max(j.lo, off), min(j.hi, off+w.Rows)
			if lo < hi {
				matMulRowsOn(j.kp, j.outs[i], w, j.x, j.act, j.batch, lo-off, hi-off)
			}
			off += w.Rows
		}
	}
}

// clear drops the references a finished job holds so that a pool does not
// keep weights or closures alive between calls.
func (j *job) clear() {
	j.fn, j.out, j.w, j.x, j.outs, j.ws, j.act = nil, nil, nil, nil, nil, nil, nil
}

// NewPool starts a pool of n workers (n <= 0 means runtime.GOMAXPROCS(0))
// on the default kernels: Path(), with integer dot products for the
// quantized types that have them. The caller's goroutine counts as one of
// the workers, so n-1 goroutines start.
func NewPool(n int) *Pool {
	p, err := NewPoolOpts(n, Options{})
	if err != nil {
		panic(err) // unreachable: the default path always exists
	}
	return p
}

// NewPoolOpts is NewPool with a chosen kernel path and activation mode; it
// fails on a path this CPU cannot run.
func NewPoolOpts(n int, o Options) (*Pool, error) {
	kp, err := parsePath(o.Path)
	if err != nil {
		return nil, err
	}
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	p := &Pool{workers: n, jobs: make([]job, n), wake: make([]chan struct{}, n),
		posted: make([]atomic.Uint64, n), parked: make([]atomic.Bool, n), kp: kp, floatAct: o.FloatActivations}
	for i := 1; i < n; i++ {
		p.wake[i] = make(chan struct{}, 1)
		p.done.Add(1)
		go p.work(i)
	}
	return p, nil
}

// Path is the kernel path of the pool's products (one of Paths).
func (p *Pool) Path() string { return p.kp.String() }

// quantize fills p.act for the integer products of ws (which share x) and
// returns it, or nil when every product reads float32 activations. p.mu
// is held.
func (p *Pool) quantize(x []float32, batch int, ws ...*Matrix) *quantAct {
	if p.floatAct {
		return nil
	}
	var done [actQ8K + 1]bool
	var act *quantAct
	for _, w := range ws {
		f := intFormat(w.Type)
		if f == actFloat || done[f] {
			continue
		}
		if w.Cols != ws[0].Cols {
			return nil // x is not one row layout for all: keep float
		}
		done[f] = true
		p.act.fill(p.kp, f, x, batch, w.Cols)
		act = &p.act
	}
	return act
}

// work is worker i: it runs each part posted to it, polling for the next
// one for spinFor before it parks on its wake channel.
func (p *Pool) work(i int) {
	defer p.done.Done()
	j := &p.jobs[i]
	var seen uint64
	for {
		if !spinUntil(func() bool { return p.posted[i].Load() != seen }) {
			p.parked[i].Store(true)
			// Re-check after announcing the park: a product posted in
			// between either sees parked and sends, or is seen here.
			if p.posted[i].Load() == seen {
				if _, ok := <-p.wake[i]; !ok {
					return
				}
			}
			p.parked[i].Store(false)
			if p.posted[i].Load() == seen {
				// A stale wake-up (the post was taken by the poll).
				continue
			}
		}
		seen = p.posted[i].Load()
		j.exec()
		p.pending.Add(-1)
		p.wg.Done()
	}
}

// spinUntil polls cond for up to spinFor, yielding between polls, and
// reports whether it became true.
func spinUntil(cond func() bool) bool {
	var start time.Time
	for n := 0; ; n++ {
		if cond() {
			return true
		}
		if n&63 == 63 {
			if start.IsZero() {
				start = time.Now()
			} else if time.Since(start) > spinFor {
				return false
			}
			runtime.Gosched()
		}
	}
}

// Workers is the number of goroutines, the caller's included, that share a
// product.
func (p *Pool) Workers() int { return p.workers }

// Close stops the workers and waits for them. It is idempotent; a product
// submitted after Close runs entirely on the caller's goroutine.
func (p *Pool) Close() {
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		for i, c := range p.wake[1:] {
			// A polling worker must park to see the close.
			for !p.parked[i+1].Load() {
				runtime.Gosched()
			}
			close(c)
		}
	}
	p.mu.Unlock()
	p.done.Wait()
}

// Run splits [0,n) into one contiguous range per worker and calls fn on each,
// returning when all are done.
func (p *Pool) Run(n int, fn func(lo, hi int)) {
	if n <= 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	parts := p.parts(n, 1)
	for i := range parts.count {
		lo, hi := parts.bounds(i)
		p.jobs[i] = job{kind: jobRun, fn: fn, lo: lo, hi: hi}
	}
	p.dispatch(parts.count)
}

// MatMul computes out[b*w.Rows+r] = dot(w row r, x[b*w.Cols:(b+1)*w.Cols])
// for every batch row b in [0,batch), reading each weight once for all rows.
// The rows of w are split into disjoint blocks, one per worker. For a type
// with an integer product (and unless Options.FloatActivations), x is
// first quantized once, on the caller, into the pool's scratch (grown to
// the largest product seen, then reused: no allocation in steady state).
// It panics, like an out-of-range index, when out, x or w's data are too
// short.
func (p *Pool) MatMul(out []float32, w *Matrix, x []float32, batch int) {
	if batch <= 0 {
		return
	}
	checkMatMul(out, w, x, batch)
	p.mu.Lock()
	defer p.mu.Unlock()
	// Blocks of 4 rows (16 on avx512, a packed group) match the assembly
	// kernels; tiny products are not worth waking anyone for.
	align := p.kp.rowAlign()
	if w.Rows*w.Cols*batch < 1<<14 {
		align = w.Rows
	}
	parts := p.parts(w.Rows, align)
	act := p.quantize(x, batch, w)
	for i := range parts.count {
		lo, hi := parts.bounds(i)
		p.jobs[i] = job{kind: jobMatMul, out: out, w: w, x: x, batch: batch, lo: lo, hi: hi, kp: p.kp, act: act}
	}
	p.dispatch(parts.count)
}

// MatMulSet computes several products of the same input in one dispatch:
// outs[i] = ws[i] times x for every i, as MatMul would, with the rows of all
// the matrices split together over the workers (a decode step's query, key
// and value projections, or its two gate projections, wake the workers
// once instead of three times or twice). outs and ws have the same length;
// MatMulSet keeps no reference to them after it returns.
func (p *Pool) MatMulSet(outs [][]float32, ws []*Matrix, x []float32, batch int) {
	if batch <= 0 || len(ws) == 0 {
		return
	}
	if len(outs) != len(ws) {
		panic(fmt.Sprintf("kernels: MatMulSet has %d outputs for %d matrices", len(outs), len(ws)))
	}
	rows, work := 0, 0
	for i, w := range ws {
		checkMatMul(outs[i], w, x, batch)
		rows += w.Rows
		work += w.Rows * w.Cols * batch
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	align := p.kp.rowAlign()
	if work < 1<<14 {
		align = rows
	}
	parts := p.parts(rows, align)
	act := p.quantize(x, batch, ws...)
	for i := range parts.count {
		lo, hi := parts.bounds(i)
		p.jobs[i] = job{kind: jobMatMulSet, outs: outs, ws: ws, x: x, batch: batch, lo: lo, hi: hi, kp: p.kp, act: act}
	}
	p.dispatch(parts.count)
}

// split describes how [0,n) is cut: count parts of step items, the last
// one shorter.
type split struct{ n, step, count int }

func (p *Pool) parts(n, align int) split {
	workers := p.workers
	if p.closed {
		workers = 1
	}
	step := (n + workers - 1) / workers
	step = (step + align - 1) / align * align
	count := (n + step - 1) / step
	return split{n: n, step: step, count: count}
}

// bounds is the [lo,hi) range of part i.
func (s split) bounds(i int) (lo, hi int) {
	lo = i * s.step
	return lo, min(lo+s.step, s.n)
}

// dispatch wakes workers 1..count-1, runs part 0 here and waits for all.
// p.mu is held.
func (p *Pool) dispatch(count int) {
	p.wg.Add(count - 1)
	p.pending.Store(int32(count - 1))
	for i := 1; i < count; i++ {
		p.posted[i].Add(1)
		if p.parked[i].Load() {
			select {
			case p.wake[i] <- struct{}{}:
			default: // a wake-up is already queued
			}
		}
	}
	p.jobs[0].exec()
	spinUntil(func() bool { return p.pending.Load() == 0 })
	p.wg.Wait()
	for i := range count {
		p.jobs[i].clear()
	}
}
