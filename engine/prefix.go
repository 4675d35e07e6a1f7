package engine

import (
	"slices"

	"github.com/kiln-ai/kiln/engine/llama"
)

// PrefixBackend is a backend with a prefix cache (*llama.State): a
// request's prompt starts from the longest cached prefix of its tokens
// computed under the same adapter and revision, and the cache keeps what
// no request uses within the bound the engine sets from its free KV
// budget. All calls are the actor's (or a mutation's at the barrier).
type PrefixBackend interface {
	SetPrefixCache(on bool)
	Reuse(slot int, key llama.PrefixKey, prompt []int) PrefixUse
	SetPrefixLimit(limit int64, reason PrefixEvict) int64
	SupersedePrefixes(adapter, revision string) int64
	PrefixStats() PrefixCacheStats
	KVBytesPerPos() int64
}

var _ PrefixBackend = (*llama.State)(nil)

// prefixLeaderTokens is how many leading prompt tokens a request must
// share with one prefilled in the same step to wait for it: the next step
// reuses what that one wrote instead of computing it a second time.
const prefixLeaderTokens = 16

// prefixBackend returns the backend's cache when it is on.
func (e *Engine) prefixBackend() PrefixBackend {
	if e.cfg.PrefixCacheOff {
		return nil
	}
	pb, _ := e.backend.(PrefixBackend)
	return pb
}

// initPrefixCache turns the backend's cache on or off as configured.
func (e *Engine) initPrefixCache() {
	if pb, ok := e.backend.(PrefixBackend); ok {
		pb.SetPrefixCache(!e.cfg.PrefixCacheOff)
		e.a.fitPrefix(PrefixEvictCapacity) // the bound from the start, not from the first admission
	}
}

// prefixKey is the cache namespace of a request run with adapter.
func prefixKey(adapter Adapter) llama.PrefixKey {
	return llama.PrefixKey{Adapter: adapterName(adapter), Revision: AdapterRevision(adapter)}
}

// lookUp starts r's sequence from the longest cached prefix of its prompt,
// once, when it first gets prefill budget: positions [0, r.fed) then hold
// the prompt's KV. It reports false when r should wait a step for a
// request prefilled in this one that begins with the same tokens.
func (a *actor) lookUp(r *request) bool {
	if r.looked {
		return true
	}
	use := PrefixUse{Prefilled: len(r.prompt), Stop: PrefixStopOff}
	if pb := a.e.prefixBackend(); pb != nil {
		k := min(prefixLeaderTokens, len(r.prompt)-1)
		if mid, ok := pb.(interface{ PrefixMidSequence() bool }); ok && !mid.PrefixMidSequence() {
			k = 0 // a hybrid resumes only where a sequence ended: waiting for one being prefilled gains nothing
		}
		for _, p := range a.prefilled {
			if k > 0 && len(p.prompt) >= k && slices.Equal(p.prompt[:k], r.prompt[:k]) {
				return false
			}
		}
		use = pb.Reuse(r.slot, prefixKey(r.adapter), r.prompt)
		r.fed = use.Cached
	}
	r.looked = true
	a.kvLooked += r.reserve
	a.fitPrefix(PrefixEvictCapacity) // now that the blocks r reuses are in use, not idle
	r.stream.res.Prefix = use
	return true
}

// fitPrefix bounds the cache's idle entries by the free KV budget (and the
// configured bytes), evicting for reason; it returns the bytes evicted.
//
// The free budget leaves out the reservations of requests admitted but
// not yet looked up: such a request holds no KV (its blocks are written,
// or reused, from its lookup on), and the cached prefix it is about to
// reuse is part of what it reserved, not more memory. Bounding by the
// budget less every reservation evicted that prefix at its admission, so
// a request whose reservation left less free budget than the cache held
// (one context's budget, or a full batch) reused nothing. The memory
// stays bounded: the looked-up requests hold at most what they reserved,
// the idle entries at most the rest, and the others nothing. The bound
// is refitted at each lookup, once the reused blocks are in use.
func (a *actor) fitPrefix(reason PrefixEvict) int64 {
	pb := a.e.prefixBackend()
	if pb == nil {
		return 0
	}
	limit := int64(max(a.kvBudget-a.kvLooked, 0)) * pb.KVBytesPerPos()
	if b := a.e.cfg.PrefixCacheBytes; b > 0 {
		limit = min(limit, b)
	}
	return pb.SetPrefixLimit(limit, reason)
}
