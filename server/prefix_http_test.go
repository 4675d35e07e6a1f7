package server

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/engine/llama"
	"github.com/kiln-ai/kiln/telemetry"
)

// The harness backend is an engine.PrefixBackend over the real model
// state, as kiln serve's *llama.State is: without these the engine saw no
// prefix cache behind the wrapper and every harness ran with it off.
var _ engine.PrefixBackend = (*hookBackend)(nil)

func (h *hookBackend) prefix() engine.PrefixBackend { return h.Backend.(engine.PrefixBackend) }

// SetPrefixCache implements engine.PrefixBackend.
func (h *hookBackend) SetPrefixCache(on bool) { h.prefix().SetPrefixCache(on) }

// Reuse implements engine.PrefixBackend.
func (h *hookBackend) Reuse(slot int, key llama.PrefixKey, prompt []int) engine.PrefixUse {
	return h.prefix().Reuse(slot, key, prompt)
}

// SetPrefixLimit implements engine.PrefixBackend.
func (h *hookBackend) SetPrefixLimit(limit int64, reason engine.PrefixEvict) int64 {
	return h.prefix().SetPrefixLimit(limit, reason)
}

// SupersedePrefixes implements engine.PrefixBackend.
func (h *hookBackend) SupersedePrefixes(adapter, revision string) int64 {
	return h.prefix().SupersedePrefixes(adapter, revision)
}

// PrefixStats implements engine.PrefixBackend.
func (h *hookBackend) PrefixStats() engine.PrefixCacheStats { return h.prefix().PrefixStats() }

// prefixReply is what one reply says about its prompt and the prefix cache.
type prefixReply struct {
	id      string
	prompt  int            // usage.prompt_tokens
	cached  int            // usage.prompt_tokens_details.cached_tokens
	gen     int            // usage.completion_tokens
	perf    map[string]any // metadata.performance.prefix_cache
	content string
	adapter string // metadata.performance.adapter_used
	rev     string // the revision header
}

