package llama

// Reclaim releases memory the State holds but does not need now: the
// forward-pass scratch, sized for the largest batch seen, shrinks back to
// one row (it grows again on demand), and the KV caches of released slots
// (kept by Release for the slot's next sequence) are dropped. It returns
// the bytes of the buffers it dropped; the garbage collector frees them.
// Like every State method it must not run concurrently with Forward or
// Release.
func (s *State) Reclaim() int64 {
	const f32 = 4
	var kv int64
	for i := range s.slots {
		if s.slots[i].released {
			kv += s.slotBytes(i)
			s.slots[i] = kvSlot{}
		}
	}
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
