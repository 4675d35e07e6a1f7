package llama

// ResizeSlots changes the number of sequences the State holds to n (at
// least 1): the slot table is reallocated; slots beyond n end their
// sequences (at the engine's barrier none runs). The free list of KV
// blocks is dropped (and a hybrid's kept recurrent states), and the prefix cache keeps its entries: the engine
// then bounds them by the new budget (SetPrefixLimit). It returns the
// bytes of the blocks it dropped (the garbage collector frees them). Like
// every State method it must not run concurrently with Forward or
// Release.
func (s *State) ResizeSlots(n int) int64 {
	n = max(n, 1)
	for i := n; i < len(s.slots); i++ {
		s.releaseSlot(&s.slots[i])
		s.releaseRec(i)
	}
	slots := make([]kvSlot, n)
	copy(slots, s.slots)
	s.slots = slots
	if s.rec != nil {
		rec := make([]recSlot, n)
		copy(rec, s.rec)
		s.rec = rec
	}
	return s.dropFree() + s.dropRecFree()
}

// KVBytesPerPos is the KV cache memory one position of one slot takes.
func (s *State) KVBytesPerPos() int64 { return s.m.Config.KVBytesPerPos() }
