package llama

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestReclaimShrinksScratchAndKeepsResults: after a wide prefill, Reclaim
// gives back the scratch sized for it (exactly the bytes beyond one row,
// and the prefill attention's),
// a second Reclaim has nothing to give, and the next steps compute the
// same logits as a State that never reclaimed (the live KV cache is kept).
func TestReclaimShrinksScratchAndKeepsResults(t *testing.T) {
	m, err := NewRandom(Config{Dim: 64, HiddenDim: 160, Layers: 2, Heads: 4, KVHeads: 2, Vocab: 97, SeqLen: 64}, 7, true)
	if err != nil {
		t.Fatal(err)
	}
	prompt := []int{3, 14, 15, 92, 65, 35, 89, 79, 32, 38, 46, 26}
	a, b := m.NewState(2, nil), m.NewState(2, nil)
	prefill(a, 0, 0, prompt, len(prompt))
	prefill(b, 0, 0, prompt, len(prompt))

	c := m.Config
	perRow := c.Dim*2 + c.QDim()*2 + c.KVDim()*2 + c.HiddenDim*2
	chunkScratch := a.attParts * (attnBlock*c.SeqLen + c.HeadDim()) // the blocked attention's (attn.go)
	want := int64((len(prompt)-1)*perRow+chunkScratch) * 4
	type out struct{ First, Second int64 }
	if d := cmp.Diff(out{want, 0}, out{a.Reclaim(), a.Reclaim()}); d != "" {
		t.Errorf("reclaimed bytes (-want +got):\n%s", d)
	}
	next := []int{7, 1, 4}
	la := prefill(a, 0, len(prompt), next, 2)
	lb := prefill(b, 0, len(prompt), next, 2)
	if d := maxDiff(la, lb); d != 0 {
		t.Errorf("logits after Reclaim differ by %g", d)
	}
}
