package server

import "sync/atomic"

// byteBudget bounds the request-body bytes the server holds at once
// (Config.MaxInflightBytes), so that many concurrent large prompts cannot
// take the process's memory: a request that would go over it is refused
// (429) instead of waiting, which would hold its connection and its
// bytes. The zero limit refuses everything; take and give are safe for
// concurrent use.
type byteBudget struct {
	limit int64
	used  atomic.Int64
}

// take reserves n bytes, reporting false (reserving nothing) when they
// would exceed the limit.
func (b *byteBudget) take(n int64) bool {
	if n <= 0 {
		return true
	}
	for {
		u := b.used.Load()
		if u+n > b.limit {
			return false
		}
		if b.used.CompareAndSwap(u, u+n) {
			return true
		}
	}
}

// give returns n reserved bytes.
func (b *byteBudget) give(n int64) {
	if n > 0 {
		b.used.Add(-n)
	}
}

// inUse is the bytes reserved now.
func (b *byteBudget) inUse() int64 { return b.used.Load() }