// prefixPost sends body to path (chat or legacy completions) with
// include_performance, and for a stream include_usage, and returns what
// its reply says: the usage chunk's numbers for a stream, the terminal
// chunk's performance. It returns once the engine is idle again.
func (h *harness) prefixPost(t *testing.T, path string, body map[string]any) prefixReply {
	t.Helper()
	body["include_performance"] = true
	stream, _ := body["stream"].(bool)
	if stream {
		body["stream_options"] = map[string]any{"include_usage": true}
	}
	status, hdr, raw := h.do(http.MethodPost, path, body, nil)
	if status != http.StatusOK {
		t.Fatalf("POST %s: HTTP %d: %s", path, status, raw)
	}
	var r prefixReply
	r.rev = hdr.Get(revisionHeader)
	var usage map[string]any
	var perf map[string]any
	if stream {
		p := parseStream(t, raw)
		if len(p.order) == 0 || p.order[len(p.order)-1] != "usage" {
			t.Fatalf("stream order %v: want the usage chunk last", p.order)
		}
		usage = plainJSON(t, p.chunks[len(p.chunks)-1])["usage"].(map[string]any)
		perf = plainJSON(t, perfOf(t, p.terminal))
		r.id, _ = p.terminal["id"].(string)
		r.content = p.content()
	} else {
		var whole struct {
			ID      string         `json:"id"`
			Usage   map[string]any `json:"usage"`
			Choices []struct {
				Text    string `json:"text"`
				Message struct {
					Content string `json:"content"`
				} `json:"message"`
			} `json:"choices"`
			Metadata struct {
				Performance map[string]any `json:"performance"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(raw, &whole); err != nil {
			t.Fatalf("%v: %s", err, raw)
		}
		r.id, usage, perf = whole.ID, whole.Usage, whole.Metadata.Performance
		r.content = whole.Choices[0].Message.Content + whole.Choices[0].Text
	}
	r.prompt = int(num(t, usage["prompt_tokens"]))
	r.gen = int(num(t, usage["completion_tokens"]))
	details, _ := usage["prompt_tokens_details"].(map[string]any)
	if details == nil {
		t.Fatalf("usage %v has no prompt_tokens_details", usage)
	}
	r.cached = int(num(t, details["cached_tokens"]))
	r.perf, _ = perf["prefix_cache"].(map[string]any)
	r.adapter, _ = perf["adapter_used"].(string)
	// The reply can come before the engine's snapshot, which /metrics
	// reads, shows the request's end (its slot released, the cache's
	// bound refitted): the stream closes inside the actor's cycle, the
	// snapshot is published after it.
	waitFor(t, "the engine's snapshot after the request", func() bool {
		s := h.eng.Snapshot()
		return s.Active == 0 && s.KVReserved == 0 && s.QueueDepth == 0
	})
	return r
}

// wantPrefix is the prefix_cache object of a prompt of prompt tokens that
// reused cached of them from source ("": none, null) and stopped for stop.
func wantPrefix(prompt, cached int, source, stop string) map[string]any {
	var src any
	if source != "" {
		src = source
	}
	return map[string]any{"cached_tokens": float64(cached), "prefilled_tokens": float64(prompt - cached), "source": src, "stop_reason": stop}
}

// checkPrefix fails unless r's prefix_cache is want, its
// usage.prompt_tokens_details.cached_tokens is want's cached_tokens, and
// its recent-requests detail (the diagnosis view's record) shows the same
// object.
func checkPrefix(t *testing.T, h *harness, what string, r prefixReply, want map[string]any) {
	t.Helper()
	if d := cmp.Diff(want, r.perf); d != "" {
		t.Errorf("%s: metadata.performance.prefix_cache (-want +got):\n%s", what, d)
	}
	if float64(r.cached) != want["cached_tokens"] {
		t.Errorf("%s: usage cached_tokens %d, want %v (as prefix_cache says)", what, r.cached, want["cached_tokens"])
	}
	var detail map[string]any
	h.getJSON("/v1/stats/recent-requests/"+r.id, &detail)
	if d := cmp.Diff(want, detail["prefix_cache"]); d != "" {
		t.Errorf("%s: recent-requests/%s prefix_cache (-want +got):\n%s", what, r.id, d)
	}
}

// prefixMetrics are the prefix cache's families in /metrics: the counters,
// evictions and evicted bytes by reason, the bytes held idle and in use,
// the blocks, the bound and whether the cache is on.
type prefixMetrics struct {
	lookups, hits, queried, hitTokens float64
	evictions, evictedBytes           map[string]float64 // by reason
	blocks, idle, inUse, limit        float64
	enabled                           float64
}

// prefixMetrics scrapes h's /metrics.
func (h *harness) prefixMetrics(t *testing.T) prefixMetrics {
	t.Helper()
	fams := h.metricFamilies(t)
	one := func(name string) float64 {
		mf := fams[name]
		if mf == nil || len(mf.GetMetric()) != 1 {
			t.Fatalf("%s: %v, want one series", name, mf)
		}
		m := mf.GetMetric()[0]
		if c := m.GetCounter(); c != nil {
			return c.GetValue()
		}
		return m.GetGauge().GetValue()
	}
	by := func(name, label string) map[string]float64 {
		out := map[string]float64{}
		for _, m := range fams[name].GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetName() == label {
					if c := m.GetCounter(); c != nil {
						out[lp.GetValue()] = c.GetValue()
					} else {
						out[lp.GetValue()] = m.GetGauge().GetValue()
					}
				}
			}
		}
		return out
	}
	bytes := by(telemetry.MetricPrefixCacheBytes, telemetry.LabelPrefixCacheState)
	return prefixMetrics{
		lookups:      one(telemetry.MetricPrefixCacheLookups),
		hits:         one(telemetry.MetricPrefixCacheHits),
		queried:      one(telemetry.MetricPrefixCacheQueriedTokens),
		hitTokens:    one(telemetry.MetricPrefixCacheHitTokens),
		evictions:    by(telemetry.MetricPrefixCacheEvictions, "reason"),
		evictedBytes: by(telemetry.MetricPrefixCacheEvictedBytes, "reason"),
		blocks:       one(telemetry.MetricPrefixCacheBlocks),
		idle:         bytes[telemetry.PrefixCacheStateIdle],
		inUse:        bytes[telemetry.PrefixCacheStateInUse],
		limit:        one(telemetry.MetricPrefixCacheLimitBytes),
		enabled:      one(telemetry.MetricPrefixCacheEnabled),
	}
}

// evictedSince is what was evicted for each reason between before and m.
func (m prefixMetrics) evictedSince(before prefixMetrics) map[string]float64 {
	out := map[string]float64{}
	for r := range prefixEvictReasons {
		out[r] = m.evictions[r] - before.evictions[r]
	}
	return out
}

// prefixBlockLen is the positions of one KV block of the paged cache
// (engine/llama/kvblock.go); blockBytes checks the engine agrees.
const prefixBlockLen = 64

// blockBytes is the KV memory of one cached block of h's model (once the
// engine has published a snapshot: after a request).
func (h *harness) blockBytes(t *testing.T) float64 {
	t.Helper()
	if n := h.eng.Snapshot().PrefixCache.BlockLen; n != prefixBlockLen {
		t.Fatalf("the engine's KV blocks hold %d positions, the tests assume %d", n, prefixBlockLen)
	}
	return float64(prefixBlockLen * h.backend.KVBytesPerPos())
}

// blocksOf is the blocks a sequence of n positions fills.
func blocksOf(n int) float64 { return float64((n + prefixBlockLen - 1) / prefixBlockLen) }

// prefixWords are the words of the tests' prompts: each one token of
// kiln-tiny's vocabulary.
var prefixWords = strings.Fields(`sun moon star sky sea river hill tree stone cloud rain wind snow fire leaf bird fish
	wolf bear deer road town door house bread milk salt gold iron glass`)

// prefixText is n words of prefixWords from word start on, a different
// text for each start.
func prefixText(start, n int) string {
	w := make([]string, n)
	for i := range w {
		w[i] = prefixWords[(start+i*(start%7+1))%len(prefixWords)]
	}
	return strings.Join(w, " ")
}

// completion is a greedy legacy completion of prompt.
func (h *harness) completion(prompt string, maxTokens int) map[string]any {
	return map[string]any{"model": h.model.ID, "prompt": prompt, "max_tokens": maxTokens, "temperature": 0}
}

// promptTokens is the token ids a legacy completion of text prefills
// (POST /tokenize with the BOS a prompt gets).
func (h *harness) promptTokens(t *testing.T, text string) []int {
	t.Helper()
	status, _, raw := h.do(http.MethodPost, "/tokenize", map[string]any{"content": text, "add_special": true}, nil)
	if status != http.StatusOK {
		t.Fatalf("tokenize: %d %s", status, raw)
	}
	var out struct {
		Tokens []int `json:"tokens"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out.Tokens
}

func sharedLen(a, b []int) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// systemChat is a chat behind a system prompt of n words (several KV
// blocks) with one user message.
func systemChat(start, n int) []map[string]any {
	return []map[string]any{
		{"role": "system", "content": prefixText(start, n)},
		{"role": "user", "content": "Tell me about the sun."},
	}
}

// TestPrefixCacheHTTPStopReasons: over HTTP, against the real engine and
// cache on kiln-tiny, each stop reason arises from the request sequence
// that causes it, and the reply's usage, its prefix_cache and its
// recent-requests detail (the diagnosis view's record) all say it: a
// first prompt is uncached; the same prompt again reuses all but its last
// token (prompt_end); a prompt sharing a prefix with a cached one reuses
// exactly the shared tokens (diverged, measured by /tokenize, inside a
// block); after a trim the same prompt reuses nothing (evicted), the trim
// counted in kiln_prefix_cache_evictions_total{reason="trim"}. The
// aggregate counters add up the replies.
func TestPrefixCacheHTTPStopReasons(t *testing.T) {
	h := newHarness(t, withConfig(func(c *Config) { c.MemoryReclaim = ReclaimOnDemand }))
	var replies []prefixReply
	post := func(path string, body map[string]any) prefixReply {
		t.Helper()
		r := h.prefixPost(t, path, body)
		replies = append(replies, r)
		return r
	}
	chat := func() map[string]any {
		return h.chatBody(map[string]any{"messages": systemChat(1, 150), "max_tokens": 4})
	}

	first := post(chatPath, chat())
	if first.prompt <= 2*prefixBlockLen {
		t.Fatalf("the chat prompt is %d tokens, want several blocks", first.prompt)
	}
	checkPrefix(t, h, "a first prompt", first, wantPrefix(first.prompt, 0, "", "uncached"))
	bb := h.blockBytes(t)
	again := post(chatPath, chat())
	checkPrefix(t, h, "the same prompt again", again, wantPrefix(again.prompt, again.prompt-1, "same_slot", "prompt_end"))

	// Two legacy completions sharing their first 100 words: the second
	// reuses exactly their shared tokens. Every prompt begins with BOS,
	// which the chat prompts cached: sharing only such an opening is not a
	// hit, so the first is uncached.
	a := prefixText(2, 160)
	b := strings.Join(strings.Fields(a)[:100], " ") + " " + prefixText(3, 40)
	ta, tb := h.promptTokens(t, a), h.promptTokens(t, b)
	shared := sharedLen(ta, tb)
	if shared%prefixBlockLen == 0 || shared >= len(tb)-1 {
		t.Fatalf("the prompts share %d of %d tokens: want a divergence inside a block, before the last token", shared, len(tb))
	}
	ra := post(completionsPath, h.completion(a, 4))
	if ra.prompt != len(ta) {
		t.Fatalf("completion prompt_tokens %d, /tokenize gave %d", ra.prompt, len(ta))
	}
	checkPrefix(t, h, "a completion behind BOS", ra, wantPrefix(ra.prompt, 0, "", "uncached"))
	rb := post(completionsPath, h.completion(b, 4))
	checkPrefix(t, h, "a completion sharing a prefix", rb, wantPrefix(len(tb), shared, "same_slot", "diverged"))

	before := h.prefixMetrics(t)
	if before.blocks == 0 || before.inUse != 0 || before.idle != before.blocks*bb {
		t.Fatalf("before the trim: %+v, want idle blocks only", before)
	}
	status, _, raw := h.do(http.MethodPost, "/v1/maintenance/trim", nil, nil)
	if status != http.StatusOK || !strings.Contains(string(raw), `"outcome":"reclaimed"`) {
		t.Fatalf("trim: %d %s", status, raw)
	}
	after := h.prefixMetrics(t)
	wantEv := map[string]float64{"capacity": 0, "trim": before.blocks, "resize": 0, "superseded": 0, "subsumed": 0}
	if d := cmp.Diff(wantEv, after.evictedSince(before)); d != "" {
		t.Errorf("evictions by the trim (-want +got):\n%s", d)
	}
	if got := after.evictedBytes["trim"] - before.evictedBytes["trim"]; got != before.blocks*bb {
		t.Errorf("trim evicted %v bytes, want its %v blocks of %v", got, before.blocks, bb)
	}
	if after.blocks != 0 || after.idle != 0 {
		t.Errorf("after the trim: %v blocks, %v idle bytes; want none", after.blocks, after.idle)
	}
	evicted := post(chatPath, chat())
	checkPrefix(t, h, "the first prompt after a trim", evicted, wantPrefix(evicted.prompt, 0, "", "evicted"))

	m := h.prefixMetrics(t)
	var hits, hitTokens, queried float64
	for _, r := range replies {
		if r.cached > 0 {
			hits++
		}
		hitTokens += float64(r.cached)
		queried += float64(r.prompt)
	}
	got := []float64{m.lookups, m.hits, m.hitTokens, m.queried, m.enabled}
	if d := cmp.Diff([]float64{float64(len(replies)), hits, hitTokens, queried, 1}, got); d != "" {
		t.Errorf("lookups, hits, hit tokens, queried tokens, enabled (-the replies +/metrics):\n%s", d)
	}
}

// TestPrefixCacheHTTPOff: with --prefix-cache off nothing is reused, the
// same prompt twice included, on chat and legacy completions, streamed
// and not: cached_tokens 0, stop_reason off, source null, every prompt
// token prefilled; the cache's families say off and count nothing, and
// /v1/config says disabled.
func TestPrefixCacheHTTPOff(t *testing.T) {
	h := newHarness(t, withConfig(func(c *Config) { c.Engine.PrefixCacheOff = true }))
	for i, stream := range []bool{false, false, true} {
		r := h.prefixPost(t, chatPath, h.chatBody(map[string]any{"messages": systemChat(1, 150), "max_tokens": 4, "stream": stream}))
		checkPrefix(t, h, fmt.Sprintf("chat %d (stream %v)", i, stream), r, wantPrefix(r.prompt, 0, "", "off"))
		body := h.completion(prefixText(2, 100), 4)
		body["stream"] = stream
		r = h.prefixPost(t, completionsPath, body)
		checkPrefix(t, h, fmt.Sprintf("completion %d (stream %v)", i, stream), r, wantPrefix(r.prompt, 0, "", "off"))
	}
	m := h.prefixMetrics(t)
	if m.enabled != 0 || m.lookups != 0 || m.hits != 0 || m.queried != 0 || m.blocks != 0 {
		t.Errorf("prefix cache families with the cache off: %+v, want disabled and nothing counted", m)
	}
	var cfg struct {
		PrefixCache map[string]any `json:"prefix_cache"`
	}
	h.getJSON("/v1/config", &cfg)
	if d := cmp.Diff(map[string]any{"enabled": false, "max_bytes": nil}, cfg.PrefixCache); d != "" {
		t.Errorf("/v1/config prefix_cache (-want +got):\n%s", d)
	}
}

// TestPrefixCacheHTTPConversation: a four-turn chat, each turn resending
// the history with the assistant's answer and a new message, the turns
// whole and streamed (include_usage) in turn. Every turn after the first
// reuses everything the previous turn computed: its prompt and all of its
// answer but the last token, which was sampled and never fed (kiln-tiny
// writes whole words, so the answer's text renders back to the tokens it
// generated), from the same slot, and stops there (uncached). The usage's
// cached_tokens equals the performance summary's, and the diagnosis
// record shows the same. A server with the cache off answers every turn
// with the same greedy text.
func TestPrefixCacheHTTPConversation(t *testing.T) {
	on := newHarness(t)
	off := newHarness(t, withConfig(func(c *Config) { c.Engine.PrefixCacheOff = true }))
	msgs := systemChat(4, 120)
	var prev prefixReply
	for turn := range 4 {
		stream := turn%2 == 1
		what := fmt.Sprintf("turn %d (stream %v)", turn, stream)
		body := func(h *harness) map[string]any {
			return h.chatBody(map[string]any{"messages": msgs, "max_tokens": 5, "stream": stream})
		}
		got := on.prefixPost(t, chatPath, body(on))
		want := off.prefixPost(t, chatPath, body(off))
		if got.content != want.content {
			t.Errorf("%s: %q with the cache, %q without", what, got.content, want.content)
		}
		checkPrefix(t, off, what+", cache off", want, wantPrefix(want.prompt, 0, "", "off"))
		if turn == 0 {
			checkPrefix(t, on, what, got, wantPrefix(got.prompt, 0, "", "uncached"))
		} else {
			checkPrefix(t, on, what, got, wantPrefix(got.prompt, prev.prompt+prev.gen-1, "same_slot", "uncached"))
		}
		prev = got
		msgs = append(msgs, map[string]any{"role": "assistant", "content": got.content},
			map[string]any{"role": "user", "content": prefixText(turn+5, 12)})
	}
}

// TestPrefixCacheHTTPEvictions: each eviction reason that maintenance or
// traffic causes, from the public API, counted in
// kiln_prefix_cache_evictions_total{reason} (and its bytes) with no other
// reason moving. Trim is TestPrefixCacheHTTPStopReasons', superseded
// TestPrefixCacheHTTPAdapters'.
func TestPrefixCacheHTTPEvictions(t *testing.T) {
	// capacity: with --prefix-cache-bytes of one prompt's three blocks, a
	// second prompt evicts the first, least recently used, leaves first.
	t.Run("capacity", func(t *testing.T) {
		bound := 3 * prefixBlockLen * llama.TinyConfig().KVBytesPerPos()
		h := newHarness(t, withConfig(func(c *Config) { c.Engine.PrefixCacheBytes = bound }))
		a, b := h.completion(prefixText(1, 150), 4), h.completion(prefixText(2, 150), 4)
		ra := h.prefixPost(t, completionsPath, a)
		bb := h.blockBytes(t)
		if blocksOf(ra.prompt+ra.gen-1) != 3 {
			t.Fatalf("a prompt of %d tokens and %d generated: want three blocks", ra.prompt, ra.gen)
		}
		before := h.prefixMetrics(t)
		if before.limit != float64(bound) || before.blocks != 3 {
			t.Fatalf("after one prompt: %+v, want the bound %d and its 3 blocks", before, bound)
		}
		rb := h.prefixPost(t, completionsPath, b)
		checkPrefix(t, h, "a second prompt", rb, wantPrefix(rb.prompt, 0, "", "uncached")) // BOS only: no hit
		after := h.prefixMetrics(t)
		wantEv := map[string]float64{"capacity": 3, "trim": 0, "resize": 0, "superseded": 0, "subsumed": 0}
		if d := cmp.Diff(wantEv, after.evictedSince(before)); d != "" {
			t.Errorf("evictions by the second prompt (-want +got):\n%s", d)
		}
		if after.evictedBytes["capacity"] != 3*bb || after.blocks != 3 || after.idle > float64(bound) {
			t.Errorf("after the second prompt: %+v, want 3 blocks evicted and 3 held, within %d bytes", after, bound)
		}
		// The newest prompt is whole; the evicted one shares only BOS with
		// it and says it was evicted.
		rb = h.prefixPost(t, completionsPath, b)
		checkPrefix(t, h, "the second prompt again", rb, wantPrefix(rb.prompt, rb.prompt-1, "same_slot", "prompt_end"))
		ra = h.prefixPost(t, completionsPath, a)
		checkPrefix(t, h, "the first prompt again", ra, wantPrefix(ra.prompt, 0, "", "evicted"))
	})

	// resize: shrinking the KV budget to one context bounds the cache by
	// it; what fits stays, the newest prompt's blocks, which the next
	// request reuses although its reservation leaves less than a block of
	// the budget free.
	t.Run("resize", func(t *testing.T) {
		const context = 256
		h := newHarness(t, withSeqLen(context)) // 4 slots: a budget of 1024 tokens, 16 blocks
		var last prefixReply
		var lastBody map[string]any
		for i := range 3 {
			lastBody = h.completion(prefixText(i+1, 150), 4)
			last = h.prefixPost(t, completionsPath, lastBody)
		}
		bb := h.blockBytes(t)
		before := h.prefixMetrics(t)
		if before.blocks != 9 || before.idle != 9*bb {
			t.Fatalf("three prompts of three blocks each: %+v", before)
		}
		status, _, raw := h.do(http.MethodPost, resizePath, map[string]any{"tokens": context}, nil)
		if status != http.StatusOK {
			t.Fatalf("resize: %d %s", status, raw)
		}
		var reply KVResizeReply
		if err := json.Unmarshal(raw, &reply); err != nil {
			t.Fatal(err)
		}
		after := h.prefixMetrics(t)
		kept := float64(context / prefixBlockLen)
		wantEv := map[string]float64{"capacity": 0, "trim": 0, "resize": before.blocks - kept, "superseded": 0, "subsumed": 0}
		if d := cmp.Diff(wantEv, after.evictedSince(before)); d != "" {
			t.Errorf("evictions by the resize (-want +got):\n%s", d)
		}
		evicted := after.evictedBytes["resize"] - before.evictedBytes["resize"]
		if evicted != (before.blocks-kept)*bb || float64(reply.DroppedBytes) < evicted {
			t.Errorf("resize evicted %v bytes (reply dropped %d), want %v blocks of %v, within what it dropped", evicted, reply.DroppedBytes, before.blocks-kept, bb)
		}
		if after.blocks != kept || after.limit != float64(context)*float64(h.backend.KVBytesPerPos()) {
			t.Errorf("after the resize: %v blocks held, bound %v; want %v, one context's KV", after.blocks, after.limit, kept)
		}
		r := h.prefixPost(t, completionsPath, lastBody)
		checkPrefix(t, h, "the newest prompt after the resize", r, wantPrefix(last.prompt, last.prompt-1, "same_slot", "prompt_end"))
	})

	// subsumed: a follow-up turn extends the tail block the first turn
	// left; once it is released, the shorter entry it holds all of goes,
	// and the conversation is one path of blocks.
	t.Run("subsumed", func(t *testing.T) {
		h := newHarness(t)
		msgs := systemChat(3, 60)
		turn := func() prefixReply {
			return h.prefixPost(t, chatPath, h.chatBody(map[string]any{"messages": msgs, "max_tokens": 5}))
		}
		first := turn()
		before := h.prefixMetrics(t)
		if n := first.prompt + first.gen - 1; n%prefixBlockLen == 0 || before.blocks != blocksOf(n) {
			t.Fatalf("the first turn's %d positions in %v blocks: want a tail shorter than a block", n, before.blocks)
		}
		msgs = append(msgs, map[string]any{"role": "assistant", "content": first.content},
			map[string]any{"role": "user", "content": prefixText(8, 12)})
		second := turn()
		checkPrefix(t, h, "the second turn", second, wantPrefix(second.prompt, first.prompt+first.gen-1, "same_slot", "uncached"))
		after := h.prefixMetrics(t)
		wantEv := map[string]float64{"capacity": 0, "trim": 0, "resize": 0, "superseded": 0, "subsumed": 1}
		if d := cmp.Diff(wantEv, after.evictedSince(before)); d != "" {
			t.Errorf("evictions by the second turn (-want +got):\n%s", d)
		}
		if want := blocksOf(second.prompt + second.gen - 1); after.blocks != want {
			t.Errorf("%v blocks held after the second turn, want %v: the conversation's one path", after.blocks, want)
		}
	})
}

// newRevision rewrites the PEFT adapter at dir with other weights (every
// lora_B negated, so B·A changes sign) and a later modification time: a
// new revision under the same name, as a training job writing its output
// over the adapter leaves.
func newRevision(t *testing.T, dir string) {
	t.Helper()
	path := filepath.Join(dir, "adapter_model.safetensors")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := binary.LittleEndian.Uint64(data)
	var header map[string]json.RawMessage
	if err := json.Unmarshal(data[8:8+n], &header); err != nil {
		t.Fatal(err)
	}
	negated := 0
	for name, raw := range header {
		var info struct {
			DType   string   `json:"dtype"`
			Offsets [2]int64 `json:"data_offsets"`
		}
		if name == "__metadata__" || !strings.Contains(name, "lora_B") {
			continue
		}
		if err := json.Unmarshal(raw, &info); err != nil || info.DType != "F32" {
			t.Fatalf("%s: %s (%v): want F32", name, raw, err)
		}
		body := data[8+int64(n)+info.Offsets[0] : 8+int64(n)+info.Offsets[1]]
		for i := 3; i < len(body); i += 4 {
			body[i] ^= 0x80 // the sign bit of a little-endian float32
		}
		negated++
	}
	if negated == 0 {
		t.Fatal("no lora_B tensor to change")
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	later := st.ModTime().Add(time.Second) // a new stamp whatever the file system's clock granularity
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
}

// TestPrefixCacheHTTPAdapters: the cache is keyed by adapter and
// revision, on tiny-llama with the reference LoRA (skipped without
// ../shared/models/ref). A prompt the base model cached reuses nothing
// under an adapter (other_adapter), then its own entry (prompt_end). When
// the adapter's weights file is rewritten, the request naming it swaps in
// the new revision, which retires the old revision's entries
// (kiln_prefix_cache_evictions_total{reason="superseded"}: every block
// cached under it) and reuses nothing of them: the base model's entry is
// all the cache still holds of that prompt (other_adapter), and it stays
// whole.
func TestPrefixCacheHTTPAdapters(t *testing.T) {
	ref := refDir(t)
	dir := adapterDir(t, ref)
	h := newHarness(t, withAdapterModel(ref, dir))
	post := func(adapter string) prefixReply {
		body := h.chatBody(map[string]any{"messages": systemChat(5, 60), "max_tokens": 4})
		if adapter != "" {
			body["adapter"] = adapter
		}
		return h.prefixPost(t, chatPath, body)
	}
	base := post("")
	if base.prompt <= prefixBlockLen || base.prompt+4 > h.model.Model.Config.SeqLen {
		t.Fatalf("a %d-token prompt: want more than a block, within %s's context", base.prompt, h.model.ID)
	}
	checkPrefix(t, h, "base", base, wantPrefix(base.prompt, 0, "", "uncached"))
	bb := h.blockBytes(t)
	baseBlocks := h.prefixMetrics(t).blocks

	lora := post("peft")
	if lora.adapter != "peft" || lora.rev == baseAdapter {
		t.Fatalf("adapter_used %q, revision %q: want peft", lora.adapter, lora.rev)
	}
	checkPrefix(t, h, "the base's prompt under an adapter", lora, wantPrefix(lora.prompt, 0, "", "other_adapter"))
	again := post("peft")
	checkPrefix(t, h, "the same under the adapter again", again, wantPrefix(again.prompt, again.prompt-1, "same_slot", "prompt_end"))

	before := h.prefixMetrics(t)
	loraBlocks := before.blocks - baseBlocks
	if loraBlocks <= 0 {
		t.Fatalf("%v blocks cached under the adapter", loraBlocks)
	}
	newRevision(t, filepath.Join(dir, "peft"))
	rev2 := post("peft")
	if rev2.rev == lora.rev || rev2.adapter != "peft" {
		t.Fatalf("after rewriting its weights: adapter %q revision %q, want peft under a revision other than %q", rev2.adapter, rev2.rev, lora.rev)
	}
	checkPrefix(t, h, "the prompt under the new revision", rev2, wantPrefix(rev2.prompt, 0, "", "other_adapter"))
	after := h.prefixMetrics(t)
	wantEv := map[string]float64{"capacity": 0, "trim": 0, "resize": 0, "superseded": loraBlocks, "subsumed": 0}
	if d := cmp.Diff(wantEv, after.evictedSince(before)); d != "" {
		t.Errorf("evictions by the new revision's swap (-want +got):\n%s", d)
	}
	if got := after.evictedBytes["superseded"] - before.evictedBytes["superseded"]; got != loraBlocks*bb {
		t.Errorf("superseded %v bytes, want the old revision's %v blocks", got, loraBlocks)
	}
	if rev2.content == lora.content {
		t.Errorf("the new revision answers %q as the old one did: the rewrite made no other weights", rev2.content)
	}
	// Superseding retires one adapter's revision, never everything: the
	// base model's entry is whole.
	base = post("")
	checkPrefix(t, h, "base after the new revision", base, wantPrefix(base.prompt, base.prompt-1, "same_slot", "prompt_end"))
}
