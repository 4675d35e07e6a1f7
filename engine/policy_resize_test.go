package engine

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/kiln-ai/kiln/internal/timing"
)

// TestResizePolicy: the automatic policy grows (doubling, up to four times
// the start-up budget and never beyond the bound) only after admissions
// waited for KV capacity at two consecutive polls, and shrinks back to the
// start-up budget only after a whole quiet minute; a queue that waits for
// something else (the batch limit below the slots, with budget free) grows
// nothing, and an engine that cannot resize is never resized.
func TestResizePolicy(t *testing.T) {
	const seq = 100
	t0 := time.Unix(1000, 0)
	type obs struct {
		at                              time.Duration
		queue, active, reserved, budget int
		slots                           int
	}
	// base 200 tokens (2 slots of 100).
	full := func(at time.Duration, budget int) obs {
		return obs{at: at, queue: 3, active: budget / seq, reserved: budget, budget: budget, slots: budget / seq}
	}
	idle := func(at time.Duration, budget int) obs { return obs{at: at, budget: budget, slots: budget / seq} }
	type got struct {
		Tokens int
		Due    bool
	}
	no := got{}
	tests := []struct {
		name  string
		kvMax int
		seq   []obs
		want  []got
	}{
		{"one waiting poll is not enough", 10000, []obs{full(0, 200), idle(5*time.Second, 200), full(10*time.Second, 200)}, []got{no, no, no}},
		{"two waiting polls double the budget", 10000, []obs{full(0, 200), full(5*time.Second, 200), full(10*time.Second, 400), full(15*time.Second, 400)},
			[]got{no, {400, true}, no, {800, true}}},
		{"never beyond four times the start-up budget", 10000, []obs{full(0, 800), full(5*time.Second, 800), full(10*time.Second, 800)}, []got{no, no, no}},
		{"never beyond the bound", 300, []obs{full(0, 200), full(5*time.Second, 200)}, []got{no, {300, true}}},
		{"waiting for the batch limit with budget free", 10000, []obs{{0, 2, 1, 50, 200, 2}, {5 * time.Second, 2, 1, 50, 200, 2}}, []got{no, no}},
		{"shrink after a quiet minute", 10000, []obs{full(0, 400), idle(10*time.Second, 400), idle(59*time.Second, 400), idle(61*time.Second, 400), idle(200*time.Second, 200)},
			[]got{no, no, no, {200, true}, no}},
		{"work restarts the quiet minute", 10000, []obs{idle(0, 400), {50 * time.Second, 0, 1, 10, 400, 4}, idle(100*time.Second, 400), idle(111*time.Second, 400)},
			[]got{no, no, no, {200, true}}},
		{"cannot resize", 0, []obs{full(0, 200), full(5*time.Second, 200), full(10*time.Second, 200)}, []got{no, no, no}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newResizePolicy(200, seq, tc.kvMax)
			var out []got
			for _, o := range tc.seq {
				tok, due := p.observe(t0.Add(o.at), timing.EngineSnapshot{QueueDepth: o.queue, Active: o.active, KVReserved: o.reserved, KVBudget: o.budget, KVSlots: o.slots})
				out = append(out, got{tok, due})
			}
			if d := cmp.Diff(tc.want, out); d != "" {
				t.Errorf("resizes (-want +got):\n%s", d)
			}
		})
	}
}
