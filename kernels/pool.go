package kernels

import (
	"runtime"
	"sync"
)

// Pool is a fixed set of worker goroutines that run the parts of one
// product. It is created by NewPool and stopped by Close.
type Pool struct {
	workers int
	tasks   chan task
	wg      sync.WaitGroup
	done    sync.WaitGroup
	closeMu sync.Once
}

type task struct {
	fn     func(lo, hi int)
	lo, hi int
}

// NewPool starts a pool of n workers (n <= 0 means runtime.GOMAXPROCS(0)).
// The caller's goroutine counts as one of them.
func NewPool(n int) *Pool {
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	p := &Pool{workers: n, tasks: make(chan task, n)}
	for i := 1; i < n; i++ {
		p.done.Add(1)
		go p.work()
	}
	return p
}

func (p *Pool) work() {
	defer p.done.Done()
	for t := range p.tasks {
		t.fn(t.lo, t.hi)
		p.wg.Done()
	}
}

// Workers is the number of goroutines, the caller's included, that share a
// product.
func (p *Pool) Workers() int { return p.workers }

// Close stops the workers and waits for them. It is idempotent.
func (p *Pool) Close() {
	p.closeMu.Do(func() { close(p.tasks) })
	p.done.Wait()
}

// Run splits [0,n) into one contiguous range per worker and calls fn on each,
// returning when all are done.
func (p *Pool) Run(n int, fn func(lo, hi int)) {
	parts := p.workers
	if parts > n {
		parts = n
	}
	if parts <= 1 {
		fn(0, n)
		return
	}
	step := (n + parts - 1) / parts
	p.wg.Add(parts - 1)
	for i := 1; i < parts; i++ {
		lo := i * step
		hi := min(lo+step, n)
		p.tasks <- task{fn: fn, lo: lo, hi: hi}
	}
	fn(0, min(step, n))
	p.wg.Wait()
}
