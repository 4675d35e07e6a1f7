package llama

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestResizeSlotsKeepsAndDrops: growing keeps every slot's cache (the next
// step computes what an unresized State does) and adds empty slots that
// work; shrinking drops exactly the caches of the removed slots.
func TestResizeSlotsKeepsAndDrops(t *testing.T) {
	m, err := NewRandom(Config{Dim: 64, HiddenDim: 160, Layers: 2, Heads: 4, KVHeads: 2, Vocab: 97, SeqLen: 64}, 7, true)
	if err != nil {
		t.Fatal(err)
	}
	prompt := []int{3, 14, 15, 92, 65}
	a, b := m.NewState(2, nil), m.NewState(2, nil)
	prefill(a, 1, 0, prompt, len(prompt))
	prefill(b, 1, 0, prompt, len(prompt))
	held := a.KVBytes()

	if got := a.ResizeSlots(4); got != 0 || a.Slots() != 4 {
		t.Errorf("grow to 4: dropped %d, %d slots; want 0, 4", got, a.Slots())
	}
	la := prefill(a, 1, len(prompt), []int{7}, 1)
	lb := prefill(b, 1, len(prompt), []int{7}, 1)
	if d := maxDiff(la, lb); d != 0 {
		t.Errorf("logits after growing differ by %g", d)
	}
	fresh := prefill(a, 3, 0, prompt, len(prompt))
	ref := prefill(m.NewState(1, nil), 0, 0, prompt, len(prompt))
	if d := maxDiff(fresh, ref); d != 0 {
		t.Errorf("a new slot's logits differ by %g", d)
	}

	before := a.KVBytes()
	type out struct {
		Dropped int64
		Slots   int
		Held    int64
	}
	got := out{a.ResizeSlots(1), a.Slots(), a.KVBytes()}
	if d := cmp.Diff(out{before, 1, 0}, got); d != "" {
		t.Errorf("shrink to 1 (slots 1 and 3 held %d bytes) (-want +got):\n%s", held, d)
	}
	if got := a.ResizeSlots(0); got != 0 || a.Slots() != 1 {
		t.Errorf("resize to 0 kept %d slots, want 1", a.Slots())
	}
}
