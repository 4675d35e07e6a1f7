package llama

import "github.com/kiln-ai/kiln/internal/timing"

// Reclaim releases memory the State holds but does not need now: the
// forward-pass scratch, sized for the largest batch seen, shrinks back to
// one row (it grows again on demand), the free list of KV blocks (kept by
// Release for the next sequences) is dropped, as are a hybrid's kept
// recurrent states, and so is every idle prefix
// cache entry (counted as trim evictions). It returns the bytes of the
// buffers it dropped; the garbage collector frees them. Like every State
// method it must not run concurrently with Forward or Release.
func (s *State) Reclaim() int64 {
	const f32 = 4
	s.evictIdle(nil, timing.PrefixEvictTrim)
	kv := s.dropFree() + s.dropRecFree()
	before := s.scratchFloats()
	if s.cap > 1 {
		s.cap = 0
		s.grow(1)
	}
	s.out = nil       // regrown by the next step with several logits rows
	s.chunk.buf = nil // regrown by the next prefill run
	return kv + int64(before-s.scratchFloats())*f32
}

// scratchFloats counts the float32s of the resizable scratch.
func (s *State) scratchFloats() int {
	return cap(s.x) + cap(s.xb) + cap(s.q) + cap(s.k) + cap(s.v) + cap(s.att) + cap(s.hb) + cap(s.hb2) + cap(s.out) + cap(s.chunk.buf)
}

// dropFree drops the free list and returns its bytes.
func (s *State) dropFree() int64 {
	n := len(s.free)
	clear(s.free)
	s.free = nil
	s.allocated -= n
	return int64(n) * s.blockBytes()
}
