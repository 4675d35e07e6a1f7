package engine_test

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/engine/llama"
	"github.com/kiln-ai/kiln/internal/testshared"
	"github.com/kiln-ai/kiln/internal/timing"
	"github.com/kiln-ai/kiln/kernels"
)

// loraAdapter is a real LoRA as an engine.Adapter.
type loraAdapter struct{ w *llama.Adapter }

func (a *loraAdapter) AdapterName() string { return "lora" }

// stateSwap switches a llama.State's adapter at the barrier.
type stateSwap struct {
	st *llama.State
	to *llama.Adapter
}

func (s *stateSwap) Phase() timing.BackendPhase { return engine.PhaseAdapter }
func (s *stateSwap) Apply(engine.Backend) error { s.st.SetAdapter(s.to); return nil }

// TestAdapterReferenceModel: on the reference model (tiny-llama.F32) with
// the reference LoRA, requests with and without the adapter submitted
// together through the engine (the swap at the barrier between them)
// give llama.cpp's greedy continuations: golden.json's
// tiny-llama.F32+lora/p9 for the adapter, tiny-llama.F32/p9 for the base.
func TestAdapterReferenceModel(t *testing.T) {
	dir, g := testshared.LoadRefGolden(t)
	want := map[string][]int{}
	var prompt []int
	for _, c := range g.Cases {
		if c.ID == "tiny-llama.F32/p9" || c.ID == "tiny-llama.F32+lora/p9" {
			want[c.ID], prompt = c.Greedy, c.PromptIDs
		}
	}
	if len(want) != 2 {
		t.Fatalf("golden.json lacks the p9 cases: %v", want)
	}
	model, err := llama.Open(filepath.Join(dir, "tiny-llama.F32.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = model.Close() }()
	w, err := llama.LoadAdapter(filepath.Join(dir, "tiny-llama.lora-r8.F32.gguf"), model.Model)
	if err != nil {
		t.Fatal(err)
	}
	pool := kernels.NewPool(2)
	defer pool.Close()
	st := model.Model.NewState(2, pool)
	swap := func(to engine.Adapter, _ string) engine.Mutation {
		m := &stateSwap{st: st}
		if a, ok := to.(*loraAdapter); ok {
			m.to = a.w
		}
		return m
	}
	e := start(t, st, engine.Config{PrefillChunk: 4}, engine.WithAdapterSwapper(swap))
	lora := &loraAdapter{w: w}
	order := []struct {
		id      string
		adapter engine.Adapter
	}{{"tiny-llama.F32+lora/p9", lora}, {"tiny-llama.F32/p9", nil}, {"tiny-llama.F32+lora/p9", lora}}
	streams := make([]*engine.Stream, len(order))
	for i, o := range order {
		streams[i] = submit(t, e, t.Context(), engine.Request{Prompt: prompt, MaxTokens: len(want[o.id]), Adapter: o.adapter})
	}
	for i, s := range streams {
		toks, res := drain(s)
		if res.Err != nil {
			t.Fatalf("%s: %v", order[i].id, res.Err)
		}
		if d := cmp.Diff(want[order[i].id], ids(toks)); d != "" {
			t.Errorf("request %d, %s (-llama.cpp +engine):\n%s", i, order[i].id, d)
		}
	}
}
