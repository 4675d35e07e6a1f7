package engine_test

import (
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/engine/enginetest"
	"github.com/kiln-ai/kiln/engine/llama"
	"github.com/kiln-ai/kiln/engine/sampling"
	"github.com/kiln-ai/kiln/kernels"
)

type goldenFile struct {
	Cases []struct {
		Prompt    []int `json:"prompt"`
		Generated []int `json:"generated"`
	} `json:"cases"`
}

// runConcurrent submits the requests to an engine over state, either all
// at once or (stagger) each once the previous one has its first token, so
// they are admitted at different cycles and join running decodes; it
// returns the ids of each, checking the timing invariants on the way.
func runConcurrent(t *testing.T, state engine.Backend, cfg engine.Config, reqs []engine.Request, stagger bool) [][]int {
	t.Helper()
	e := start(t, state, cfg)
	got := make([][]int, len(reqs))
	var wg sync.WaitGroup
	for i, r := range reqs {
		s := submit(t, e, t.Context(), r)
		first := make(chan engine.Token, 1)
		if stagger {
			first <- <-s.Tokens()
		}
		wg.Go(func() {
			toks, res := drain(s)
			if stagger {
				toks = append([]engine.Token{<-first}, toks...)
			}
			if res.Finish != engine.FinishLength {
				t.Errorf("request %d: finish %q err %v", i, res.Finish, res.Err)
			}
			checkPhases(t, toks, res.Submitted)
			got[i] = ids(toks)
		})
	}
	wg.Wait()
	return got
}

// TestGoldenStories260K: the reference checkpoint's golden greedy outputs,
// every case at once through one engine (batched, chunked prefill), equal
// llama2.c's.
func TestGoldenStories260K(t *testing.T) {
	path := sharedModel(t, "stories260K.bin")
	raw, err := os.ReadFile(sharedModel(t, "stories260K.golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g goldenFile
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatal(err)
	}
	m, err := llama.LoadLlama2C(path)
	if err != nil {
		t.Fatal(err)
	}
	pool := kernels.NewPool(2)
	defer pool.Close()
	reqs := make([]engine.Request, len(g.Cases))
	want := make([][]int, len(g.Cases))
	for i, c := range g.Cases {
		reqs[i] = engine.Request{Prompt: c.Prompt, MaxTokens: len(c.Generated)}
		want[i] = c.Generated
	}
	for _, chunk := range []int{3, 128} {
		t.Run(fmt.Sprintf("chunk%d", chunk), func(t *testing.T) {
			got := runConcurrent(t, m.NewState(len(reqs), pool), engine.Config{PrefillChunk: chunk}, reqs, chunk == 3)
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("generated ids (-want +got):\n%s", d)
			}
		})
	}
}

// TestBatchingInvisibleModel: on a real (random-weight) Llama model, greedy
// and seeded outputs of 1 to 8 concurrent requests of different prompt
// lengths equal each request run alone.
func TestBatchingInvisibleModel(t *testing.T) {
	m := enginetest.TinyModel(t, 1)
	pool := kernels.NewPool(2)
	defer pool.Close()
	const maxTokens = 20
	ps := prompts(8, m.Config.Vocab)
	for _, sampling := range []sampling.Params{{}, {Temperature: 1, TopP: 0.95, Seed: 3, HasSeed: true}} {
		reqs := make([]engine.Request, len(ps))
		want := make([][]int, len(ps))
		for i, p := range ps {
			reqs[i] = engine.Request{Prompt: p, MaxTokens: maxTokens, Sampling: sampling}
			want[i] = runConcurrent(t, m.NewState(1, pool), engine.Config{}, reqs[i:i+1], false)[0]
		}
		for n := 1; n <= 8; n++ {
			for _, stagger := range []bool{false, true} {
				t.Run(fmt.Sprintf("temp%v/n%d/stagger=%v", sampling.Temperature, n, stagger), func(t *testing.T) {
					got := runConcurrent(t, m.NewState(8, pool), engine.Config{PrefillChunk: 4}, reqs[:n], stagger)
					if d := cmp.Diff(want[:n], got); d != "" {
						t.Errorf("batched outputs differ from alone (-want +got):\n%s", d)
					}
				})
			}
		}
	}
}
