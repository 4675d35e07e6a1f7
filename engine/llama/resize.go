package llama

// ResizeSlots changes the number of sequences the State holds to n (at
// least 1): the slot table is reallocated; slots kept keep their caches,
// slots beyond n lose theirs. Caches of new slots are allocated lazily on
// first use, as at NewState. It returns the bytes of the KV caches it
// dropped (the garbage collector frees them). Like every State method it
// must not run concurrently with Forward or Release; the engine calls it
// at its barrier, with no sequence in flight.
func (s *State) ResizeSlots(n int) int64 {
	n = max(n, 1)
	var dropped int64
	for i := n; i < len(s.slots); i++ {
		dropped += s.slotBytes(i)
	}
	slots := make([]kvSlot, n)
	copy(slots, s.slots)
	s.slots = slots
	return dropped
}

// KVBytesPerPos is the KV cache memory one position of one slot takes.
func (s *State) KVBytesPerPos() int64 { return s.m.Config.KVBytesPerPos() }
