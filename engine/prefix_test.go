package engine_test

import (
	"slices"
	"sync"
	"testing"

	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/engine/enginetest"
	"github.com/kiln-ai/kiln/kernels"
)

// generate runs one greedy request of maxTokens through e.
func generate(t *testing.T, e *engine.Engine, prompt []int, maxTokens int) ([]int, engine.Result) {
	t.Helper()
	toks, res := drain(submit(t, e, t.Context(), engine.Request{Prompt: prompt, MaxTokens: maxTokens}))
	if res.Finish != engine.FinishLength {
		t.Fatalf("finish %q err %v", res.Finish, res.Err)
	}
	return ids(toks), res
}

func seq(n, mul, add, vocab int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = (i*mul + add) % vocab
	}
	return p
}

// TestPrefixCacheConversation: the turns of a conversation, each resending
// the history, reuse everything the previous turn computed (its prompt
// and all of its answer but the last token, which was sampled and never
// fed) from the same slot, and generate what an engine without the cache
// generates; with the cache off nothing is reused and the result says off.
func TestPrefixCacheConversation(t *testing.T) {
	m := enginetest.TinyModel(t, 2)
	pool := kernels.NewPool(2)
	defer pool.Close()
	vocab := m.Config.Vocab
	on := start(t, m.NewState(2, pool), engine.Config{PrefillChunk: 16})
	off := start(t, m.NewState(2, pool), engine.Config{PrefillChunk: 16, PrefixCacheOff: true})
	history := seq(70, 7, 3, vocab)
	for turn := range 4 {
		got, res := generate(t, on, history, 9)
		want, resOff := generate(t, off, history, 9)
		if !slices.Equal(got, want) {
			t.Fatalf("turn %d: %v with the cache, %v without", turn, got, want)
		}
		if resOff.Prefix != (engine.PrefixUse{Prefilled: len(history), Stop: engine.PrefixStopOff}) {
			t.Errorf("turn %d, cache off: %+v", turn, resOff.Prefix)
		}
		u := res.Prefix
		if u.Cached+u.Prefilled != len(history) {
			t.Errorf("turn %d: %+v does not add up to the %d prompt tokens", turn, u, len(history))
		}
		if turn > 0 {
			wantCached := len(history) - 6 // the new message (5) and the last answer token
			if u.Cached != wantCached || u.Source.String() != "same_slot" || u.Stop.String() != "uncached" {
				t.Errorf("turn %d: %+v, want %d reused from the same slot, uncached past them", turn, u, wantCached)
			}
		}
		history = append(append(history, got...), seq(5, 3, turn, vocab)...)
	}
	st := on.Snapshot().PrefixCache
	if !st.Enabled || st.Hits != 3 || st.Lookups != 4 || st.Bytes == 0 {
		t.Errorf("snapshot: %+v", st)
	}
	if st := off.Snapshot().PrefixCache; st.Enabled || st.Lookups != 0 {
		t.Errorf("cache off, snapshot: %+v", st)
	}
}

// TestPrefixCacheSharedSystemPrompt: eight requests submitted at once
// behind one system prompt compute it once: the others wait for the first
// one's prefill and reuse all of it, and their answers equal those of an
// engine without the cache.
func TestPrefixCacheSharedSystemPrompt(t *testing.T) {
	m := enginetest.TinyModel(t, 3)
	pool := kernels.NewPool(2)
	defer pool.Close()
	vocab := m.Config.Vocab
	const users = 8
	system := seq(100, 5, 1, vocab)
	reqs := make([][]int, users)
	for u := range reqs {
		reqs[u] = append(slices.Clone(system), seq(4, 11, 2*u+1, vocab)...)
	}
	run := func(cfg engine.Config) ([][]int, []engine.Result) {
		e := start(t, m.NewState(users, pool), cfg)
		streams := make([]*engine.Stream, users)
		for u, p := range reqs {
			streams[u] = submit(t, e, t.Context(), engine.Request{Prompt: p, MaxTokens: 6})
		}
		out, res := make([][]int, users), make([]engine.Result, users)
		var wg sync.WaitGroup
		for u, s := range streams {
			wg.Go(func() {
				toks, r := drain(s)
				out[u], res[u] = ids(toks), r
			})
		}
		wg.Wait()
		return out, res
	}
	got, res := run(engine.Config{PrefillChunk: 32})
	want, _ := run(engine.Config{PrefillChunk: 32, PrefixCacheOff: true})
	reused := 0
	for u := range users {
		if !slices.Equal(got[u], want[u]) {
			t.Errorf("user %d: %v with the cache, %v without", u, got[u], want[u])
		}
		if res[u].Prefix.Cached >= len(system) {
			reused++
		}
	}
	if reused != users-1 {
		for u := range users {
			t.Logf("user %d: %+v", u, res[u].Prefix)
		}
		t.Errorf("%d of %d users reused the whole system prompt, want all but the first", reused, users)
	}
}

// TestPrefixCacheFullBudget: a request whose reservation leaves less free
// KV budget than the cache holds still reuses its cached prompt. The
// positions it reuses are part of what it reserved, not more memory, so
// the bound on idle entries must not evict them before its lookup pins
// them (an engine of one context's budget reused at most a block's worth
// of the prompt it had just answered, stop reason evicted).
func TestPrefixCacheFullBudget(t *testing.T) {
	m := enginetest.TinyModel(t, 4)
	pool := kernels.NewPool(2)
	defer pool.Close()
	seqLen := m.Config.SeqLen
	e := start(t, m.NewState(2, pool), engine.Config{PrefillChunk: 32, KVBudget: seqLen})
	prompt := seq(100, 3, 1, m.Config.Vocab) // 100 + 6 reserved of 128: 22 positions free, less than a block
	generate(t, e, prompt, 6)
	_, res := generate(t, e, prompt, 6)
	if u := res.Prefix; u.Cached != len(prompt)-1 || u.Source.String() != "same_slot" || u.Stop.String() != "prompt_end" {
		t.Errorf("the same prompt again: %+v, want %d reused from the same slot, prompt_end", u, len(prompt)-1)
	}
}
