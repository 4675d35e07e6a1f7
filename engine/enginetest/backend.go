package enginetest

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/kiln-ai/kiln/engine/llama"
)

// Backend is a fake engine.Backend. Its logits for a row are a pure
// function of the tokens at positions 0..Pos of the row's slot, so a
// request's outputs cannot depend on what it is batched with, and it checks
// that the engine feeds every slot consecutive positions from 0.
//
// Set the exported fields before the engine starts.
type Backend struct {
	// StepDelay is slept once per Forward call, RowDelay once per row.
	StepDelay, RowDelay time.Duration
	// BeforeForward, when set, runs at the start of every Forward call with
	// the rows (read-only); it may block to hold the actor inside a step.
	BeforeForward func(rows []llama.Row)
	// ReclaimDelay is slept by Reclaim, which returns ReclaimBytes.
	ReclaimDelay time.Duration
	ReclaimBytes int64
	// Quiet stops the recording of Events (benchmarks: no allocation per
	// call).
	Quiet bool

	slots, seqLen, vocab int

	mu     sync.Mutex
	hist   [][]uint64 // per slot: hash of the tokens up to each position
	events []Event
	errs   []error

	reclaims int
	variant  uint64 // SetVariant
}

// Event is one call the engine made.
type Event struct {
	Release bool        // a Release call (else a Forward call)
	Slot    int         // the released slot
	Rows    []llama.Row // the rows of a Forward call
	Variant uint64      // the variant (SetVariant) a Forward call ran with
}

// SetVariant stands in for a change of the model's weights (a LoRA
// adapter swap; 0 is the base model): every position written after it
// mixes v into the slot's history, so a sequence's outputs depend on the
// variant each of its positions ran with. Call it between Forward calls
// (from a barrier mutation's Apply).
func (b *Backend) SetVariant(v uint64) {
	b.mu.Lock()
	b.variant = v
	b.mu.Unlock()
}

// NewBackend returns a fake with slots sequences of seqLen positions and a
// vocabulary of vocab ids.
func NewBackend(slots, seqLen, vocab int) *Backend {
	return &Backend{slots: slots, seqLen: seqLen, vocab: vocab, hist: make([][]uint64, slots)}
}

// Slots implements engine.Backend.
func (b *Backend) Slots() int { return b.slots }

// SeqLen implements engine.Backend.
func (b *Backend) SeqLen() int { return b.seqLen }

// VocabSize implements engine.Backend.
func (b *Backend) VocabSize() int { return b.vocab }

// Release implements engine.Backend.
func (b *Backend) Release(slot int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.Quiet {
		b.events = append(b.events, Event{Release: true, Slot: slot})
	}
	if slot < 0 || slot >= b.slots {
		b.errs = append(b.errs, fmt.Errorf("release of slot %d out of range", slot))
		return
	}
	b.hist[slot] = nil
}

// Reclaim implements engine.Reclaimer: it sleeps ReclaimDelay, counts the
// call and returns ReclaimBytes.
func (b *Backend) Reclaim() int64 {
	time.Sleep(b.ReclaimDelay)
	b.mu.Lock()
	b.reclaims++
	b.mu.Unlock()
	return b.ReclaimBytes
}

// Reclaims reports how many times Reclaim ran.
func (b *Backend) Reclaims() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.reclaims
}

// Forward implements engine.Backend with llama.State's contract: the k-th
// row with Logits set fills logits[k].
func (b *Backend) Forward(rows []llama.Row, logits [][]float32) {
	if b.BeforeForward != nil {
		b.BeforeForward(rows)
	}
	if d := b.StepDelay + time.Duration(len(rows))*b.RowDelay; d > 0 {
		time.Sleep(d)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.Quiet {
		b.events = append(b.events, Event{Rows: slices.Clone(rows), Variant: b.variant})
	}
	k := 0
	for _, r := range rows {
		if r.Slot < 0 || r.Slot >= b.slots || r.Token < 0 || r.Token >= b.vocab || r.Pos < 0 || r.Pos >= b.seqLen {
			b.errs = append(b.errs, fmt.Errorf("row %+v out of range", r))
			continue
		}
		h := b.hist[r.Slot]
		if r.Pos != len(h) {
			b.errs = append(b.errs, fmt.Errorf("row %+v: slot %d holds %d positions, want the next one", r, r.Slot, len(h)))
			continue
		}
		prev := uint64(0x6a09e667f3bcc908)
		if r.Pos > 0 {
			prev = h[r.Pos-1]
		}
		cur := mix(prev ^ uint64(r.Token+1) ^ b.variant*variantMul)
		b.hist[r.Slot] = append(h, cur)
		if !r.Logits {
			continue
		}
		if k >= len(logits) || len(logits[k]) < b.vocab {
			b.errs = append(b.errs, fmt.Errorf("row %+v: no logits buffer %d", r, k))
			k++
			continue
		}
		Logits(logits[k][:b.vocab], cur)
		k++
	}
}

// Logits fills out with the fake's logits for a history hash.
func Logits(out []float32, h uint64) {
	for i := range out {
		out[i] = float32(mix(h+uint64(i))%4096) / 256
	}
}

// mix is splitmix64's finalizer.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// Events returns a copy of the calls so far.
func (b *Backend) Events() []Event {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.events)
}

// Err returns the first contract violation seen (a row out of range, a
// position skipped or repeated, a missing logits buffer), or nil.
func (b *Backend) Err() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.errs) == 0 {
		return nil
	}
	return b.errs[0]
}

// Held reports the positions the slot holds (0 after Release).
func (b *Backend) Held(slot int) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.hist[slot])
}

// Greedy returns what greedy decoding of prompt for n tokens gives on this
// fake, computed directly (no engine): the reference for batching tests.
func Greedy(prompt []int, n, vocab int) []int { return GreedyVariant(prompt, n, vocab, 0) }

// variantMul spreads a variant over the history hash's bits.
const variantMul = 0x9e3779b97f4a7c15

// GreedyVariant is Greedy with every position run under variant
// (SetVariant): a request alone with that adapter.
func GreedyVariant(prompt []int, n, vocab int, variant uint64) []int {
	v := variant * variantMul
	h := uint64(0x6a09e667f3bcc908)
	for _, t := range prompt {
		h = mix(h ^ uint64(t+1) ^ v)
	}
	logits := make([]float32, vocab)
	out := make([]int, 0, n)
	for range n {
		Logits(logits, h)
		best := 0
		for i, v := range logits {
			if v > logits[best] {
				best = i
			}
		}
		out = append(out, best)
		h = mix(h ^ uint64(best+1) ^ v)
	}
	return out
}
